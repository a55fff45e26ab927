//! The medians as CSV (`medians.csv`): every result of every file, one line each (RFC 4180):
//! the better mode's figures (a stream's bandwidth too), cost and multiple of its floor, then each
//! receive mode's rate and p50.

use anyhow::{Result, anyhow};
use ipcbench_api::RecvMode;

use super::{View, floor};
use crate::results::{CaseResult, Figures};

/// A receive mode's median rate and p50, empty where it has none.
fn mode_figures(r: &CaseResult, mode: RecvMode) -> [Option<f64>; 2] {
    let f = r.modes.iter().find(|m| m.mode == mode).and_then(|m| m.median);
    [f.map(|f| f.msgs_per_s), f.and_then(|f| f.p50_ns)]
}

/// Whether a result's rate is messages moved (its bandwidth is rate × size), not calls, round
/// trips or a schedule's.
fn moves_bytes(r: &CaseResult) -> bool {
    !crate::pattern::spec(r.pattern).timed()
        && crate::analysis::counted(r.pattern) == crate::results::Figure::MsgsPerS
}

/// Every result as one CSV line (RFC 4180 quoting, by the `csv` crate): the figures in the
/// results file's order, by `Figures::optional`.
pub fn csv(view: &View) -> Result<String> {
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    let mut header = vec![
        "machine",
        "case",
        "pattern",
        "size",
        "batch",
        "library",
        "status",
        "best_mode",
        "msgs_per_s",
        "bytes_per_s",
    ];
    header.extend(Figures::default().optional().map(|(name, _)| name));
    header.extend([
        "floor_multiple",
        "waiting_msgs_per_s",
        "waiting_p50_ns",
        "polling_msgs_per_s",
        "polling_p50_ns",
        "spread_relative",
        "processes",
        "oversubscribed",
        "reason",
    ]);
    w.write_record(&header)?;
    for (i, s) in view.sources.iter().enumerate() {
        let floors = floor::floors(view, i);
        for r in &s.doc.results {
            let f = r.median;
            let [waiting_rate, waiting_p50] = mode_figures(r, RecvMode::Waiting);
            let [polling_rate, polling_p50] = mode_figures(r, RecvMode::Polling);
            let mut record = vec![
                s.label.clone(),
                r.case.clone(),
                r.pattern.as_str().to_string(),
                r.size.to_string(),
                r.batch.map(|b| b.to_string()).unwrap_or_default(),
                r.library.clone(),
                r.status.as_str().to_string(),
                r.best_mode.map_or("", |m| m.as_str()).to_string(),
                num(f.map(|f| f.msgs_per_s)),
                num(f.filter(|_| moves_bytes(r)).map(|f| f.msgs_per_s * r.size as f64)),
            ];
            record.extend(f.unwrap_or_default().optional().map(|(_, v)| num(v)));
            record.extend([
                num(floors.as_ref().and_then(|fl| floor::multiple(fl, r)).map(|(x, _)| x)),
                num(waiting_rate),
                num(waiting_p50),
                num(polling_rate),
                num(polling_p50),
                num(r.spread.as_ref().map(|s| s.relative)),
                r.processes.to_string(),
                r.oversubscribed.to_string(),
                r.reason.clone().unwrap_or_default(),
            ]);
            w.write_record(&record)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| anyhow!("writing the CSV: {e}"))?;
    Ok(String::from_utf8(bytes)?)
}
