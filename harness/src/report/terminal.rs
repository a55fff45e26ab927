//! What the terminal shows, from the same model as the report: a line per finished case, the
//! table of medians at the end of a run, and `ipcbench list`.

use std::path::Path;

use ipcbench_api::LibraryInfo;

use super::cost;
use super::model::{self, Cell, Mark, Table, figure_text, value_text};
use super::{Source, View};
use crate::analysis;
use crate::format::whole_percent;
use crate::matrix::Case;
use crate::results::{CaseResult, ModeResult, Status};

/// A cell as the terminal shows it: no rank, a dash without its footnote (the progress line
/// and `ipcbench list` say why).
fn cell(c: &Cell) -> String {
    match c {
        Cell::Text(t) => t.clone(),
        Cell::Figure { text, marks, .. } => format!("{text}{marks}"),
        Cell::Dash { .. } => "—".into(),
        Cell::Status { status: Status::Failed, .. } => "FAILED".into(),
        Cell::Status { status, .. } => status.as_str().into(),
        Cell::Support { supported, .. } => if *supported { "yes" } else { "—" }.into(),
        Cell::Library { id, .. } => id.clone(),
        Cell::Empty => String::new(),
    }
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

/// A receive mode's median as the pattern counts it, and what it cost:
/// `polling p50 3.78 µs (1.99 cores, 7.83 µs CPU/msg)`.
fn mode_text(r: &CaseResult, m: &ModeResult) -> Option<String> {
    let f = m.median?;
    let cost = cost::cost_text(r.pattern, &f).map(|c| format!(" ({c})")).unwrap_or_default();
    Some(format!("{} {}{cost}", m.mode, cost::counted_text(r.pattern, &f)))
}

/// The line of a finished result: its figure (and each mode's rate), or its dash or failure
/// with the reason; flagged when oversubscribed, noisy or disturbed by another run.
pub fn progress_line(r: &CaseResult) -> String {
    let reason = r.reason.as_deref().unwrap_or("");
    let detail = match (r.status, &r.median) {
        (Status::Ok, median) => {
            let figure = median
                .as_ref()
                .map_or("FAILED".into(), |f| format!("{}{}", figure_text(r.pattern, f), model::marks(r)));
            let modes: Vec<String> = r.modes.iter().filter_map(|m| mode_text(r, m)).collect();
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
    if let (Some(n), Some(w)) = (r.runs_taken, r.interval_width) {
        flags.push_str(&format!(" (runs auto: {n} runs, interval {} of the median)", whole_percent(w)));
    }
    if !r.concurrent_runs.is_empty() {
        let pids: Vec<String> = r.concurrent_runs.iter().map(u32::to_string).collect();
        flags.push_str(&format!(" (DISTURBED: another run, pid {}, was running)", pids.join(", ")));
    }
    format!("{} {}{flags}: {detail}", r.case, r.library)
}

/// Cases as rows, libraries as columns: each cell the median of the better receive mode; under
/// it, what each mark present means.
pub fn medians(source: &Source) -> String {
    let view = View::new(std::slice::from_ref(source), Path::new(""));
    let doc = &source.doc;
    let mut out = render(&model::case_table(&view));
    for m in Mark::ALL {
        if m == Mark::Oversubscribed || doc.results.iter().any(|r| r.status == Status::Ok && m.on(r)) {
            let hint = if m == Mark::Noisy { "; more --runs, or --order interleaved, tell more" } else { "" };
            out.push_str(&format!("\n{} {}{hint}", m.symbol(), m.meaning()));
        }
    }
    out.push_str("\n— the library lacks the pattern (`ipcbench list` says why).");
    out
}

/// `ipcbench list`: every case with its process count, the libraries, and what each has (a
/// table, then each cell's text).
pub fn list(cases: &[Case], libs: &[LibraryInfo], cores: usize) -> String {
    let mut out = String::from("Cases (processes; * more than this machine's cores):\n");
    for c in cases {
        let n = c.roles().len();
        out.push_str(&format!("  {:<32} {n}{}\n", c.name, if n > cores { " *" } else { "" }));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Pattern;
    use crate::results::{Figure, Figures, Spread};

    #[test]
    fn a_noisy_result_says_how_far_its_runs_spread() {
        let (_, uds) = crate::registry::find("uds").unwrap();
        let mut r =
            crate::run::ledger::begin(&crate::matrix::find("stream-rtt/16B").unwrap(), &uds, 2, false);
        r.median =
            Some(Figures { msgs_per_s: 12e3, p50_ns: Some(80e3), p99_ns: Some(150e3), ..Default::default() });
        r.spread = Some(Spread { figure: Figure::P50Ns, min: 70e3, max: 95e3, relative: 25e3 / 80e3 });
        let line = progress_line(&r);
        assert!(line.contains("(NOISY: its runs spread 31% of the median, 70.00 µs to 95.00 µs)"), "{line}");
        assert!(line.contains("p50 80.00 µs p99 150.00 µs ~"), "{line}");
        assert_eq!(r.pattern, Pattern::StreamRtt);
    }
}
