//! A size sweep's chart (`report::sizes` says when a view holds one): each library's stream
//! rate, its bandwidth (rate × size) and its round trip's p50 against the message size, one line
//! per library in its better receive mode, on log axes, with the machine's copy floor and polling
//! floor, each line broken where a size was not measured and its legend beside the panel. The
//! loans' chart draws its panels the same way (`draw_panels`).

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::pieces::multiples::{Axes, SMALL, Trace, draw_trace, figure_text, full_plot, grid, grid_size};
use super::pieces::{
    Chart, DrawResult, Entry, Place, Stroke, Style, heading, heading_height, legend, legend_width, log_span,
    mode_color, runs,
};
use super::{Drawing, Out, column_style};
use crate::format::nanos;
use crate::matrix::{Pattern, size_label};
use crate::report::sizes::{SWEEP, at, bytes_per_s, present, sizes};
use crate::report::{View, floor};
use crate::results::{CaseResult, Status};
use ipcbench_api::{RecvMode, Transfer};

/// `sizes.svg` and `sizes.png`, where the view holds a sweep.
pub struct Sizes;

impl Drawing for Sizes {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        Ok(draw(view, out.charts)?.into_iter().collect())
    }
}

/// A library's line, its runs broken where a size was not measured, a mark at each point: a
/// loan's dashed with hollow marks (beside the copies), a copy's solid with filled ones.
fn trace(label: String, style: Style, runs: Vec<Vec<(f64, f64)>>, dashed: bool) -> Trace {
    let marks = runs.iter().flatten().map(|&(x, y)| (x, y, !dashed)).collect();
    Trace { label, style, runs, marks, dashed }
}

/// A reference line: its label, its colour and its (size, value) points.
type Floor = (String, RGBColor, Vec<(f64, f64)>);

/// A line per library of `pattern`'s results moved by `transfer` against their size, labelled
/// `{library}{suffix}`: a size it has no passed result at breaks it; a loan's is dashed.
pub(super) fn lines(
    view: &View,
    (pattern, transfer): (Pattern, Transfer),
    suffix: &str,
    value: impl Fn(&CaseResult) -> Option<f64>,
) -> Vec<Trace> {
    let sizes = sizes(view, pattern, transfer);
    let mut out = Vec::new();
    for col in &view.columns {
        let points = sizes.iter().map(|&size| {
            let r = at(view, (pattern, transfer), size, col).filter(|r| r.status == Status::Ok)?;
            Some((size as f64, value(r).filter(|v| *v > 0.0)?))
        });
        let runs = runs(points);
        if !runs.is_empty() {
            let label = format!("{}{suffix}", view.column_label(col));
            out.push(trace(label, column_style(view, col), runs, transfer == Transfer::Loan));
        }
    }
    out
}

pub(super) struct Panel {
    pub title: &'static str,
    pub unit: &'static str,
    /// Whether the figure is a time in µs (its ticks then carry their unit).
    pub time: bool,
    /// Its lines, the loan mode's dashed after the copies.
    pub lines: Vec<Trace>,
    /// A reference line.
    pub floor: Option<Floor>,
}

impl Panel {
    /// The legend beside the panel: each line, then the floor.
    fn entries(&self) -> Vec<Entry> {
        let stroke = |l: &Trace| if l.dashed { Stroke::Dashed } else { Stroke::Solid };
        let lines = self.lines.iter().map(|l| Entry::new(l.label.clone(), l.style, stroke(l)));
        let floor =
            self.floor.iter().map(|(label, color, _)| Entry::line(label.clone(), *color, Stroke::Dashed));
        lines.chain(floor).collect()
    }

    /// Whether its lines are more than one plot shows a reader: then a panel each.
    fn crowded(&self) -> bool {
        self.lines.len() > SMALL
    }

    /// Its height: a plot tall enough for its legend, or a grid of small panels.
    fn height(&self) -> u32 {
        if self.crowded() {
            grid_size(self.lines.len()).1
        } else {
            PANEL_H.max(80 + super::pieces::ROW as u32 * self.entries().len() as u32)
        }
    }

    /// Its axes: a tick at each size measured (thinned to `most`), the figure's span up, in
    /// its unit; None where it has no point.
    fn axes(&self, most: usize) -> Option<Axes<'static>> {
        let points = self.lines.iter().flat_map(|l| l.runs.iter().flatten().copied());
        let all: Vec<(f64, f64)> =
            points.chain(self.floor.iter().flat_map(|f| f.2.iter().copied())).collect();
        let mut measured: Vec<f64> = all.iter().map(|p| p.0).collect();
        measured.sort_by(f64::total_cmp);
        measured.dedup();
        let (lo, hi) = (*measured.first()?, *measured.last()?);
        Some(Axes {
            x: (lo / 1.3)..(hi * 1.3),
            // So that the labels keep apart.
            x_ticks: measured.iter().copied().step_by(measured.len().div_ceil(most)).collect(),
            y: log_span(all.iter().map(|p| p.1), 1.5),
            x_text: &size_text,
            y_text: figure_text(self.time),
        })
    }
}

/// `sizes.svg` and `sizes.png`, or nothing when the view holds no sweep.
fn draw(view: &View, dir: &Path) -> Result<Option<Chart>> {
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
            floor: None,
        },
        Panel {
            title: "Stream bandwidth",
            unit: "GB/s",
            time: false,
            lines: lines(view, stream, "", |r| Some(bytes_per_s(r)? / 1e9)),
            floor: copy.filter(|c| !c.2.is_empty()),
        },
    ];
    if rtt_sizes.len() >= SWEEP {
        panels.push(Panel {
            title: "Round trip p50",
            unit: "p50",
            time: true,
            lines: lines(view, (Pattern::StreamRtt, Transfer::Copy), "", |r| Some(r.median?.p50_ns? / 1e3)),
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
/// it (or a grid of small panels, where it has more lines than a plot shows), under a title and
/// a subtitle.
pub(super) fn draw_panels(dir: &Path, chart: Chart, subtitle: &str, panels: &[Panel]) -> Result<Chart> {
    let (svg, png) = (dir.join(format!("{}.svg", chart.name)), dir.join(format!("{}.png", chart.name)));
    let legend = panels.iter().map(|p| legend_width(&p.entries())).max().unwrap_or(0).clamp(160, 560);
    let grid = panels.iter().filter(|p| p.crowded()).map(|p| grid_size(p.lines.len()).0);
    let w = grid.fold(PLOT_W + legend as u32 + 20, u32::max);
    let size =
        (w, heading_height(&chart.title, &[subtitle], w) + panels.iter().map(Panel::height).sum::<u32>());
    plot(SVGBackend::new(&svg, size).into_drawing_area(), (&chart.title, subtitle), panels)
        .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    super::pieces::png(&png, size, |root| plot(root, (&chart.title, subtitle), panels))?;
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
        let (whole, below) = rest.split_vertically(panel.height());
        rest = below;
        if panel.crowded() {
            small_panels(&whole, panel)?;
        } else {
            let (area, beside) = whole.split_horizontally(PLOT_W);
            legend(&beside, (10, 60), &panel.entries())?;
            draw_panel(&area, panel)?;
        }
    }
    root.present()
}

/// A size tick: `4KiB`.
fn size_text(v: &f64) -> String {
    size_label(v.round() as usize)
}

/// One panel: its lines on log axes, a tick at every size measured.
fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel) -> DrawResult<DB::ErrorType> {
    let Some(axes) = panel.axes(12) else { return Ok(()) };
    let mut chart = full_plot(area, panel.title, ("message size", panel.unit), &axes)?;
    for line in &panel.lines {
        draw_trace(&mut chart, line, false)?;
    }
    if let Some((_, color, points)) = &panel.floor {
        let style = ShapeStyle::from(color).stroke_width(1);
        chart.draw_series(DashedLineSeries::new(points.iter().copied(), 6, 4, style))?;
    }
    Ok(())
}

/// A crowded panel: a small panel per library, its floor dashed across each.
fn small_panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
) -> DrawResult<DB::ErrorType> {
    let Some(axes) = panel.axes(5) else { return Ok(()) };
    let floor =
        panel.floor.as_ref().map(|(label, _, _)| format!("; dashed: the {label}")).unwrap_or_default();
    let words = format!(
        "{} ({}) against the message size: a panel per library, the others faint behind it{floor}",
        panel.title, panel.unit
    );
    let reference = panel.floor.as_ref().map(|(_, color, points)| (*color, points.as_slice()));
    grid(area, &words, &panel.lines, &axes, reference)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::pieces::{CONTROL, MAX_W, font};

    fn panel(lines: usize) -> Panel {
        let runs = |i| vec![vec![(16.0, 1.0 + i as f64), (1024.0, 2.0)], vec![(65536.0, 0.5)]];
        let line = |i| trace(format!("library {i}"), CONTROL, runs(i), false);
        Panel {
            title: "Stream rate",
            unit: "M msg/s",
            time: false,
            lines: (0..lines).map(line).collect(),
            floor: Some(("copy floor".into(), BLACK, vec![(16.0, 9.0), (65536.0, 3.0)])),
        }
    }

    /// A sweep of fifteen libraries goes into a small panel each, eight share one plot; the
    /// chart is no wider than a README shows and as tall as its panels.
    #[test]
    fn a_sweep_of_many_libraries_goes_in_small_panels() {
        assert!(panel(15).crowded() && !panel(8).crowded());
        assert_eq!(panel(15).height(), grid_size(15).1);
        assert_eq!(panel(15).lines.len(), 15);
        assert_eq!(panel(15).lines[0].marks.len(), 3, "a mark at each size measured");
        font();
        let dir = std::env::temp_dir().join(format!("ipcbench-sizes-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chart = Chart { name: "sizes".into(), title: "Across message sizes".into(), place: Place::Sizes };
        draw_panels(&dir, chart, "a subtitle", &[panel(15), panel(8)]).unwrap();
        let svg = std::fs::read_to_string(dir.join("sizes.svg")).unwrap();
        let width: u32 =
            svg.split("width=\"").nth(1).and_then(|w| w.split('"').next()).unwrap().parse().unwrap();
        assert!(width <= MAX_W, "{width} px wide");
        for i in 0..15 {
            // plotters writes a text's words on a line of their own.
            assert!(svg.contains(&format!("\nlibrary {i}\n")), "library {i}'s panel");
        }
        assert!(std::fs::metadata(dir.join("sizes.png")).unwrap().len() > 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
