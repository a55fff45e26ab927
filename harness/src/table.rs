//! What the terminal shows: a line per finished case, the table of medians, the capability
//! table of `ipcbench list`.

use ipcbench_api::LibraryInfo;

use crate::cases::Case;
use crate::figures::Figures;
use crate::results::{CaseResult, Document};

pub fn rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2} M msg/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k msg/s", r / 1e3)
    } else {
        format!("{r:.0} msg/s")
    }
}

pub fn nanos(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A case's median as one short cell.
pub fn cell(pattern: &str, f: &Figures) -> String {
    let mut s = rate(f.msgs_per_s);
    if let Some(p50) = f.p50_ns {
        s = match (pattern, f.p99_ns) {
            ("stream-rtt", Some(p99)) => format!("p50 {} p99 {}", nanos(p50), nanos(p99)),
            _ => format!("{s}, p50 {}", nanos(p50)),
        };
    }
    if let Some(lost) = f.lost_share {
        s = format!("{s}, {:.1}% lost", lost * 100.0);
    }
    s
}

fn result_cell(r: &CaseResult) -> String {
    let mark = r.marks();
    match (r.status.as_str(), &r.median) {
        ("ok", Some(f)) => format!("{}{mark}", cell(&r.pattern, f)),
        ("unsupported", _) => "—".into(),
        ("skipped", _) => "skipped".into(),
        ("interrupted", _) => "interrupted".into(),
        _ => "FAILED".into(),
    }
}

pub fn progress_line(r: &CaseResult) -> String {
    let detail = match r.status.as_str() {
        "ok" => {
            let modes: Vec<String> = r
                .modes
                .iter()
                .filter_map(|m| m.median.map(|f| format!("{} {}", m.mode, rate(f.msgs_per_s))))
                .collect();
            format!(
                "{} [best: {}; {}]",
                result_cell(r),
                r.best_mode.as_deref().unwrap_or("-"),
                modes.join(", ")
            )
        }
        "unsupported" => format!("— ({})", r.reason.as_deref().unwrap_or("")),
        _ => format!("{}: {}", r.status.to_uppercase(), r.reason.as_deref().unwrap_or("")),
    };
    let mut over = if r.oversubscribed {
        format!(" (oversubscribed: {} processes)", r.processes)
    } else {
        String::new()
    };
    if let Some(s) = r.spread.as_ref().filter(|_| r.noisy()) {
        let (lo, hi) =
            if s.figure == "p50_ns" { (nanos(s.min), nanos(s.max)) } else { (rate(s.min), rate(s.max)) };
        over.push_str(&format!(
            " (NOISY: its runs spread {:.0}% of the median, {lo} to {hi})",
            s.relative * 100.0
        ));
    }
    if !r.concurrent_runs.is_empty() {
        let pids: Vec<String> = r.concurrent_runs.iter().map(u32::to_string).collect();
        over.push_str(&format!(" (DISTURBED: another run, pid {}, was running)", pids.join(", ")));
    }
    format!("{} {}{over}: {detail}", r.case, r.library)
}

fn render(header: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter().map(|r| r[i].chars().count()).chain([header[i].chars().count()]).max().unwrap_or(0)
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
    let mut out = vec![line(header)];
    out.push(format!("|{}|", widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("|")));
    out.extend(rows.iter().map(|r| line(r)));
    out.join("\n")
}

/// Cases as rows, libraries as columns: each cell the median of the faster receive mode.
pub fn medians(doc: &Document) -> String {
    let libs: Vec<&str> = doc.libraries.iter().map(|l| l.id.as_str()).collect();
    let mut cases: Vec<&str> = Vec::new();
    for r in &doc.results {
        if !cases.contains(&r.case.as_str()) {
            cases.push(&r.case);
        }
    }
    let header: Vec<String> =
        std::iter::once("case".to_string()).chain(libs.iter().map(|l| l.to_string())).collect();
    let rows: Vec<Vec<String>> = cases
        .iter()
        .map(|c| {
            std::iter::once(c.to_string())
                .chain(libs.iter().map(|l| {
                    doc.results
                        .iter()
                        .find(|r| r.case == *c && r.library == *l)
                        .map_or(String::new(), result_cell)
                }))
                .collect()
        })
        .collect();
    let mut out = render(&header, &rows);
    if doc.results.iter().any(|r| r.note.is_some() && r.status == "ok") {
        out.push_str(
            "\n† every server answered every request: the servers do not share a load (the result's `note`).",
        );
    }
    if doc.results.iter().any(CaseResult::noisy) {
        out.push_str(&format!(
            "\n~ noisy: the runs spread more than {:.0}% of the median (the result's `spread`); more --runs, or --order interleaved, tell more.",
            crate::driver::NOISY * 100.0
        ));
    }
    if doc.results.iter().any(|r| !r.concurrent_runs.is_empty()) {
        out.push_str(
            "\n! another ipcbench run was running at the same time (the result's `concurrent_runs`).",
        );
    }
    out.push_str(&format!(
        "\n* oversubscribed: more processes than the {} cores; they time-share, which changes what is measured.\n— the library lacks the pattern (`ipcbench list` says why).",
        doc.machine.cores
    ));
    out
}

/// The capability table: a row per library, a column per pattern.
pub fn capabilities(libs: &[LibraryInfo]) -> String {
    let header: Vec<String> = [
        "library",
        "stream",
        "round trip",
        "broadcast lossless",
        "broadcast lossy",
        "work queue",
        "service",
        "batch calls",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for l in libs {
        let c = &l.capabilities;
        let row =
            [c.stream, c.round_trip, c.broadcast_lossless, c.broadcast_lossy, c.queue, c.service, c.batch];
        let mut cells = vec![l.id.to_string()];
        for (support, col) in row.iter().zip(&header[1..]) {
            cells.push(if support.is_yes() { "yes".into() } else { "—".into() });
            notes.push(format!(
                "  {} {col}: {}{}",
                l.id,
                if support.is_yes() { "" } else { "— " },
                support.text()
            ));
        }
        rows.push(cells);
    }
    format!("{}\n\n{}", render(&header, &rows), notes.join("\n"))
}

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
    out.push_str(&capabilities(libs));
    out
}
