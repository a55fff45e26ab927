//! Lines on two log axes, and small multiples of them: where more lines would share a plot than
//! a reader can follow, each has a small panel of its own on the same axes, the others faint
//! behind it. The scaling charts and the size sweep draw their crowded panels so.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::prelude::*;

use super::style::{Style, mark};
use super::{DrawResult, SANS, log_axis, number_tick, time_tick};

/// The most lines one plot draws; more go in a panel each.
pub const SMALL: usize = 8;

/// The grid: this many panels across, each this size, under a caption this tall.
pub const COLUMNS: usize = 5;
pub const CELL_W: u32 = 300;
pub const CELL_H: u32 = 230;
pub const CAPTION: u32 = 34;

/// A library's line: its label and style, its runs (broken where a point has no figure), its
/// marks (filled or hollow) and whether it is drawn dashed.
pub struct Trace {
    pub label: String,
    pub style: Style,
    pub runs: Vec<Vec<(f64, f64)>>,
    pub marks: Vec<(f64, f64, bool)>,
    pub dashed: bool,
}

type Axis = WithKeyPoints<LogCoord<f64>>;
pub type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

/// Two log axes: x's span and its ticks, y's span, and how each tick reads.
pub struct Axes<'a> {
    pub x: Range<f64>,
    pub x_ticks: Vec<f64>,
    pub y: Range<f64>,
    pub x_text: &'a dyn Fn(&f64) -> String,
    pub y_text: &'a dyn Fn(&f64) -> String,
}

impl Axes<'_> {
    pub fn x_axis(&self) -> Axis {
        self.x.clone().log_scale().with_key_points(self.x_ticks.clone())
    }

    pub fn y_axis(&self) -> Axis {
        log_axis(self.y.clone())
    }
}

/// How a figure's tick reads: a time (in µs) in its unit, else a number.
pub fn figure_text(time: bool) -> &'static dyn Fn(&f64) -> String {
    fn time_text(v: &f64) -> String {
        time_tick(*v)
    }
    fn number_text(v: &f64) -> String {
        number_tick(*v)
    }
    if time { &time_text } else { &number_text }
}

/// One full-size plot on `axes` under its `title`, each axis described (`desc`: along, up).
pub fn full_plot<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    (along, up): (&str, &str),
    axes: &Axes,
) -> Result<Plot<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .caption(title, (SANS, 17))
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(axes.x_axis(), axes.y_axis())?;
    chart
        .configure_mesh()
        .x_desc(along)
        .y_desc(up)
        .x_label_formatter(axes.x_text)
        .y_label_formatter(axes.y_text)
        .label_style((SANS, 13))
        .axis_desc_style((SANS, 14))
        .draw()?;
    Ok(chart)
}

/// The grid's size for `lines` lines: its width, and its height with the caption.
pub fn grid_size(lines: usize) -> (u32, u32) {
    (60 + CELL_W * COLUMNS as u32, CAPTION + CELL_H * lines.div_ceil(COLUMNS) as u32)
}

/// A faint grey: the other libraries behind one's own panel.
const FAINT: RGBColor = RGBColor(215, 215, 215);

/// A line, its runs joined and its marks on them; or, faint, its runs alone.
pub fn draw_trace<DB: DrawingBackend>(
    chart: &mut Plot<'_, DB>,
    trace: &Trace,
    faint: bool,
) -> DrawResult<DB::ErrorType> {
    let style = if faint { FAINT.stroke_width(1) } else { trace.style.color.stroke_width(2) };
    for run in &trace.runs {
        if trace.dashed {
            chart.draw_series(DashedLineSeries::new(run.iter().copied(), 8, 5, style))?;
        } else {
            chart.draw_series(LineSeries::new(run.iter().copied(), style))?;
        }
    }
    if !faint {
        chart.draw_series(
            trace.marks.iter().map(|&(x, y, filled)| mark::<_, DB>((x, y), trace.style, filled, 4)),
        )?;
    }
    Ok(())
}

/// A small panel per trace, on the same axes, the others faint behind it, and `reference` (a
/// floor) dashed across each, under `caption`.
pub fn grid<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    traces: &[Trace],
    axes: &Axes,
    reference: Option<(RGBColor, &[(f64, f64)])>,
) -> DrawResult<DB::ErrorType> {
    let (top, cells) = area.split_vertically(CAPTION);
    top.draw(&Text::new(caption.to_string(), (20, 8), (SANS, 17).into_font()))?;
    let cells = cells.split_evenly((traces.len().div_ceil(COLUMNS), COLUMNS));
    for (trace, cell) in traces.iter().zip(&cells) {
        let mut chart = ChartBuilder::on(cell)
            .margin(6)
            // Room for the last count's label, centred on the panel's right edge.
            .margin_right(24)
            .caption(&trace.label, (SANS, 14))
            .x_label_area_size(22)
            .y_label_area_size(56)
            .build_cartesian_2d(axes.x_axis(), axes.y_axis())?;
        chart
            .configure_mesh()
            .x_label_formatter(axes.x_text)
            .y_label_formatter(axes.y_text)
            .label_style((SANS, 11))
            .draw()?;
        if let Some((color, points)) = reference {
            let style = ShapeStyle::from(color).stroke_width(1);
            chart.draw_series(DashedLineSeries::new(points.iter().copied(), 6, 4, style))?;
        }
        for other in traces.iter().filter(|o| !std::ptr::eq(*o, trace)) {
            draw_trace(&mut chart, other, true)?;
        }
        draw_trace(&mut chart, trace, false)?;
    }
    Ok(())
}
