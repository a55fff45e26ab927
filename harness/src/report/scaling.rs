//! Figures against a count: a broadcast's rate and cores busy against its subscribers, pairs'
//! total against their number, fan-out latency against the subscribers, and fixed-rate latency
//! against the offered rate (the load curve a library's knee is read from). One chart per group
//! of cases that differ only in that count, one line per library and receive mode, both axes
//! logarithmic.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::View;
use super::families::Family;
use super::plot::{COLORS, Chart, DrawResult, Place, SANS, log_span};
use crate::matrix::{self, Case, Pace, Pattern, rate_label};
use crate::results::{Figures, Measure, Status};
use ipcbench_api::{RecvMode, Shape};

pub const SCALING: &str = "One line per library and receive mode (waiting solid, polling dashed), both axes \
logarithmic; a point is the median of that mode's runs.";

/// A legend's row, in pixels.
const LEGEND_ROW: u32 = 16;

/// A group's chart needs this many counts at least.
const LEAST_POINTS: usize = 3;

/// What a chart is drawn against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Over {
    Subscribers,
    Pairs,
    Rate,
}

impl Over {
    fn desc(self) -> &'static str {
        match self {
            Over::Subscribers => "subscribers",
            Over::Pairs => "pairs",
            Over::Rate => "offered rate (messages per second)",
        }
    }

    fn label(self, v: f64) -> String {
        match self {
            Over::Rate => rate_label(v.round() as u64),
            _ => format!("{}", v.round() as u64),
        }
    }
}

/// A panel: a figure, its title and unit, and the divisor into the unit.
type Panel = (Measure, &'static str, &'static str, f64);

const CORES: Panel = (Measure::CoresBusy, "cores busy (every process together)", "cores", 1.0);

/// The panels of a pattern's scaling chart, and what they are drawn against.
fn panels(pattern: Pattern) -> Option<(Over, &'static [Panel])> {
    Some(match pattern {
        Pattern::Broadcast => (
            Over::Subscribers,
            &[(Measure::MsgsPerS, "the slowest subscriber's rate", "M msg/s", 1e6), CORES],
        ),
        Pattern::Pairs => {
            (Over::Pairs, &[(Measure::MsgsPerS, "every pair's rate together", "M msg/s", 1e6), CORES])
        }
        Pattern::FanoutLatency => (
            Over::Subscribers,
            &[
                (Measure::P50Ns, "p50 one way, every subscriber", "µs", 1e3),
                (Measure::P99Ns, "p99 one way, every subscriber", "µs", 1e3),
            ],
        ),
        Pattern::Latency => (
            Over::Rate,
            &[
                (Measure::P50Ns, "p50 one way", "µs", 1e3),
                (Measure::P99Ns, "p99 one way", "µs", 1e3),
                (Measure::P999Ns, "p99.9 one way", "µs", 1e3),
            ],
        ),
        _ => return None,
    })
}

/// A case's group (its name with the count as `*`) and its count, for a pattern that scales.
pub fn placed(case: &Case) -> Option<(String, f64)> {
    if case.batch > 1 {
        return None;
    }
    let mut parts: Vec<&str> = case.name.split('/').collect();
    let (at, star, x) = match (case.pattern(), case.shape, case.pace) {
        (Pattern::Broadcast, Shape::Broadcast { subscribers, .. }, _) => (2, "*sub", subscribers as f64),
        (Pattern::FanoutLatency, Shape::Broadcast { subscribers, .. }, _) => (2, "*sub", subscribers as f64),
        (Pattern::Pairs, ..) => (1, "*", case.pairs? as f64),
        (Pattern::Latency, _, Pace::Rate(rate)) => (1, "*", rate as f64),
        _ => return None,
    };
    *parts.get_mut(at)? = star;
    Some((parts.join("/"), x))
}

/// A group of cases that differ in one count: its name (the count as `*`), its pattern, and
/// each (count, case), by count.
type Group = (String, Pattern, Vec<(f64, String)>);

/// The view's groups of scaling cases with enough counts.
pub fn groups(view: &View) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for case in view.cases.iter().filter_map(|name| matrix::find(name).ok()) {
        let Some((group, x)) = placed(&case) else { continue };
        match out.iter_mut().find(|g| g.0 == group) {
            Some(g) => g.2.push((x, case.name.clone())),
            None => out.push((group, case.pattern(), vec![(x, case.name.clone())])),
        }
    }
    for g in &mut out {
        g.2.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out.retain(|g| g.2.len() >= LEAST_POINTS);
    out
}

/// Each column's sustainable rate (`analysis::sustainable`) over the view's latency cases at the
/// smallest size with enough rates: the better of its receive modes', with that mode. None
/// where the view has no such cases.
pub fn sustainable(view: &View) -> Option<Vec<Option<(u64, RecvMode)>>> {
    let (_, _, cases) = groups(view).into_iter().find(|g| g.1 == Pattern::Latency)?;
    let per_column = view
        .columns
        .iter()
        .map(|col| {
            RecvMode::ALL
                .into_iter()
                .filter_map(|mode| {
                    let points: Vec<(u64, Figures)> = cases
                        .iter()
                        .filter_map(|(rate, case)| {
                            let r = view.result(case, &col.0, col.1).filter(|r| r.status == Status::Ok)?;
                            Some((*rate as u64, r.modes.iter().find(|m| m.mode == mode)?.median?))
                        })
                        .collect();
                    crate::analysis::sustainable(&points).map(|rate| (rate, mode))
                })
                .max_by_key(|x| x.0)
        })
        .collect();
    Some(per_column)
}

/// A line: its label, colour, whether dashed, and its points.
struct Line {
    label: String,
    color: RGBColor,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

/// Each column's and receive mode's line of one figure across a group's cases.
fn lines(view: &View, cases: &[(f64, String)], (m, _, _, divisor): Panel) -> Vec<Line> {
    let mut out = Vec::new();
    for (c, col) in view.columns.iter().enumerate() {
        let lib = view.libraries.iter().position(|l| *l == col.0).unwrap_or(c);
        for mode in RecvMode::ALL {
            let points: Vec<(f64, f64)> = cases
                .iter()
                .filter_map(|(x, case)| {
                    let r = view.result(case, &col.0, col.1).filter(|r| r.status == Status::Ok)?;
                    let f: &Figures = r.modes.iter().find(|md| md.mode == mode)?.median.as_ref()?;
                    Some((*x, m.get(f).filter(|v| *v > 0.0)? / divisor))
                })
                .collect();
            if !points.is_empty() {
                let label = format!("{} {mode}", view.column_label(col));
                out.push(Line {
                    label,
                    color: COLORS[lib % COLORS.len()],
                    dashed: mode == RecvMode::Polling,
                    points,
                });
            }
        }
    }
    out
}

/// The family a scaling chart stands under.
fn family(pattern: Pattern) -> Family {
    Family::of(crate::results::shows::Gathered::Pattern(pattern))
}

/// `scaling-<group>.svg` and `.png` for each group of the view.
pub fn draw(view: &View, dir: &Path) -> Result<Vec<Chart>> {
    let mut charts = Vec::new();
    for (group, pattern, cases) in groups(view) {
        let Some((over, specs)) = panels(pattern) else { continue };
        let drawn: Vec<(Panel, Vec<Line>)> =
            specs.iter().map(|&p| (p, lines(view, &cases, p))).filter(|(_, l)| !l.is_empty()).collect();
        if drawn.is_empty() {
            continue;
        }
        let title = format!("{}: {group}, against the {}", family(pattern).title(), over.desc());
        let words: Vec<&str> = group.split(['/', '*']).filter(|w| !w.is_empty()).collect();
        let name = format!("scaling-{}", words.join("-"));
        let (svg, png) = (dir.join(format!("{name}.svg")), dir.join(format!("{name}.png")));
        // Each panel tall enough for its legend: a row per line.
        let most = drawn.iter().map(|(_, l)| l.len() as u32).max().unwrap_or(0);
        let size = (1100, 90 + (80 + LEGEND_ROW * most).max(430) * drawn.len() as u32);
        plot(SVGBackend::new(&svg, size).into_drawing_area(), &title, over, &drawn)
            .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
        super::plot::png(&png, size, |root| plot(root, &title, over, &drawn))?;
        charts.push(Chart { name, title, place: Place::Scaling(family(pattern)) });
    }
    Ok(charts)
}

fn plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    over: Over,
    panels: &[(Panel, Vec<Line>)],
) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(60);
    top.draw(&Text::new(title.to_string(), (20, 14), (SANS, 20).into_font()))?;
    top.draw(&Text::new(SCALING.to_string(), (20, 40), (SANS, 13).into_font()))?;
    let areas = rest.split_evenly((panels.len(), 1));
    for (((_, panel_title, unit, _), lines), whole) in panels.iter().zip(areas) {
        let (area, legend) = whole.split_horizontally(830);
        for (i, line) in lines.iter().enumerate() {
            let y = 40 + (LEGEND_ROW * i as u32) as i32;
            let style = ShapeStyle::from(&line.color).stroke_width(2);
            let stroke = if line.dashed { [(0, y), (7, y)] } else { [(0, y), (18, y)] };
            legend.draw(&PathElement::new(stroke, style))?;
            if line.dashed {
                legend.draw(&PathElement::new([(11, y), (18, y)], style))?;
            }
            legend.draw(&Text::new(line.label.clone(), (24, y - 6), (SANS, 11).into_font()))?;
        }
        let xs = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
        let (lo, hi) = xs.clone().fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
        let x = (lo / 1.3)..(hi * 1.3);
        let y = log_span(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)), 1.5);
        let mut chart = ChartBuilder::on(&area)
            .margin(16)
            .caption(*panel_title, (SANS, 17))
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(x.log_scale(), y.log_scale())?;
        chart
            .configure_mesh()
            .x_desc(over.desc())
            .y_desc(*unit)
            .x_label_formatter(&|v| over.label(*v))
            .y_label_formatter(&|v| crate::format::three_digits(*v))
            .label_style((SANS, 13))
            .axis_desc_style((SANS, 14))
            .draw()?;
        for line in lines {
            let style = ShapeStyle::from(&line.color).stroke_width(2);
            if line.dashed {
                chart.draw_series(DashedLineSeries::new(line.points.iter().copied(), 6, 4, style))?;
            } else {
                chart.draw_series(LineSeries::new(line.points.iter().copied(), style))?;
            }
            chart.draw_series(line.points.iter().map(|p| Circle::new(*p, 3, line.color.filled())))?;
        }
    }
    root.present()
}
