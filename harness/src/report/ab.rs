//! An A/B run as the terminal and the report show it: each library's figure on both sides, their
//! paired ratio with its interval, the rounds it took and its verdict; the sentinel's rows last.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::View;
use super::plot::{Chart, DrawResult, MAX_W, Place, SANS, heading, heading_height, text_width};
use crate::format::{nanos, rate, resolution, whole_percent};
use crate::report::model::{Cell, Table};
use crate::results::ab::{AbFigure, AbRecord, AbSettings, AbVerdict, Side};
use crate::results::{Document, Figure};

/// The first file of the report that is an A/B run: its record and settings.
pub fn of<'a>(view: &'a View) -> Option<(&'a Document, &'a AbRecord, &'a AbSettings)> {
    view.sources.iter().find_map(|s| Some((&s.doc, s.doc.ab.as_ref()?, s.doc.settings.config.ab.as_ref()?)))
}

fn value(figure: Figure, v: f64) -> String {
    match figure {
        Figure::MsgsPerS => rate(v),
        Figure::P50Ns => nanos(v),
    }
}

/// The rows of every figure: the candidate's first, in the run's order, then the sentinels'.
pub fn table(record: &AbRecord) -> Table {
    let header = [
        "case",
        "library",
        "mode",
        "figure",
        "base",
        "other",
        "ratio",
        "95% interval",
        "tells",
        "rounds",
        "verdict",
    ];
    let rows = record
        .figures
        .iter()
        .filter(|f| f.side == Side::Candidate)
        .chain(record.figures.iter().filter(|f| f.side == Side::Sentinel))
        .map(|f: &AbFigure| {
            let library = if f.side == Side::Sentinel {
                format!("{} (sentinel)", f.library)
            } else {
                f.library.clone()
            };
            [
                f.case.clone(),
                library,
                f.mode.as_str().into(),
                f.figure.measure().name().into(),
                value(f.figure, f.base),
                value(f.figure, f.other),
                format!("{:.3}", f.ratio),
                format!("{:.3} to {:.3}", f.low, f.high),
                f.resolution.map_or("-".into(), resolution),
                match f.unheld {
                    0 => f.rounds.to_string(),
                    n => format!("{} (+{n} moved)", f.rounds),
                },
                f.verdict.as_str().into(),
            ]
            .map(Cell::Text)
            .to_vec()
        })
        .collect();
    Table { header: header.map(String::from).to_vec(), rows, notes: Vec::new() }
}

/// What the table's numbers mean, and what the run found, in sentences.
pub fn preamble(record: &AbRecord, settings: &AbSettings) -> Vec<String> {
    let mut out: Vec<String> = record
        .binaries
        .iter()
        .map(|b| format!("{}: {} (ipcbench {}; {})", b.side.as_str(), b.path.display(), b.version, b.build))
        .collect();
    if let Some(h) = settings.handicap_ns {
        out.push(format!(
            "The other side is the base binary with a calibration weight of {} before each message it sends.",
            nanos(h)
        ));
    }
    out.push(format!(
        "Each ratio is the other side's figure over the base's, the geometric mean of the rounds' ratios (each of \
         two runs back to back) with its 95% interval; \"tells\" is the interval's half-width. A round whose two \
         runs' host probes after their windows saw different placements is left out (\"moved\"). A figure is \
         slower or faster when its change lies beyond {} and its one-sided test survives a Benjamini-Hochberg \
         correction at 5% over the run's figures; no change when its whole interval lies within ±{}; unresolved \
         otherwise. The sentinel is the base binary held against itself.",
        whole_percent(settings.threshold),
        whole_percent(settings.threshold)
    ));
    out
}

/// The counts of each verdict of the candidate's figures, and the sentinels'.
pub fn summary(record: &AbRecord) -> String {
    let count =
        |side: Side, v: AbVerdict| record.figures.iter().filter(|f| f.side == side && f.verdict == v).count();
    let of = |side: Side| {
        format!(
            "{} slower, {} faster, {} no change, {} unresolved",
            count(side, AbVerdict::Slower),
            count(side, AbVerdict::Faster),
            count(side, AbVerdict::NoChange),
            count(side, AbVerdict::Unresolved)
        )
    };
    let rounds: Vec<u32> = record.figures.iter().map(|f| f.rounds).collect();
    let (lo, hi) = (rounds.iter().min().copied().unwrap_or(0), rounds.iter().max().copied().unwrap_or(0));
    format!(
        "{} figures of the candidate: {}. Sentinel: {}. Rounds taken: {lo} to {hi}.",
        record.figures.iter().filter(|f| f.side == Side::Candidate).count(),
        of(Side::Candidate),
        of(Side::Sentinel)
    )
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
pub fn draw(view: &View, dir: &Path) -> Result<Vec<Chart>> {
    let Some((_, record, settings)) = of(view) else { return Ok(Vec::new()) };
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
    let (svg, png) = (dir.join("ab.svg"), dir.join("ab.png"));
    let drawn = Drawn { rows: &rows, names: &names, names_w, threshold: settings.threshold, title: &title };
    plot(SVGBackend::new(&svg, size).into_drawing_area(), &drawn)
        .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    super::plot::png(&png, size, |root| plot(root, &drawn))?;
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
