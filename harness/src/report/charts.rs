//! A chart per pattern, SVG and PNG (plotters): every library's bars side by side per case, on
//! a log axis when the values span more than 30 times; a lossy broadcast's share lost and a
//! service's p50 round trip in a panel of their own under the rates; the machine's floors
//! (`floor`) as lines across the round-trip, latency and call panels and as a dash over each
//! stream case (its copy floor). Then the receive modes side by side per library, and
//! (`scatter`) each library's rate against its CPU per message.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use super::View;
use super::families::Family;
use super::plot::{COLORS, Chart, DrawResult, Place, SANS, font, mode_color};
use super::{cost, floor};
use crate::analysis;
use crate::results::shows::{Gathered, Title};
use crate::results::{CaseResult, Figure, Figures, Status};
use ipcbench_api::RecvMode;

/// One panel: a value per (case, series), and the machine's floors drawn over the bars.
struct Panel {
    unit: &'static str,
    /// values[case][series]
    values: Vec<Vec<Option<f64>>>,
    /// Round-trip floors: a line across the panel each.
    floors: Vec<floor::Line>,
    /// The copy floor of each case (a stream's messages per second): a dash across its slot.
    copy: Vec<Option<f64>>,
}

impl Panel {
    fn new(unit: &'static str, values: Vec<Vec<Option<f64>>>) -> Panel {
        Panel { unit, values, floors: Vec::new(), copy: Vec::new() }
    }
}

/// The copy floor's dash.
const COPY: RGBColor = RGBColor(0, 0, 0);

struct Spec {
    title: String,
    cases: Vec<String>,
    series: Vec<String>,
    /// Each series' colour: its library's place in the report, the same in every chart.
    colors: Vec<RGBColor>,
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
        let values = table(&|r: &CaseResult| r.median.and_then(|f| p.measure.get(&f)).map(p.unit));
        if i > 0 && !values.iter().flatten().any(Option::is_some) {
            continue;
        }
        if show.floors_on == Some(i) {
            floors_on = Some(panels.len());
        }
        panels.push(Panel::new(p.label, values));
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
        let sizes: Vec<usize> = cases.iter().map(|c| crate::matrix::find(c).map_or(0, |c| c.size)).collect();
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
        series: columns.iter().map(|c| view.column_label(c)).collect(),
        colors: columns
            .iter()
            .map(|(lib, source)| {
                let base = COLORS[view.libraries.iter().position(|l| l == lib).unwrap_or(0) % COLORS.len()];
                // A second machine's bars are the same colour, lighter.
                let mix = |c: u8| (c as f64 + (255.0 - c as f64) * (*source as f64 * 0.45).min(0.8)) as u8;
                RGBColor(mix(base.0), mix(base.1), mix(base.2))
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
    let panel = |case: &str, unit: &'static str, f: fn(&Figures) -> Option<f64>| {
        Panel::new(
            unit,
            columns
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
                .collect(),
        )
    };
    let panels = cases
        .iter()
        .map(|(pattern, case)| match analysis::counted(*pattern) {
            Figure::P50Ns => panel(case, "round trip p50 (µs)", |f| f.p50_ns.map(|ns| ns / 1e3)),
            Figure::MsgsPerS => panel(case, "stream: M msg/s", |f| Some(f.msgs_per_s / 1e6)),
        })
        .collect();
    let names: Vec<&str> = cases.iter().map(|(_, c)| c.as_str()).collect();
    Some(Spec {
        title: format!("{}: {}", Place::Modes.title(), names.join(" and ")),
        cases: columns.iter().map(|c| view.column_label(c)).collect(),
        series: RecvMode::ALL.iter().map(|m| m.to_string()).collect(),
        colors: RecvMode::ALL.iter().map(|&m| mode_color(m)).collect(),
        panels,
        extra: Vec::new(),
    })
}

pub fn draw_all(view: &View, dir: &Path) -> Result<Vec<Chart>> {
    font();
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
        super::plot::png(&png, (w, h), |root| draw(root, &spec))?;
        charts.push(Chart { name, title: spec.title, place });
    }
    charts.extend(super::scatter::draw(view, dir)?);
    charts.extend(super::scatter::placing(view, dir)?);
    charts.extend(super::sizes::draw(view, dir)?);
    charts.extend(super::loans::draw(view, dir)?);
    charts.extend(super::scaling::draw(view, dir)?);
    charts.extend(super::timeline::draw(view, dir)?);
    charts.extend(super::ab::draw(view, dir)?);
    Ok(charts)
}

const PANEL_H: u32 = 380;
const LEGEND_ROW: u32 = 22;

/// The legend's entries: the series, then the floors.
fn legend_items(spec: &Spec) -> Vec<(&str, RGBColor)> {
    let series = spec.series.iter().map(String::as_str).zip(spec.colors.iter().copied());
    series.chain(spec.extra.iter().map(|(l, c)| (l.as_str(), *c))).collect()
}

fn legend_rows(spec: &Spec, width: u32) -> Vec<Vec<usize>> {
    let mut rows = vec![Vec::new()];
    let mut x = 0;
    for (i, (s, _)) in legend_items(spec).iter().enumerate() {
        let w = item_width(s);
        if x + w > width.saturating_sub(40) && !rows.last().unwrap().is_empty() {
            rows.push(Vec::new());
            x = 0;
        }
        rows.last_mut().unwrap().push(i);
        x += w;
    }
    rows
}

fn item_width(label: &str) -> u32 {
    28 + 8 * label.chars().count() as u32
}

fn size(spec: &Spec) -> (u32, u32) {
    // Wide enough for the bars and for the case's label under them.
    let label = spec.cases.iter().map(|c| c.chars().count() as u32).max().unwrap_or(0);
    let slot = (spec.series.len() as u32 * 14 + 24).max(label * 9 + 16).max(70);
    let w = (110 + spec.cases.len() as u32 * slot).max(900);
    let legend = 50 + LEGEND_ROW * legend_rows(spec, w).len() as u32;
    (w, legend + PANEL_H * spec.panels.len() as u32)
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, spec: &Spec) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let (w, _) = root.dim_in_pixel();
    let rows = legend_rows(spec, w);
    let legend_h = 50 + LEGEND_ROW * rows.len() as u32;
    let (top, mut rest) = root.split_vertically(legend_h);
    top.draw(&Text::new(spec.title.clone(), (20, 12), (SANS, 22).into_font()))?;
    let items = legend_items(spec);
    for (r, row) in rows.iter().enumerate() {
        let mut x = 20;
        for &i in row {
            let (label, color) = items[i];
            let y = 46 + r as i32 * LEGEND_ROW as i32;
            if i < spec.series.len() {
                top.draw(&Rectangle::new([(x, y), (x + 14, y + 14)], color.filled()))?;
            } else {
                // A floor: a line, as the panel draws it.
                top.draw(&Rectangle::new([(x, y + 6), (x + 14, y + 8)], color.filled()))?;
            }
            top.draw(&Text::new(label.to_string(), (x + 20, y), (SANS, 15).into_font()))?;
            x += item_width(label) as i32;
        }
    }
    for panel in &spec.panels {
        let (area, below) = rest.split_vertically(PANEL_H);
        rest = below;
        // The floors count in the axis's range, so that their lines are on it.
        let floors = panel.floors.iter().map(|l| Some(l.value)).chain(panel.copy.iter().copied());
        let values: Vec<f64> =
            panel.values.iter().flatten().copied().chain(floors).flatten().filter(|v| *v > 0.0).collect();
        let lo = values.iter().copied().fold(f64::MAX, f64::min);
        let hi = values.iter().copied().fold(0.0, f64::max).max(1e-9);
        if !values.is_empty() && hi / lo > 30.0 {
            let range = (lo / 2.0)..(hi * 2.0);
            bars(&root, &area, spec, panel, range.log_scale(), lo / 2.0)?;
        } else {
            bars(&root, &area, spec, panel, 0.0..hi * 1.15, 0.0)?;
        }
    }
    root.present()
}

/// One panel's bars: drawn in pixels from the chart's own mapping, so each case's slot holds
/// every series side by side.
fn bars<DB: DrawingBackend, Y>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    spec: &Spec,
    panel: &Panel,
    y: Y,
    floor: f64,
) -> DrawResult<DB::ErrorType>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let n = spec.cases.len();
    let mut chart = ChartBuilder::on(area)
        .margin_left(10)
        .margin_right(20)
        .margin_top(10)
        .x_label_area_size(36)
        .y_label_area_size(80)
        // An integer range's end is one of its points: n - 1 makes n segments.
        .build_cartesian_2d((0..n.max(2) - 1).into_segmented(), y)?;
    let cases = spec.cases.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => cases.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .y_desc(panel.unit)
        .label_style((SANS, 14))
        .axis_desc_style((SANS, 15))
        .draw()?;
    let series = spec.series.len() as i32;
    for (i, row) in panel.values.iter().enumerate() {
        let left = chart.backend_coord(&(SegmentValue::Exact(i), floor));
        let right = chart.backend_coord(&(SegmentValue::Exact(i + 1), floor));
        let width = ((right.0 - left.0 - 12) / series).max(2);
        for (j, v) in row.iter().enumerate() {
            let Some(v) = v.filter(|v| *v > 0.0) else { continue };
            let x = left.0 + 6 + j as i32 * width;
            let top = chart.backend_coord(&(SegmentValue::Exact(i), v)).1;
            root.draw(&Rectangle::new([(x, top), (x + width - 1, left.1)], spec.colors[j].filled()))?;
        }
        if let Some(v) = panel.copy.get(i).copied().flatten() {
            let y = chart.backend_coord(&(SegmentValue::Exact(i), v)).1;
            root.draw(&Rectangle::new([(left.0 + 2, y - 1), (right.0 - 2, y + 1)], COPY.filled()))?;
        }
    }
    for line in &panel.floors {
        let from = chart.backend_coord(&(SegmentValue::Exact(0), line.value));
        let to = chart.backend_coord(&(SegmentValue::Exact(n), line.value));
        root.draw(&Rectangle::new([(from.0, from.1 - 1), (to.0, from.1)], mode_color(line.mode).filled()))?;
    }
    Ok(())
}
