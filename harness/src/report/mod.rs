//! `ipcbench report`: every artefact rebuilt from saved results files alone (it runs nothing):
//! a chart placing every library and the summary table, a section per case family (its chart,
//! its table, what it measures), the capability, buffers, floors and machines tables, the
//! questions a reader asks answered from the data, a latency spectrum per timed case with its
//! `.hgrm` files, a CSV of the medians and a self-contained HTML page.
//! Several files (from several machines) merge into one report, a column per machine.
//!
//! `model` holds the cells and marks; `families` builds each family's table, `summary` the
//! summary table, `first` the first look's sentences, `claims` the versions and the comparison
//! page's claims beside the run's, `faq` the answers, `tables` the buffers and machines tables, `floor` each
//! latency figure's multiple of its machine's floor, `sizes`, `loans`, `scaling` and `ab` the
//! sections' data beside their tables, `chart` every chart (each kind behind one trait), `csv`
//! the medians file.
//! `page` puts them in sections once, as data; `markdown`, `html` and `terminal` are the
//! formats that page is rendered in (`terminal` also what a run prints: its lines, its closing
//! tables, `ipcbench list`); `readme` writes a README's marked blocks as the page's sections.

pub mod ab;
mod chart;
mod claims;
mod cost;
mod csv;
mod families;
mod faq;
mod first;
mod floor;
mod html;
mod loans;
pub mod markdown;
pub mod model;
mod page;
pub mod readme;
mod scaling;
mod sizes;
mod summary;
mod tables;
pub mod terminal;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

pub use faq::Subject;
use ipcbench_api::{Kind, Shape};

use crate::matrix::{self, Case, Pace, Pattern};
use crate::pattern::Gathered;
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
        // An A/B file's tables are its base's; its pairing is a section of its own.
        let doc = results::load(path)?.base_side();
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

    /// A committed results file (`results/<name>.json`), for the tests.
    #[cfg(test)]
    pub fn committed(name: &str) -> Source {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        // In results/, or a run kept as the tests' data; plain, or compressed when large.
        let path = ["results", "harness/tests/data"]
            .into_iter()
            .flat_map(|dir| [format!("{dir}/{name}.json"), format!("{dir}/{name}.json.gz")])
            .map(PathBuf::from)
            .find(|p| root.join(p).is_file())
            .unwrap_or_else(|| panic!("no committed results file {name}"));
        let doc = results::load(&root.join(&path)).unwrap();
        Source::new(doc, path)
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
/// name without `.json` or `.json.gz`), or `report` beside the first of several.
pub fn default_out(paths: &[PathBuf]) -> PathBuf {
    match paths {
        [one] => results::stem(one),
        _ => paths.first().and_then(|p| p.parent()).unwrap_or(Path::new(".")).join("report"),
    }
}

/// What `build` made: the files written, and the page they render (what a README's blocks are
/// written from, `readme::update`).
pub struct Built {
    pub written: Vec<PathBuf>,
    pub page: page::Page,
}

/// Writes every artefact into `out`. The questions are asked of `subject`; `versus` names more
/// pairs of libraries (`A,B`) they answer.
pub fn build(sources: &[Source], out: &Path, versus: &[String], subject: &Subject) -> Result<Built> {
    let view = View::new(sources, out);
    let pairs = versus.iter().map(|v| faq::versus(&view, v)).collect::<Result<Vec<_>>>()?;
    let questions = faq::answers(&view, &pairs, subject)?;
    std::fs::create_dir_all(out.join("charts")).with_context(|| format!("creating {}", out.display()))?;
    let mut written = Vec::new();
    let (charts_dir, hgrm) = (out.join("charts"), out.join("hgrm"));
    let charts =
        chart::draw_all(&view, &mut chart::Out { charts: &charts_dir, hgrm: &hgrm, written: &mut written })?;
    let mut write = |name: &str, text: String| -> Result<()> {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
        Ok(())
    };
    let page = page::page(&view, &charts, questions);
    write("report.md", page::render(&page, &markdown::Markdown::default())?)?;
    write("medians.csv", csv::csv(&view)?)?;
    write("index.html", page::render(&page, &html::Html { view: &view })?)?;
    for c in &charts {
        written.push(out.join("charts").join(format!("{}.svg", c.name)));
        written.push(out.join("charts").join(format!("{}.png", c.name)));
    }
    Ok(Built { written, page })
}

/// The results of every source, arranged as the tables show them.
pub struct View<'a> {
    pub sources: &'a [Source],
    /// Case names in the tables' order (`ordered`): each group of cases alike but for their
    /// numbers where the first file that has one puts it, and within a group by the numbers.
    pub cases: Vec<String>,
    /// Each of `cases` as its results' params say it, or (a file written before params) as
    /// its name does; none where neither can.
    parsed: Vec<Option<Case>>,
    /// Library ids in the order of the first file that has each.
    pub libraries: Vec<String>,
    /// One column per library and machine: (library, source index).
    pub columns: Vec<(String, usize)>,
    /// Where the report goes.
    pub out: PathBuf,
}

impl<'a> View<'a> {
    pub fn new(sources: &'a [Source], out: &Path) -> View<'a> {
        let mut names: Vec<String> = Vec::new();
        let mut libraries: Vec<String> = Vec::new();
        for s in sources {
            for r in &s.doc.results {
                if !names.contains(&r.case) {
                    names.push(r.case.clone());
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
        let read = names
            .into_iter()
            .map(|name| {
                let case = read_case(sources, &name);
                (name, case)
            })
            .collect();
        let (cases, parsed): (Vec<String>, Vec<Option<Case>>) = ordered(read).into_iter().unzip();
        View { sources, cases, parsed, libraries, columns, out: out.to_path_buf() }
    }

    /// A case of the view, as its params (or its name) say it.
    pub fn case(&self, name: &str) -> Option<&Case> {
        self.cases.iter().position(|c| c == name).and_then(|i| self.parsed[i].as_ref())
    }

    /// The view's cases known neither by params nor by name (a newer binary's): shown in their
    /// family's table, in nothing that reads a case's counts.
    pub fn unread(&self) -> Vec<&str> {
        self.cases.iter().zip(&self.parsed).filter(|(_, p)| p.is_none()).map(|(c, _)| c.as_str()).collect()
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

    /// A library's kind: its record's, or for a file written before kinds, the registry's.
    pub fn kind(&self, id: &str) -> Option<Kind> {
        let recorded = self.library(id).and_then(|(l, _)| l.kind);
        recorded.or_else(|| crate::registry::find(id).ok().map(|(_, info)| info.kind))
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
        self.parsed.iter().flatten().filter(move |c| c.pattern() == pattern && c.batch == 1).cloned()
    }

    /// A case's pattern, as its results record it.
    pub fn pattern(&self, case: &str) -> Option<Pattern> {
        self.sources.iter().flat_map(|s| &s.doc.results).find(|r| r.case == case).map(|r| r.pattern)
    }

    /// What a case's table and chart gather it under (its pattern, or the batch cases).
    pub fn gathered(&self, case: &str) -> Option<Gathered> {
        let r = self.sources.iter().flat_map(|s| &s.doc.results).find(|r| r.case == case)?;
        Some(Gathered::of(r))
    }

    /// Every source's results, in the sources' order: what the analysis of standings reads.
    pub fn results(&self) -> Vec<&'a [CaseResult]> {
        self.sources.iter().map(|s| s.doc.results.as_slice()).collect()
    }

    /// The results of a case on one machine: the row a result is ranked in.
    pub fn row(&self, case: &str, source: usize) -> Vec<&'a CaseResult> {
        self.sources[source].doc.results.iter().filter(|r| r.case == case).collect()
    }
}

/// The view's cases in the tables' order: each group (`group`) where its first case first
/// appeared, and within a group by their numbers (`numbers`), so that rates, counts and sizes
/// read in their order, not in the order runs added them (a file that added `latency/3k/16B`
/// after `latency/1M/16B` still reads 1k, 3k, ... 1M). A name the matrix no longer knows keeps
/// its place, ahead of its group's known ones.
fn ordered(names: Vec<(String, Option<Case>)>) -> Vec<(String, Option<Case>)> {
    let mut groups: Vec<String> = Vec::new();
    // (its group's place, its numbers, its name, the case)
    type Keyed = (usize, Option<[u64; 6]>, String, Option<Case>);
    let mut keyed: Vec<Keyed> = Vec::new();
    for (name, case) in names {
        let g = group(&name);
        let at = match groups.iter().position(|x| *x == g) {
            Some(i) => i,
            None => {
                groups.push(g);
                groups.len() - 1
            }
        };
        keyed.push((at, case.as_ref().map(numbers), name, case));
    }
    keyed.sort_by_key(|k| (k.0, k.1));
    keyed.into_iter().map(|(_, _, name, case)| (name, case)).collect()
}

/// A case as the first of its results with params says it; for a file written before params,
/// the matrix's case of that name, or the open families' (any rate, count or size) by parsing
/// it. A result whose params do not make a case was refused when its file was read.
fn read_case(sources: &[Source], name: &str) -> Option<Case> {
    let results = || sources.iter().flat_map(|s| &s.doc.results).filter(|r| r.case == name);
    if let Some(r) = results().find(|r| r.params.is_some()) {
        return r.params.as_ref()?.case(&r.case, r.size, r.batch, r.transfer).ok();
    }
    matrix::matrix().into_iter().find(|c| c.name == name).or_else(|| matrix::named(name))
}

/// The group a case is of: its name with each number and the unit or word after it (`16B`,
/// `1k`, `4sub`, the `16` of `x16`) as `#`, so that `latency/1k/16B` and `latency/10M/1KiB` are
/// one group and `broadcast/lossless/4sub/16B` and `broadcast/lossless/4sub-1slow/16B` two.
fn group(name: &str) -> String {
    let mut out = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_ascii_digit() {
            out.push(c);
            continue;
        }
        while chars.next_if(char::is_ascii_digit).is_some() {}
        while chars.next_if(char::is_ascii_alphabetic).is_some() {}
        out.push('#');
    }
    out
}

/// A case's numbers in the order its group is sorted by: its rate, its pairs, its subscribers
/// (producers, clients), its slow subscribers (consumers, servers), its size, its batch.
fn numbers(c: &Case) -> [u64; 6] {
    let rate = match c.pace {
        Pace::Rate(r) => r,
        Pace::Free | Pace::Connect => 0,
    };
    let (first, second) = match c.shape {
        Shape::Broadcast { subscribers, .. } => (subscribers, c.slow),
        Shape::Queue { producers, consumers } => (producers, consumers),
        Shape::Service { clients, servers } => (clients, servers),
        Shape::Stream | Shape::RoundTrip => (0, 0),
    };
    let counts = [c.pairs.unwrap_or(0), first, second, c.size, c.batch].map(|n| n as u64);
    [rate, counts[0], counts[1], counts[2], counts[3], counts[4]]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases read in the order of their numbers, each group where its first case appeared: the
    /// latency rates a file added in two runs (1k, 100k, 1M, then 3k, 10k, 300k, 3M, 10M) in
    /// one order, a size added later beside its group's others.
    #[test]
    fn cases_are_ordered_by_their_numbers_within_their_group() {
        let names = [
            "stream/16B",
            "stream/1KiB",
            "stream-rtt/16B",
            "latency/1k/16B",
            "latency/100k/16B",
            "latency/1M/16B",
            "broadcast/lossless/4sub/16B",
            "broadcast/lossless/4sub-1slow/16B",
            "broadcast/lossless/1sub/1KiB",
            "latency/3k/16B",
            "latency/10k/16B",
            "latency/300k/16B",
            "latency/3M/16B",
            "latency/10M/16B",
            "stream/64KiB",
            "queue/4x4/16B",
            "queue/1x1/16B",
            "batch/stream/16B/x64",
            "batch/stream/16B/x16",
            "pairs/4/stream/16B",
            "pairs/1/stream/16B",
            "no-such/case",
        ];
        let read = names.map(|n| (n.to_string(), read_case(&[], n))).to_vec();
        let order: Vec<String> = ordered(read).into_iter().map(|c| c.0).collect();
        assert_eq!(
            order,
            [
                "stream/16B",
                "stream/1KiB",
                "stream/64KiB",
                "stream-rtt/16B",
                "latency/1k/16B",
                "latency/3k/16B",
                "latency/10k/16B",
                "latency/100k/16B",
                "latency/300k/16B",
                "latency/1M/16B",
                "latency/3M/16B",
                "latency/10M/16B",
                "broadcast/lossless/1sub/1KiB",
                "broadcast/lossless/4sub/16B",
                "broadcast/lossless/4sub-1slow/16B",
                "queue/1x1/16B",
                "queue/4x4/16B",
                "batch/stream/16B/x16",
                "batch/stream/16B/x64",
                "pairs/1/stream/16B",
                "pairs/4/stream/16B",
                "no-such/case",
            ]
        );
        assert_eq!(group("broadcast/lossless/4sub-1slow/16B"), "broadcast/lossless/#-#/#");
        assert_eq!(group("batch/stream/16B/x16"), "batch/stream/#/x#");
        // A committed file's view: its latency cases in the order of their rates.
        let source = Source::committed(crate::report::readme::REFERENCE);
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let rates: Vec<&str> =
            view.cases.iter().filter_map(|c| c.strip_prefix("latency/")?.strip_suffix("/16B")).collect();
        assert_eq!(rates, ["1k", "3k", "10k", "100k", "300k", "1M", "3M", "10M"]);
        assert_eq!(view.case("latency/3k/16B").map(|c| c.pace), Some(Pace::Rate(3_000)));
    }

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
            // Named as committed, relative to the project: plain, or kept compressed.
            let plain = format!("results/{name}.json");
            let file = if root.join(&plain).is_file() { plain } else { format!("{plain}.gz") };
            let sources = [Source::new(results::load(&root.join(&file)).unwrap(), PathBuf::from(file))];
            let out =
                std::env::temp_dir().join(format!("ipcbench-report-test-{}-{name}", std::process::id()));
            // As `ipcbench run` and `report` build it: of the default subject.
            let subject = Subject { id: crate::registry::DEFAULT_SUBJECT, named: false };
            build(&sources, &out, &[], &subject).unwrap();
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
        assert!(seen >= 1, "the committed reports: {seen}");
    }

    /// A case is read from its results' params, not from this binary's matrix: a name the matrix
    /// does not know is still a case where its params say what it is; one with neither stays in
    /// the view, is named in the standing note, and no section that reads counts sees it.
    #[test]
    fn a_case_is_read_from_its_params_and_one_unknown_is_kept_and_named() {
        let mut source = Source::committed("run-2026-12-02T16-28-14Z");
        let first = source.doc.results[0].case.clone();
        let case = crate::matrix::find(&first).unwrap();
        for r in source.doc.results.iter_mut().filter(|r| r.case == first) {
            r.case = format!("future/{first}");
            r.params = Some(results::CaseParams::of(&case));
        }
        let second = source.doc.results.iter().find(|r| !r.case.starts_with("future/")).unwrap().case.clone();
        for r in source.doc.results.iter_mut().filter(|r| r.case == second) {
            r.case = format!("future/{second}");
        }
        let sources = [source];
        let view = View::new(&sources, Path::new(""));
        let read = view.case(&format!("future/{first}")).expect("read from its params");
        assert_eq!((read.shape, read.size, read.pace), (case.shape, case.size, case.pace));
        assert_eq!(view.unread(), [format!("future/{second}")]);
        assert!(view.cases.contains(&format!("future/{second}")), "kept in the view");
        let note = page::page(&view, &[], faq::Questions { about: String::new(), answers: Vec::new() });
        let standing = note.sections.iter().find(|s| s.id == "standing").unwrap();
        let said = standing.blocks.iter().any(|b| matches!(b, page::Block::Note(t) if t.contains(&format!("by params (a newer ipcbench's): future/{second};"))));
        assert!(said, "the standing note names it");
    }

    /// The page of the reference run parses as XML (so as HTML, strictly), opens with the chart
    /// that places every library, has a section per case family with its chart above its
    /// coloured table, inlines every chart written, and answers the questions.
    #[test]
    fn the_page_parses_and_holds_every_chart_and_table() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let name = "harness/tests/data/run-2026-12-02T01-50-18Z.json.gz";
        let sources = [Source::new(results::load(&root.join(name)).unwrap(), PathBuf::from(name))];
        let out = std::env::temp_dir().join(format!("ipcbench-page-test-{}", std::process::id()));
        let libs = &sources[0].doc.libraries;
        let (a, b, c) = (&libs[0], &libs[1], &libs[2]);
        let subject = Subject { id: &a.id, named: true };
        build(&sources, &out, &[format!("{},{}", b.id, c.id)], &subject).unwrap();
        let text = std::fs::read_to_string(out.join("index.html")).unwrap();
        let strict = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
        let page = roxmltree::Document::parse_with_options(&text, strict)
            .unwrap_or_else(|e| panic!("index.html: {e}"));
        let class =
            |n: &roxmltree::Node, c: &str| n.attribute("class").is_some_and(|a| a.split(' ').any(|x| x == c));
        let charts: Vec<roxmltree::Node> = page.descendants().filter(|n| class(n, "chart")).collect();
        assert_eq!(charts[0].attribute("id"), Some("chart-placing"));
        let mut svgs: Vec<String> = std::fs::read_dir(out.join("charts"))
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_suffix(".svg").map(|n| format!("chart-{n}")))
            .collect();
        svgs.sort();
        let mut inlined: Vec<String> =
            charts.iter().map(|c| c.attribute("id").unwrap().to_string()).collect();
        inlined.sort();
        assert_eq!(inlined, svgs);
        assert!(charts.iter().all(|c| c.children().any(|x| x.has_tag_name("svg"))));
        // The links are made from the sections: one per section, in their order.
        let nav = page.descendants().find(|n| n.has_tag_name("nav")).unwrap();
        let links: Vec<String> =
            nav.children().filter_map(|a| a.attribute("href")).map(String::from).collect();
        let sections: Vec<String> = page
            .descendants()
            .filter(|n| n.has_tag_name("section"))
            .map(|n| format!("#{}", n.attribute("id").unwrap()))
            .collect();
        assert_eq!(links, sections);
        assert!(sections.len() >= 14, "{sections:?}");
        let present = |f: crate::pattern::Family| {
            sources[0].doc.results.iter().any(|r| crate::pattern::Family::of(Gathered::of(r)) == f)
        };
        for f in crate::pattern::Family::ALL.into_iter().filter(|&f| present(f)) {
            let Some(section) = page.descendants().find(|n| n.attribute("id") == Some(f.anchor())) else {
                panic!("no section {}", f.anchor())
            };
            let order: Vec<&str> = section
                .children()
                .filter_map(|n| {
                    if class(&n, "chart") {
                        Some("chart")
                    } else if class(&n, "family") {
                        Some("table")
                    } else {
                        None
                    }
                })
                .collect();
            assert_eq!(order.first(), Some(&"chart"), "{}: {order:?}", f.anchor());
            assert!(order.contains(&"table"), "{}", f.anchor());
            let cells: Vec<roxmltree::Node> =
                section.descendants().filter(|n| n.attribute("tabindex").is_some()).collect();
            assert!(!cells.is_empty() && cells.iter().all(|c| (0..6).any(|i| class(c, &format!("s{i}")))));
            assert!(cells.iter().all(|c| c.children().any(|t| class(&t, "tip"))));
        }
        let questions: Vec<String> = page
            .descendants()
            .filter(|n| n.has_tag_name("dt"))
            .filter_map(|n| n.text().map(String::from))
            .collect();
        for (x, y) in [(a, c), (b, c)] {
            let q = format!("Is {} faster than {}?", x.name, y.name);
            assert!(questions.contains(&q), "{q}: {questions:?}");
        }
        let summary = page.descendants().find(|n| n.has_tag_name("table")).unwrap();
        assert_eq!(
            summary.descendants().filter(|n| n.has_tag_name("tr")).count(),
            1 + sources[0].doc.libraries.len()
        );
        let Err(e) = build(&sources, &out, &[format!("{},nothing", b.id)], &subject) else {
            panic!("a pair naming an unknown library was taken");
        };
        let e = e.to_string();
        assert!(e.contains("\"nothing\" is not a library of this report"), "{e}");
        let _ = std::fs::remove_dir_all(&out);
    }
}
