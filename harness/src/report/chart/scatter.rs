//! Each library as its marks on log axes, one per receive mode (filled: polling; hollow:
//! waiting) joined by a line and labelled once, each label placed clear of the others and of
//! every mark: where it stands (the smallest stream's rate against the smallest round trip's p50,
//! at the top of the report), and what a rate costs (the smallest stream's rate against its CPU
//! time per message). The control is no mark among them: a dashed line across each axis at its
//! better figure, what every library is held against.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::pieces::{
    Bounds, CONTROL, Chart, DrawResult, Place, SANS, Style, around, heading, heading_height, log_axis,
    log_span, mark, number_tick, place_labels, text_width, time_tick,
};
use super::{Drawing, Out, column_style};
use crate::matrix::Pattern;
use crate::report::View;
use crate::results::{Figures, Status};
use ipcbench_api::{Kind, RecvMode};

/// What the marks mean, under the title.
const NOTE: &str = "filled: polling (a non-blocking receive called again); hollow: waiting (a blocking \
                    receive); a line joins one library's two. Up and left is better. Dashed: the control.";

/// One library's marks: a (mode, x, y) per receive mode with both figures.
struct Library {
    label: String,
    style: Style,
    marks: Vec<(RecvMode, f64, f64)>,
}

/// The control's lines: its least x and its greatest y, over its modes.
struct Control {
    label: String,
    x: f64,
    y: f64,
}

/// Each column's marks, from each mode's median; the control's as its lines.
fn libraries(
    view: &View,
    xy: impl Fn(&str, usize, RecvMode) -> Option<(f64, f64)>,
) -> (Vec<Library>, Vec<Control>) {
    let (mut libraries, mut controls) = (Vec::new(), Vec::new());
    for col @ (lib, s) in &view.columns {
        let marks: Vec<(RecvMode, f64, f64)> = RecvMode::ALL
            .into_iter()
            .filter_map(|mode| {
                xy(lib, *s, mode).filter(|(x, y)| *x > 0.0 && *y > 0.0).map(|(x, y)| (mode, x, y))
            })
            .collect();
        if marks.is_empty() {
            continue;
        }
        if view.kind(lib) == Some(Kind::Control) {
            let x = marks.iter().map(|m| m.1).fold(f64::MAX, f64::min);
            let y = marks.iter().map(|m| m.2).fold(0.0, f64::max);
            controls.push(Control { label: format!("the control{}", view.source_suffix(*s)), x, y });
        } else {
            libraries.push(Library { label: view.column_label(col), style: column_style(view, col), marks });
        }
    }
    (libraries, controls)
}

/// A mode's median figures of a passed result.
fn mode_figures(view: &View, case: &str, lib: &str, s: usize, mode: RecvMode) -> Option<Figures> {
    let r = view.result(case, lib, s).filter(|r| r.status == Status::Ok)?;
    r.modes.iter().find(|m| m.mode == mode)?.median
}

/// A chart's words: its title, its axes (x a time in µs, y a rate).
struct Words {
    name: &'static str,
    title: String,
    x: &'static str,
    y: &'static str,
}

fn write(
    dir: &Path,
    words: Words,
    place: Place,
    (libs, controls): (Vec<Library>, Vec<Control>),
) -> Result<Option<Chart>> {
    if libs.is_empty() {
        return Ok(None);
    }
    let (svg, png) = (dir.join(format!("{}.svg", words.name)), dir.join(format!("{}.png", words.name)));
    let size = (1200, 780);
    plot(SVGBackend::new(&svg, size).into_drawing_area(), &words, &libs, &controls)
        .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    super::pieces::png(&png, size, |root| plot(root, &words, &libs, &controls))?;
    Ok(Some(Chart { name: words.name.into(), title: words.title, place }))
}

/// `cost.svg` and `cost.png`: the smallest stream's rate against its CPU time per message,
/// where a result of the case recorded its cost.
pub struct Cost;

impl Drawing for Cost {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        Ok(cost(view, out.charts)?.into_iter().collect())
    }
}

/// `placing.svg` and `placing.png`: where each library stands, the smallest stream's rate
/// against the smallest round trip's p50, where the view has both.
pub struct Placing;

impl Drawing for Placing {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        Ok(placing(view, out.charts)?.into_iter().collect())
    }
}

/// The cost chart, or nothing when no result of the case recorded its cost.
fn cost(view: &View, dir: &Path) -> Result<Option<Chart>> {
    let Some(case) = crate::report::cost::focus(view, Pattern::Stream) else { return Ok(None) };
    let marks = libraries(view, |lib, s, mode| {
        let f = mode_figures(view, &case, lib, s, mode)?;
        Some((f.cpu_ns_per_msg? / 1e3, f.msgs_per_s / 1e6))
    });
    let words = Words {
        name: "cost",
        title: format!("What a rate costs: {case}, messages per second against CPU time per message"),
        x: "CPU time per message, every process of the case",
        y: "M msg/s",
    };
    write(dir, words, Place::Cost, marks)
}

/// The placing chart, each receive mode a mark; nothing without both cases.
fn placing(view: &View, dir: &Path) -> Result<Option<Chart>> {
    let (Some(stream), Some(rtt)) = (
        crate::report::cost::focus(view, Pattern::Stream),
        crate::report::cost::focus(view, Pattern::StreamRtt),
    ) else {
        return Ok(None);
    };
    let marks = libraries(view, |lib, s, mode| {
        let rate = mode_figures(view, &stream, lib, s, mode)?.msgs_per_s;
        let p50 = mode_figures(view, &rtt, lib, s, mode)?.p50_ns?;
        Some((p50 / 1e3, rate / 1e6))
    });
    let words = Words {
        name: "placing",
        title: format!("{}: {stream} rate against {rtt} p50", Place::Placing.title()),
        x: "round trip p50",
        y: "stream M msg/s",
    };
    write(dir, words, Place::Placing, marks)
}

fn plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    words: &Words,
    libs: &[Library],
    controls: &[Control],
) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (top, area) = root.split_vertically(heading_height(&words.title, &[NOTE], root.dim_in_pixel().0));
    heading(&top, &words.title, &[NOTE])?;
    let xs = libs.iter().flat_map(|l| l.marks.iter().map(|m| m.1)).chain(controls.iter().map(|c| c.x));
    let ys = libs.iter().flat_map(|l| l.marks.iter().map(|m| m.2)).chain(controls.iter().map(|c| c.y));
    let (x, y) = (log_span(xs, 2.0), log_span(ys, 2.0));
    let mut chart = ChartBuilder::on(&area)
        .margin(20)
        .margin_right(40)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(log_axis(x.clone()), log_axis(y.clone()))?;
    chart
        .configure_mesh()
        .x_desc(words.x)
        .y_desc(words.y)
        .x_label_formatter(&|v| time_tick(*v))
        .y_label_formatter(&|v| number_tick(*v))
        .label_style((SANS, 14))
        .axis_desc_style((SANS, 15))
        .draw()?;
    let dashed = ShapeStyle::from(&CONTROL.color).stroke_width(1);
    for c in controls {
        chart.draw_series(DashedLineSeries::new(vec![(x.start, c.y), (x.end, c.y)], 6, 4, dashed))?;
        chart.draw_series(DashedLineSeries::new(vec![(c.x, y.start), (c.x, y.end)], 6, 4, dashed))?;
    }
    for lib in libs {
        let line: Vec<(f64, f64)> = lib.marks.iter().map(|m| (m.1, m.2)).collect();
        chart.draw_series(std::iter::once(PathElement::new(line, lib.style.color.stroke_width(1))))?;
        chart.draw_series(
            lib.marks
                .iter()
                .map(|&(mode, x, y)| mark::<_, DB>((x, y), lib.style, mode == RecvMode::Polling, 5)),
        )?;
    }
    // Everything else in pixels: the words placed apart from one another and from the marks.
    let at = |x: f64, y: f64| chart.backend_coord(&(x, y));
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let mut taken: Vec<Bounds> =
        libs.iter().flat_map(|l| l.marks.iter().map(|m| around(at(m.1, m.2)))).collect();
    for c in controls {
        // The control's words at the top of its upright line and the left of its level one.
        let (vx, hy) = (at(c.x, y.end).0, at(x.start, c.y).1);
        let w = text_width(&c.label, 13);
        for (px, py) in [(vx + 4, yr.start + 2), (xr.start + 4, hy - 17)] {
            root.draw(&Text::new(c.label.clone(), (px, py), (SANS, 13).into_font()))?;
            taken.push((px, py, px + w, py + 15));
        }
    }
    labels(&root, libs, &taken, (xr.start, yr.start, xr.end, yr.end), at)
}

/// Each library's label, beside its uppermost mark where that is free, else further out with a
/// line back to it.
fn labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    libs: &[Library],
    taken: &[Bounds],
    within: Bounds,
    at: impl Fn(f64, f64) -> (i32, i32),
) -> DrawResult<DB::ErrorType> {
    let anchors: Vec<((i32, i32), (i32, i32))> = libs
        .iter()
        .map(|l| {
            let top = l.marks.iter().fold(l.marks[0], |a, m| if m.2 > a.2 { *m } else { a });
            (at(top.1, top.2), (text_width(&l.label, 13), 15))
        })
        .collect();
    let placed = place_labels(taken, &anchors, within);
    for ((lib, ((x, y), off)), ((px, py), (w, h))) in libs.iter().zip(placed).zip(anchors.iter().copied()) {
        if off {
            // To the label's nearest edge.
            let to = (px.clamp(x, x + w), py.clamp(y, y + h));
            root.draw(&PathElement::new(vec![(px, py), to], lib.style.color.mix(0.6).stroke_width(1)))?;
        }
        root.draw(&Text::new(lib.label.clone(), (x, y), (SANS, 13).into_font()))?;
    }
    root.present()
}
