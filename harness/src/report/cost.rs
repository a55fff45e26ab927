//! What the receive modes and the figures cost, as tables of the model: every library in each
//! of its modes side by side (what sleeping costs in latency, what spinning costs in CPU), and
//! each result's cores busy and CPU time per message.

use super::View;
use super::model::{Cell, Table};
use crate::analysis;
use crate::format::{cores, nanos, rate};
use crate::matrix::Pattern;
use crate::pattern::spec;
use crate::results::{CaseResult, Figure, Figures, ModeResult, Status};

/// What the cost table shows.
pub const COST: &str = "What each figure cost the machine, in its better receive mode: the cores its processes \
     kept busy (CPU seconds per second, every process and thread of the case added up) and the CPU time per \
     message (or call). A spinning receiver keeps a core busy whatever the rate.";

/// What the modes table shows.
pub const MODES: &str = "Each library in each receive mode: waiting (a blocking receive, or the library's own \
     idle strategy) and polling (a non-blocking receive called again). The better mode's figure is the one \
     ranked; both are kept.";

/// A result's cost in a few words: `1.87 cores, 1.82 µs CPU/msg` (`CPU/call` where the rate
/// is of calls).
pub fn cost_text(pattern: Pattern, f: &Figures) -> Option<String> {
    let busy = f.cores_busy?;
    let per = if spec(pattern).calls { "call" } else { "msg" };
    Some(match f.cpu_ns_per_msg {
        Some(cpu) => format!("{}, {} CPU/{per}", cores(busy), nanos(cpu)),
        None => cores(busy),
    })
}

/// The case of `pattern` the modes table compares on: of the view's cases of that pattern
/// (batch cases aside), the smallest messages.
pub fn focus(view: &View, pattern: Pattern) -> Option<String> {
    view.cases_of(pattern).min_by_key(|c| c.size).map(|c| c.name)
}

/// The cases the receive modes are compared on (table and chart): the smallest stream and round
/// trip of the view, with their patterns.
pub fn compared(view: &View) -> Vec<(Pattern, String)> {
    [Pattern::Stream, Pattern::StreamRtt].into_iter().filter_map(|p| focus(view, p).map(|c| (p, c))).collect()
}

/// A receive mode's median as the pattern counts it, and what it cost:
/// `polling p50 3.78 µs (1.99 cores, 7.83 µs CPU/msg)`.
pub fn mode_text(r: &CaseResult, m: &ModeResult) -> Option<String> {
    let f = m.median?;
    let cost = cost_text(r.pattern, &f).map(|c| format!(" ({c})")).unwrap_or_default();
    Some(format!("{} {}{cost}", m.mode, counted_text(r.pattern, &f)))
}

/// A median as its pattern counts it: `p50 3.78 µs` for a round trip, else its rate.
pub fn counted_text(pattern: Pattern, f: &Figures) -> String {
    match (analysis::counted(pattern), f.p50_ns) {
        (Figure::P50Ns, Some(p50)) => format!("p50 {}", nanos(p50)),
        _ => rate(f.msgs_per_s),
    }
}

/// A mode's figure, as the pattern counts it, and its cost.
fn mode_cells(pattern: Pattern, m: Option<&ModeResult>) -> [Cell; 2] {
    let Some(f) = m.and_then(|m| m.median) else { return [Cell::Text("—".into()), Cell::Empty] };
    let cost = cost_text(pattern, &f).unwrap_or_else(|| "not recorded".into());
    [Cell::Text(counted_text(pattern, &f)), Cell::Text(cost)]
}

/// A row per library and receive mode; for the smallest stream and round trip of the view, each
/// mode's figure and its cost.
pub fn modes_table(view: &View) -> Table {
    let cases = compared(view);
    let mut header = vec!["library".to_string(), "mode".to_string()];
    for (_, case) in &cases {
        header.push(case.clone());
        header.push("cost".into());
    }
    let mut rows = Vec::new();
    for col @ (lib, s) in &view.columns {
        let results: Vec<Option<&CaseResult>> =
            cases.iter().map(|(_, c)| view.result(c, lib, *s).filter(|r| r.status == Status::Ok)).collect();
        if results.iter().all(Option::is_none) {
            continue;
        }
        let Some((record, _)) = view.library(lib) else { continue };
        for &mode in &record.receive_modes {
            let mut row = vec![Cell::Text(view.column_label(col)), Cell::Text(mode.to_string())];
            for ((pattern, _), r) in cases.iter().zip(&results) {
                let best = r.is_some_and(|r| r.best_mode == Some(mode));
                let [figure, cost] =
                    mode_cells(*pattern, r.and_then(|r| r.modes.iter().find(|m| m.mode == mode)));
                row.push(match figure {
                    Cell::Text(text) if best => Cell::Figure { text, rank: None, marks: " (counted)".into() },
                    other => other,
                });
                row.push(cost);
            }
            rows.push(row);
        }
    }
    Table { header, rows, notes: Vec::new() }
}

/// Cases as rows, a column per library and machine: each measured result's cost.
pub fn cost_table(view: &View) -> Table {
    let header = std::iter::once("case".to_string()).chain(view.columns.iter().map(|c| view.column_label(c)));
    // A case its pattern does not cost (a connect case: its senders are fresh processes, one at
    // a time) has no row.
    let rows = view
        .cases
        .iter()
        .filter(|case| view.pattern(case).is_none_or(|p| spec(p).costed))
        .map(|case| {
            std::iter::once(Cell::Text(case.clone()))
                .chain(view.columns.iter().map(|(lib, s)| {
                    match view.result(case, lib, *s) {
                        Some(r) if r.status == Status::Ok => Cell::Text(
                            r.median
                                .and_then(|f| cost_text(r.pattern, &f))
                                .unwrap_or_else(|| "not recorded".into()),
                        ),
                        Some(_) => Cell::Text("—".into()),
                        None => Cell::Empty,
                    }
                }))
                .collect()
        })
        .collect();
    Table { header: header.collect(), rows, notes: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_reads_as_cores_and_cpu_per_message() {
        let f = Figures { cores_busy: Some(1.873), cpu_ns_per_msg: Some(1820.6), ..Default::default() };
        assert_eq!(cost_text(Pattern::Stream, &f).unwrap(), "1.87 cores, 1.82 µs CPU/msg");
        assert_eq!(cost_text(Pattern::StreamRtt, &f).unwrap(), "1.87 cores, 1.82 µs CPU/call");
        assert_eq!(cost_text(Pattern::Stream, &Figures::default()), None, "not measured: nothing to say");
    }
}
