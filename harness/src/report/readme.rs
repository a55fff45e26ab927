//! The README's and RESULTS.md's results, written by the report: a block of a Markdown file
//! between
//!
//! ```text
//! <!-- ipcbench report results/run-<time>.json.gz: <section> -->
//! ...
//! <!-- end of ipcbench report -->
//! ```
//!
//! holds that section of the file's report as `report.md` has it, less its heading, its charts
//! pointing into the report's folder. Beside the report's sections a block may hold `run` (one
//! line: which run, when, on what machine, what it holds), `sets` (each named set of cases with
//! its share of the run's time) or `page` (the whole report under a `run` line and a table of
//! contents: RESULTS.md). `ipcbench report <file> --readme README.md --readme RESULTS.md` writes
//! every block that names the file; a test checks the committed files' blocks against the
//! committed reference run, so their tables are the report's byte for byte.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::markdown::{Markdown, anchor};
use super::page::{Format, Page};
use crate::results::{Document, Status};

/// The committed reference run whose report the README's and RESULTS.md's results are.
pub const REFERENCE: &str = "run-2026-12-05T21-04-33Z";

/// The page that holds the whole comparison, beside the README.
pub const RESULTS_PAGE: &str = "RESULTS.md";

const OPEN: &str = "<!-- ipcbench report ";
const END: &str = "<!-- end of ipcbench report -->";

/// One block of a Markdown file: the results file and section it names, and where its body is.
#[derive(Debug, PartialEq)]
pub struct Marked {
    pub file: String,
    pub section: String,
    /// The byte range of its body (the lines between its two markers).
    pub body: std::ops::Range<usize>,
}

/// Every block of `text`; a marker that is not closed, or names no section, is refused.
pub fn blocks(text: &str) -> Result<Vec<Marked>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find(OPEN) {
        let open = at + found;
        // A marker opens its line: one quoted inside a sentence is text.
        if open > 0 && !text[..open].ends_with('\n') {
            at = open + OPEN.len();
            continue;
        }
        let line_end = text[open..].find('\n').map_or(text.len(), |n| open + n);
        let marker = &text[open + OPEN.len()..line_end];
        let Some((file, section)) =
            marker.trim_end().strip_suffix("-->").and_then(|m| m.trim().rsplit_once(": "))
        else {
            bail!(
                "the marker {:?} names no results file and section (`{OPEN}results/run-<time>.json: <section> -->`)",
                &text[open..line_end]
            );
        };
        let start = (line_end + 1).min(text.len());
        let Some(close) = text[start..].find(END) else {
            bail!("the block {marker:?} has no `{END}` after it");
        };
        out.push(Marked { file: file.to_string(), section: section.to_string(), body: start..start + close });
        at = start + close + END.len();
    }
    Ok(out)
}

/// Every block a Markdown file may hold of `doc`, the results file it names `name`, as `format`
/// points into the report (`Target::reach`): each section of `page`, then `run`, `sets` and
/// `page`.
pub fn sections(
    page: &Page,
    doc: &Document,
    name: &str,
    format: &Markdown,
) -> Result<Vec<(&'static str, String)>> {
    let mut made = page
        .sections
        .iter()
        .map(|s| -> Result<(&'static str, String)> {
            Ok((s.id, s.blocks.iter().map(|b| format.block(b)).collect::<Result<String>>()?))
        })
        .collect::<Result<Vec<_>>>()?;
    let run = run_line(doc, name);
    // The whole page links to its own sections.
    let here = Markdown { root: format.root.clone(), sections_in: Some(String::new()) };
    let contents: String =
        page.sections.iter().map(|s| format!("- [{}](#{})\n", s.title, anchor(s.title))).collect();
    let mut whole = format!("{run}\n\n{contents}\n");
    for s in &page.sections {
        let body = s.blocks.iter().map(|b| here.block(b)).collect::<Result<String>>()?;
        whole.push_str(&here.section(s, body));
    }
    made.push(("sets", sets_table(doc)));
    made.push(("run", format!("{run}\n\n")));
    made.push(("page", whole));
    Ok(made)
}

/// `From results/run-<time>.json.gz: 2026-12-04, 04:10 to 05:40 UTC (1 h 29 min), on ...: N
/// results, ...`: which run a block shows, when, where, and what it holds.
pub fn run_line(doc: &Document, name: &str) -> String {
    let m = &doc.machine;
    let vm = match (&m.hypervisor, &m.container) {
        (Some(h), Some(c)) => format!(", a {h} guest in a {c} container"),
        (Some(h), None) => format!(", a {h} guest"),
        _ => String::new(),
    };
    let when = match doc.finished.as_deref() {
        Some(end) => format!(
            "{}, {} to {} UTC ({})",
            &doc.started[..10.min(doc.started.len())],
            clock(&doc.started),
            clock(end),
            elapsed(doc).map_or_else(|| "?".to_string(), |d| crate::format::duration_text(d.as_secs_f64()))
        ),
        None => format!("{} (not finished)", doc.started),
    };
    let count = |st: Status| doc.results.iter().filter(|r| r.status == st).count();
    format!(
        "*From `{name}`: {when}, {} ({} cores of {}{vm}): {} results, {} measured, {} dashes, {} failed.*",
        m.os,
        m.cores,
        m.cpu_model,
        doc.results.len(),
        count(Status::Ok),
        count(Status::Unsupported),
        count(Status::Failed)
    )
}

/// `04:10` of `2026-12-04T04:10:54Z`.
fn clock(stamp: &str) -> &str {
    stamp.get(11..16).unwrap_or(stamp)
}

/// How long the run took, from its start to its end.
fn elapsed(doc: &Document) -> Option<Duration> {
    let start = humantime::parse_rfc3339(&doc.started).ok()?;
    let end = humantime::parse_rfc3339(doc.finished.as_deref()?).ok()?;
    end.duration_since(start).ok()
}

/// Each named set of cases, with the trials it took in this run and its share of the run's time
/// by them: what `scripts/run-matrix.sh @<set>` costs here.
fn sets_table(doc: &Document) -> String {
    let trials = |r: &&crate::results::CaseResult| r.run_count();
    let all: usize = doc.results.iter().map(|r| trials(&r)).sum();
    let Some(total) = elapsed(doc).filter(|_| all > 0) else {
        return "This run has no start and end, or no trial, to time its sets by.\n\n".to_string();
    };
    let matrix = crate::matrix::matrix();
    let mut out = String::from(
        "| set | what it holds | cases | of them in this run | time here |\n|---|---|---|---|---|\n",
    );
    for set in crate::matrix::sets() {
        let Ok(cases) = crate::matrix::select(&matrix, &[format!("@{}", set.name)]) else { continue };
        let ran: Vec<&crate::results::CaseResult> =
            doc.results.iter().filter(|r| cases.iter().any(|c| c.name == r.case)).collect();
        let held = cases.iter().filter(|c| ran.iter().any(|r| r.case == c.name)).count();
        let share = ran.iter().map(trials).sum::<usize>() as f64 / all as f64;
        let time =
            if held == cases.len() { crate::format::about(total.mul_f64(share)) } else { "—".to_string() };
        let default = if set.name == crate::matrix::DEFAULT_SET { " (no case named)" } else { "" };
        out.push_str(&format!(
            "| `@{}`{default} | {} | {} | {held} | {time} |\n",
            set.name,
            set.about,
            cases.len()
        ));
    }
    out.push_str(&format!(
        "\nEach set's time is its share of this run's {} by the trials its cases took; a set this run did not \
         hold whole has none.\n\n",
        crate::format::duration_text(total.as_secs_f64())
    ));
    out
}

/// `text` with every block that names `file` holding its section of `made`; how many it wrote.
pub fn fill(text: &str, file: &str, made: &[(&str, String)]) -> Result<(String, usize)> {
    let mut out = String::new();
    let (mut from, mut n) = (0, 0);
    for b in blocks(text)?.into_iter().filter(|b| b.file == file) {
        let Some((_, body)) = made.iter().find(|(id, _)| *id == b.section) else {
            let ids: Vec<&str> = made.iter().map(|(id, _)| *id).collect();
            bail!(
                "a block names the section {:?}, which the report of {file} lacks; it has {}",
                b.section,
                ids.join(", ")
            );
        };
        out.push_str(&text[from..b.body.start]);
        out.push_str(body);
        from = b.body.end;
        n += 1;
    }
    out.push_str(&text[from..]);
    Ok((out, n))
}

/// A Markdown file to write from a results file's report, read and checked before the report
/// is built: a README with no block naming the file is refused before anything is written.
pub struct Target {
    readme: std::path::PathBuf,
    text: String,
    /// The README's folder, from which its blocks name files and reach the report.
    base: std::path::PathBuf,
    /// The results file as the blocks name it.
    name: String,
}

/// `ipcbench report <file> --readme <readme>`, first step: the README, and its blocks naming
/// `file`, at least one.
pub fn target(file: &Path, readme: &Path) -> Result<Target> {
    let text = std::fs::read_to_string(readme).with_context(|| format!("reading {}", readme.display()))?;
    let base = readme.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let base = base.canonicalize().with_context(|| format!("reading {}", base.display()))?;
    let name = file.canonicalize().with_context(|| format!("reading {}", file.display()))?;
    let name = name.strip_prefix(&base).map_or(name.clone(), |p| p.to_path_buf()).display().to_string();
    if !blocks(&text)?.iter().any(|b| b.file == name) {
        bail!(
            "{} has no block naming {name} (`{OPEN}{name}: <section> -->` ... `{END}`); nothing was written",
            readme.display()
        );
    }
    Ok(Target { readme: readme.to_path_buf(), text, base, name })
}

impl Target {
    /// Where its blocks point, the report's folder being `root` from the README's folder: links
    /// stay on the page when it holds the whole report, go to RESULTS.md beside it when that
    /// holds it, else to the report's own `report.md`.
    pub fn reach(&self, root: String) -> Markdown {
        let holds_page = |text: &str| {
            blocks(text).is_ok_and(|b| b.iter().any(|b| b.file == self.name && b.section == "page"))
        };
        let sections_in = if holds_page(&self.text) {
            Some(String::new())
        } else {
            std::fs::read_to_string(self.base.join(RESULTS_PAGE))
                .ok()
                .filter(|t| holds_page(t))
                .map(|_| RESULTS_PAGE.to_string())
        };
        Markdown { root: Some(root), sections_in }
    }
}

/// Second step: writes the blocks of `target` from `page`, the report of `doc` built into `out`;
/// how many it wrote.
pub fn update(page: &Page, doc: &Document, out: &Path, target: Target) -> Result<usize> {
    // The report's folder as the README's own folder reaches it.
    let folder = out.canonicalize()?;
    let root = folder.strip_prefix(&target.base).map_or(folder.clone(), |p| p.to_path_buf());
    let made = sections(page, doc, &target.name, &target.reach(format!("{}/", root.display())))?;
    let (filled, n) = fill(&target.text, &target.name, &made)?;
    std::fs::write(&target.readme, filled).with_context(|| format!("writing {}", target.readme.display()))?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::page::Page;
    use crate::report::{Source, Subject, build};

    /// The README's and RESULTS.md's results are the reports of the runs their blocks name, byte
    /// for byte: every block is that section as `ipcbench report <file> --readme README.md
    /// --readme RESULTS.md` writes it. The README holds the first look, the standings and the
    /// sets' times of the reference run; RESULTS.md its whole page; a block of any other run
    /// comes after a `run` line naming it, its date and its machine.
    #[test]
    fn the_readme_and_results_blocks_are_the_reports_of_their_runs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let reference = format!("results/{REFERENCE}.json.gz");
        let wanted = [("README.md", &["run", "first-look", "sets"][..]), (RESULTS_PAGE, &["page"][..])];
        let out = std::env::temp_dir().join(format!("ipcbench-readme-test-{}", std::process::id()));
        let mut reports: Vec<(String, Source, Page)> = Vec::new();
        for (page_name, wants) in wanted {
            let text = std::fs::read_to_string(root.join(page_name)).unwrap();
            let marked = blocks(&text).unwrap();
            let named: Vec<&str> =
                marked.iter().filter(|b| b.file == reference).map(|b| b.section.as_str()).collect();
            for want in wants {
                assert!(
                    named.contains(want),
                    "{page_name} has no block of {want} from {reference}: {named:?}"
                );
            }
            for b in &marked {
                if b.file != reference && b.section != "run" {
                    let run = marked.iter().position(|r| r.file == b.file && r.section == "run");
                    let at = marked.iter().position(|x| x == b);
                    assert!(
                        run.is_some_and(|r| Some(r) < at),
                        "{page_name}: {} {} without its run line first",
                        b.file,
                        b.section
                    );
                }
                if !reports.iter().any(|(f, ..)| *f == b.file) {
                    let source = Source::committed(
                        b.file.trim_start_matches("results/").split(".json").next().unwrap(),
                    );
                    let subject = Subject { id: crate::registry::DEFAULT_SUBJECT, named: false };
                    let built =
                        build(&[Source::new(source.doc.clone(), source.path.clone())], &out, &[], &subject)
                            .unwrap();
                    reports.push((b.file.clone(), source, built.page));
                }
                let (_, source, page) = reports.iter().find(|(f, ..)| *f == b.file).unwrap();
                let t = target(&root.join(&b.file), &root.join(page_name)).unwrap();
                let stem = b.file.split(".json").next().unwrap();
                let made = sections(page, &source.doc, &b.file, &t.reach(format!("{stem}/"))).unwrap();
                let (_, body) = made.iter().find(|(id, _)| *id == b.section).unwrap();
                assert!(
                    text[b.body.clone()] == *body,
                    "{page_name}'s block {} of {} differs from the report's (`ipcbench report {} --readme {page_name}` writes it):\n{body}",
                    b.section,
                    b.file,
                    b.file
                );
            }
        }
        let _ = std::fs::remove_dir_all(&out);
    }

    /// A run's line names the file, its date, its hours, its machine and its counts; the sets'
    /// table gives every set, timed only where the run held all of its cases.
    #[test]
    fn a_run_line_and_the_sets_table_say_what_the_run_was() {
        let source = Source::committed(REFERENCE);
        let line = run_line(&source.doc, "results/x.json.gz");
        assert!(line.starts_with("*From `results/x.json.gz`: 20"), "{line}");
        assert!(
            line.contains(" UTC (") && line.contains(" cores of ") && line.contains(" measured, "),
            "{line}"
        );
        let table = sets_table(&source.doc);
        for set in crate::matrix::sets() {
            assert!(table.contains(&format!("| `@{}`", set.name)), "{table}");
        }
        assert!(table.contains("| `@page` (no case named) | "), "{table}");
        let mut unfinished = source.doc.clone();
        unfinished.finished = None;
        assert!(sets_table(&unfinished).contains("no start and end"));
    }

    /// What the units of a figure are, longest first so that `msg/s` is not read as `s`.
    const UNITS: [&str; 20] = [
        "M msg/s", "k msg/s", "msg/s", "GB/s", "MB/s", "KiB", "MiB", "cores", "min", "ns", "µs", "us", "ms",
        "s", "h", "%", "×", "B", "M", "k",
    ];

    /// `text` less what is not prose: the generated blocks' bodies, code, comments and link
    /// targets.
    fn prose_of(text: &str, marked: &[Marked]) -> String {
        let mut out = String::new();
        let mut from = 0;
        for b in marked {
            out.push_str(&text[from..b.body.start]);
            from = b.body.end;
        }
        out.push_str(&text[from..]);
        let cut = |text: &str, open: &str, close: &str| -> String {
            let mut kept = String::new();
            let mut rest = text;
            while let Some(i) = rest.find(open) {
                kept.push_str(&rest[..i]);
                let after = &rest[i + open.len()..];
                rest = after.find(close).map_or("", |j| &after[j + close.len()..]);
                kept.push(' ');
            }
            kept.push_str(rest);
            kept
        };
        let out = cut(&out, "```", "```");
        let out = cut(&out, "<!--", "-->");
        let out = cut(&out, "`", "`");
        cut(&out, "](", ")")
    }

    /// Every figure of `prose`: a number with a unit after it, or a decimal number that is no
    /// dotted version (`1.4.1`).
    fn figures(prose: &str) -> Vec<String> {
        let chars: Vec<char> = prose.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let starts = chars[i].is_ascii_digit()
                && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '.'));
            if !starts {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.' || chars[j] == ',') {
                j += 1;
            }
            while j > i && matches!(chars[j - 1], '.' | ',') {
                j -= 1;
            }
            let number: String = chars[i..j].iter().collect();
            let rest: String = chars[j..chars.len().min(j + 9)].iter().collect();
            let spaced = rest.strip_prefix(' ').unwrap_or(&rest);
            let unit = UNITS.iter().find(|u| {
                spaced
                    .strip_prefix(**u)
                    .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric()))
            });
            match unit {
                Some(u) => {
                    out.push(format!("{number}{}{u}", if spaced.len() < rest.len() { " " } else { "" }))
                }
                None if number.matches('.').count() == 1 => out.push(number.clone()),
                None => {}
            }
            i = j.max(i + 1);
        }
        out
    }

    /// Every figure in the README's prose (outside its generated blocks, code and links) is in
    /// the report of a run its blocks name: none is typed by hand, none is from an unnamed run.
    #[test]
    fn every_figure_in_the_readmes_prose_is_in_a_named_runs_report() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join("README.md")).unwrap();
        let marked = blocks(&text).unwrap();
        let mut reports = String::new();
        for file in marked.iter().map(|b| b.file.as_str()) {
            let stem = file.split(".json").next().unwrap();
            // As committed: `every_committed_report_regenerates_identically` holds each to its file.
            reports.push_str(&std::fs::read_to_string(root.join(stem).join("report.md")).unwrap());
        }
        let prose = prose_of(&text, &marked);
        let loose: Vec<String> =
            figures(&prose).into_iter().filter(|f| !reports.contains(f.as_str())).collect();
        assert!(loose.is_empty(), "README.md's prose has figures no named run's report holds: {loose:?}");
        // The scan itself: it finds figures, and leaves versions, names and code alone.
        let sample = "Aeron 342 ns, 26.48 M msg/s and 1.50× at 0.3 s; v1.4.1, ring2, x16, 10 here, `99 ns`.";
        assert_eq!(figures(&prose_of(sample, &[])), ["342 ns", "26.48 M msg/s", "1.50×", "0.3 s"]);
    }

    /// The reference run holds every case family of `@all` (the matrix), the load curve's rates
    /// and the loans, and each result it measured says which host state its figure is from.
    #[test]
    fn the_reference_run_has_every_family_and_a_state_for_every_result() {
        use crate::matrix::{Pace, Pattern};
        use crate::pattern::Family;
        use crate::pattern::Gathered;
        use crate::results::Status;
        let source = Source::committed(REFERENCE);
        let results = &source.doc.results;
        let all = crate::matrix::select(&crate::matrix::matrix(), &["@all".into()]).unwrap();
        let of_case = |c: &crate::matrix::Case| match (c.transfer, c.batch) {
            (ipcbench_api::Transfer::Loan, _) => Family::Loans,
            (_, 2..) => Family::Batches,
            _ => Family::of(Gathered::Pattern(c.pattern())),
        };
        let families: Vec<Family> =
            Family::ALL.into_iter().filter(|f| all.iter().any(|c| of_case(c) == *f)).collect();
        assert!(families.len() >= 10, "@all holds the families of the reference run: {families:?}");
        for f in families {
            assert!(results.iter().any(|r| Family::of(Gathered::of(r)) == f), "{}", f.title());
        }
        let lent = |r: &&crate::results::CaseResult| r.transfer == ipcbench_api::Transfer::Loan;
        assert!(results.iter().filter(lent).any(|r| r.status == Status::Ok));
        let mut rates: Vec<u64> = results
            .iter()
            .filter(|r| r.pattern == Pattern::Latency)
            .filter_map(|r| match crate::matrix::find(&r.case).ok()?.pace {
                Pace::Rate(x) => Some(x),
                _ => None,
            })
            .collect();
        rates.sort_unstable();
        rates.dedup();
        assert!(rates.len() >= 8, "{rates:?}");
        for r in results.iter().filter(|r| r.status == Status::Ok) {
            assert!(r.host_state.is_some(), "{} {} has no host state", r.case, r.library);
        }
        assert!(!source.doc.states.is_empty());
    }

    /// A block is found between its markers and filled; one without its end, or naming a
    /// section the report lacks, is refused.
    #[test]
    fn blocks_are_found_and_filled() {
        let text = "a\n<!-- ipcbench report r.json: x -->\nold\n<!-- end of ipcbench report -->\nb\n";
        let b = blocks(text).unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(
            (b[0].file.as_str(), b[0].section.as_str(), &text[b[0].body.clone()]),
            ("r.json", "x", "old\n")
        );
        let (filled, n) = fill(text, "r.json", &[("x", "new\n".into())]).unwrap();
        assert_eq!(
            (filled.as_str(), n),
            ("a\n<!-- ipcbench report r.json: x -->\nnew\n<!-- end of ipcbench report -->\nb\n", 1)
        );
        assert_eq!(fill(text, "other.json", &[]).unwrap().1, 0);
        let e = fill(text, "r.json", &[("y", String::new())]).unwrap_err().to_string();
        assert!(e.contains("names the section \"x\"") && e.contains("it has y"), "{e}");
        let e = blocks("<!-- ipcbench report r.json: x -->\nno end\n").unwrap_err().to_string();
        assert!(e.contains("has no `<!-- end of ipcbench report -->`"), "{e}");
        assert!(blocks("<!-- ipcbench report nothing -->\n").is_err());
        assert!(blocks("quoted `<!-- ipcbench report r.json: x -->` in a line\n").unwrap().is_empty());
    }
}
