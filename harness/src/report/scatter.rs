//! Each library in each receive mode as a labelled point on log axes: where it stands (the
//! smallest stream's rate against the smallest round trip's p50, at the top of the report), and
//! what a rate costs (the smallest stream's rate against its CPU time per message).

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::View;
use super::cost;
use super::plot::{COLORS, Chart, DrawResult, Place, SANS, log_span};
use crate::matrix::Pattern;
use crate::results::{Figures, Status};
use ipcbench_api::RecvMode;

/// One point: a library in one mode.
struct Point {
    label: String,
    color: RGBColor,
    mode: RecvMode,
    x: f64,
    y: f64,
}

/// A point per library and receive mode with both values, each from that mode's median.
fn points(view: &View, xy: impl Fn(&str, usize, RecvMode) -> Option<(f64, f64)>) -> Vec<Point> {
    let mut out = Vec::new();
    for col @ (lib, s) in &view.columns {
        let color = COLORS[view.libraries.iter().position(|l| l == lib).unwrap_or(0) % COLORS.len()];
        for mode in RecvMode::ALL {
            let Some((x, y)) = xy(lib, *s, mode).filter(|(x, y)| *x > 0.0 && *y > 0.0) else { continue };
            out.push(Point { label: view.column_label(col), color, mode, x, y });
        }
    }
    out
}

/// A mode's median figures of a passed result.
fn mode_figures(view: &View, case: &str, lib: &str, s: usize, mode: RecvMode) -> Option<Figures> {
    let r = view.result(case, lib, s).filter(|r| r.status == Status::Ok)?;
    r.modes.iter().find(|m| m.mode == mode)?.median
}

/// A chart's words: its title, its axes.
struct Words {
    name: &'static str,
    title: String,
    x: &'static str,
    y: &'static str,
}

fn write(dir: &Path, words: Words, place: Place, points: &[Point]) -> Result<Option<Chart>> {
    if points.is_empty() {
        return Ok(None);
    }
    let (svg, png) = (dir.join(format!("{}.svg", words.name)), dir.join(format!("{}.png", words.name)));
    let size = (1100, 720);
    plot(SVGBackend::new(&svg, size).into_drawing_area(), &words, points)
        .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    super::plot::png(&png, size, |root| plot(root, &words, points))?;
    Ok(Some(Chart { name: words.name.into(), title: words.title, place }))
}

/// `cost.svg` and `cost.png`: the smallest stream's rate against its CPU time per message, or
/// nothing when no result of the case recorded its cost.
pub fn draw(view: &View, dir: &Path) -> Result<Option<Chart>> {
    let Some(case) = cost::focus(view, Pattern::Stream) else { return Ok(None) };
    let points = points(view, |lib, s, mode| {
        let f = mode_figures(view, &case, lib, s, mode)?;
        Some((f.cpu_ns_per_msg?, f.msgs_per_s / 1e6))
    });
    let words = Words {
        name: "cost",
        title: format!("What a rate costs: {case}, messages per second against CPU time per message"),
        x: "CPU time per message, every process of the case (ns)",
        y: "M msg/s",
    };
    write(dir, words, Place::Cost, &points)
}

/// `placing.svg` and `placing.png`: where each library stands, the smallest stream's rate
/// against the smallest round trip's p50, each receive mode a point; nothing without both.
pub fn placing(view: &View, dir: &Path) -> Result<Option<Chart>> {
    let (Some(stream), Some(rtt)) =
        (cost::focus(view, Pattern::Stream), cost::focus(view, Pattern::StreamRtt))
    else {
        return Ok(None);
    };
    let points = points(view, |lib, s, mode| {
        let rate = mode_figures(view, &stream, lib, s, mode)?.msgs_per_s;
        let p50 = mode_figures(view, &rtt, lib, s, mode)?.p50_ns?;
        Some((p50 / 1e3, rate / 1e6))
    });
    let words = Words {
        name: "placing",
        title: format!("{}: {stream} rate against {rtt} p50", Place::Placing.title()),
        x: "round trip p50 (µs)",
        y: "stream M msg/s",
    };
    write(dir, words, Place::Placing, &points)
}

fn plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    words: &Words,
    points: &[Point],
) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (top, area) = root.split_vertically(70);
    top.draw(&Text::new(words.title.clone(), (20, 12), (SANS, 20).into_font()))?;
    top.draw(&Text::new(
        "● polling (a non-blocking receive called again)   ▲ waiting (a blocking receive)   up and left is better",
        (20, 42),
        (SANS, 14).into_font(),
    ))?;
    let x = log_span(points.iter().map(|p| p.x), 2.0);
    let y = log_span(points.iter().map(|p| p.y), 2.0);
    let mut chart = ChartBuilder::on(&area)
        .margin(20)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(x.log_scale(), y.log_scale())?;
    chart
        .configure_mesh()
        .x_desc(words.x)
        .y_desc(words.y)
        .label_style((SANS, 14))
        .axis_desc_style((SANS, 15))
        .draw()?;
    for p in points {
        let at = (p.x, p.y);
        let label = Text::new(p.label.clone(), (8, -7), (SANS, 13).into_font());
        match p.mode {
            RecvMode::Polling => {
                chart.draw_series(std::iter::once(
                    EmptyElement::at(at) + Circle::new((0, 0), 5, p.color.filled()) + label,
                ))?;
            }
            RecvMode::Waiting => {
                let marker = TriangleMarker::new((0, 0), 6, p.color.filled());
                chart.draw_series(std::iter::once(EmptyElement::at(at) + marker + label))?;
            }
        }
    }
    root.present()
}
