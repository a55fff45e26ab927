//! What the terminal shows, from the same model as the report: a line per finished case, the
//! tables of medians at the end of a run (a table per case family, fitted to the terminal's
//! width, or with `--wide` one table of every case), and `ipcbench list`.

use std::path::Path;

use ipcbench_api::LibraryInfo;

use anyhow::Result;

use super::cost;
use super::families::{self, FamilyTable};
use super::model::{self, Cell, Mark, Table, figure_text, value_text};
use super::page::{Block, Format, Page, Section};
use super::{Source, View};
use crate::analysis;
use crate::format::whole_percent;
use crate::matrix::Case;
use crate::pattern::Family;
use crate::results::ab::{AbRecord, AbSettings};
use crate::results::{CaseResult, Status};

/// A cell as the terminal shows it: no rank, a dash without its footnote (the progress line
/// and `ipcbench list` say why).
fn cell(c: &Cell) -> String {
    match c {
        Cell::Text(t) => t.clone(),
        Cell::Figure { text, marks, .. } | Cell::Value { text, marks, .. } => format!("{text}{marks}"),
        Cell::Dash { .. } => "—".into(),
        Cell::Status { status: Status::Failed, .. } => "FAILED".into(),
        Cell::Status { status, .. } => status.as_str().into(),
        Cell::Support { supported, .. } => if *supported { "yes" } else { "—" }.into(),
        Cell::Library { id, .. } => id.clone(),
        Cell::Empty => String::new(),
    }
}

/// The A/B as the terminal prints it at the run's end.
pub fn ab(record: &AbRecord, settings: &AbSettings) -> String {
    let mut out = super::ab::preamble(record, settings).join("\n");
    out.push_str("\n\n");
    out.push_str(&render(&super::ab::table(record)));
    out.push_str("\n\n");
    out.push_str(&super::ab::summary(record));
    out
}

/// A table with its columns padded to their widest cell.
pub fn render(t: &Table) -> String {
    let rows: Vec<Vec<String>> = t.rows.iter().map(|r| r.iter().map(cell).collect()).collect();
    let widths: Vec<usize> = (0..t.header.len())
        .map(|i| {
            rows.iter().map(|r| r[i].chars().count()).chain([t.header[i].chars().count()]).max().unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        format!("| {} |", padded.join(" | "))
    };
    let mut out = vec![line(&t.header)];
    out.push(format!("|{}|", widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("|")));
    out.extend(rows.iter().map(|r| line(r)));
    out.join("\n")
}

/// The line of a finished result: its figure (and each mode's rate), or its dash or failure
/// with the reason; flagged when oversubscribed, noisy or disturbed by another run.
pub fn progress_line(r: &CaseResult) -> String {
    let reason = r.reason.as_deref().unwrap_or("");
    let detail = match (r.status, &r.median) {
        (Status::Ok, median) => {
            let resolves =
                r.resolution.map(|x| format!(" ({})", crate::format::resolution(x))).unwrap_or_default();
            let figure = median.as_ref().map_or("FAILED".into(), |f| {
                format!("{}{resolves}{}", figure_text(r.pattern, f), model::marks(r))
            });
            let modes: Vec<String> = r.modes.iter().filter_map(|m| cost::mode_text(r, m)).collect();
            format!("{figure} [best: {}; {}]", r.best_mode.map_or("-", |m| m.as_str()), modes.join(", "))
        }
        (Status::Unsupported, _) => format!("— ({reason})"),
        (status, _) => format!("{}: {reason}", status.as_str().to_uppercase()),
    };
    let mut flags = if r.oversubscribed {
        format!(" (oversubscribed: {} processes)", r.processes)
    } else {
        String::new()
    };
    if let Some(s) = r.spread.as_ref().filter(|_| analysis::noisy(r)) {
        flags.push_str(&format!(
            " (NOISY: its runs spread {} of the median, {} to {})",
            whole_percent(s.relative),
            value_text(s.figure, s.min),
            value_text(s.figure, s.max)
        ));
    }
    if let Some(n) = r.runs_taken {
        flags.push_str(&format!(" (runs auto: {n} runs)"));
    }
    if let Some(l) = r.load.filter(|l| l.loaded() || l.mixed()) {
        let word = if l.loaded() { "LOADED" } else { "MIXED LOAD" };
        flags.push_str(&format!(
            " ({word}: others took {:.2} cores beside its runs, {:.2} to {:.2}; {} of {} runs loaded)",
            l.others_cores, l.least, l.most, l.loaded, l.of
        ));
    }
    if !r.concurrent_runs.is_empty() {
        let pids: Vec<String> = r.concurrent_runs.iter().map(u32::to_string).collect();
        flags.push_str(&format!(" (DISTURBED: another run, pid {}, was running)", pids.join(", ")));
    }
    // The host's state goes last, after the figures.
    let mut host = String::new();
    if let Some(h) = r.host_state.as_ref().filter(|_| r.status == Status::Ok) {
        let flags = &mut host;
        flags.push_str(&format!(" (host state {}: {} of {} runs", h.state, h.runs, h.of));
        if let Some(why) = &h.why {
            flags.push_str(&format!("; NOT RANKED: {why}"));
        }
        if !h.clusters.is_empty() {
            let each: Vec<String> = h
                .clusters
                .iter()
                .map(|c| {
                    format!(
                        "{} in {}",
                        value_text(analysis::counted(r.pattern), c.median),
                        whole_percent(c.share)
                    )
                })
                .collect();
            flags.push_str(&format!("; SPLIT: {}", each.join(", ")));
        }
        flags.push(')');
    }
    format!("{} {}{flags}: {detail}{host}", r.case, r.library)
}

/// The closing tables of a run, as a page of its own. Narrow (the default): a table per case
/// family, a row per library and a column per case and figure (the unit in its header), split
/// into as many tables as it takes for no line to pass `width` columns. `wide`: one table of
/// every case, a row each, a column per library. Under them, what each mark present means,
/// wrapped to `width`.
pub fn medians(source: &Source, wide: bool, width: usize) -> String {
    let view = View::new(std::slice::from_ref(source), Path::new(""));
    let doc = &source.doc;
    let mut sections: Vec<Section> = if wide {
        vec![Section {
            id: "cases",
            title: "Every case",
            blocks: vec![Block::Table(model::case_table(&view))],
        }]
    } else {
        Family::ALL
            .into_iter()
            .map(|f| (f, families::table(&view, f)))
            .filter(|(_, t)| !t.rows.is_empty())
            .map(|(f, t)| Section { id: f.anchor(), title: f.title(), blocks: vec![Block::Family(t)] })
            .chain(super::loans::present(&view).then(|| {
                let mut t = super::loans::table(&view);
                let reasons = Block::Reasons(std::mem::take(&mut t.notes));
                let title = format!("{} (copy → loan, what the loan bought)", Family::Loans.title());
                Section {
                    id: Family::Loans.anchor(),
                    title: Family::Loans.title(),
                    blocks: vec![Block::Note(title), Block::Table(t), reasons],
                }
            }))
            .collect()
    };
    let mut legend = Vec::new();
    for m in Mark::ALL {
        if m == Mark::Oversubscribed || doc.results.iter().any(|r| r.status == Status::Ok && m.on(r)) {
            let hint = if m == Mark::Noisy { "; more --runs tell more" } else { "" };
            legend.push(format!("{} {}{hint}", m.symbol(), m.meaning()));
        }
    }
    legend.push("— the library lacks the pattern (`ipcbench list` says why).".into());
    if !wide {
        legend.push(
            "Each figure has three significant digits, in the unit under its case; --wide prints one table."
                .into(),
        );
    }
    sections.push(Section { id: "marks", title: "Marks", blocks: vec![Block::Note(legend.join("\n"))] });
    let page = Page { sources: Vec::new(), sections };
    // The terminal's blocks read no file: none fails, and one that did would say so here.
    let text = super::page::render(&page, &Terminal { width })
        .unwrap_or_else(|e| format!("ipcbench: the closing tables: {e}"));
    text.trim_end().to_string()
}

/// What a run prints: tables padded to their widest cell, family tables on their side and
/// fitted to `width`, text wrapped to it, no charts. A family table heads itself (with its part
/// count), so sections add no title.
pub struct Terminal {
    pub width: usize,
}

impl Format for Terminal {
    fn open(&self, _: &Page) -> String {
        String::new()
    }

    fn section(&self, _: &Section, body: String) -> String {
        body
    }

    fn block(&self, block: &Block) -> Result<String> {
        let wrap = |text: &str| crate::console::wrap(text, self.width);
        Ok(match block {
            Block::Charts(_) => String::new(),
            Block::Table(t) => format!("{}\n\n", render(t)),
            Block::Family(t) => format!("{}\n\n", narrow(t, self.width)),
            Block::Note(text) | Block::Method(text) => format!("{}\n\n", wrap(text)),
            Block::Reasons(reasons) => {
                let lines: Vec<String> =
                    reasons.iter().enumerate().map(|(n, r)| format!("[{}] {r}", n + 1)).collect();
                format!("{}\n\n", wrap(&lines.join("\n")))
            }
            Block::Settings(libraries) => {
                let lines: Vec<String> = libraries
                    .iter()
                    .flat_map(|l| {
                        std::iter::once(l.id.clone())
                            .chain(l.configuration.iter().map(|(k, v)| format!("  {k}: {v}")))
                    })
                    .collect();
                format!("{}\n\n", lines.join("\n"))
            }
            Block::Questions(answers) => {
                answers.iter().map(|a| format!("{}\n{}\n\n", a.question, wrap(&a.answer))).collect()
            }
            Block::Sentences(sentences) => sentences
                .iter()
                .map(|s| format!("{}\n\n", wrap(&format!("{} ({})", s.text, s.title))))
                .collect(),
        })
    }

    fn close(&self) -> String {
        String::new()
    }
}

/// A family's table turned on its side (a row per library, a column per case and figure), in
/// as many parts as it takes to fit `width`.
fn narrow(t: &FamilyTable, width: usize) -> String {
    // A family whose cases share their first word (broadcast/, queue/) leaves it out.
    let first = |c: &str| c.split('/').next().unwrap_or("").to_string();
    let shared = first(&t.rows[0].case);
    let short = |c: &str| {
        if t.rows.iter().all(|r| first(&r.case) == shared) {
            c.strip_prefix(&format!("{shared}/")).unwrap_or(c).to_string()
        } else {
            c.to_string()
        }
    };
    let labels = &t.columns;
    let label_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0).max(7);
    let columns: Vec<(String, String, Vec<String>)> = t
        .rows
        .iter()
        .map(|r| (short(&r.case), r.figure.clone(), r.cells.iter().map(cell).collect()))
        .collect();
    let col_w = |c: &(String, String, Vec<String>)| {
        c.2.iter()
            .map(|x| x.chars().count())
            .chain([c.0.chars().count(), c.1.chars().count()])
            .max()
            .unwrap_or(0)
    };
    // "| label | a | b |": 4 for the outer bars and the label's padding, 3 for each column.
    let mut parts: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = label_w + 4;
    for (i, c) in columns.iter().enumerate() {
        let w = col_w(c) + 3;
        if used + w > width && !parts.last().unwrap().is_empty() {
            parts.push(Vec::new());
            used = label_w + 4;
        }
        parts.last_mut().unwrap().push(i);
        used += w;
    }
    let mut out = Vec::new();
    for (n, part) in parts.iter().enumerate() {
        let more = if parts.len() > 1 { format!(" ({} of {})", n + 1, parts.len()) } else { String::new() };
        out.push(format!("{}{more}", t.family.title()));
        let pad = |text: &str, w: usize| format!("{text}{}", " ".repeat(w - text.chars().count()));
        let line = |label: &str, cells: Vec<&str>| {
            let cells: Vec<String> =
                part.iter().zip(cells).map(|(&i, c)| pad(c, col_w(&columns[i]))).collect();
            format!("| {} | {} |", pad(label, label_w), cells.join(" | "))
        };
        out.push(line("case", part.iter().map(|&i| columns[i].0.as_str()).collect()));
        out.push(line("", part.iter().map(|&i| columns[i].1.as_str()).collect()));
        let rule: Vec<String> = part.iter().map(|&i| "-".repeat(col_w(&columns[i]) + 2)).collect();
        out.push(format!("|{}|{}|", "-".repeat(label_w + 2), rule.join("|")));
        for (j, label) in labels.iter().enumerate() {
            out.push(line(label, part.iter().map(|&i| columns[i].2[j].as_str()).collect()));
        }
        if n + 1 < parts.len() {
            out.push(String::new());
        }
    }
    out.join("\n")
}

/// `ipcbench list`: every case with its process count, the libraries, and what each has (a
/// table, then each cell's text).
pub fn list(cases: &[Case], sets: &[crate::matrix::Set], libs: &[LibraryInfo], cores: usize) -> String {
    let mut out = String::from("Cases (processes; * more than this machine's cores):\n");
    for c in cases {
        let n = c.roles().len();
        out.push_str(&format!("  {:<32} {n}{}\n", c.name, if n > cores { " *" } else { "" }));
    }
    out.push_str(&format!(
        "\nSets (`ipcbench run @<set>`; naming no case runs @{}):\n",
        crate::matrix::DEFAULT_SET
    ));
    for s in sets {
        out.push_str(&format!("  @{:<9} {}\n", s.name, s.about));
    }
    out.push_str("\nLibraries:\n");
    for l in libs {
        let modes: Vec<&str> = l.modes.iter().map(|m| m.as_str()).collect();
        out.push_str(&format!("  {:<10} {} {} (receive: {})\n", l.id, l.name, l.version, modes.join(", ")));
    }
    out.push_str("\nCapabilities:\n");
    let table = model::capabilities_of(libs);
    let mut notes = Vec::new();
    for row in &table.rows {
        let id = cell(&row[0]);
        for (c, title) in row[1..].iter().zip(&table.header[1..]) {
            if let Cell::Support { supported, text } = c {
                notes.push(format!("  {id} {title}: {}{text}", if *supported { "" } else { "— " }));
            }
        }
    }
    out.push_str(&format!("{}\n\n{}", render(&table), notes.join("\n")));
    out
}

/// `ipcbench spread`: for each group of series, every series, the polling ones and the waiting
/// ones: their count, the spread's median, p75 and p90, the share resolving 10 % at 3 runs and
/// the split ones; then each group's five widest series.
pub fn spread(groups: &[(String, Vec<crate::analysis::spread::Series>)]) -> String {
    use crate::analysis::spread::summary;
    use ipcbench_api::RecvMode;
    let header = ["series", "count", "median", "p75", "p90", "resolve 10% at 3 runs", "split"];
    let mut rows = Vec::new();
    let mut widest = Vec::new();
    for (name, series) in groups {
        let parts: [(&str, Option<RecvMode>); 3] =
            [("every", None), ("polling", Some(RecvMode::Polling)), ("waiting", Some(RecvMode::Waiting))];
        for (what, mode) in parts {
            let Some(s) = summary(series.iter().filter(|x| mode.is_none_or(|m| x.mode == m))) else {
                continue;
            };
            rows.push(
                [
                    format!("{name}: {what}"),
                    s.count.to_string(),
                    format!("{:.3}", s.median),
                    format!("{:.3}", s.p75),
                    format!("{:.3}", s.p90),
                    whole_percent(s.resolve_10_at_3),
                    s.split.to_string(),
                ]
                .map(Cell::Text)
                .to_vec(),
            );
        }
        let mut by: Vec<_> = series.iter().collect();
        by.sort_by(|a, b| b.spread.total_cmp(&a.spread));
        widest.extend(by.iter().take(5).map(|x| {
            format!(
                "  {name}: {} {} {} {:.3} over {} runs",
                x.case,
                x.library,
                x.mode.as_str(),
                x.spread,
                x.runs
            )
        }));
    }
    let table = Table { header: header.map(String::from).to_vec(), rows, notes: Vec::new() };
    format!(
        "The spread of a series (a library, a case, a receive mode): the standard deviation of the natural \
         logarithm of its ranked figure across its runs (a split series: its larger cluster's).\n{}\nThe \
         widest series:\n{}",
        render(&table),
        widest.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Pattern;
    use crate::results::{Figure, Figures, Spread};

    #[test]
    fn a_noisy_result_says_how_far_its_runs_spread() {
        let lib = crate::registry::select(None).unwrap().remove(0);
        let mut r =
            crate::run::ledger::begin(&crate::matrix::find("stream-rtt/16B").unwrap(), &lib, 2, false, None);
        r.median =
            Some(Figures { msgs_per_s: 12e3, p50_ns: Some(80e3), p99_ns: Some(150e3), ..Default::default() });
        r.spread = Some(Spread { figure: Figure::P50Ns, min: 70e3, max: 95e3, relative: 25e3 / 80e3 });
        let line = progress_line(&r);
        assert!(line.contains("(NOISY: its runs spread 31% of the median, 70.00 µs to 95.00 µs)"), "{line}");
        assert!(line.contains("p50 80.00 µs p99 150.00 µs ~"), "{line}");
        assert_eq!(r.pattern, Pattern::StreamRtt);
    }
}
