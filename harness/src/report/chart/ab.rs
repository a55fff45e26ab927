//! An A/B run's chart: each figure's paired ratio with its interval, a row each, over the band
//! of ±threshold, coloured by its verdict.

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::pieces::{Chart, DrawResult, MAX_W, Place, SANS, heading, heading_height, text_width};
use super::{Drawing, Out};
use crate::format::whole_percent;
use crate::report::View;
use crate::results::ab::{AbFigure, AbRecord, AbVerdict, Side};

/// `ab.svg` and `.png`, where the view holds an A/B run.
pub struct Ab;

impl Drawing for Ab {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        draw(view, out)
    }
}

/// The rows of the chart, in the table's order.
fn rows(record: &AbRecord) -> Vec<&AbFigure> {
    let side = |s: Side| record.figures.iter().filter(move |f| f.side == s);
    side(Side::Candidate).chain(side(Side::Sentinel)).collect()
}

fn verdict_color(v: AbVerdict) -> RGBColor {
    match v {
        AbVerdict::Slower => RGBColor(200, 40, 40),
        AbVerdict::Faster => RGBColor(30, 140, 60),
        AbVerdict::NoChange => RGBColor(40, 90, 170),
        AbVerdict::Unresolved => RGBColor(140, 140, 140),
    }
}

/// `ab.svg` and `.png`: each figure's ratio with its interval, a row each, over the band of
/// ±threshold; coloured by verdict, the colours' key under the title.
fn draw(view: &View, out: &Out) -> Result<Vec<Chart>> {
    let Some((_, record, settings)) = crate::report::ab::of(view) else { return Ok(Vec::new()) };
    let rows = rows(record);
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let title = format!(
        "Each figure's ratio, other side over base, with its 95% interval; the band is ±{}",
        whole_percent(settings.threshold)
    );
    // The rows' names stand whole left of the plot: the chart widens for the longest.
    let names: Vec<String> = rows.iter().map(|f| row_name(f)).collect();
    let names_w = names.iter().map(|n| text_width(n, 13)).max().unwrap_or(0) as u32 + 24;
    let w = (PLOT_W + names_w).min(MAX_W);
    let size = (w, heading_height(&title, &[NOTE], w) + KEY + 80 + 26 * rows.len() as u32);
    let (svg, png) = (out.charts.join("ab.svg"), out.charts.join("ab.png"));
    let drawn = Drawn { rows: &rows, names: &names, names_w, threshold: settings.threshold, title: &title };
    plot(SVGBackend::new(&svg, size).into_drawing_area(), &drawn)
        .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    super::pieces::png(&png, size, |root| plot(root, &drawn))?;
    Ok(vec![Chart { name: "ab".into(), title, place: Place::Ab }])
}

/// The plot's width, right of the rows' names.
const PLOT_W: u32 = 700;
/// The key's height, under the heading.
const KEY: u32 = 26;
const NOTE: &str = "A rate above 1 is faster, a time above 1 slower.";
const VERDICTS: [AbVerdict; 4] =
    [AbVerdict::Slower, AbVerdict::Faster, AbVerdict::NoChange, AbVerdict::Unresolved];

/// A row's name: its case, library and mode, and whether it is the sentinel's.
fn row_name(f: &AbFigure) -> String {
    let sentinel = if f.side == Side::Sentinel { " (sentinel)" } else { "" };
    format!("{} {} {}{sentinel}", f.case, f.library, f.mode.as_str())
}

/// What the chart draws.
struct Drawn<'a> {
    rows: &'a [&'a AbFigure],
    names: &'a [String],
    names_w: u32,
    threshold: f64,
    title: &'a str,
}

fn plot<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, d: &Drawn) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let head = heading_height(d.title, &[NOTE], root.dim_in_pixel().0);
    let (top, area) = root.split_vertically(head + KEY);
    heading(&top, d.title, &[NOTE])?;
    let mut x = 20;
    for v in VERDICTS {
        top.draw(&Circle::new((x + 5, head as i32 + 8), 5, verdict_color(v).filled()))?;
        top.draw(&Text::new(v.as_str(), (x + 14, head as i32 + 1), (SANS, 13).into_font()))?;
        x += 30 + text_width(v.as_str(), 13);
    }
    let band = (1.0 / (1.0 + d.threshold), 1.0 + d.threshold);
    let lo = d.rows.iter().map(|f| f.low).fold(band.0, f64::min) * 0.98;
    let hi = d.rows.iter().map(|f| f.high).fold(band.1, f64::max) * 1.02;
    let n = d.rows.len();
    let mut chart = ChartBuilder::on(&area)
        .margin(16)
        .margin_right(30)
        .x_label_area_size(40)
        .y_label_area_size(d.names_w)
        .build_cartesian_2d(lo..hi, -0.5..n as f64 - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|y| {
            let i = y.round();
            let name = (i >= 0.0 && (y - i).abs() < 0.01).then(|| d.names.get(n - 1 - i as usize)).flatten();
            name.cloned().unwrap_or_default()
        })
        .x_desc("ratio, other side over base")
        .label_style((SANS, 13))
        .axis_desc_style((SANS, 14))
        .draw()?;
    chart.draw_series(std::iter::once(Rectangle::new(
        [(band.0, -0.5), (band.1, n as f64 - 0.5)],
        RGBColor(225, 235, 245).filled(),
    )))?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(1.0, -0.5), (1.0, n as f64 - 0.5)],
        BLACK.stroke_width(1),
    )))?;
    for (i, f) in d.rows.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        let color = verdict_color(f.verdict);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(f.low, y), (f.high, y)],
            color.stroke_width(2),
        )))?;
        chart.draw_series(std::iter::once(Circle::new((f.ratio, y), 4, color.filled())))?;
    }
    root.present()
}
