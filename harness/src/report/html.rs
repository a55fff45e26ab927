//! The page as one self-contained HTML file (no network; the CSS and the charts' SVG inline):
//! how each block of `page::Page` looks, each family's figures coloured by their ratio to the
//! best of their row. Hovering or focusing (Tab) a figure shows its runs, both receive
//! modes, its cost, its floor multiple and its library's configuration. Light and dark follow
//! the reader's setting; printing drops the hover details. The page is well-formed XML too, so
//! that a test can parse it strictly.

use anyhow::{Context, Result};

use super::View;
use super::chart::Chart;
use super::families::{self, FamilyTable};
use super::model::{self, Cell, Mark, Table};
use super::page::{Block, Format, Page, Section};
use super::{cost, floor, tables};
use crate::analysis::Rank;
use crate::format::whole_percent;
use crate::results::CaseResult;

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn cell(c: &Cell) -> String {
    match c {
        Cell::Figure { text, rank: Some(Rank::Fastest), marks } => {
            format!("<b>{}</b>{}", esc(text), esc(marks))
        }
        Cell::Figure { text, rank: Some(Rank::Level), marks } => {
            esc(&format!("{}\u{a0}{text}{marks}", model::LEVEL))
        }
        Cell::Figure { text, marks, .. } => esc(&format!("{text}{marks}")),
        Cell::Value { text, rank: Some(Rank::Fastest), marks, .. } => {
            format!("<b>{}</b>{}", esc(text), esc(marks))
        }
        Cell::Value { text, rank: Some(Rank::Level), marks, .. } => {
            esc(&format!("{}\u{a0}{text}{marks}", model::LEVEL))
        }
        Cell::Value { text, marks, .. } => esc(&format!("{text}{marks}")),
        Cell::Dash { note } => format!("—<sup>{note}</sup>"),
        Cell::Status { status, note } => format!("{}<sup>{note}</sup>", status.as_str().to_uppercase()),
        Cell::Support { supported: true, text } => esc(text),
        Cell::Support { supported: false, text } => esc(&format!("— {text}")),
        Cell::Library { id, name, version } => esc(&format!("{id}: {name} {version}")),
        Cell::Text(t) => esc(t),
        Cell::Empty => String::new(),
    }
}

/// A plain table: its first column the rows' labels. A table wider than the page scrolls in a
/// box of its own, so the page never scrolls sideways (plain tables have no hover text to clip).
fn table(t: &Table) -> String {
    let mut out = String::from("<div class=\"wide\"><table class=\"plain\"><thead><tr>");
    for h in &t.header {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        out.push_str("<tr>");
        for (j, c) in row.iter().enumerate() {
            let tag = if j == 0 { "th" } else { "td" };
            out.push_str(&format!("<{tag}>{}</{tag}>", cell(c)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    out
}

/// What hovering a figure shows: its runs, both receive modes with their cost, its spread, its
/// floor multiple, where its roles ran, and its library's configuration.
fn tip(view: &View, r: &CaseResult, source: usize) -> String {
    let mut t = format!("{} · {}{}\n", r.case, r.library, view.source_suffix(source));
    for m in &r.modes {
        if let Some(line) = cost::mode_text(r, m) {
            let best = if r.best_mode == Some(m.mode) { " (its figure)" } else { "" };
            t.push_str(&format!("{line}{best}\n"));
        }
    }
    t.push_str(&format!("runs:\n{}\n", tables::runs_text(r)));
    if let Some(s) = &r.spread {
        t.push_str(&format!(
            "spread: {} of the median ({} to {})\n",
            whole_percent(s.relative),
            model::value_text(s.figure, s.min),
            model::value_text(s.figure, s.max)
        ));
    }
    if let Some(x) = floor::floors(view, source).and_then(|f| floor::shown(&f, r)) {
        t.push_str(&format!("p50 over the machine's floor: {}\n", floor::multiple_text(x)));
    }
    if let Some(p) = &r.placement {
        t.push_str(&format!("placement: {p}\n"));
    }
    for m in Mark::ALL.into_iter().filter(|m| m.on(r)) {
        t.push_str(&format!("{} {}\n", m.symbol(), m.meaning()));
    }
    if let Some((l, _)) = view.library(&r.library) {
        t.push_str(&format!("\n{} {}", l.name, l.version));
        for (k, v) in &l.configuration {
            t.push_str(&format!("\n{k}: {v}"));
        }
    }
    t
}

/// A family's table: a row per case and figure, each figure coloured by its ratio to the best of
/// its row, with its details on hover and on keyboard focus.
fn family_table(view: &View, t: &FamilyTable) -> String {
    let mut out = String::from("<table class=\"family\"><thead><tr><th>case</th><th>figure</th>");
    for label in &t.columns {
        out.push_str(&format!("<th>{}</th>", esc(label)));
    }
    out.push_str("</tr></thead><tbody>");
    let half = view.columns.len() / 2;
    for (i, row) in t.rows.iter().enumerate() {
        let first = t.opens_case(i);
        let case = if first { esc(&row.case) } else { String::new() };
        let class = if first { " class=\"first\"" } else { "" };
        out.push_str(&format!("<tr{class}><th>{case}</th><th class=\"unit\">{}</th>", esc(&row.figure)));
        for (j, (c, (lib, s))) in row.cells.iter().zip(&view.columns).enumerate() {
            let side = if j >= half { " r" } else { "" };
            match c {
                Cell::Value { ratio, .. } => {
                    let details =
                        view.result(&row.case, lib, *s).map(|r| tip(view, r, *s)).unwrap_or_default();
                    out.push_str(&format!(
                        "<td class=\"s{}{side}\" tabindex=\"0\">{}<span class=\"tip\">{}\n{:.2}× the best of its row</span></td>",
                        families::step(*ratio),
                        cell(c),
                        esc(&details),
                        ratio
                    ));
                }
                Cell::Dash { .. } => out.push_str(&format!("<td class=\"dash\">{}</td>", cell(c))),
                Cell::Status { .. } => out.push_str(&format!("<td class=\"fail\">{}</td>", cell(c))),
                _ => out.push_str(&format!("<td>{}</td>", cell(c))),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// The colour scale's legend, and the marks that stand in the table.
fn legend(t: &FamilyTable) -> String {
    let mut out = String::from("<p class=\"legend\">Ratio to the best of its row: ");
    for (i, label) in families::step_labels().iter().enumerate() {
        out.push_str(&format!("<span class=\"sw s{i}\">{}</span>", esc(label)));
    }
    let marks = model::legend_line("Bold", |m| t.has_mark(m.symbol()), |m| m.symbol().to_string());
    out.push_str(&format!(". {}</p>", esc(&marks)));
    out
}

const STYLE: &str = ":root{color-scheme:light dark;--bg:#fff;--fg:#1d1d1f;--muted:#555;--line:#d0d0d0;--head:#f2f2f2;--tip:#fffbe8}\
@media (prefers-color-scheme:dark){:root{--bg:#16181c;--fg:#e6e6e6;--muted:#a8a8a8;--line:#3d4148;--head:#23262c;--tip:#2a2e35}}\
body{background:var(--bg);color:var(--fg);font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:24px;max-width:1600px;line-height:1.4}\
h2{margin-top:40px;border-bottom:1px solid var(--line);padding-bottom:4px}nav a{margin-right:12px}a{color:inherit}\
table{border-collapse:collapse;margin:10px 0;font-size:13px}th,td{border:1px solid var(--line);padding:3px 7px;vertical-align:top}\
thead th{background:var(--head);position:sticky;top:0;z-index:2}tbody th{text-align:left;font-weight:normal;white-space:nowrap}\
table.family td{text-align:right}table.family tr.first>*{border-top:2px solid var(--muted)}th.unit{color:var(--muted)}\
td[tabindex]{position:relative;cursor:help}td[tabindex]:focus{outline:2px solid #e66100}\
.tip{display:none;position:absolute;z-index:5;left:0;top:100%;width:34em;white-space:pre-wrap;text-align:left;font-weight:normal;\
background:var(--tip);color:var(--fg);border:1px solid var(--line);padding:6px 8px;font-size:12px;box-shadow:0 2px 8px #0004}\
td.r>.tip{left:auto;right:0}td:hover>.tip,td:focus>.tip{display:block}\
.s0{background:#253494;color:#fff}.s1{background:#2c7fb8;color:#fff}.s2{background:#41b6c4;color:#000}\
.s3{background:#7fcdbb;color:#000}.s4{background:#c7e9b4;color:#000}.s5{background:#ffffcc;color:#000}\
td.dash,td.fail{color:var(--muted);text-align:center}td.fail{color:#d7301f;font-weight:bold}\
.sw{display:inline-block;padding:1px 7px;margin:0 3px}.legend,.note,.method{font-size:13px;color:var(--muted)}.method{color:var(--fg)}\
.chart{background:#fff;border-radius:6px;padding:4px;margin:10px 0}.chart svg{max-width:100%;height:auto}\
.wide{overflow-x:auto;max-width:100%}p,li,dd{overflow-wrap:anywhere}dt{font-weight:bold;margin-top:12px}dd{margin:4px 0 0 0}\
@media print{body{margin:0;max-width:none}nav,.tip{display:none!important}thead th{position:static}.chart,table{break-inside:avoid}\
*{print-color-adjust:exact;-webkit-print-color-adjust:exact}}";

/// `index.html`: each section a `<section>` under its `<h2>`, linked from the page's `<nav>`.
pub struct Html<'v, 'a> {
    pub view: &'v View<'a>,
}

impl Format for Html<'_, '_> {
    fn open(&self, page: &Page) -> String {
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><meta name=\"viewport\" \
             content=\"width=device-width\"/><title>ipcbench report</title><style>{STYLE}</style></head><body>"
        );
        let files: Vec<String> = page
            .sources
            .iter()
            .map(|(path, label)| format!("<code>{}</code> ({})", esc(path), esc(label)))
            .collect();
        out.push_str(&format!(
            "<h1>ipcbench report</h1><p class=\"note\">Rebuilt from {}. Hover a figure, or move to it with \
             Tab, for its runs, both receive modes, its cost and its library's configuration.</p><nav>",
            files.join(", ")
        ));
        for s in &page.sections {
            out.push_str(&format!("<a href=\"#{}\">{}</a>", s.id, esc(s.title)));
        }
        out.push_str("</nav>");
        out
    }

    fn section(&self, section: &Section, body: String) -> String {
        format!("<section id=\"{}\"><h2>{}</h2>{body}</section>", section.id, esc(section.title))
    }

    fn block(&self, block: &Block) -> Result<String> {
        Ok(match block {
            Block::Charts(charts) => inline(self.view, charts)?,
            Block::Table(t) => table(t),
            Block::Family(t) => format!("{}{}", family_table(self.view, t), legend(t)),
            Block::Note(text) => format!("<p class=\"note\">{}</p>", esc(text)),
            Block::Method(text) => format!("<p class=\"method\">{}</p>", esc(text)),
            Block::Reasons(reasons) => {
                let items: String = reasons.iter().map(|r| format!("<li>{}</li>", esc(r))).collect();
                format!("<ol class=\"note\">{items}</ol>")
            }
            Block::Settings(libraries) => libraries
                .iter()
                .map(|lib| {
                    let items: String = lib
                        .configuration
                        .iter()
                        .map(|(k, v)| format!("<li>{}: {}</li>", esc(k), esc(v)))
                        .collect();
                    format!(
                        "<p class=\"note\"><b>{}</b> (receive modes: {})</p><ul class=\"note\">{items}</ul>",
                        esc(&lib.id),
                        lib.modes_text()
                    )
                })
                .collect(),
            Block::Questions(answers) => {
                let items: String = answers
                    .iter()
                    .map(|a| format!("<dt>{}</dt><dd>{}</dd>", esc(&a.question), esc(&a.answer)))
                    .collect();
                format!("<dl>{items}</dl>")
            }
            Block::Sentences(sentences) => {
                let items: String = sentences
                    .iter()
                    .map(|s| {
                        format!("<li>{} (<a href=\"#{}\">{}</a>)</li>", esc(&s.text), s.section, esc(s.title))
                    })
                    .collect();
                format!("<ul class=\"note\">{items}</ul>")
            }
        })
    }

    fn close(&self) -> String {
        "</body></html>\n".into()
    }
}

/// Charts with their SVG inline.
fn inline(view: &View, charts: &[Chart]) -> Result<String> {
    let mut out = String::new();
    for c in charts {
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
