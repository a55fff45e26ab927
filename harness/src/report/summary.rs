//! The summary table: each library's cases, how often it is the fastest or level with the
//! fastest, how far from the best it stands and what it costs. Oversubscribed results are
//! counted apart (they measure the scheduler as much as the library), and two results whose
//! intervals overlap are level, not a win. The control's row is the reference line, first and
//! named so: a bare ring no one picks, never a library on top.

use std::collections::BTreeMap;

use ipcbench_api::Kind;

use super::View;
use super::model::{Cell, Table};
use crate::analysis::{self, standings::Standing};
use crate::format::{nanos, three_digits};
use crate::noise;

/// Every library's standing on every machine, keyed by (source, library).
pub fn standings(view: &View) -> BTreeMap<(usize, String), Standing> {
    analysis::standings::standings(&view.results())
}

/// What the summary table says of the ratios: how far from the best of its rows a library's
/// figure stands, the better way round (a rate's best over its own, a time's own over the best).
pub const RATIO: &str = "median ratio to the best of its row";

/// The sustainable rate's column, as the summary and METHOD name it.
pub const SUSTAINABLE: &str = "sustainable rate";

/// What the control's row is called beside its library's id.
pub const CONTROL: &str = "the control, for reference";

/// A row per library (and machine): the cases it passed, how often it was the fastest or level
/// with the fastest (oversubscribed rows counted apart), its median ratio to the best of its
/// rows, and its median CPU time per message (or call). The control first, as the reference
/// line; then most often on top first.
pub fn table(view: &View) -> Table {
    let mut header: Vec<String> =
        ["library", "cases passed", "fastest or level", RATIO, "median CPU per message or call"]
            .map(String::from)
            .to_vec();
    // Where the view has latency at several rates: the highest each library sustained.
    let sustainable = super::scaling::sustainable(view);
    if sustainable.is_some() {
        header.push(SUSTAINABLE.into());
    }
    let mut rows: Vec<(bool, Standing, Vec<Cell>)> = standings(view)
        .into_iter()
        .map(|((s, lib), st)| {
            let control = view.kind(&lib) == Some(Kind::Control);
            let label = view.column_label(&(lib.clone(), s));
            let label = if control { format!("{label} ({CONTROL})") } else { label };
            let over = match st.oversubscribed {
                0 => String::new(),
                n => format!(" ({n} oversubscribed left out)"),
            };
            let ratio =
                noise::middle(st.ratios.clone()).map_or("—".into(), |x| format!("{}×", three_digits(x)));
            let cpu = noise::middle(st.cpu_ns.clone()).map_or("not recorded".into(), nanos);
            let mut cells = vec![
                Cell::Text(label),
                Cell::Text(st.passed.to_string()),
                Cell::Text(format!("{} of {}{over}", st.top, st.ran)),
                Cell::Text(ratio),
                Cell::Text(cpu),
            ];
            if let Some(rates) = &sustainable {
                let at = view.columns.iter().position(|c| c.0 == lib && c.1 == s);
                cells.push(Cell::Text(match at.and_then(|i| rates[i]) {
                    Some((rate, mode)) => format!("{}/s ({mode})", crate::matrix::rate_label(rate)),
                    None => "—".into(),
                }));
            }
            (control, st, cells)
        })
        .collect();
    let share = |st: &Standing| if st.ran == 0 { 0.0 } else { st.top as f64 / st.ran as f64 };
    let mid = |st: &Standing| noise::middle(st.ratios.clone()).unwrap_or(f64::MAX);
    rows.sort_by(|a, b| {
        b.0.cmp(&a.0).then(share(&b.1).total_cmp(&share(&a.1))).then(mid(&a.1).total_cmp(&mid(&b.1)))
    });
    Table { header, rows: rows.into_iter().map(|r| r.2).collect(), notes: Vec::new() }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::report::Source;
    use crate::results::Status;

    #[test]
    fn the_summary_counts_oversubscribed_results_apart_and_ranks_by_share_on_top() {
        // The committed reference run: 12 of its 34 cases oversubscribed on 2 cores.
        let source = Source::committed("run-2026-12-02T01-50-18Z");
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let t = table(&view);
        assert_eq!(t.rows.len(), view.libraries.len());
        let ok = |lib: &str, over: bool| {
            source
                .doc
                .results
                .iter()
                .filter(|r| r.library == lib && r.status == Status::Ok && r.oversubscribed == over)
                .count()
        };
        // A library with oversubscribed results, whichever the file has first.
        let lib = view.libraries.iter().find(|l| ok(l, true) > 0).expect("oversubscribed results");
        let row = t.rows.iter().find(|r| r[0] == Cell::Text(lib.clone())).unwrap();
        assert_eq!(row[1], Cell::Text((ok(lib, false) + ok(lib, true)).to_string()));
        let Cell::Text(top) = &row[2] else { panic!() };
        assert!(
            top.ends_with(&format!(" of {} ({} oversubscribed left out)", ok(lib, false), ok(lib, true))),
            "{top}"
        );
        // The control's row first, named as the reference line; under it, shares on top fall
        // down the table, and a ratio to the best is never below 1.
        let control = view.libraries.iter().find(|l| view.kind(l) == Some(Kind::Control));
        let control = control.expect("the reference run has the control");
        assert_eq!(t.rows[0][0], Cell::Text(format!("{control} ({CONTROL})")));
        let shares: Vec<f64> = t.rows[1..]
            .iter()
            .map(|r| {
                let Cell::Text(t) = &r[2] else { panic!() };
                let n: Vec<f64> = t.split(' ').filter_map(|w| w.parse().ok()).collect();
                n[0] / n[1]
            })
            .collect();
        assert!(shares.windows(2).all(|w| w[0] >= w[1]), "{shares:?}");
        for r in &t.rows {
            let Cell::Text(x) = &r[3] else { panic!() };
            assert!(x.trim_end_matches('×').parse::<f64>().unwrap() >= 1.0, "{x}");
        }
    }
}
