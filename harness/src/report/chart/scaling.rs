//! The charts of figures against a count (`report::scaling` finds the groups): one per group of
//! cases that differ only in that count, one line per library in its better receive mode at each
//! count, both axes logarithmic, a tick at each count measured. Where more lines would share a
//! panel than a reader can follow, each library has a small panel of its own, the others faint
//! behind it.

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::pieces::multiples::{Axes, SMALL, Trace, draw_trace, figure_text, full_plot, grid, grid_size};
use super::pieces::{
    Chart, DrawResult, Entry, Place, ROW, Stroke, heading, heading_height, legend, legend_width, log_span,
    runs,
};
use super::{Drawing, Out, column_style};
use crate::matrix::Pattern;
use crate::pattern::shows::{CountPanel, Over, Scaling};
use crate::pattern::{Family, spec};
use crate::report::View;
use crate::report::scaling::{SCALING, groups};
use crate::results::Status;
use ipcbench_api::RecvMode;

/// `scaling-<group>.svg` and `.png` for each group of the view.
pub struct Counts;

impl Drawing for Counts {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        draw(view, out)
    }
}

/// A library's line: its runs broken where a count has no figure, its marks filled where
/// polling was the better mode.
type Line = Trace;

/// Each column's line of one figure across a group's cases, each count in its better mode.
fn lines(view: &View, cases: &[(f64, String)], panel: CountPanel) -> Vec<Line> {
    let mut out = Vec::new();
    for col in &view.columns {
        let points: Vec<Option<(f64, f64, bool)>> = cases
            .iter()
            .map(|(x, case)| {
                let r = view.result(case, &col.0, col.1).filter(|r| r.status == Status::Ok)?;
                let v = panel.measure.get(r.median.as_ref()?).filter(|v| *v > 0.0)?;
                Some((*x, v / panel.divisor, r.best_mode == Some(RecvMode::Polling)))
            })
            .collect();
        let runs = runs(points.iter().map(|p| p.map(|(x, y, _)| (x, y))));
        if !runs.is_empty() {
            let marks = points.into_iter().flatten().collect();
            let (label, style) = (view.column_label(col), column_style(view, col));
            out.push(Line { label, style, runs, marks, dashed: false });
        }
    }
    out
}

/// The family a scaling chart stands under.
fn family(pattern: Pattern) -> Family {
    spec(pattern).family
}

/// One line per panel's plot, beside its legend.
const PLOT_W: u32 = 1000;
const PANEL_H: u32 = 430;

/// A panel's height: a plot tall enough for its legend, or a caption over its grid of panels.
fn panel_height(lines: usize) -> u32 {
    if lines > SMALL { grid_size(lines).1 } else { PANEL_H.max(80 + ROW as u32 * lines as u32) }
}

/// A chart's size: as wide as its grid or its plot and widest legend, as tall as its panels.
fn size(title: &str, panels: &[(CountPanel, Vec<Line>)]) -> (u32, u32) {
    let legend = |lines: &[Line]| {
        let entries: Vec<Entry> =
            lines.iter().map(|l| Entry::new(l.label.clone(), l.style, Stroke::Solid)).collect();
        legend_width(&entries).clamp(160, 560) as u32
    };
    let w = panels
        .iter()
        .map(|(_, l)| if l.len() > SMALL { grid_size(l.len()).0 } else { PLOT_W + 20 + legend(l) })
        .max()
        .unwrap_or(PLOT_W);
    (w, heading_height(title, &[SCALING], w) + panels.iter().map(|(_, l)| panel_height(l.len())).sum::<u32>())
}

fn draw(view: &View, out: &Out) -> Result<Vec<Chart>> {
    let mut charts = Vec::new();
    for (group, pattern, cases) in groups(view) {
        let Some(Scaling { over, panels: specs, .. }) = spec(pattern).scaling else { continue };
        let drawn: Vec<(CountPanel, Vec<Line>)> =
            specs.iter().map(|&p| (p, lines(view, &cases, p))).filter(|(_, l)| !l.is_empty()).collect();
        if drawn.is_empty() {
            continue;
        }
        let title = format!("{}: {group}, against the {}", family(pattern).title(), over.desc());
        let words: Vec<&str> = group.split(['/', '*']).filter(|w| !w.is_empty()).collect();
        let name = format!("scaling-{}", words.join("-"));
        let (svg, png) = (out.charts.join(format!("{name}.svg")), out.charts.join(format!("{name}.png")));
        let size = size(&title, &drawn);
        plot(SVGBackend::new(&svg, size).into_drawing_area(), &title, over, &drawn)
            .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
        super::pieces::png(&png, size, |root| plot(root, &title, over, &drawn))?;
        charts.push(Chart { name, title, place: Place::Scaling(family(pattern)) });
    }
    Ok(charts)
}

fn plot<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    over: Over,
    panels: &[(CountPanel, Vec<Line>)],
) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (top, mut rest) = root.split_vertically(heading_height(title, &[SCALING], root.dim_in_pixel().0));
    heading(&top, title, &[SCALING])?;
    for (panel, lines) in panels {
        let (area, below) = rest.split_vertically(panel_height(lines.len()));
        rest = below;
        if lines.len() > SMALL {
            multiples(&area, over, panel, lines)?;
        } else {
            single(&area, over, panel, lines)?;
        }
    }
    root.present()
}

/// The axes: the counts measured (and a tick at each, `most` at most) along, the figure's span
/// up, each tick read in its unit (`x_text`: the counts').
fn axes<'a>(lines: &[Line], most: usize, x_text: &'a dyn Fn(&f64) -> String, time: bool) -> Axes<'a> {
    let mut counts: Vec<f64> = lines.iter().flat_map(|l| l.marks.iter().map(|m| m.0)).collect();
    counts.sort_by(f64::total_cmp);
    counts.dedup();
    let x_ticks = counts.iter().copied().step_by(counts.len().div_ceil(most).max(1)).collect();
    let (lo, hi) = (counts.first().copied().unwrap_or(1.0), counts.last().copied().unwrap_or(1.0));
    let y = log_span(lines.iter().flat_map(|l| l.marks.iter().map(|m| m.1)), 1.5);
    Axes { x: (lo / 1.3)..(hi * 1.3), x_ticks, y, x_text, y_text: figure_text(time) }
}

/// Every line in one plot, its legend beside it.
fn single<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    over: Over,
    panel: &CountPanel,
    lines: &[Line],
) -> DrawResult<DB::ErrorType> {
    let entries: Vec<Entry> =
        lines.iter().map(|l| Entry::new(l.label.clone(), l.style, Stroke::Solid)).collect();
    let (area, beside) = area.split_horizontally(PLOT_W);
    legend(&beside, (10, 60), &entries)?;
    let counts = |v: &f64| over.label(*v);
    let axes = axes(lines, 12, &counts, panel.time);
    let mut chart = full_plot(&area, panel.title, (over.desc(), panel.unit), &axes)?;
    for line in lines {
        draw_trace(&mut chart, line, false)?;
    }
    Ok(())
}

/// A small panel per library, on the same axes, the others faint behind it.
fn multiples<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    over: Over,
    panel: &CountPanel,
    lines: &[Line],
) -> DrawResult<DB::ErrorType> {
    let words = format!(
        "{} ({}), {}: a panel per library, the others faint behind it",
        panel.title,
        panel.unit,
        over.desc()
    );
    let counts = |v: &f64| over.label(*v);
    grid(area, &words, lines, &axes(lines, 5, &counts, panel.time), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::pieces::multiples::{CAPTION, CELL_H};

    fn line(n: usize) -> Line {
        Line {
            label: format!("library {n}"),
            style: super::super::pieces::CONTROL,
            runs: Vec::new(),
            marks: Vec::new(),
            dashed: false,
        }
    }

    /// A load curve of fifteen libraries goes into small panels, no wider than a README shows;
    /// eight share one plot.
    #[test]
    fn many_lines_go_in_a_panel_each() {
        let many: Vec<Line> = (0..15).map(line).collect();
        let few: Vec<Line> = (0..8).map(line).collect();
        let panels = spec(Pattern::Latency).scaling.unwrap().panels;
        let (w, h) = size("a chart", &[(panels[0], many), (panels[1], few)]);
        assert!(w <= super::super::pieces::MAX_W, "{w}");
        assert_eq!(panel_height(15), CAPTION + 3 * CELL_H);
        assert_eq!(panel_height(8), PANEL_H);
        assert_eq!(h, heading_height("a chart", &[SCALING], w) + CAPTION + 3 * CELL_H + PANEL_H);
    }
}
