//! The host across a run: each run's probes (the polling floor before and after its window)
//! against the run's time, coloured by the state they fell into, with each case's start marked
//! along the top and each stretch of one family's cases shaded and named in a strip above, its
//! names kept apart; each state's share of the runs in the title. The probes' axis is linear
//! where they span less than a decade (a log axis there has no ticks). One chart per file whose
//! runs carry probes, under the machines table.

use std::ops::Range;
use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use super::pieces::{
    Chart, DrawResult, Entry, Marker, Place, ROW, SANS, Stroke, heading, heading_height, legend, log_axis,
    log_span, narrow, nth, number_tick, text_width, time_tick,
};
use super::{Drawing, Out};
use crate::format::whole_percent;
use crate::pattern::Family;
use crate::pattern::Gathered;
use crate::report::View;
use crate::results::Document;

/// What the chart shows of one file.
struct Line {
    title: String,
    /// (seconds, probe µs, state's index among the file's states, or None: moved)
    points: Vec<(f64, f64, Option<usize>)>,
    /// (seconds, case, its family) of each case's first run, by time.
    cases: Vec<(f64, String, Family)>,
    states: Vec<String>,
    figure: &'static str,
}

fn line(doc: &Document) -> Option<Line> {
    let window = doc.settings.config.warmup.as_secs_f64() + doc.settings.config.duration.as_secs_f64();
    let polling = doc
        .results
        .iter()
        .flat_map(|r| r.modes.iter().flat_map(|m| &m.runs))
        .any(|run| run.host.as_ref().is_some_and(|h| h.before.polling_ns.is_some()));
    let (figure, get): (&'static str, fn(&crate::results::Probe) -> Option<f64>) =
        if polling { ("polling floor", |p| p.polling_ns) } else { ("system call", |p| Some(p.syscall_ns)) };
    let mut points = Vec::new();
    let mut cases: Vec<(f64, String, Family)> = Vec::new();
    for r in &doc.results {
        for run in r.modes.iter().flat_map(|m| &m.runs) {
            let Some(h) = &run.host else { continue };
            let state = run.state.as_ref().and_then(|s| doc.states.iter().position(|x| &x.label == s));
            points.extend(get(&h.before).map(|v| (h.at_s, v / 1e3, state)));
            points.extend(get(&h.after).map(|v| (h.at_s + window, v / 1e3, state)));
            match cases.iter_mut().find(|(_, c, _)| *c == r.case) {
                Some(c) => c.0 = c.0.min(h.at_s),
                None => cases.push((h.at_s, r.case.clone(), Family::of(Gathered::of(r)))),
            }
        }
    }
    if points.is_empty() {
        return None;
    }
    cases.sort_by(|a, b| a.0.total_cmp(&b.0));
    let states = match doc.states.as_slice() {
        [] => "no host state told apart".to_string(),
        [one] => format!("one host state, {}, all through", one.label),
        many => {
            let shares: Vec<String> =
                many.iter().map(|s| format!("state {} {}", s.label, whole_percent(s.share))).collect();
            format!("of the runs: {}", shares.join(", "))
        }
    };
    Some(Line {
        title: format!(
            "The host across the run ({}): its {figure} before and after each run; {states}",
            doc.started
        ),
        points,
        cases,
        states: doc.states.iter().map(|s| format!("state {}: {}", s.label, s.probe.text())).collect(),
        figure,
    })
}

/// `timeline.svg` and `.png` (then `timeline-2`, ... for further files), for each file whose
/// runs carry probes.
pub struct Timeline;

impl Drawing for Timeline {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        draw(view, out.charts)
    }
}

fn draw(view: &View, dir: &Path) -> Result<Vec<Chart>> {
    let mut out = Vec::new();
    for l in view.sources.iter().filter_map(|s| line(&s.doc)) {
        let name = match out.len() {
            0 => "timeline".to_string(),
            n => format!("timeline-{}", n + 1),
        };
        let (svg, png) = (dir.join(format!("{name}.svg")), dir.join(format!("{name}.png")));
        let size = (1200, 560 + ROW as u32 * l.states.len() as u32);
        plot(SVGBackend::new(&svg, size).into_drawing_area(), &l)
            .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
        super::pieces::png(&png, size, |root| plot(root, &l))?;
        out.push(Chart { name, title: l.title, place: Place::Host });
    }
    Ok(out)
}

/// Grey: a run whose probe moved, in no state.
const MOVED: RGBColor = RGBColor(150, 150, 150);

/// The strip above the plot where the families' names stand: this many rows of them.
const STRIP_ROWS: usize = 3;
const STRIP_ROW: i32 = 15;

/// A state's colour.
fn state_color(i: usize) -> RGBColor {
    nth(i).color
}

fn plot<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, l: &Line) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let head = heading_height(&l.title, &[], root.dim_in_pixel().0);
    let (top, area) = root.split_vertically(head + ROW as u32 * l.states.len() as u32 + 8);
    heading(&top, &l.title, &[])?;
    let states: Vec<Entry> = l
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| Entry {
            label: s.clone(),
            color: state_color(i),
            marker: Some(Marker::Circle),
            stroke: Stroke::Mark,
        })
        .collect();
    legend(&top, (14, head as i32 + 6), &states)?;
    let values = l.points.iter().map(|p| p.1);
    let (lo, hi) = values.clone().fold((f64::MAX, 0.0), |(lo, hi), v| (f64::min(lo, v), f64::max(hi, v)));
    if narrow(lo, hi) {
        let pad = (hi - lo).max(hi * 0.02) * 0.15;
        let span = (lo - pad).max(0.0)..hi + pad;
        body(&root, &area, l, span.clone(), span)?;
    } else {
        let span = log_span(values, 1.5);
        body(&root, &area, l, log_axis(span.clone()), span)?;
    }
    root.present()
}

/// The plot: the families' stretches shaded and named above, each case's start marked, the
/// probes as points, on a y axis of `span`.
fn body<DB: DrawingBackend, Y>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    l: &Line,
    y: Y,
    span: Range<f64>,
) -> DrawResult<DB::ErrorType>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let end = l.points.iter().map(|p| p.0).fold(0.0, f64::max).max(1.0) * 1.02;
    let mut chart = ChartBuilder::on(area)
        .margin(20)
        .margin_top(20 + STRIP_ROWS as i32 * STRIP_ROW)
        .x_label_area_size(44)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..end, y)?;
    chart
        .configure_mesh()
        .x_desc("seconds from the run's start")
        .y_desc(l.figure)
        .x_label_formatter(&|v| number_tick(*v))
        .y_label_formatter(&|v| time_tick(*v))
        .label_style((SANS, 14))
        .axis_desc_style((SANS, 15))
        .draw()?;
    let bands = bands(&l.cases, end);
    let shade = BLACK.mix(0.05).filled();
    for (from, to, _) in bands.iter().skip(1).step_by(2) {
        chart.draw_series(std::iter::once(Rectangle::new([(*from, span.start), (*to, span.end)], shade)))?;
    }
    let top = chart.backend_coord(&(0.0, span.end)).1;
    for (at, _, _) in &l.cases {
        let x = chart.backend_coord(&(*at, span.end)).0;
        root.draw(&PathElement::new(vec![(x, top), (x, top + 6)], BLACK.stroke_width(1)))?;
    }
    // A name starts at its band, pulled left where it would run past the chart's right edge.
    let right = root.dim_in_pixel().0 as i32 - 4;
    let names: Vec<(i32, i32)> = bands
        .iter()
        .map(|b| {
            let w = text_width(b.2, 12);
            ((chart.backend_coord(&(b.0, span.end)).0 + 3).min(right - w), w)
        })
        .collect();
    let strip = top - 6 - STRIP_ROWS as i32 * STRIP_ROW;
    for ((x, _), (band, row)) in names.iter().zip(bands.iter().zip(strip_rows(&names, STRIP_ROWS))) {
        let Some(row) = row else { continue };
        let y = strip + row as i32 * STRIP_ROW;
        let at = chart.backend_coord(&(band.0, span.end)).0;
        root.draw(&PathElement::new(vec![(at, y + 12), (at, top)], BLACK.mix(0.3).stroke_width(1)))?;
        root.draw(&Text::new(band.2, (*x, y), (SANS, 12).into_font()))?;
    }
    chart.draw_series(l.points.iter().map(|&(t, v, s)| {
        let color = s.map_or(MOVED, state_color);
        Circle::new((t, v), 3, color.filled())
    }))?;
    Ok(())
}

/// The stretches of consecutive cases of one family: (from, to, its family's title).
fn bands(cases: &[(f64, String, Family)], end: f64) -> Vec<(f64, f64, &'static str)> {
    let mut out: Vec<(f64, f64, &'static str)> = Vec::new();
    for (at, _, family) in cases {
        if out.last().is_some_and(|last| last.2 == family.title()) {
            continue;
        }
        if let Some(last) = out.last_mut() {
            last.1 = *at;
        }
        out.push((*at, end, family.title()));
    }
    out
}

/// Each name's row in the strip, or None where no row has room: a name (its left and width)
/// goes in the first row whose last name ends before it starts.
fn strip_rows(names: &[(i32, i32)], rows: usize) -> Vec<Option<usize>> {
    let mut ends = vec![i32::MIN; rows];
    names
        .iter()
        .map(|&(x, w)| {
            let row = ends.iter().position(|e| e.saturating_add(8) <= x)?;
            ends[row] = x + w + 3;
            Some(row)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names that would overprint go a row down, and where no row has room, unwritten.
    #[test]
    fn the_families_names_keep_apart() {
        let names = [(0, 100), (50, 100), (90, 100), (120, 100), (400, 50)];
        assert_eq!(strip_rows(&names, 3), [Some(0), Some(1), Some(2), Some(0), Some(0)]);
        assert_eq!(strip_rows(&[(0, 100), (10, 100)], 1), [Some(0), None]);
    }

    #[test]
    fn a_family_s_cases_make_one_stretch() {
        let case = |at: f64, f: Family| (at, String::new(), f);
        let cases = [
            case(0.0, Family::Streams),
            case(5.0, Family::Streams),
            case(9.0, Family::Broadcasts),
            case(20.0, Family::Streams),
        ];
        let b = bands(&cases, 30.0);
        let titles: Vec<&str> = b.iter().map(|b| b.2).collect();
        assert_eq!(titles, [Family::Streams.title(), Family::Broadcasts.title(), Family::Streams.title()]);
        assert_eq!(b.iter().map(|b| (b.0, b.1)).collect::<Vec<_>>(), [(0.0, 9.0), (9.0, 20.0), (20.0, 30.0)]);
    }
}
