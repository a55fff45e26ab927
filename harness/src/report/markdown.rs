//! The page as Markdown (`report.md`): how each block of `page::Page` looks, and any table
//! (compare's too).

use anyhow::Result;

use super::families::FamilyTable;
use super::model::{self, Cell, Table};
use super::page::{Block, Format, Page, Section};
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

/// A family's table: a row per case and figure, the case named on its first row; its legend
/// under it.
fn family_table(t: &FamilyTable) -> String {
    let mut header = vec!["case".to_string(), "figure".to_string()];
    header.extend(t.columns.iter().cloned());
    let mut table = Table { header, ..Table::default() };
    for (i, row) in t.rows.iter().enumerate() {
        let first = t.opens_case(i);
        let mut cells = vec![Cell::Text(if first { row.case.clone() } else { String::new() })];
        cells.push(Cell::Text(row.figure.clone()));
        cells.extend(row.cells.iter().cloned());
        table.rows.push(cells);
    }
    // A bare `*` would start emphasis.
    let legend =
        model::legend_line("**Bold**", |m| t.has_mark(m.symbol()), |m| m.symbol().replace('*', "\\*"));
    format!("{}\n{legend}\n\n", render(&table))
}

/// `report.md`: each block followed by a blank line, each section under its `##` title. `root`
/// is where the report's folder is from the page the Markdown is pasted in (the README's
/// blocks: `results/run-<time>/`); none for `report.md` itself.
#[derive(Default)]
pub struct Markdown {
    pub root: Option<String>,
    /// The page whose sections the links go to, from the page pasted in (`RESULTS.md`); none:
    /// the report's own `report.md` under `root`, or this page when there is no root.
    pub sections_in: Option<String>,
}

/// The anchor a Markdown renderer (GitHub's) gives a heading: lower case, punctuation dropped,
/// spaces as hyphens.
pub fn anchor(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

impl Markdown {
    fn chart(&self, name: &str) -> String {
        format!("{}charts/{name}.png", self.root.as_deref().unwrap_or(""))
    }

    fn link(&self, title: &str) -> String {
        match (&self.sections_in, &self.root) {
            (Some(page), _) => format!("{page}#{}", anchor(title)),
            (None, Some(root)) => format!("{root}report.md#{}", anchor(title)),
            (None, None) => format!("#{}", anchor(title)),
        }
    }
}

impl Format for Markdown {
    fn open(&self, page: &Page) -> String {
        let files: Vec<String> =
            page.sources.iter().map(|(path, label)| format!("`{path}` ({label})")).collect();
        format!(
            "# ipcbench report\n\nRebuilt from {} by `ipcbench report`. `index.html` beside this file has the \
             same sections, its figures coloured by their ratio to the best of their row, and each figure's \
             runs, modes and cost on hover.\n\n",
            files.join(", ")
        )
    }

    fn section(&self, section: &Section, body: String) -> String {
        format!("## {}\n\n{body}", section.title)
    }

    fn block(&self, block: &Block) -> Result<String> {
        Ok(match block {
            Block::Charts(charts) => {
                charts.iter().map(|c| format!("![{}]({})\n\n", c.title, self.chart(&c.name))).collect()
            }
            Block::Table(t) => format!("{}\n", render(t)),
            Block::Family(t) => family_table(t),
            Block::Note(text) | Block::Method(text) => format!("{}\n\n", md(text)),
            Block::Reasons(reasons) => {
                let lines: String =
                    reasons.iter().enumerate().map(|(n, r)| format!("[{}] {}  \n", n + 1, md(r))).collect();
                format!("{lines}\n")
            }
            Block::Settings(libraries) => libraries
                .iter()
                .map(|lib| {
                    let settings: String =
                        lib.configuration.iter().map(|(k, v)| format!("- {}: {}\n", md(k), md(v))).collect();
                    format!("**{}** (receive modes: {})  \n{settings}\n", lib.id, lib.modes_text())
                })
                .collect(),
            Block::Questions(answers) => {
                answers.iter().map(|a| format!("**{}**\n\n{}\n\n", a.question, a.answer)).collect()
            }
            Block::Sentences(sentences) => {
                let items: String = sentences
                    .iter()
                    .map(|s| format!("- {} ([{}]({}))\n", md(&s.text), s.title, self.link(s.title)))
                    .collect();
                format!("{items}\n")
            }
        })
    }

    fn close(&self) -> String {
        String::new()
    }
}
