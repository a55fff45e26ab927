//! A chart per pattern, SVG and PNG (plotters): every library's bars side by side per case, each
//! capped by its library's marker, on a log axis when the values span more than 30 times (every
//! panel of one unit alike; a figure there is a level, not a bar from where the axis starts); a
//! lossy broadcast's share lost and a service's p50 call in a panel of their own under the rates;
//! the machine's floors (`floor`) as lines across the round-trip, latency and call panels and as
//! a dash over each stream case (its copy floor). Cases go on in rows where one row would be
//! wider than a README shows. Then the receive modes side by side per library.

use std::ops::Range;
use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::pieces::{
    Chart, DrawResult, MAX_W, Marker, Place, SANS, Style, heading, heading_height, log_axis, mark,
    mode_color, number_tick, text_width, time_tick,
};
use super::{Drawing, Out, column_style};
use crate::analysis;
use crate::pattern::Family;
use crate::pattern::Gathered;
use crate::pattern::shows::{Scale, Title};
use crate::report::{View, cost, floor};
use crate::results::{CaseResult, Figure, Figures, Status};
use ipcbench_api::RecvMode;

/// One panel: a value per (case, series), and the machine's floors drawn over the bars.
struct Panel {
    label: &'static str,
    scale: Scale,
    /// values[case][series]
    values: Vec<Vec<Option<f64>>>,
    /// Round-trip floors: a line across the panel each.
    floors: Vec<floor::Line>,
    /// The copy floor of each case (a stream's messages per second): a dash across its slot.
    copy: Vec<Option<f64>>,
}

impl Panel {
    fn new(label: &'static str, scale: Scale, values: Vec<Vec<Option<f64>>>) -> Panel {
        Panel { label, scale, values, floors: Vec::new(), copy: Vec::new() }
    }

    /// The least and greatest positive value, floors included: the axis's range.
    fn extent(&self) -> Option<(f64, f64)> {
        let floors = self.floors.iter().map(|l| Some(l.value)).chain(self.copy.iter().copied());
        let values = self.values.iter().flatten().copied().chain(floors).flatten().filter(|v| *v > 0.0);
        values.fold(None, |span, v| match span {
            None => Some((v, v)),
            Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
        })
    }
}

/// The copy floor's dash.
const COPY: RGBColor = RGBColor(0, 0, 0);

/// A series of bars: its label, its colour, and a library's marker over each bar.
struct Series {
    label: String,
    color: RGBColor,
    marker: Option<Marker>,
}

struct Spec {
    title: String,
    cases: Vec<String>,
    series: Vec<Series>,
    panels: Vec<Panel>,
    /// Legend entries beyond the series: the floors' lines.
    extra: Vec<(String, RGBColor)>,
}

/// A chart's title: its own, or its family's (as its section is titled) then what it shows.
fn title(g: Gathered) -> String {
    match g.shows().chart {
        Title::Own(title) => title.into(),
        Title::AfterFamily(shows) => format!("{}: {shows}", Family::of(g).title()),
    }
}

/// A chart per pattern, and one of the batch cases: each with its cases in the view.
fn groups(view: &View) -> Vec<(Gathered, Vec<String>)> {
    Gathered::all()
        .map(|g| (g, view.cases.iter().filter(|c| view.gathered(c) == Some(g)).cloned().collect::<Vec<_>>()))
        .filter(|(_, cases)| !cases.is_empty())
        .collect()
}

fn spec(view: &View, family: Gathered, cases: Vec<String>) -> Option<Spec> {
    fn ok(r: Option<&CaseResult>) -> Option<&CaseResult> {
        r.filter(|r| r.status == Status::Ok && r.median.is_some())
    }
    // Only the columns with a figure in this chart.
    let columns: Vec<&(String, usize)> = view
        .columns
        .iter()
        .filter(|(lib, s)| cases.iter().any(|c| ok(view.result(c, lib, *s)).is_some()))
        .collect();
    if columns.is_empty() {
        return None;
    }
    let table = |f: &dyn Fn(&CaseResult) -> Option<f64>| -> Vec<Vec<Option<f64>>> {
        cases
            .iter()
            .map(|c| columns.iter().map(|(lib, s)| ok(view.result(c, lib, *s)).and_then(f)).collect())
            .collect()
    };
    let show = family.shows();
    // The first panel draws the figure that ranks the family; the others stand where some result
    // has their figure (a lossless broadcast has no share lost).
    let mut panels = Vec::new();
    let mut floors_on = None;
    for (i, p) in show.panels.iter().enumerate() {
        let values = table(&|r: &CaseResult| r.median.and_then(|f| p.measure.get(&f)).map(|v| p.value(v)));
        if i > 0 && !values.iter().flatten().any(Option::is_some) {
            continue;
        }
        if show.floors_on == Some(i) {
            floors_on = Some(panels.len());
        }
        panels.push(Panel::new(p.label, p.scale, values));
    }
    // The machine's floors: round-trip floors across the panel of round trips and latency (a
    // service's on its call panel), the copy floor over each stream case.
    let mut extra = Vec::new();
    if let (Some(at), Gathered::Pattern(p)) = (floors_on, family) {
        let lines = floor::lines(view, p);
        extra.extend(lines.iter().map(|l| (l.label.clone(), mode_color(l.mode))));
        panels[at].floors = lines;
    }
    if show.copy_floor {
        let sizes: Vec<usize> = cases.iter().map(|c| view.case(c).map_or(0, |c| c.size)).collect();
        let copy = floor::copy_rates(view, &sizes);
        if copy.iter().any(Option::is_some) {
            extra.push(("copy floor (memory copy bandwidth / size)".to_string(), COPY));
            panels[0].copy = copy;
        }
    }
    let prefix = format!("{}/", family.name());
    let short =
        |c: &String| c.strip_prefix(&prefix).or_else(|| c.strip_prefix("batch/")).unwrap_or(c).to_string();
    Some(Spec {
        title: title(family),
        cases: cases.iter().map(short).collect(),
        series: columns
            .iter()
            .map(|c| {
                let style = column_style(view, c);
                Series { label: view.column_label(c), color: style.color, marker: Some(style.marker) }
            })
            .collect(),
        panels,
        extra,
    })
}

/// Each library of the modes table (the smallest stream and round trip) as a group of two bars,
/// waiting and polling: the stream's rate in one panel, the round trip's p50 in the other.
fn modes_spec(view: &View) -> Option<Spec> {
    let cases = cost::compared(view);
    let ok = |case: &str, lib: &str, s: usize| view.result(case, lib, s).filter(|r| r.status == Status::Ok);
    let columns: Vec<&(String, usize)> =
        view.columns.iter().filter(|(lib, s)| cases.iter().any(|(_, c)| ok(c, lib, *s).is_some())).collect();
    if columns.is_empty() {
        return None;
    }
    let panel = |case: &str, label: &'static str, scale: Scale, f: fn(&Figures) -> Option<f64>| {
        let values = columns
            .iter()
            .map(|(lib, s)| {
                RecvMode::ALL
                    .iter()
                    .map(|&mode| {
                        let m = ok(case, lib, *s)?.modes.iter().find(|m| m.mode == mode)?;
                        f(m.median.as_ref()?)
                    })
                    .collect()
            })
            .collect();
        Panel::new(label, scale, values)
    };
    let panels = cases
        .iter()
        .map(|(pattern, case)| match analysis::counted(*pattern) {
            Figure::P50Ns => panel(case, "round trip p50", Scale::Micros, |f| f.p50_ns.map(|ns| ns / 1e3)),
            Figure::MsgsPerS => panel(case, "stream: M msg/s", Scale::Mega, |f| Some(f.msgs_per_s / 1e6)),
        })
        .collect();
    let names: Vec<&str> = cases.iter().map(|(_, c)| c.as_str()).collect();
    Some(Spec {
        title: format!("{}: {}", Place::Modes.title(), names.join(" and ")),
        cases: columns.iter().map(|c| view.column_label(c)).collect(),
        series: RecvMode::ALL
            .iter()
            .map(|&m| Series { label: m.to_string(), color: mode_color(m), marker: None })
            .collect(),
        panels,
        extra: Vec::new(),
    })
}

/// A chart per family of the view (`<family>.svg` and `.png`: every library's bars side by side
/// per case), then the receive modes' (`modes`).
pub struct Bars;

impl Drawing for Bars {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        draw_all(view, out.charts)
    }
}

fn draw_all(view: &View, dir: &Path) -> Result<Vec<Chart>> {
    let mut specs: Vec<(String, Place, Spec)> = groups(view)
        .into_iter()
        .filter_map(|(family, cases)| {
            spec(view, family, cases)
                .map(|s| (family.name().to_string(), Place::Family(Family::of(family)), s))
        })
        .collect();
    specs.extend(modes_spec(view).map(|s| ("modes".to_string(), Place::Modes, s)));
    let mut charts = Vec::new();
    for (name, place, spec) in specs {
        let (w, h) = size(&spec);
        let svg = dir.join(format!("{name}.svg"));
        let png = dir.join(format!("{name}.png"));
        draw(SVGBackend::new(&svg, (w, h)).into_drawing_area(), &spec)
            .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
        super::pieces::png(&png, (w, h), |root| draw(root, &spec))?;
        charts.push(Chart { name, title: spec.title, place });
    }
    Ok(charts)
}

/// A row of bars' height.
const PANEL_H: u32 = 360;
const LEGEND_ROW: u32 = 22;
/// The pixels left of the first slot (the axis's ticks and words) and right of the last.
const LEFT: u32 = 110;
const RIGHT: u32 = 30;

/// The legend's entries: the series, then the floors.
fn legend_items(spec: &Spec) -> Vec<(&str, RGBColor, Option<Marker>)> {
    let series = spec.series.iter().map(|s| (s.label.as_str(), s.color, s.marker));
    series.chain(spec.extra.iter().map(|(l, c)| (l.as_str(), *c, None))).collect()
}

fn legend_rows(spec: &Spec, width: u32) -> Vec<Vec<usize>> {
    let mut rows = vec![Vec::new()];
    let mut x = 0;
    for (i, (s, _, _)) in legend_items(spec).iter().enumerate() {
        let w = item_width(s);
        if x + w > width.saturating_sub(40) && !rows.last().is_none_or(Vec::is_empty) {
            rows.push(Vec::new());
            x = 0;
        }
        rows.last_mut().expect("a row").push(i);
        x += w;
    }
    rows
}

fn item_width(label: &str) -> u32 {
    46 + text_width(label, 15) as u32
}

/// A case's slot: wide enough for its bars and for its label under them.
fn slot(spec: &Spec) -> u32 {
    let label = spec.cases.iter().map(|c| text_width(c, 14) as u32).max().unwrap_or(0);
    (spec.series.len() as u32 * 14 + 24).max(label + 16).max(70)
}

/// The cases of each row: as many as fit within the widest chart, the rows evenly filled.
fn rows(spec: &Spec) -> Vec<Range<usize>> {
    let n = spec.cases.len();
    let fit = ((MAX_W - LEFT - RIGHT) / slot(spec)).max(1) as usize;
    let per = n.div_ceil(n.div_ceil(fit).max(1)).max(1);
    (0..n.div_ceil(per).max(1)).map(|r| r * per..((r + 1) * per).min(n)).collect()
}

/// The rows a panel draws: those where it has a value. A lossy broadcast's share lost has none
/// in a row of lossless cases, which would stand empty; a panel with no value anywhere keeps
/// every row.
fn panel_rows(panel: &Panel, rows: &[Range<usize>]) -> Vec<Range<usize>> {
    let kept: Vec<Range<usize>> = rows
        .iter()
        .filter(|r| panel.values[(*r).clone()].iter().flatten().any(Option::is_some))
        .cloned()
        .collect();
    if kept.is_empty() { rows.to_vec() } else { kept }
}

/// Under the title of a chart with a log panel: why its figures are levels, not bars.
const LEVELS: &str = "On a log axis each figure is a level under its library's mark, not a bar from the \
axis: a bar's length there would depend on where the axis starts.";

/// The notes under the chart's title.
fn notes(spec: &Spec) -> Vec<&'static str> {
    let log = spec.panels.iter().any(|p| logarithmic(spec, p.scale));
    if log { vec![LEVELS] } else { Vec::new() }
}

fn top_height(spec: &Spec, width: u32) -> u32 {
    heading_height(&spec.title, &notes(spec), width) + 10 + LEGEND_ROW * legend_rows(spec, width).len() as u32
}

fn size(spec: &Spec) -> (u32, u32) {
    let rows = rows(spec);
    let per = rows.first().map_or(1, |r| r.len()) as u32;
    let w = (LEFT + per * slot(spec) + RIGHT).clamp(900, MAX_W);
    let drawn: usize = spec.panels.iter().map(|p| panel_rows(p, &rows).len()).sum();
    (w, top_height(spec, w) + PANEL_H * drawn as u32)
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, spec: &Spec) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (w, _) = root.dim_in_pixel();
    let (top, mut rest) = root.split_vertically(top_height(spec, w));
    heading(&top, &spec.title, &notes(spec))?;
    let legend_top = heading_height(&spec.title, &notes(spec), w) as i32;
    let items = legend_items(spec);
    for (r, row) in legend_rows(spec, w).iter().enumerate() {
        let mut x = 20;
        let y = legend_top + r as i32 * LEGEND_ROW as i32;
        for &i in row {
            let (label, color, marker) = items[i];
            if i < spec.series.len() {
                top.draw(&Rectangle::new([(x, y), (x + 14, y + 14)], color.filled()))?;
            } else {
                // A floor: a line, as the panel draws it.
                top.draw(&Rectangle::new([(x, y + 6), (x + 14, y + 8)], color.filled()))?;
            }
            if let Some(marker) = marker {
                top.draw(&mark::<_, DB>((x + 26, y + 7), Style { color, marker }, true, 5))?;
            }
            top.draw(&Text::new(label.to_string(), (x + 40, y), (SANS, 15).into_font()))?;
            x += item_width(label) as i32;
        }
    }
    let rows = rows(spec);
    let per = rows.first().map_or(1, |r| r.len());
    for panel in &spec.panels {
        // A panel of nothing above zero (no share lost anywhere) still stands, empty.
        let (lo, hi) = panel.extent().unwrap_or((1.0, 1.0));
        for cases in &panel_rows(panel, &rows) {
            let (area, below) = rest.split_vertically(PANEL_H);
            rest = below;
            if logarithmic(spec, panel.scale) {
                let row = Row { cases: cases.clone(), slots: per, floor: lo / 2.0, log: true };
                bars(&root, &area, (spec, panel, row), log_axis((lo / 2.0)..(hi * 2.0)))?;
            } else {
                let row = Row { cases: cases.clone(), slots: per, floor: 0.0, log: false };
                bars(&root, &area, (spec, panel, row), 0.0..hi * 1.15)?;
            }
        }
    }
    root.present()
}

/// Whether the panels of `scale` are drawn on a log axis: where one of them spans more than 30
/// times. Panels of one unit share the kind, so that a reader reads the same distance the same.
fn logarithmic(spec: &Spec, scale: Scale) -> bool {
    spec.panels.iter().filter(|p| p.scale == scale).filter_map(Panel::extent).any(|(lo, hi)| hi / lo > 30.0)
}

/// The cases one row of a panel draws, the slots every row has (the last may leave some), and
/// its axis: where it starts, and whether it is logarithmic (its figures then levels, not bars).
struct Row {
    cases: Range<usize>,
    slots: usize,
    floor: f64,
    log: bool,
}

/// A level's thickness in pixels, on a log axis.
const LEVEL: i32 = 4;

/// One row of a panel's bars: drawn in pixels from the chart's own mapping, so each case's slot
/// holds every series side by side, each bar (or level, on a log axis) capped by its library's
/// marker.
fn bars<DB: DrawingBackend, Y>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    (spec, panel, row): (&Spec, &Panel, Row),
    y: Y,
) -> DrawResult<DB::ErrorType>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin_left(10)
        .margin_right(RIGHT)
        .margin_top(10)
        .x_label_area_size(36)
        .y_label_area_size(LEFT - 10)
        .build_cartesian_2d(0.0..row.slots as f64, y)?;
    let ticks = |v: &f64| if panel.scale == Scale::Micros { time_tick(*v) } else { number_tick(*v) };
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .x_labels(0)
        .y_desc(panel.label)
        .y_label_formatter(&ticks)
        .label_style((SANS, 14))
        .axis_desc_style((SANS, 15));
    if !row.log {
        // One faint line between two ticks: ten made a grey wash of a linear axis.
        mesh.y_max_light_lines(1);
    }
    mesh.draw()?;
    let floor = row.floor;
    let under = TextStyle::from((SANS, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let n = spec.series.len() as i32;
    for (at, case) in row.cases.clone().enumerate() {
        let left = chart.backend_coord(&(at as f64, floor));
        let right = chart.backend_coord(&(at as f64 + 1.0, floor));
        root.draw(&Text::new(spec.cases[case].clone(), ((left.0 + right.0) / 2, left.1 + 8), under.clone()))?;
        // Bars no wider than a thumb, the group centred in its slot.
        let width = ((right.0 - left.0 - 12) / n).clamp(2, 36);
        let start = (left.0 + right.0 - width * n) / 2;
        for (j, (v, s)) in panel.values[case].iter().zip(&spec.series).enumerate() {
            let Some(v) = v.filter(|v| *v > 0.0) else { continue };
            let x = start + j as i32 * width;
            let level = chart.backend_coord(&(at as f64, v)).1;
            let (top, bottom) =
                if row.log { (level - LEVEL / 2, level + LEVEL / 2) } else { (level, left.1) };
            root.draw(&Rectangle::new([(x, top), (x + width - 1, bottom)], s.color.filled()))?;
            if let Some(marker) = s.marker.filter(|_| width >= 8) {
                let r = (width / 2 - 1).min(5);
                root.draw(&mark::<_, DB>(
                    (x + width / 2, top - r - 3),
                    Style { color: s.color, marker },
                    true,
                    r,
                ))?;
            }
        }
        if let Some(v) = panel.copy.get(case).copied().flatten() {
            let y = chart.backend_coord(&(at as f64, v)).1;
            root.draw(&Rectangle::new([(left.0 + 2, y - 1), (right.0 - 2, y + 1)], COPY.filled()))?;
        }
    }
    for line in &panel.floors {
        let from = chart.backend_coord(&(0.0, line.value));
        let to = chart.backend_coord(&(row.slots as f64, line.value));
        root.draw(&Rectangle::new([(from.0, from.1 - 1), (to.0, from.1)], mode_color(line.mode).filled()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::pieces::font;
    use super::*;

    fn spec(cases: usize, series: usize, panels: usize) -> Spec {
        let values = vec![vec![Some(1.0); series]; cases];
        Spec {
            title: "A chart".into(),
            cases: (0..cases).map(|i| format!("lossless/{i}sub/1KiB")).collect(),
            series: (0..series)
                .map(|i| Series { label: format!("library {i}"), color: BLACK, marker: None })
                .collect(),
            panels: (0..panels).map(|_| Panel::new("M msg/s", Scale::Mega, values.clone())).collect(),
            extra: Vec::new(),
        }
    }

    /// No chart is wider than a README shows: thirty cases of fifteen libraries go on in rows,
    /// every case in one of them, in order.
    #[test]
    fn a_wide_chart_goes_on_in_rows() {
        for (cases, series) in [(1, 3), (6, 15), (30, 15), (40, 2), (3, 40)] {
            let s = spec(cases, series, 2);
            let (w, h) = size(&s);
            assert!(w <= MAX_W, "{cases} cases of {series}: {w} px wide");
            let rows = rows(&s);
            let all: Vec<usize> = rows.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(all, (0..cases).collect::<Vec<_>>(), "{cases} cases of {series}");
            assert!(rows.iter().all(|r| !r.is_empty()));
            assert_eq!(h, top_height(&s, w) + PANEL_H * 2 * rows.len() as u32);
        }
        assert_eq!(rows(&spec(30, 15, 1)).len(), 5, "six cases of fifteen bars a row");
    }

    /// A panel leaves out a row where it has no value (the lossless cases' share lost), and a
    /// panel with none anywhere keeps every row; the chart's height counts the rows drawn.
    #[test]
    fn a_panel_draws_only_the_rows_it_has_values_in() {
        let mut s = spec(30, 15, 2);
        let rows = rows(&s);
        for (i, v) in s.panels[1].values.iter_mut().enumerate() {
            if !rows[1].contains(&i) {
                v.iter_mut().for_each(|x| *x = None);
            }
        }
        assert_eq!(panel_rows(&s.panels[1], &rows), [rows[1].clone()]);
        assert_eq!(panel_rows(&s.panels[0], &rows), rows);
        let (w, h) = size(&s);
        assert_eq!(h, top_height(&s, w) + PANEL_H * (rows.len() + 1) as u32);
        s.panels[1].values.iter_mut().flatten().for_each(|x| *x = None);
        assert_eq!(panel_rows(&s.panels[1], &rows), rows);
    }

    /// The heights of the rectangles an SVG draws in `fill`.
    fn heights(svg: &str, fill: &str) -> Vec<f64> {
        let attr = |rect: &str, name: &str| -> Option<f64> {
            let at = rect.find(&format!(" {name}=\""))? + name.len() + 3;
            rect[at..].split('"').next()?.parse().ok()
        };
        svg.split("<rect")
            .skip(1)
            .filter(|r| r.contains(&format!("fill=\"{fill}\"")))
            .filter_map(|r| attr(r, "height"))
            .collect()
    }

    /// On a log axis a figure is a level, never a bar from where the axis happens to start; on a
    /// linear one, a bar from zero as tall as its figure.
    #[test]
    fn a_log_axis_draws_levels_and_a_linear_one_bars() {
        font();
        for (spread, log) in [(1000.0, true), (10.0, false)] {
            let mut s = spec(2, 2, 1);
            s.series[0].color = RGBColor(200, 10, 10);
            s.panels[0].values = vec![vec![Some(1.0), Some(2.0)], vec![Some(spread), Some(3.0)]];
            assert_eq!(logarithmic(&s, Scale::Mega), log);
            let mut svg = String::new();
            draw(SVGBackend::with_string(&mut svg, size(&s)).into_drawing_area(), &s).unwrap();
            // The legend's swatch first, then a figure per case.
            let all = heights(&svg, "#C80A0A");
            assert_eq!(all.len(), 3, "a swatch and a figure per case: {all:?}");
            let drawn = &all[1..];
            if log {
                assert!(drawn.iter().all(|h| *h <= LEVEL as f64 + 1.0), "levels: {drawn:?}");
            } else {
                assert!(drawn[1] > 5.0 * drawn[0], "bars as tall as their figures: {drawn:?}");
            }
        }
    }
}
