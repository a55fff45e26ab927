//! The host across a run: each run's probes (the polling floor before and after its window)
//! against the run's time, coloured by the state they fell into, with each case's start marked
//! along it and each state's share of the runs in the title. One chart per file whose runs carry
//! probes, under the machines table.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::View;
use super::plot::{COLORS, Chart, DrawResult, Place, SANS, log_span};
use crate::format::whole_percent;
use crate::results::Document;

/// What the chart shows of one file.
struct Line {
    title: String,
    /// (seconds, probe ns, state's index among the file's states, or None: moved)
    points: Vec<(f64, f64, Option<usize>)>,
    /// (seconds, case) of each case's first run.
    cases: Vec<(f64, String)>,
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
    let mut cases: Vec<(f64, String)> = Vec::new();
    for r in &doc.results {
        for run in r.modes.iter().flat_map(|m| &m.runs) {
            let Some(h) = &run.host else { continue };
            let state = run.state.as_ref().and_then(|s| doc.states.iter().position(|x| &x.label == s));
            points.extend(get(&h.before).map(|v| (h.at_s, v, state)));
            points.extend(get(&h.after).map(|v| (h.at_s + window, v, state)));
            match cases.iter_mut().find(|(_, c)| *c == r.case) {
                Some(c) => c.0 = c.0.min(h.at_s),
                None => cases.push((h.at_s, r.case.clone())),
            }
        }
    }
    if points.is_empty() {
        return None;
    }
    let shares: Vec<String> =
        doc.states.iter().map(|s| format!("{} {} of the runs", s.label, whole_percent(s.share))).collect();
    Some(Line {
        title: format!(
            "The host across the run ({}): its {figure} before and after each run; {}",
            doc.started,
            shares.join(", ")
        ),
        points,
        cases,
        states: doc.states.iter().map(|s| format!("state {}: {}", s.label, s.probe.text())).collect(),
        figure,
    })
}

/// `timeline.svg` and `.png` (then `timeline-2`, ... for further files).
pub fn draw(view: &View, dir: &Path) -> Result<Vec<Chart>> {
    let mut out = Vec::new();
    for l in view.sources.iter().filter_map(|s| line(&s.doc)) {
        let name = match out.len() {
            0 => "timeline".to_string(),
            n => format!("timeline-{}", n + 1),
        };
        let (svg, png) = (dir.join(format!("{name}.svg")), dir.join(format!("{name}.png")));
        let size = (1100, 520);
        plot(SVGBackend::new(&svg, size).into_drawing_area(), &l)
            .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
        super::plot::png(&png, size, |root| plot(root, &l))?;
        out.push(Chart { name, title: l.title, place: Place::Host });
    }
    Ok(out)
}

/// Grey: a run whose probe moved, in no state.
const MOVED: RGBColor = RGBColor(150, 150, 150);

fn plot<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, l: &Line) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (top, area) = root.split_vertically(70);
    top.draw(&Text::new(l.title.clone(), (20, 12), (SANS, 16).into_font()))?;
    let mut x = 20;
    for (i, s) in l.states.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        top.draw(&Circle::new((x + 5, 48), 5, color.filled()))?;
        top.draw(&Text::new(s.clone(), (x + 14, 41), (SANS, 13).into_font()))?;
        x += 24 + 7 * s.chars().count() as i32;
    }
    let end = l.points.iter().map(|p| p.0).fold(0.0, f64::max).max(1.0);
    let y = log_span(l.points.iter().map(|p| p.1), 1.5);
    let mut chart = ChartBuilder::on(&area)
        .margin(20)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..end * 1.02, y.clone().log_scale())?;
    chart
        .configure_mesh()
        .x_desc("seconds from the run's start")
        .y_desc(format!("{} (ns)", l.figure))
        .label_style((SANS, 14))
        .axis_desc_style((SANS, 15))
        .draw()?;
    let rotated: TextStyle = TextStyle::from((SANS, 12).into_font().transform(FontTransform::Rotate90))
        .pos(Pos::new(HPos::Left, VPos::Top));
    for (at, case) in &l.cases {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(*at, y.start), (*at, y.end)],
            RGBColor(210, 210, 210).stroke_width(1),
        )))?;
        chart.draw_series(std::iter::once(Text::new(case.clone(), (*at, y.end), rotated.clone())))?;
    }
    chart.draw_series(l.points.iter().map(|&(t, v, s)| {
        let color = s.map_or(MOVED, |i| COLORS[i % COLORS.len()]);
        Circle::new((t, v), 3, color.filled())
    }))?;
    root.present()
}
