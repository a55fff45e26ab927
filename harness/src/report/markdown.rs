//! The report as Markdown (`report.md`), in the HTML page's order: where each library stands,
//! a section per case family (its charts, its table, what it measures, why a library has a dash),
//! then sizes, receive modes, cost, capabilities, buffers, floors, machines and questions.

use super::View;
use super::charts::{Chart, Section};
use super::families::{self, Family, FamilyTable};
use super::faq::Answer;
use super::model::{self, Cell, Table};
use super::{cost, floor, sizes, spectrum, summary, tables};
use crate::analysis::Rank;

/// Markdown-safe: a `|` inside a cell would split it.
fn md(text: &str) -> String {
    text.replace('|', "\\|")
}

fn cell(c: &Cell) -> String {
    match c {
        Cell::Text(t) => t.clone(),
        Cell::Figure { text, rank: Some(Rank::Fastest), marks } => format!("**{text}**{marks}"),
        Cell::Figure { text, rank: Some(Rank::Level), marks } => format!("{} {text}{marks}", model::LEVEL),
        Cell::Figure { text, marks, .. } => format!("{text}{marks}"),
        Cell::Value { text, rank: Some(Rank::Fastest), marks, .. } => format!("**{text}**{marks}"),
        Cell::Value { text, rank: Some(Rank::Level), marks, .. } => format!("{} {text}{marks}", model::LEVEL),
        Cell::Value { text, marks, .. } => format!("{text}{marks}"),
        Cell::Dash { note } => format!("— [{note}]"),
        Cell::Status { status, note } => format!("{} [{note}]", status.as_str().to_uppercase()),
        Cell::Support { supported: true, text } => text.clone(),
        Cell::Support { supported: false, text } => format!("— {text}"),
        Cell::Library { id, name, version } => format!("{id}: {name} {version}"),
        Cell::Empty => String::new(),
    }
}

/// A table as Markdown, without its footnotes.
pub fn render(t: &Table) -> String {
    let line = |cells: Vec<String>| cells.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | ");
    let mut out = format!("| {} |\n|{}|\n", line(t.header.clone()), vec!["---"; t.header.len()].join("|"));
    for r in &t.rows {
        out.push_str(&format!("| {} |\n", line(r.iter().map(cell).collect())));
    }
    out
}

/// A family's table: a row per case and figure, the case named on its first row.
fn family_table(view: &View, t: &FamilyTable) -> String {
    let mut header = vec!["case".to_string(), "figure".to_string()];
    header.extend(view.columns.iter().map(|c| view.column_label(c)));
    let mut table = Table { header, ..Table::default() };
    for (i, row) in t.rows.iter().enumerate() {
        let first = t.opens_case(i);
        let mut cells = vec![Cell::Text(if first { row.case.clone() } else { String::new() })];
        cells.push(Cell::Text(row.figure.clone()));
        cells.extend(row.cells.iter().cloned());
        table.rows.push(cells);
    }
    let mut out = render(&table);
    // A bare `*` would start emphasis.
    let legend =
        model::legend_line("**Bold**", |m| t.has_mark(m.symbol()), |m| m.symbol().replace('*', "\\*"));
    out.push_str(&format!("\n{legend}\n\n{}\n\n", t.family.method()));
    for (n, text) in t.notes.iter().enumerate() {
        out.push_str(&format!("[{}] {}  \n", n + 1, md(text)));
    }
    out
}

fn buffers(view: &View) -> String {
    let mut out = format!("{}\n\n", tables::depth_note(view));
    let depths = tables::depth_table(view);
    if depths.rows.is_empty() {
        out.push_str(&format!("{}\n", tables::NO_DEPTHS));
    } else {
        out.push_str(&render(&depths));
    }
    out.push_str(&format!("\n{}:\n\n", tables::MAPPED));
    out.push_str(&render(&tables::mapped_table(view)));
    out.push_str("\nEach library's buffers, rings and settings, as the run recorded them:\n\n");
    for id in &view.libraries {
        let Some((lib, _)) = view.library(id) else { continue };
        let modes: Vec<&str> = lib.receive_modes.iter().map(|m| m.as_str()).collect();
        out.push_str(&format!("**{id}** (receive modes: {})  \n", modes.join(", ")));
        for (k, v) in &lib.configuration {
            out.push_str(&format!("- {}: {}\n", md(k), md(v)));
        }
        out.push('\n');
    }
    out
}

pub fn page(view: &View, charts: &[Chart], answers: &[Answer]) -> String {
    let mut out = String::from("# ipcbench report\n\nRebuilt from ");
    let files: Vec<String> =
        view.sources.iter().map(|s| format!("`{}` ({})", s.path.display(), s.label)).collect();
    out.push_str(&files.join(", "));
    out.push_str(" by `ipcbench report`. `index.html` beside this file has the same sections, its figures coloured by their ratio to the best of their row, and each figure's runs, modes and cost on hover.\n\n");
    let pictures = |which: &dyn Fn(Section) -> bool| -> String {
        let of = charts.iter().filter(|c| which(c.section));
        of.map(|c| format!("![{}](charts/{}.png)\n\n", c.title, c.name)).collect()
    };
    out.push_str("## Where each library stands\n\n");
    out.push_str(&pictures(&|s| s == Section::Placing));
    out.push_str(&render(&summary::table(view)));
    out.push_str(&format!(
        "\nOversubscribed cases are counted apart: they measure the scheduler as much as the library. The {} \
         is a rate's best over its own, a time's own over the best (1.00×: the best every time).\n\n",
        summary::RATIO
    ));
    for f in Family::ALL {
        let t = families::table(view, f);
        if t.rows.is_empty() {
            continue;
        }
        out.push_str(&format!("## {}\n\n", f.title()));
        out.push_str(&pictures(&|s| s == Section::Family(f)));
        out.push_str(&family_table(view, &t));
        let spectra = pictures(&|s| s == Section::Spectrum(f));
        if !spectra.is_empty() {
            out.push_str(&format!("\n{}\n\n{spectra}", spectrum::SPECTRA));
        } else {
            out.push('\n');
        }
    }
    if sizes::present(view) {
        out.push_str("## Across message sizes\n\n");
        out.push_str(&pictures(&|s| s == Section::Sizes));
        out.push_str(&render(&sizes::table(view)));
        out.push_str(&format!("\n{}\n\n", sizes::SIZES));
    }
    out.push_str("## Waiting against polling\n\n");
    out.push_str(&pictures(&|s| s == Section::Modes));
    out.push_str(&render(&cost::modes_table(view)));
    out.push_str(&format!("\n{}\n\n", cost::MODES));
    out.push_str("## What each figure costs\n\n");
    out.push_str(&pictures(&|s| s == Section::Cost));
    out.push_str(&render(&cost::cost_table(view)));
    out.push_str(&format!("\n{}\n\n", cost::COST));
    out.push_str("## Capabilities\n\nWhich patterns each library has, and how its messages travel.\n\n");
    out.push_str(&render(&model::capability_table(&view.library_records())));
    out.push_str("\n## Buffers and configuration\n\n");
    out.push_str(&buffers(view));
    out.push_str(&format!("## Against the machine's floors\n\n{}\n\n", floor::FLOORS));
    for line in floor::drift(view) {
        out.push_str(&format!("{line}\n\n"));
    }
    if floor::recorded(view) {
        out.push_str(&render(&floor::table(view)));
        out.push('\n');
    } else {
        out.push_str(&format!("{}\n\n", floor::NO_FLOORS));
    }
    out.push_str("## Machines\n\n");
    out.push_str(&render(&tables::machine_table(view)));
    out.push_str(&pictures(&|s| s == Section::Host));
    out.push_str(&format!("\n{}\n\n## Questions\n\n", md(&tables::versions(view))));
    for a in answers {
        out.push_str(&format!("**{}**\n\n{}\n\n", a.question, a.answer));
    }
    out
}
