//! Latency spectra, from the histograms the results file keeps whole: a chart per latency case
//! (round trips, services, fixed-rate latency), one line per library, latency on a log axis
//! against percentile on HdrHistogram's 1/(1 − p) axis; and a `.hgrm` file per result, which
//! HdrHistogram's own plotter reads. Each library's line is every run of its figure's receive
//! mode together, marked at each decade of the percentile axis, its legend beside the plot.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use hdrhistogram::Histogram;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::pieces::{
    Chart, DrawResult, Entry, Place, SANS, Stroke, Style, heading, heading_height, legend, legend_width,
    log_axis, mark, time_tick,
};
use super::{Drawing, Out, column_style};
use crate::histogram;
use crate::pattern::Family;
use crate::pattern::Gathered;
use crate::pattern::spec;
use crate::report::View;
use crate::results::{CaseResult, Status};

/// What the report says of the spectra.
pub const SPECTRA: &str = "Every latency result keeps its whole histogram (HdrHistogram, in the results file). Each chart \
     shows one case: a line per library, every run of its figure's receive mode together, latency against \
     percentile (the axis spreads the tail: 90 %, 99 %, 99.9 % ... are equal steps). Round trips and services \
     time a call; `latency/<rate>/<size>` times one way, from the instant each message was due, so a stall \
     counts against every message it delayed. `hgrm/` holds each result as HdrHistogram's percentile \
     distribution (values in ms), for its plotter.";

/// A result's histogram: every run of its figure's mode together (None for a result without).
fn merged(r: &CaseResult) -> Result<Option<Histogram<u64>>> {
    let Some(mode) = r.best().filter(|_| r.status == Status::Ok) else { return Ok(None) };
    let mut all: Option<Histogram<u64>> = None;
    for (i, run) in mode.runs.iter().enumerate() {
        let Some(text) = &run.histogram else { continue };
        let h = histogram::decode(text)
            .with_context(|| format!("{} for {}, run {} of its figure's mode", r.case, r.library, i + 1))?;
        all.get_or_insert_with(histogram::growing)
            .add(&h)
            .map_err(|e| anyhow!("{} for {}: adding run {}: {e:?}", r.case, r.library, i + 1))?;
    }
    Ok(all)
}

/// A library's spectrum: its label, its style, its histogram.
type Line = (String, Style, Histogram<u64>);

/// Each column's histogram for one case, with its label and style.
fn lines(view: &View, case: &str) -> Result<Vec<Line>> {
    let mut out = Vec::new();
    for col @ (lib, s) in &view.columns {
        let Some(r) = view.result(case, lib, *s) else { continue };
        if let Some(h) = merged(r)? {
            out.push((view.column_label(col), column_style(view, col), h));
        }
    }
    Ok(out)
}

fn slug(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' }).collect()
}

/// The spectrum charts (`spectrum-<case>.svg` and `.png`) and the `.hgrm` files (under
/// `hgrm/<case>/`, added to what the report wrote).
pub struct Spectra;

impl Drawing for Spectra {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        draw(view, out.charts, out.hgrm, out.written)
    }
}

fn draw(view: &View, dir: &Path, hgrm_dir: &Path, written: &mut Vec<PathBuf>) -> Result<Vec<Chart>> {
    let mut charts = Vec::new();
    for case in &view.cases {
        let Some(pattern) = view.pattern(case) else { continue };
        let Some(what) = spec(pattern).spectrum else { continue };
        let lines = lines(view, case)?;
        if lines.is_empty() {
            continue;
        }
        let folder = hgrm_dir.join(slug(case));
        std::fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
        for (label, _, h) in &lines {
            let path = folder.join(format!("{}.hgrm", slug(label)));
            std::fs::write(&path, histogram::hgrm(h))
                .with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
        let name = format!("spectrum-{}", slug(case));
        let title = format!("{case}: latency by percentile ({what})");
        let (svg, png) = (dir.join(format!("{name}.svg")), dir.join(format!("{name}.png")));
        let entries: Vec<Entry> =
            lines.iter().map(|(l, s, _)| Entry::new(l.clone(), *s, Stroke::Solid)).collect();
        let size = (PLOT_W + 20 + legend_width(&entries).clamp(160, 560) as u32, 660);
        plot(SVGBackend::new(&svg, size).into_drawing_area(), &title, &lines)
            .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
        super::pieces::png(&png, size, |root| plot(root, &title, &lines))?;
        let family = Family::of(view.gathered(case).unwrap_or(Gathered::Pattern(pattern)));
        charts.push(Chart { name, title, place: Place::Spectrum(family) });
    }
    Ok(charts)
}

/// A point of the 1/(1 − p) axis as its percentile: 10 is 90 %, 1000 is 99.9 %.
fn percentile_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 1.0 / x);
    let digits = (x.log10().round() as usize).saturating_sub(2);
    format!("{p:.digits$}%")
}

/// The plot's width; the legend stands to its right.
const PLOT_W: u32 = 1000;

/// What the chart says under its title.
const NOTE: &str = "lower is better; the tail is to the right; a mark at each of 90%, 99%, 99.9%, ...";

fn plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    lines: &[Line],
) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (top, below) = root.split_vertically(heading_height(title, &[NOTE], root.dim_in_pixel().0));
    heading(&top, title, &[NOTE])?;
    let (area, beside) = below.split_horizontally(PLOT_W);
    let entries: Vec<Entry> =
        lines.iter().map(|(l, s, _)| Entry::new(l.clone(), *s, Stroke::Solid)).collect();
    legend(&beside, (10, 40), &entries)?;
    let us = |ns: u64| ns as f64 / 1e3;
    // The axis runs to the percentile the largest histogram can state (one in its count).
    let most = lines.iter().map(|(_, _, h)| h.len()).max().unwrap_or(1).max(10) as f64;
    let decades = most.log10().ceil().min(7.0) as i32;
    let x_end = 10f64.powi(decades);
    let lo = lines.iter().map(|(_, _, h)| us(h.min().max(1))).fold(f64::MAX, f64::min);
    let hi = lines.iter().map(|(_, _, h)| us(h.max())).fold(0.0, f64::max).max(lo * 10.0);
    let x = (1f64..x_end).log_scale().with_key_points((0..=decades).map(|k| 10f64.powi(k)).collect());
    // Room right of the last tick, so that its label (99.99999%) stands whole.
    let mut chart = ChartBuilder::on(&area)
        .margin(20)
        .margin_right(50)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(x, log_axis((lo / 1.5)..(hi * 1.5)))?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .x_label_formatter(&|x| percentile_label(*x))
        .y_desc("latency")
        .y_label_formatter(&|v| time_tick(*v))
        .label_style((SANS, 14))
        .axis_desc_style((SANS, 15))
        .draw()?;
    for (_, style, h) in lines {
        let points: Vec<(f64, f64)> = h
            .iter_quantiles(5)
            .filter(|v| v.quantile_iterated_to() < 1.0)
            .map(|v| {
                (1.0 / (1.0 - v.quantile_iterated_to()), us(h.highest_equivalent(v.value_iterated_to())))
            })
            .filter(|(x, _)| *x < x_end)
            .collect();
        // A mark where the line first reaches each decade: 90%, 99%, ...
        let marks: Vec<(f64, f64)> =
            (1..decades).filter_map(|k| points.iter().find(|p| p.0 >= 10f64.powi(k)).copied()).collect();
        chart.draw_series(std::iter::once(PathElement::new(points, style.color.stroke_width(2))))?;
        chart.draw_series(marks.into_iter().map(|p| mark::<_, DB>(p, *style, true, 4)))?;
    }
    root.present()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_axis_reads_as_percentiles() {
        let l = super::percentile_label;
        assert_eq!(
            [l(1.0), l(10.0), l(100.0), l(1000.0), l(10000.0)],
            ["0%", "90%", "99%", "99.9%", "99.99%"]
        );
    }
}
