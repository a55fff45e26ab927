//! The report as data: a `Page` of sections in order, each a list of blocks (charts, tables,
//! notes, method text, numbered reasons, questions), built once here from the view. A format
//! (`markdown::Markdown`, `html::Html`, `terminal::Terminal`) says only how a page opens and
//! closes, how a section is headed and how each block looks; `render` walks the page for all
//! of them, so a section added here is in every format and in the HTML page's links.

use anyhow::Result;

use super::View;
use super::chart::{Chart, Place, SPECTRA};
use super::families::{self, FamilyTable};
use super::faq::{Answer, Questions};
use super::first::{self, Sentence};
use super::model::{self, Table};
use super::{ab, claims, cost, floor, loans, scaling, sizes, summary, tables};
use crate::pattern::Family;
use crate::results::LibraryRecord;

/// A report, ready for any format.
pub struct Page {
    /// Each results file the page is rebuilt from, and the name its machine goes by.
    pub sources: Vec<(String, String)>,
    pub sections: Vec<Section>,
}

/// A section: its anchor, its title and what it shows, in order.
pub struct Section {
    pub id: &'static str,
    pub title: &'static str,
    pub blocks: Vec<Block>,
}

/// One thing a section shows.
pub enum Block {
    /// Charts written under `charts/`.
    Charts(Vec<Chart>),
    Table(Table),
    /// A family's table: its figures ranked and coloured by their ratio to the best of their
    /// row, with its legend.
    Family(FamilyTable),
    Note(String),
    /// What a section's figures measure.
    Method(String),
    /// Why a cell has a dash or a failure, numbered from 1 as the cells cite them.
    Reasons(Vec<String>),
    /// Each library's buffers, rings and settings, as the run recorded them.
    Settings(Vec<LibraryRecord>),
    Questions(Vec<Answer>),
    /// Sentences, each pointing at the section that holds its figures.
    Sentences(Vec<Sentence>),
}

/// How a page looks in one format. `render` calls these in the page's order.
pub trait Format {
    fn open(&self, page: &Page) -> String;
    /// A section, headed, around its blocks as this format wrote them.
    fn section(&self, section: &Section, body: String) -> String;
    fn block(&self, block: &Block) -> Result<String>;
    fn close(&self) -> String;
}

/// A page in one format.
pub fn render(page: &Page, format: &impl Format) -> Result<String> {
    let mut out = format.open(page);
    for s in &page.sections {
        let body = s.blocks.iter().map(|b| format.block(b)).collect::<Result<String>>()?;
        out.push_str(&format.section(s, body));
    }
    out.push_str(&format.close());
    Ok(out)
}

/// What the summary table's ratios are, under it.
fn standing_note(view: &View) -> String {
    let mut note = format!(
        "Oversubscribed cases are counted apart: they measure the scheduler as much as the library. The {} \
         is a rate's best over its own, a time's own over the best (1.00×: the best every time).",
        summary::RATIO
    );
    let unread = view.unread();
    if !unread.is_empty() {
        note.push_str(&format!(
            " Cases this binary knows neither by name nor by params (a newer ipcbench's): {}; each is in its \
             family's table, and in no chart or section that reads a case's counts.",
            unread.join(", ")
        ));
    }
    if scaling::sustainable(view).is_some() {
        note.push_str(&format!(
            " The {} is the highest offered rate of its latency cases up to which, at every rate, the sender \
             kept its schedule (at most {} behind) and the p99 stayed within {}× the lowest rate's, in the \
             better receive mode; a dash: not even the lowest.",
            summary::SUSTAINABLE,
            crate::format::whole_percent(crate::analysis::BEHIND),
            crate::analysis::SUSTAINABLE_P99
        ));
    }
    note
}

/// A section whose empty blocks (no chart, no reason) are left out.
fn section(id: &'static str, title: &'static str, blocks: Vec<Block>) -> Section {
    let empty = |b: &Block| match b {
        Block::Charts(c) => c.is_empty(),
        Block::Reasons(r) => r.is_empty(),
        Block::Sentences(s) => s.is_empty(),
        _ => false,
    };
    Section { id, title, blocks: blocks.into_iter().filter(|b| !empty(b)).collect() }
}

/// The report's page: a first look (the chart placing every library and six sentences), where
/// each library stands, a section per case family present, then sizes (when the files have
/// several), receive modes, cost, capabilities, buffers, floors, machines, versions and the
/// comparison page's claims beside this run's, and questions.
pub fn page(view: &View, charts: &[Chart], questions: Questions) -> Page {
    let at = |place: Place| Block::Charts(charts.iter().filter(|c| c.place == place).cloned().collect());
    let mut sections = vec![
        section(
            "first-look",
            "First look",
            vec![at(Place::Placing), Block::Sentences(first::sentences(view))],
        ),
        section(
            "standing",
            Place::Placing.title(),
            vec![Block::Table(summary::table(view)), Block::Note(standing_note(view))],
        ),
    ];
    // An A/B file's pairing first: it is what the run was for.
    if let Some((_, record, settings)) = ab::of(view) {
        let blocks = vec![
            Block::Note(ab::preamble(record, settings).join(" ")),
            at(Place::Ab),
            Block::Table(ab::table(record)),
            Block::Note(ab::summary(record)),
        ];
        sections.insert(0, section("ab", Place::Ab.title(), blocks));
    }
    for f in Family::ALL {
        let mut t = families::table(view, f);
        if t.rows.is_empty() {
            continue;
        }
        // The reasons are a block of their own: the table keeps none beside them.
        let reasons = Block::Reasons(std::mem::take(&mut t.notes));
        let mut blocks =
            vec![at(Place::Family(f)), Block::Family(t), Block::Method(families::method(view, f)), reasons];
        if charts.iter().any(|c| c.place == Place::Scaling(f)) {
            blocks.extend([Block::Note(scaling::SCALING.into()), at(Place::Scaling(f))]);
        }
        if charts.iter().any(|c| c.place == Place::Spectrum(f)) {
            blocks.extend([Block::Note(SPECTRA.into()), at(Place::Spectrum(f))]);
        }
        sections.push(section(f.anchor(), f.title(), blocks));
    }
    if sizes::present(view) {
        sections.push(section(
            "sizes",
            Place::Sizes.title(),
            vec![at(Place::Sizes), Block::Table(sizes::table(view)), Block::Method(sizes::method(view))],
        ));
    }
    if loans::present(view) {
        let (f, mut t) = (Family::Loans, loans::table(view));
        let reasons = Block::Reasons(std::mem::take(&mut t.notes));
        let mut blocks =
            vec![at(Place::Family(f)), Block::Table(t), Block::Method(Family::Loans.method(&[])), reasons];
        if charts.iter().any(|c| c.place == Place::Spectrum(f)) {
            blocks.extend([Block::Note(SPECTRA.into()), at(Place::Spectrum(f))]);
        }
        sections.push(section(f.anchor(), f.title(), blocks));
    }
    sections.push(section(
        "modes",
        Place::Modes.title(),
        vec![at(Place::Modes), Block::Table(cost::modes_table(view)), Block::Method(cost::MODES.into())],
    ));
    sections.push(section(
        "cost",
        Place::Cost.title(),
        vec![at(Place::Cost), Block::Table(cost::cost_table(view)), Block::Method(cost::COST.into())],
    ));
    sections.push(section(
        "capabilities",
        "Capabilities",
        vec![
            Block::Note("Which patterns each library has, and how its messages travel.".into()),
            Block::Table(model::capability_table(&view.library_records())),
        ],
    ));
    let depths = tables::depth_table(view);
    let depths =
        if depths.rows.is_empty() { Block::Note(tables::NO_DEPTHS.into()) } else { Block::Table(depths) };
    sections.push(section(
        "buffers",
        "Buffers and configuration",
        vec![
            Block::Note(tables::depth_note(view)),
            depths,
            Block::Note(format!("{}:", tables::MAPPED)),
            Block::Table(tables::mapped_table(view)),
            Block::Note("Each library's buffers, rings and settings, as the run recorded them:".into()),
            Block::Settings(view.library_records()),
        ],
    ));
    let mut floors = vec![Block::Note(floor::FLOORS.into())];
    floors.extend(floor::drift(view).into_iter().map(Block::Note));
    if floor::recorded(view) {
        // The notes its cells cite (why a waiting figure is below its floor), under it.
        let mut t = floor::table(view);
        let reasons = Block::Reasons(std::mem::take(&mut t.notes));
        floors.extend([Block::Table(t), reasons]);
    } else {
        floors.push(Block::Note(floor::NO_FLOORS.into()));
    }
    sections.push(section("floors", "Against the machine's floors", floors));
    sections.push(section(
        "machines",
        Place::Host.title(),
        vec![Block::Table(tables::machine_table(view)), at(Place::Host), Block::Note(tables::versions(view))],
    ));
    if let Some((t, note)) = claims::versions_table(view) {
        sections.push(section("versions", "Library versions", vec![Block::Note(note), Block::Table(t)]));
    }
    if let Some((t, note)) = claims::claims_table(view) {
        sections.push(section(
            "claims",
            "The comparison page's claims",
            vec![Block::Table(t), Block::Method(note)],
        ));
    }
    sections.push(section(
        "questions",
        "Questions",
        vec![Block::Note(questions.about), Block::Questions(questions.answers)],
    ));
    Page {
        sources: view.sources.iter().map(|s| (s.path.display().to_string(), s.label.clone())).collect(),
        sections,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::report::Source;
    use crate::report::markdown::Markdown;

    /// Every `.rs` file under `dir`, with its text.
    fn sources_under(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
        let mut sources = Vec::new();
        let mut dirs = vec![dir.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    sources.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        sources
    }

    /// No library's id is written anywhere in the report's sources, tests included: what the
    /// report says of a library it learns from the results (and the registry's kinds), and the
    /// questions' subject is a flag.
    #[test]
    fn no_library_is_named_in_the_report() {
        let sources = sources_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report"));
        let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        for id in crate::registry::ids() {
            for (path, text) in &sources {
                let named = text.match_indices(id).any(|(at, _)| {
                    let before = text[..at].chars().next_back();
                    let after = text[at + id.len()..].chars().next();
                    !before.is_some_and(word) && !after.is_some_and(word)
                });
                assert!(!named, "{} names the library {id:?}", path.display());
            }
        }
    }

    /// Every title of a generated report.md is written once in the harness's sources, as a
    /// string that opens with it (here, a family's title or a chart's place): a format that
    /// listed the sections itself, or a chart that spelt its section's title, would write it again.
    #[test]
    fn each_section_title_is_written_once_in_the_sources() {
        let source = Source::committed("run-2026-12-02T01-50-18Z");
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let questions = Questions { about: String::new(), answers: Vec::new() };
        let text = render(&page(&view, &[], questions), &Markdown::default()).unwrap();
        let titles: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("## ")).collect();
        assert!(titles.len() >= 13, "{titles:?}");
        let sources = sources_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
        for title in titles {
            let at: Vec<String> = sources
                .iter()
                .flat_map(|(path, text)| {
                    let n = text.matches(&format!("\"{title}")).count();
                    std::iter::repeat_n(path.display().to_string(), n)
                })
                .collect();
            assert_eq!(at.len(), 1, "{title:?} is written at {at:?}");
        }
    }
}
