//! A size sweep as a reader wants it (`ipcbench sweep`, or any report with streams at three
//! sizes or more): each library's stream rate, its bandwidth (rate × size) and its round trip's
//! p50 against the message size, one line per library in its better receive mode, on log axes,
//! with the machine's copy floor and polling floor; and a table of each stream's rate and
//! bandwidth by size.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::View;
use super::floor;
use super::model::{Cell, Table};
use super::plot::{COLORS, Chart, DrawResult, Place, SANS, log_span, mode_color};
use crate::format::{bandwidth, nanos, rate};
use crate::matrix::{Pattern, size_label};
use crate::results::{CaseResult, Status};
use ipcbench_api::{RecvMode, Transfer};

pub const SIZES: &str = "Each library's stream rate, its bandwidth (rate × size) and its round trip's p50 \
against the message size, in its better receive mode (log axes). The dashed black line is the machine's copy \
floor (one buffer copied into another at that size), the blue one its polling round-trip floor.";

/// Streams at fewer sizes than this are cases, not a sweep.
const SWEEP: usize = 3;

/// The sizes the view's unbatched results of `pattern` moved by `transfer` have, smallest first.
pub(super) fn sizes(view: &View, pattern: Pattern, transfer: Transfer) -> Vec<usize> {
    let mut out: Vec<usize> = view
        .sources
        .iter()
        .flat_map(|s| &s.doc.results)
        .filter(|r| r.pattern == pattern && r.batch.is_none() && r.transfer == transfer)
        .map(|r| r.size)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether the view holds a sweep.
pub fn present(view: &View) -> bool {
    sizes(view, Pattern::Stream, Transfer::Copy).len() >= SWEEP
}

/// The view's result of `pattern` moved by `transfer` at `size` in column `col`.
pub(super) fn at<'a>(
    view: &View<'a>,
    (pattern, transfer): (Pattern, Transfer),
    size: usize,
    (lib, s): &(String, usize),
) -> Option<&'a CaseResult> {
    view.sources[*s].doc.results.iter().find(|r| {
        r.pattern == pattern
            && r.batch.is_none()
            && r.transfer == transfer
            && r.size == size
            && &r.library == lib
    })
}

/// A stream's bandwidth: its rate times its size.
fn bytes_per_s(r: &CaseResult) -> Option<f64> {
    Some(r.median?.msgs_per_s * r.size as f64)
}

/// Rows of stream sizes, a column per library: rate and bandwidth.
pub fn table(view: &View) -> Table {
    let mut header = vec!["stream size".to_string()];
    header.extend(view.columns.iter().map(|c| view.column_label(c)));
    let rows = sizes(view, Pattern::Stream, Transfer::Copy)
        .into_iter()
        .map(|size| {
            let mut row = vec![Cell::Text(size_label(size))];
            for col in &view.columns {
                row.push(match at(view, (Pattern::Stream, Transfer::Copy), size, col) {
                    Some(r) if r.status == Status::Ok => match (r.median, bytes_per_s(r)) {
                        (Some(f), Some(b)) => Cell::Text(format!("{}, {}", rate(f.msgs_per_s), bandwidth(b))),
                        _ => Cell::Empty,
                    },
                    Some(r) if r.status == Status::Unsupported => Cell::Text("—".into()),
                    Some(r) => Cell::Text(r.status.as_str().into()),
                    None => Cell::Empty,
                });
            }
            row
        })
        .collect();
    Table { header, rows, notes: Vec::new() }
}

/// A line: (label, color, [(size, value)]).
pub(super) type Line = (String, RGBColor, Vec<(f64, f64)>);
pub(super) type Lines = Vec<Line>;

/// A line per library of `pattern`'s results moved by `transfer` against their size, labelled
/// `{library}{suffix}`.
pub(super) fn lines(
    view: &View,
    (pattern, transfer): (Pattern, Transfer),
    suffix: &str,
    value: impl Fn(&CaseResult) -> Option<f64>,
) -> Lines {
    let sizes = sizes(view, pattern, transfer);
    let mut out = Vec::new();
    for col in &view.columns {
        let color = COLORS[view.libraries.iter().position(|l| *l == col.0).unwrap_or(0) % COLORS.len()];
        let points: Vec<(f64, f64)> = sizes
            .iter()
            .filter_map(|&size| {
                let r = at(view, (pattern, transfer), size, col).filter(|r| r.status == Status::Ok)?;
                Some((size as f64, value(r).filter(|v| *v > 0.0)?))
            })
            .collect();
        if !points.is_empty() {
            out.push((format!("{}{suffix}", view.column_label(col)), color, points));
        }
    }
    out
}

pub(super) struct Panel {
    pub title: &'static str,
    pub unit: &'static str,
    /// Where the legend covers the fewest lines.
    pub legend: SeriesLabelPosition,
    pub lines: Lines,
    /// Lines drawn dashed in their library's colour (the loan mode's, beside the copies).
    pub dashed: Lines,
    /// A reference line: its label and its (size, value) points.
    pub floor: Option<Line>,
}

/// `sizes.svg` and `sizes.png`, or nothing when the view holds no sweep.
pub fn draw(view: &View, dir: &Path) -> Result<Option<Chart>> {
    if !present(view) {
        return Ok(None);
    }
    let floors = (0..view.sources.len()).filter_map(|s| floor::floors(view, s)).next();
    let stream_sizes = sizes(view, Pattern::Stream, Transfer::Copy);
    let copy = floors.as_ref().map(|f| {
        let points: Vec<(f64, f64)> = stream_sizes
            .iter()
            .filter_map(|&size| Some((size as f64, f.copy_rate(size)? * size as f64 / 1e6)))
            .collect();
        ("copy floor".to_string(), BLACK, points)
    });
    let rtt_sizes = sizes(view, Pattern::StreamRtt, Transfer::Copy);
    let polling = floors.as_ref().and_then(|f| f.of(RecvMode::Polling)).map(|t| {
        let points = rtt_sizes.iter().map(|&s| (s as f64, t.p50_ns / 1e3)).collect();
        (format!("polling floor {}", nanos(t.p50_ns)), mode_color(RecvMode::Polling), points)
    });
    let mut panels = vec![
        Panel {
            title: "Stream rate",
            unit: "M msg/s",
            legend: SeriesLabelPosition::LowerLeft,
            lines: lines(view, (Pattern::Stream, Transfer::Copy), "", |r| Some(r.median?.msgs_per_s / 1e6)),
            dashed: Vec::new(),
            floor: None,
        },
        Panel {
            title: "Stream bandwidth",
            unit: "MB/s",
            legend: SeriesLabelPosition::UpperLeft,
            lines: lines(view, (Pattern::Stream, Transfer::Copy), "", |r| Some(bytes_per_s(r)? / 1e6)),
            dashed: Vec::new(),
            floor: copy.filter(|c| !c.2.is_empty()),
        },
    ];
    if rtt_sizes.len() >= SWEEP {
        panels.push(Panel {
            title: "Round trip p50",
            unit: "µs",
            legend: SeriesLabelPosition::LowerRight,
            lines: lines(view, (Pattern::StreamRtt, Transfer::Copy), "", |r| Some(r.median?.p50_ns? / 1e3)),
            dashed: Vec::new(),
            floor: polling,
        });
    }
    let title = format!(
        "{}: {} to {}",
        Place::Sizes.title(),
        size_label(stream_sizes[0]),
        size_label(*stream_sizes.last().expect("a sweep has sizes"))
    );
    let chart = Chart { name: "sizes".into(), title, place: Place::Sizes };
    draw_panels(dir, chart, "one line per library, its better receive mode; both axes logarithmic", &panels)
        .map(Some)
}

/// `{name}.svg` and `{name}.png`: the panels one above the other, under a title and a subtitle.
pub(super) fn draw_panels(dir: &Path, chart: Chart, subtitle: &str, panels: &[Panel]) -> Result<Chart> {
    let (svg, png) = (dir.join(format!("{}.svg", chart.name)), dir.join(format!("{}.png", chart.name)));
    let size = (1100, 90 + 430 * panels.len() as u32);
    plot(SVGBackend::new(&svg, size).into_drawing_area(), (&chart.title, subtitle), panels)
        .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    super::plot::png(&png, size, |root| plot(root, (&chart.title, subtitle), panels))?;
    Ok(chart)
}

fn plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    (title, subtitle): (&str, &str),
    panels: &[Panel],
) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(60);
    top.draw(&Text::new(title.to_string(), (20, 14), (SANS, 20).into_font()))?;
    top.draw(&Text::new(subtitle.to_string(), (20, 40), (SANS, 14).into_font()))?;
    let areas = rest.split_evenly((panels.len(), 1));
    for (panel, area) in panels.iter().zip(areas) {
        let all = panel
            .lines
            .iter()
            .chain(&panel.dashed)
            .chain(panel.floor.iter())
            .flat_map(|l| l.2.iter().copied());
        if all.clone().next().is_none() {
            continue;
        }
        // Sizes go in powers of two: the x axis is log2 of the size, one label per power.
        let (lo, hi) = all.clone().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
        let x = (lo.log2() - 0.3)..(hi.log2() + 0.3);
        let y = log_span(all.map(|p| p.1), 1.5);
        let mut chart = ChartBuilder::on(&area)
            .margin(16)
            .caption(panel.title, (SANS, 17))
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(x, y.log_scale())?;
        chart
            .configure_mesh()
            .x_desc("message size")
            .y_desc(panel.unit)
            .x_labels((hi.log2() - lo.log2()) as usize + 2)
            .x_label_formatter(&|v| {
                if v.fract().abs() < 1e-9 { size_label(v.exp2() as usize) } else { String::new() }
            })
            .label_style((SANS, 13))
            .axis_desc_style((SANS, 14))
            .draw()?;
        for (label, color, points) in &panel.lines {
            let style = ShapeStyle::from(color).stroke_width(2);
            chart
                .draw_series(LineSeries::new(points.iter().map(|p| (p.0.log2(), p.1)), style))?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], style));
            chart.draw_series(points.iter().map(|p| Circle::new((p.0.log2(), p.1), 3, color.filled())))?;
        }
        for (label, color, points) in &panel.dashed {
            let style = ShapeStyle::from(color).stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(points.iter().map(|p| (p.0.log2(), p.1)), 8, 5, style))?
                .label(label.clone())
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new([(0, 0), (7, 0)], style)
                        + PathElement::new([(11, 0), (18, 0)], style)
                });
            chart.draw_series(
                points.iter().map(|p| TriangleMarker::new((p.0.log2(), p.1), 4, color.filled())),
            )?;
        }
        if let Some((label, color, points)) = &panel.floor {
            let style = ShapeStyle::from(color).stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new(points.iter().map(|p| (p.0.log2(), p.1)), 6, 4, style))?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], style));
        }
        chart
            .configure_series_labels()
            .position(panel.legend.clone())
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .label_font((SANS, 12))
            .draw()?;
    }
    root.present()
}
