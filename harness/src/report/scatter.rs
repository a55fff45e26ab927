//! What a rate costs, as a picture: for the report's smallest stream, each library in each
//! receive mode as a point, its rate against its CPU time per message (both on log axes).

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::View;
use super::charts::{COLORS, Chart, DrawResult, SANS, Section, log_span};
use super::cost;
use crate::matrix::Pattern;
use crate::results::Status;
use ipcbench_api::RecvMode;

/// One point: a library in one mode.
struct Point {
    label: String,
    color: RGBColor,
    mode: RecvMode,
    cpu_ns: f64,
    rate: f64,
}

fn points(view: &View, case: &str) -> Vec<Point> {
    let mut out = Vec::new();
    for col @ (lib, s) in &view.columns {
        let Some(r) = view.result(case, lib, *s).filter(|r| r.status == Status::Ok) else { continue };
        let color = COLORS[view.libraries.iter().position(|l| l == lib).unwrap_or(0) % COLORS.len()];
        for m in &r.modes {
            let Some(f) = m.median else { continue };
            let Some(cpu_ns) = f.cpu_ns_per_msg.filter(|c| *c > 0.0) else { continue };
            if f.msgs_per_s > 0.0 {
                out.push(Point {
                    label: view.column_label(col),
                    color,
                    mode: m.mode,
                    cpu_ns,
                    rate: f.msgs_per_s,
                });
            }
        }
    }
    out
}

/// `cost.svg` and `cost.png`, or nothing when no result of the case recorded its cost.
pub fn draw(view: &View, dir: &Path) -> Result<Option<Chart>> {
    let Some(case) = cost::focus(view, Pattern::Stream) else { return Ok(None) };
    let points = points(view, &case);
    if points.is_empty() {
        return Ok(None);
    }
    let title = format!("What a rate costs: {case}, messages per second against CPU time per message");
    let (svg, png) = (dir.join("cost.svg"), dir.join("cost.png"));
    let size = (1100, 720);
    plot(SVGBackend::new(&svg, size).into_drawing_area(), &title, &points)
        .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    plot(BitMapBackend::new(&png, size).into_drawing_area(), &title, &points)
        .map_err(|e| anyhow!("drawing {}: {e}", png.display()))?;
    Ok(Some(Chart { name: "cost".into(), title, section: Section::Cost }))
}

fn plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    points: &[Point],
) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (top, area) = root.split_vertically(70);
    top.draw(&Text::new(title.to_string(), (20, 12), (SANS, 20).into_font()))?;
    top.draw(&Text::new(
        "● polling (a non-blocking receive called again)   ▲ waiting (a blocking receive)   up and left is better",
        (20, 42),
        (SANS, 14).into_font(),
    ))?;
    let x = log_span(points.iter().map(|p| p.cpu_ns), 2.0);
    let y = log_span(points.iter().map(|p| p.rate / 1e6), 2.0);
    let mut chart = ChartBuilder::on(&area)
        .margin(20)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(x.log_scale(), y.log_scale())?;
    chart
        .configure_mesh()
        .x_desc("CPU time per message, every process of the case (ns)")
        .y_desc("M msg/s")
        .label_style((SANS, 14))
        .axis_desc_style((SANS, 15))
        .draw()?;
    for p in points {
        let at = (p.cpu_ns, p.rate / 1e6);
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
