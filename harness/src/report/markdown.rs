//! The report as Markdown (`report.md`): every table of the model, its legend and footnotes.

use super::View;
use super::charts::{Chart, Section};
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

/// The case table's legend as one paragraph.
pub fn legend() -> String {
    // A bare `*` would start emphasis.
    model::legend_line("**Bold**", |m| m.symbol().replace('*', "\\*"))
}

fn case_table(view: &View) -> String {
    let table = model::case_table(view);
    let mut out = render(&table);
    out.push_str(&format!("\n{}\n\n", legend()));
    for (n, text) in table.notes.iter().enumerate() {
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

pub fn page(view: &View, charts: &[Chart]) -> String {
    let mut out = String::from("# ipcbench report\n\nRebuilt from ");
    let files: Vec<String> =
        view.sources.iter().map(|s| format!("`{}` ({})", s.path.display(), s.label)).collect();
    out.push_str(&files.join(", "));
    out.push_str(" by `ipcbench report`.\n\n## Summary\n\n");
    for line in summary::lines(view) {
        out.push_str(&format!("- {line}\n"));
    }
    out.push_str("\n## Case by case\n\n");
    out.push_str(&case_table(view));
    let pictures = |section: Section| -> String {
        let of = charts.iter().filter(|c| c.section == section);
        of.map(|c| format!("![{}](charts/{}.png)\n\n", c.title, c.name)).collect()
    };
    out.push_str("\n## Charts\n\n");
    out.push_str(&pictures(Section::Patterns));
    if sizes::present(view) {
        out.push_str(&format!("## Across message sizes\n\n{}\n\n", sizes::SIZES));
        out.push_str(&pictures(Section::Sizes));
        out.push_str(&render(&sizes::table(view)));
        out.push('\n');
    }
    let spectra = pictures(Section::Spectra);
    if !spectra.is_empty() {
        out.push_str(&format!("## Latency spectra\n\n{}\n\n{spectra}", spectrum::SPECTRA));
    }
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
    out.push_str(&format!("## Waiting against polling\n\n{}\n\n", cost::MODES));
    out.push_str(&render(&cost::modes_table(view)));
    out.push('\n');
    out.push_str(&pictures(Section::Modes));
    out.push_str(&format!("## What each figure costs\n\n{}\n\n", cost::COST));
    out.push_str(&render(&cost::cost_table(view)));
    out.push('\n');
    out.push_str(&pictures(Section::Cost));
    out.push_str("## Capabilities\n\nWhich patterns each library has, and how its messages travel.\n\n");
    out.push_str(&render(&model::capability_table(&view.library_records())));
    out.push_str("\n## Buffers and configuration\n\n");
    out.push_str(&buffers(view));
    out.push_str("## Machines\n\n");
    out.push_str(&render(&tables::machine_table(view)));
    out.push_str(&format!("\n{}\n", md(&tables::versions(view))));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_legend_says_the_threshold_the_marks_use() {
        let legend = super::legend();
        assert!(legend.starts_with("**Bold**: the fastest in its row"), "{legend}");
        assert!(legend.contains(&format!(
            "more than {} of the median",
            crate::format::whole_percent(crate::analysis::NOISY)
        )));
        assert!(legend.contains("\\*: oversubscribed"), "{legend}");
    }
}
