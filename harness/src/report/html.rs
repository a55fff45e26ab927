//! The report as one self-contained HTML page: no network, the CSS and the charts (SVG) inline.
//! Hovering a cell of the case table shows its runs and its library's configuration.

use anyhow::{Context, Result};

use super::View;
use super::charts::{Chart, Section};
use super::model::{self, Cell, Table};
use super::{cost, floor, sizes, spectrum, summary, tables};
use crate::analysis::Rank;

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn cell(c: &Cell) -> String {
    match c {
        Cell::Figure { text, rank: Some(Rank::Fastest), marks } => {
            format!("<b>{}</b>{}", esc(text), esc(marks))
        }
        Cell::Figure { text, rank: Some(Rank::Level), marks } => {
            esc(&format!("{} {text}{marks}", model::LEVEL))
        }
        Cell::Figure { text, marks, .. } => esc(&format!("{text}{marks}")),
        Cell::Dash { note } => format!("— [{note}]"),
        Cell::Status { status, note } => format!("{} [{note}]", status.as_str().to_uppercase()),
        Cell::Support { supported: true, text } => esc(text),
        Cell::Support { supported: false, text } => esc(&format!("— {text}")),
        Cell::Library { id, name, version } => esc(&format!("{id}: {name} {version}")),
        Cell::Text(t) => esc(t),
        Cell::Empty => String::new(),
    }
}

fn table(t: &Table, tips: Option<&dyn Fn(usize, usize) -> String>) -> String {
    let mut out = String::from("<table><thead><tr>");
    for h in &t.header {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for (i, row) in t.rows.iter().enumerate() {
        out.push_str("<tr>");
        for (j, c) in row.iter().enumerate() {
            let tip = tips.map(|t| t(i, j)).filter(|t| !t.is_empty());
            match tip {
                Some(t) => out.push_str(&format!("<td title=\"{}\">{}</td>", esc(&t), cell(c))),
                None if j == 0 => out.push_str(&format!("<th>{}</th>", cell(c))),
                None => out.push_str(&format!("<td>{}</td>", cell(c))),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

const STYLE: &str = "body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1800px}\
table{border-collapse:collapse;margin:12px 0;font-size:13px}th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top}\
thead th{background:#f0f0f0;position:sticky;top:0}td[title]{cursor:help}td[title]:hover{background:#ffeeb0}\
.chart svg{max-width:100%;height:auto}.note{font-size:13px;color:#444}h2{margin-top:32px}";

pub fn page(view: &View, charts: &[Chart]) -> Result<String> {
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ipcbench report</title><style>{STYLE}</style></head><body>"
    );
    out.push_str("<h1>ipcbench report</h1><p class=\"note\">Rebuilt from ");
    let files: Vec<String> = view
        .sources
        .iter()
        .map(|s| format!("<code>{}</code> ({})", esc(&s.path.display().to_string()), esc(&s.label)))
        .collect();
    out.push_str(&files.join(", "));
    out.push_str(". Hover a figure for its runs and its library's configuration.</p><h2>Summary</h2><ul>");
    for line in summary::lines(view) {
        out.push_str(&format!("<li>{}</li>", esc(&line)));
    }
    out.push_str("</ul><h2>Case by case</h2>");
    let cases = model::case_table(view);
    let tip = |i: usize, j: usize| -> String {
        let Some((lib, s)) = j.checked_sub(1).and_then(|k| view.columns.get(k)) else { return String::new() };
        let Some(r) = view.result(&view.cases[i], lib, *s) else { return String::new() };
        let mut t = format!("{} · {} · {}\n", r.case, r.library, view.sources[*s].label);
        t.push_str(&tables::runs_text(r));
        if let Some(reason) = &r.reason {
            t.push_str(&format!("\n{reason}"));
        }
        if let Some((l, _)) = view.library(lib) {
            t.push_str(&format!("\n\n{} {}", l.name, l.version));
            for (k, v) in &l.configuration {
                t.push_str(&format!("\n{k}: {v}"));
            }
        }
        t
    };
    out.push_str(&table(&cases, Some(&tip)));
    out.push_str(&format!(
        "<p class=\"note\">{}</p><ol class=\"note\">",
        esc(&model::legend_line("bold", |m| m.symbol().to_string()))
    ));
    for text in &cases.notes {
        out.push_str(&format!("<li>{}</li>", esc(text)));
    }
    out.push_str("</ol><h2>Charts</h2>");
    out.push_str(&inline(view, charts, Section::Patterns)?);
    if sizes::present(view) {
        out.push_str(&format!("<h2>Across message sizes</h2><p class=\"note\">{}</p>", esc(sizes::SIZES)));
        out.push_str(&inline(view, charts, Section::Sizes)?);
        out.push_str(&table(&sizes::table(view), None));
    }
    if charts.iter().any(|c| c.section == Section::Spectra) {
        out.push_str(&format!("<h2>Latency spectra</h2><p class=\"note\">{}</p>", esc(spectrum::SPECTRA)));
        out.push_str(&inline(view, charts, Section::Spectra)?);
    }
    out.push_str(&format!(
        "<h2>Against the machine's floors</h2><p class=\"note\">{}</p>",
        esc(floor::FLOORS)
    ));
    for line in floor::drift(view) {
        out.push_str(&format!("<p class=\"note\">{}</p>", esc(&line)));
    }
    if floor::recorded(view) {
        out.push_str(&table(&floor::table(view), None));
    } else {
        out.push_str(&format!("<p class=\"note\">{}</p>", esc(floor::NO_FLOORS)));
    }
    out.push_str(&format!("<h2>Waiting against polling</h2><p class=\"note\">{}</p>", esc(cost::MODES)));
    out.push_str(&table(&cost::modes_table(view), None));
    out.push_str(&inline(view, charts, Section::Modes)?);
    out.push_str(&format!("<h2>What each figure costs</h2><p class=\"note\">{}</p>", esc(cost::COST)));
    out.push_str(&table(&cost::cost_table(view), None));
    out.push_str(&inline(view, charts, Section::Cost)?);
    out.push_str("<h2>Capabilities</h2>");
    out.push_str(&table(&model::capability_table(&view.library_records()), None));
    out.push_str(&format!("<h2>Buffers</h2><p class=\"note\">{}</p>", esc(&tables::depth_note(view))));
    let depths = tables::depth_table(view);
    if depths.rows.is_empty() {
        out.push_str(&format!("<p class=\"note\">{}</p>", esc(tables::NO_DEPTHS)));
    } else {
        out.push_str(&table(&depths, None));
    }
    out.push_str("<h2>Shared memory mapped</h2><p class=\"note\">By the library's largest process in each charted case.</p>");
    out.push_str(&table(&tables::mapped_table(view), None));
    out.push_str("<h2>Machines</h2>");
    out.push_str(&table(&tables::machine_table(view), None));
    out.push_str(&format!("<p class=\"note\">{}</p></body></html>\n", esc(&tables::versions(view))));
    Ok(out)
}

/// The charts of one section, their SVG inline.
fn inline(view: &View, charts: &[Chart], section: Section) -> Result<String> {
    let mut out = String::new();
    for c in charts.iter().filter(|c| c.section == section) {
        let path = view.out.join("charts").join(format!("{}.svg", c.name));
        let svg = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        // The XML declaration may not stand inside HTML.
        let svg = svg
            .trim_start()
            .strip_prefix("<?xml")
            .map_or(svg.as_str(), |rest| rest.split_once("?>").map_or(rest, |(_, body)| body));
        out.push_str(&format!("<div class=\"chart\" id=\"chart-{}\">{svg}</div>", esc(&c.name)));
    }
    Ok(out)
}
