//! The README's results, written by the report: a block of a Markdown file between
//!
//! ```text
//! <!-- ipcbench report results/run-<time>.json: <section> -->
//! ...
//! <!-- end of ipcbench report -->
//! ```
//!
//! holds that section of the file's report as `report.md` has it, less its heading, its links
//! and charts pointing into the report's folder. `ipcbench report <file> --readme README.md`
//! writes every block that names the file; a test checks the README's blocks against the
//! committed reference run, so the README's tables are the report's byte for byte.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::markdown::Markdown;
use super::page::{Format, Page};

/// The committed reference run whose report the README's results are.
pub const REFERENCE: &str = "run-2026-12-04T04-10-54Z";

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

/// Each section of a report's page as a README block holds it: `root` is the report's folder
/// as the README reaches it (`results/run-<time>/`).
pub fn sections(page: &Page, root: &str) -> Result<Vec<(&'static str, String)>> {
    let format = Markdown { root: Some(root.to_string()) };
    page.sections
        .iter()
        .map(|s| -> Result<(&'static str, String)> {
            Ok((s.id, s.blocks.iter().map(|b| format.block(b)).collect::<Result<String>>()?))
        })
        .collect()
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

/// Second step: writes the blocks of `target` from `page`, the report built into `out`; how
/// many it wrote.
pub fn update(page: &Page, out: &Path, target: Target) -> Result<usize> {
    // The report's folder as the README's own folder reaches it.
    let folder = out.canonicalize()?;
    let root = folder.strip_prefix(&target.base).map_or(folder.clone(), |p| p.to_path_buf());
    let made = sections(page, &format!("{}/", root.display()))?;
    let (filled, n) = fill(&target.text, &target.name, &made)?;
    std::fs::write(&target.readme, filled).with_context(|| format!("writing {}", target.readme.display()))?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Source, Subject, build};

    /// The README's results are the reference run's report, byte for byte: every block it holds
    /// that names the committed reference run is that section as `ipcbench report` writes it,
    /// and it holds the first look, the standings, the versions and the claims.
    #[test]
    fn the_readme_blocks_are_the_reference_reports() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let file = format!("results/{REFERENCE}.json");
        let marked: Vec<Marked> = blocks(&readme).unwrap().into_iter().filter(|b| b.file == file).collect();
        let named: Vec<&str> = marked.iter().map(|b| b.section.as_str()).collect();
        for want in ["first-look", "standing", "versions", "claims"] {
            assert!(named.contains(&want), "README.md has no block of {want} from {file}: {named:?}");
        }
        // As `ipcbench report` builds it: of the default subject.
        let out = std::env::temp_dir().join(format!("ipcbench-readme-test-{}", std::process::id()));
        let subject = Subject { id: crate::registry::DEFAULT_SUBJECT, named: false };
        let built = build(&[Source::committed(REFERENCE)], &out, &[], &subject).unwrap();
        let _ = std::fs::remove_dir_all(&out);
        let made = sections(&built.page, &format!("results/{REFERENCE}/")).unwrap();
        for b in &marked {
            let (_, body) = made.iter().find(|(id, _)| *id == b.section).unwrap();
            assert!(
                readme[b.body.clone()] == *body,
                "README.md's block {} differs from the report's (`ipcbench report {file} --readme README.md` writes it):\n{body}",
                b.section
            );
        }
    }

    /// The reference run holds every case family, the load curve's rates and the loans, and
    /// each result it measured says which host state its figure is from.
    #[test]
    fn the_reference_run_has_every_family_and_a_state_for_every_result() {
        use crate::matrix::{Pace, Pattern};
        use crate::report::families::Family;
        use crate::results::{Status, shows::Gathered};
        let source = Source::committed(REFERENCE);
        let results = &source.doc.results;
        for f in Family::ALL {
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
