//! `ipcbench report`: every artefact rebuilt from saved results files alone (it runs nothing):
//! the case-by-case table, the capability, buffers and machines tables, head-to-head summaries,
//! a chart per pattern (SVG and PNG), a CSV of the medians and a self-contained HTML page.
//! Several files (from several machines) merge into one report, a column per machine.

mod charts;
mod html;
mod tables;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};

use crate::figures::Figures;
use crate::results::{CaseResult, Document, LibraryRecord, SCHEMA_VERSION};

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
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            anyhow!(
                "{} is not JSON ({e}): a results file that was cut short or edited by hand?",
                path.display()
            )
        })?;
        match value.get("schema_version").and_then(|v| v.as_u64()) {
            None => bail!("{} has no schema_version: it is not an ipcbench results file", path.display()),
            Some(v) if v != u64::from(SCHEMA_VERSION) => bail!(
                "{} has schema version {v}; this ipcbench reads version {SCHEMA_VERSION} (use the ipcbench that wrote it)",
                path.display()
            ),
            Some(_) => {}
        }
        let doc: Document =
            serde_json::from_value(value).map_err(|e| anyhow!("{} is corrupt: {e}", path.display()))?;
        let mut label = machine_label(&doc);
        if sources.iter().any(|s| s.label == label) {
            label = format!("{label}, {}", doc.started);
        }
        sources.push(Source { label, path: path.clone(), doc });
    }
    Ok(sources)
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
    let mut write = |name: &str, text: String| -> Result<()> {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
        Ok(())
    };
    let charts = charts::draw_all(&view, &out.join("charts"))?;
    write("report.md", tables::markdown(&view, &charts))?;
    write("medians.csv", tables::csv(&view))?;
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

/// How a result stands in its row (its case, on its machine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    Fastest,
    /// Its runs' spread overlaps the fastest's: they can't be told apart.
    Level,
    Behind,
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

    pub fn column_label(&self, (lib, source): &(String, usize)) -> String {
        if self.sources.len() == 1 { lib.clone() } else { format!("{lib} ({})", self.sources[*source].label) }
    }

    /// Where a result stands among the libraries of its case on its machine.
    pub fn rank(&self, r: &CaseResult, source: usize) -> Option<Rank> {
        let mine = spread(r)?;
        let rivals: Vec<(f64, f64, f64)> =
            self.sources[source].doc.results.iter().filter(|x| x.case == r.case).filter_map(spread).collect();
        let best = rivals.iter().map(|s| s.1).fold(f64::MIN, f64::max);
        let best_spread = rivals.iter().find(|s| s.1 == best)?;
        Some(if mine.1 == best {
            Rank::Fastest
        } else if mine.2 >= best_spread.0 {
            Rank::Level
        } else {
            Rank::Behind
        })
    }
}

/// How good a figure is, higher better: a round trip's by its p50 (round trips a second at it),
/// every other case's by its rate.
pub fn goodness(pattern: &str, f: &Figures) -> Option<f64> {
    match (pattern, f.p50_ns) {
        ("stream-rtt", Some(p50)) if p50 > 0.0 => Some(1e9 / p50),
        ("stream-rtt", _) => None,
        _ => Some(f.msgs_per_s),
    }
}

/// A measured result's runs, by goodness: (lowest, median, highest). Level results are those
/// whose ranges overlap.
pub fn spread(r: &CaseResult) -> Option<(f64, f64, f64)> {
    if r.status != "ok" {
        return None;
    }
    let median = goodness(&r.pattern, r.median.as_ref()?)?;
    let mode = r.modes.iter().find(|m| Some(&m.mode) == r.best_mode.as_ref())?;
    let runs: Vec<f64> = mode.runs.iter().filter_map(|run| goodness(&r.pattern, &run.figures)).collect();
    let lo = runs.iter().copied().fold(median, f64::min);
    let hi = runs.iter().copied().fold(median, f64::max);
    Some((lo, median, hi))
}
