//! `ipcbench report`: every artefact rebuilt from saved results files alone (it runs nothing):
//! the case-by-case table, the capability, buffers and machines tables, head-to-head summaries,
//! a chart per pattern (SVG and PNG), a latency spectrum per latency case with its `.hgrm`
//! files, a CSV of the medians and a self-contained HTML page.
//! Several files (from several machines) merge into one report, a column per machine.
//!
//! `model` builds every table once, as structured cells; `terminal`, `markdown` and `html`
//! render them; `tables` builds the buffers and machines tables, `floor` each latency figure's
//! multiple of its machine's floor, `summary` the head-to-head sentences, `charts` the charts,
//! `csv` the medians file. The terminal's own lines (progress, the closing table, `ipcbench
//! list`) are rendered by `terminal` from the same model.

mod charts;
mod cost;
mod csv;
mod floor;
mod html;
pub mod markdown;
pub mod model;
mod scatter;
mod sizes;
mod spectrum;
mod summary;
mod tables;
pub mod terminal;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::matrix::{self, Case, Pattern};
use crate::results::{self, CaseResult, Document, LibraryRecord};

/// One results file and the name its machine goes by in the report.
pub struct Source {
    pub label: String,
    pub path: PathBuf,
    pub doc: Document,
}

/// Reads and checks results files; a corrupt file or another schema version is refused.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Source>> {
    if paths.is_empty() {
        bail!("name at least one results file (results/run-<time>.json)");
    }
    let mut sources: Vec<Source> = Vec::new();
    for path in paths {
        let doc = results::load(path)?;
        let mut label = machine_label(&doc);
        if sources.iter().any(|s| s.label == label) {
            label = format!("{label}, {}", doc.started);
        }
        sources.push(Source { label, path: path.clone(), doc });
    }
    Ok(sources)
}

impl Source {
    /// A results document, named after its machine.
    pub fn new(doc: Document, path: PathBuf) -> Source {
        Source { label: machine_label(&doc), path, doc }
    }
}

/// A machine's short name: its OS, its CPU and its cores.
fn machine_label(doc: &Document) -> String {
    let m = &doc.machine;
    let os = m.os.split(" (").next().unwrap_or(&m.os).trim();
    let vm = if m.hypervisor.is_some() { ", VM" } else { "" };
    format!("{os}, {} cores{vm}", m.cores)
}

/// The folder a report of these files goes to when none is given: beside the one file (its
/// name without `.json`), or `report` beside the first of several.
pub fn default_out(paths: &[PathBuf]) -> PathBuf {
    match paths {
        [one] => one.with_extension(""),
        _ => paths.first().and_then(|p| p.parent()).unwrap_or(Path::new(".")).join("report"),
    }
}

/// Writes every artefact into `out`; returns the files written.
pub fn build(sources: &[Source], out: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out.join("charts")).with_context(|| format!("creating {}", out.display()))?;
    let view = View::new(sources, out);
    let mut written = Vec::new();
    let mut charts = charts::draw_all(&view, &out.join("charts"))?;
    charts.extend(spectrum::draw(&view, &out.join("charts"), &out.join("hgrm"), &mut written)?);
    let mut write = |name: &str, text: String| -> Result<()> {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
        Ok(())
    };
    write("report.md", markdown::page(&view, &charts))?;
    write("medians.csv", csv::csv(&view))?;
    write("index.html", html::page(&view, &charts)?)?;
    for c in &charts {
        written.push(out.join("charts").join(format!("{}.svg", c.name)));
        written.push(out.join("charts").join(format!("{}.png", c.name)));
    }
    Ok(written)
}

/// The results of every source, arranged as the tables show them.
pub struct View<'a> {
    pub sources: &'a [Source],
    /// Case names in the order of the first file that has each.
    pub cases: Vec<String>,
    /// Library ids in the order of the first file that has each.
    pub libraries: Vec<String>,
    /// One column per library and machine: (library, source index).
    pub columns: Vec<(String, usize)>,
    /// Where the report goes.
    pub out: PathBuf,
}

impl<'a> View<'a> {
    pub fn new(sources: &'a [Source], out: &Path) -> View<'a> {
        let mut cases: Vec<String> = Vec::new();
        let mut libraries: Vec<String> = Vec::new();
        for s in sources {
            for r in &s.doc.results {
                if !cases.contains(&r.case) {
                    cases.push(r.case.clone());
                }
            }
            for l in &s.doc.libraries {
                if !libraries.contains(&l.id) {
                    libraries.push(l.id.clone());
                }
            }
        }
        let columns = libraries
            .iter()
            .flat_map(|l| {
                (0..sources.len())
                    .filter(move |&i| sources[i].doc.libraries.iter().any(|x| &x.id == l))
                    .map(move |i| (l.clone(), i))
            })
            .collect();
        View { sources, cases, libraries, columns, out: out.to_path_buf() }
    }

    pub fn result(&self, case: &str, library: &str, source: usize) -> Option<&'a CaseResult> {
        self.sources[source].doc.results.iter().find(|r| r.case == case && r.library == library)
    }

    pub fn library(&self, id: &str) -> Option<(&'a LibraryRecord, usize)> {
        self.sources
            .iter()
            .enumerate()
            .find_map(|(i, s)| s.doc.libraries.iter().find(|l| l.id == id).map(|l| (l, i)))
    }

    /// Every library's record, in the view's order (the first file's, where several have it).
    pub fn library_records(&self) -> Vec<LibraryRecord> {
        self.libraries.iter().filter_map(|id| self.library(id).map(|(l, _)| l.clone())).collect()
    }

    pub fn column_label(&self, (lib, source): &(String, usize)) -> String {
        format!("{lib}{}", self.source_suffix(*source))
    }

    /// ` (<machine>)` after what belongs to one source, when the view has several; else nothing.
    pub fn source_suffix(&self, source: usize) -> String {
        if self.sources.len() == 1 { String::new() } else { format!(" ({})", self.sources[source].label) }
    }

    /// The view's cases of one pattern, batch cases aside, in the view's order.
    pub fn cases_of(&self, pattern: Pattern) -> impl Iterator<Item = Case> + '_ {
        self.cases
            .iter()
            .filter_map(|name| matrix::find(name).ok())
            .filter(move |c| c.pattern() == pattern && c.batch == 1)
    }

    /// A case's pattern, as its results record it.
    pub fn pattern(&self, case: &str) -> Option<Pattern> {
        self.sources.iter().flat_map(|s| &s.doc.results).find(|r| r.case == case).map(|r| r.pattern)
    }

    /// The results of a case on one machine: the row a result is ranked in.
    pub fn row(&self, case: &str, source: usize) -> Vec<&'a CaseResult> {
        self.sources[source].doc.results.iter().filter(|r| r.case == case).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every committed report regenerates from its JSON alone as it was committed: the tables
    /// and the CSV are a function of the results file.
    #[test]
    fn every_committed_report_regenerates_identically() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut seen = 0;
        for entry in std::fs::read_dir(root.join("results")).unwrap().flatten() {
            let folder = entry.path();
            if !folder.join("report.md").is_file() {
                continue;
            }
            let name = folder.file_name().unwrap().to_str().unwrap().to_string();
            let doc = results::load(&root.join(format!("results/{name}.json"))).unwrap();
            // Named as `ipcbench run` named it, relative to the project.
            let sources = [Source::new(doc, PathBuf::from(format!("results/{name}.json")))];
            let out =
                std::env::temp_dir().join(format!("ipcbench-report-test-{}-{name}", std::process::id()));
            build(&sources, &out).unwrap();
            for file in ["report.md", "medians.csv"] {
                let committed = std::fs::read_to_string(folder.join(file)).unwrap();
                let again = std::fs::read_to_string(out.join(file)).unwrap();
                assert!(
                    committed == again,
                    "results/{name}/{file} differs when rebuilt into {}",
                    out.display()
                );
            }
            let _ = std::fs::remove_dir_all(&out);
            seen += 1;
        }
        assert!(seen >= 2, "the committed reports: {seen}");
    }
}
