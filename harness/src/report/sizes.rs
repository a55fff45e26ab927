//! A size sweep as a reader wants it (`ipcbench sweep`, or any report with streams at three
//! sizes or more): each library's stream rate, its bandwidth (rate × size) and its round trip's
//! p50 against the message size, one line per library in its better receive mode, on log axes,
//! with the machine's copy floor and polling floor, each line broken where a size was not
//! measured and its legend beside the panel; and a table of each stream's rate and bandwidth by
//! size.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::View;
use super::floor;
use super::model::{Cell, Table};
use super::plot::{
    Chart, DrawResult, Entry, Place, SANS, Stroke, Style, column_style, heading, heading_height, legend,
    legend_width, log_span, mark, mode_color, number_tick, runs, time_tick,
};
use crate::format::{bandwidth, nanos, rate};
use crate::matrix::{Pattern, size_label};
use crate::results::{CaseResult, Status};
use ipcbench_api::{RecvMode, Transfer};

pub const SIZES: &str = "Each library's stream rate, its bandwidth (rate × size) and its round trip's p50 \
against the message size, in its better receive mode (log axes). The dashed black line is the machine's copy \
floor (one buffer copied into another at that size), the blue one its polling round-trip floor. A line joins \
two sizes both measured: a size a library did not carry leaves a gap.";

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

/// A library's line: its label, its style, and its runs (broken where a size was not measured).
pub(super) struct Line {
    pub label: String,
    pub style: Style,
    pub runs: Vec<Vec<(f64, f64)>>,
}

pub(super) type Lines = Vec<Line>;

/// A reference line: its label, its colour and its (size, value) points.
pub(super) type Floor = (String, RGBColor, Vec<(f64, f64)>);

/// A line per library of `pattern`'s results moved by `transfer` against their size, labelled
/// `{library}{suffix}`: a size it has no passed result at breaks it.
pub(super) fn lines(
    view: &View,
    (pattern, transfer): (Pattern, Transfer),
    suffix: &str,
    value: impl Fn(&CaseResult) -> Option<f64>,
) -> Lines {
    let sizes = sizes(view, pattern, transfer);
    let mut out = Vec::new();
    for col in &view.columns {
        let points = sizes.iter().map(|&size| {
            let r = at(view, (pattern, transfer), size, col).filter(|r| r.status == Status::Ok)?;
            Some((size as f64, value(r).filter(|v| *v > 0.0)?))
        });
        let runs = runs(points);
        if !runs.is_empty() {
            out.push(Line {
                label: format!("{}{suffix}", view.column_label(col)),
                style: column_style(view, col),
                runs,
            });
        }
    }
    out
}

pub(super) struct Panel {
    pub title: &'static str,
    pub unit: &'static str,
    /// Whether the figure is a time in µs (its ticks then carry their unit).
    pub time: bool,
    pub lines: Lines,
    /// Lines drawn dashed in their library's colour (the loan mode's, beside the copies).
    pub dashed: Lines,
    /// A reference line.
    pub floor: Option<Floor>,
}

impl Panel {
    /// The legend beside the panel: each line, then the floor.
    fn entries(&self) -> Vec<Entry> {
        let solid = self.lines.iter().map(|l| Entry::new(l.label.clone(), l.style, Stroke::Solid));
        let dashed = self.dashed.iter().map(|l| Entry::new(l.label.clone(), l.style, Stroke::Dashed));
        let floor =
            self.floor.iter().map(|(label, color, _)| Entry::line(label.clone(), *color, Stroke::Dashed));
        solid.chain(dashed).chain(floor).collect()
    }
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
            .filter_map(|&size| Some((size as f64, f.copy_rate(size)? * size as f64 / 1e9)))
            .collect();
        ("copy floor".to_string(), BLACK, points)
    });
    let rtt_sizes = sizes(view, Pattern::StreamRtt, Transfer::Copy);
    let polling = floors.as_ref().and_then(|f| f.of(RecvMode::Polling)).map(|t| {
        let points = rtt_sizes.iter().map(|&s| (s as f64, t.p50_ns / 1e3)).collect();
        (format!("polling floor {}", nanos(t.p50_ns)), mode_color(RecvMode::Polling), points)
    });
    let stream = (Pattern::Stream, Transfer::Copy);
    let mut panels = vec![
        Panel {
            title: "Stream rate",
            unit: "M msg/s",
            time: false,
            lines: lines(view, stream, "", |r| Some(r.median?.msgs_per_s / 1e6)),
            dashed: Vec::new(),
            floor: None,
        },
        Panel {
            title: "Stream bandwidth",
            unit: "GB/s",
            time: false,
            lines: lines(view, stream, "", |r| Some(bytes_per_s(r)? / 1e9)),
            dashed: Vec::new(),
            floor: copy.filter(|c| !c.2.is_empty()),
        },
    ];
    if rtt_sizes.len() >= SWEEP {
        panels.push(Panel {
            title: "Round trip p50",
            unit: "p50",
            time: true,
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

/// The plot's width; the legends stand to its right.
const PLOT_W: u32 = 1000;
const PANEL_H: u32 = 430;

/// `{name}.svg` and `{name}.png`: the panels one above the other, each with its legend beside
/// it, under a title and a subtitle.
pub(super) fn draw_panels(dir: &Path, chart: Chart, subtitle: &str, panels: &[Panel]) -> Result<Chart> {
    let (svg, png) = (dir.join(format!("{}.svg", chart.name)), dir.join(format!("{}.png", chart.name)));
    let legend = panels.iter().map(|p| legend_width(&p.entries())).max().unwrap_or(0).clamp(160, 560);
    let w = PLOT_W + legend as u32 + 20;
    let tall = |p: &Panel| PANEL_H.max(80 + super::plot::ROW as u32 * p.entries().len() as u32);
    let size = (w, heading_height(&chart.title, &[subtitle], w) + panels.iter().map(tall).sum::<u32>());
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
    let (top, mut rest) = root.split_vertically(heading_height(title, &[subtitle], root.dim_in_pixel().0));
    heading(&top, title, &[subtitle])?;
    for panel in panels {
        let entries = panel.entries();
        let (whole, below) =
            rest.split_vertically(PANEL_H.max(80 + super::plot::ROW as u32 * entries.len() as u32));
        rest = below;
        let (area, beside) = whole.split_horizontally(PLOT_W);
        legend(&beside, (10, 60), &entries)?;
        draw_panel(&area, panel)?;
    }
    root.present()
}

/// One panel: its lines on log axes, a tick at every size measured.
fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel) -> DrawResult<DB::ErrorType> {
    let points = panel.lines.iter().chain(&panel.dashed).flat_map(|l| l.runs.iter().flatten().copied());
    let all = points.chain(panel.floor.iter().flat_map(|f| f.2.iter().copied()));
    if all.clone().next().is_none() {
        return Ok(());
    }
    let mut measured: Vec<f64> = all.clone().map(|p| p.0).collect();
    measured.sort_by(f64::total_cmp);
    measured.dedup();
    // A tick at each size measured, thinned to a dozen or so, so that the labels keep apart.
    let ticks: Vec<f64> = measured.iter().copied().step_by(measured.len().div_ceil(12)).collect();
    let (lo, hi) = (measured[0], measured[measured.len() - 1]);
    let x = ((lo / 1.3)..(hi * 1.3)).log_scale().with_key_points(ticks);
    let y = super::plot::log_axis(log_span(all.map(|p| p.1), 1.5));
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .caption(panel.title, (SANS, 17))
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)?;
    let y_ticks = |v: &f64| if panel.time { time_tick(*v) } else { number_tick(*v) };
    chart
        .configure_mesh()
        .x_desc("message size")
        .y_desc(panel.unit)
        .x_label_formatter(&|v| size_label(v.round() as usize))
        .y_label_formatter(&y_ticks)
        .label_style((SANS, 13))
        .axis_desc_style((SANS, 14))
        .draw()?;
    for (lines, dashed) in [(&panel.lines, false), (&panel.dashed, true)] {
        for line in lines {
            let style = ShapeStyle::from(&line.style.color).stroke_width(2);
            for run in &line.runs {
                if dashed {
                    chart.draw_series(DashedLineSeries::new(run.iter().copied(), 8, 5, style))?;
                } else {
                    chart.draw_series(LineSeries::new(run.iter().copied(), style))?;
                }
                chart.draw_series(run.iter().map(|&p| mark::<_, DB>(p, line.style, !dashed, 4)))?;
            }
        }
    }
    if let Some((_, color, points)) = &panel.floor {
        let style = ShapeStyle::from(color).stroke_width(1);
        chart.draw_series(DashedLineSeries::new(points.iter().copied(), 6, 4, style))?;
    }
    Ok(())
}
