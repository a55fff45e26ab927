//! The medians as CSV (`medians.csv`): every result of every file, one line each (RFC 4180):
//! the better mode's figures (a stream's bandwidth too), cost and multiple of its floor, then each
//! receive mode's rate and p50.

use super::{View, floor};
use crate::results::CaseResult;
use ipcbench_api::RecvMode;

/// A receive mode's median rate and p50, empty where it has none.
fn mode_figures(r: &CaseResult, mode: RecvMode) -> [Option<f64>; 2] {
    let f = r.modes.iter().find(|m| m.mode == mode).and_then(|m| m.median);
    [f.map(|f| f.msgs_per_s), f.and_then(|f| f.p50_ns)]
}

/// Whether a result's rate is messages moved (its bandwidth is rate × size), not calls, round
/// trips or a schedule's.
fn moves_bytes(r: &CaseResult) -> bool {
    !r.pattern.timed() && crate::analysis::counted(r.pattern) == crate::results::Figure::MsgsPerS
}

/// Every result as one CSV line (RFC 4180 quoting).
pub fn csv(view: &View) -> String {
    let q = |s: &str| {
        if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
    };
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let mut out = String::from(
        "machine,case,pattern,size,batch,library,status,best_mode,msgs_per_s,bytes_per_s,p50_ns,p99_ns,min_ns,p90_ns,p999_ns,p9999_ns,max_ns,behind_share,late_p50_ns,late_p99_ns,open_p50_ns,lost_share,cores_busy,cpu_ns_per_msg,peak_rss_bytes,floor_multiple,waiting_msgs_per_s,waiting_p50_ns,polling_msgs_per_s,polling_p50_ns,spread_relative,processes,oversubscribed,reason\n",
    );
    for (i, s) in view.sources.iter().enumerate() {
        let floors = floor::floors(view, i);
        for r in &s.doc.results {
            let f = r.median;
            let [waiting_rate, waiting_p50] = mode_figures(r, RecvMode::Waiting);
            let [polling_rate, polling_p50] = mode_figures(r, RecvMode::Polling);
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                q(&s.label),
                q(&r.case),
                r.pattern.as_str(),
                r.size,
                r.batch.map(|b| b.to_string()).unwrap_or_default(),
                q(&r.library),
                r.status.as_str(),
                r.best_mode.map_or("", |m| m.as_str()),
                num(f.map(|f| f.msgs_per_s)),
                num(f.filter(|_| moves_bytes(r)).map(|f| f.msgs_per_s * r.size as f64)),
                num(f.and_then(|f| f.p50_ns)),
                num(f.and_then(|f| f.p99_ns)),
                num(f.and_then(|f| f.min_ns)),
                num(f.and_then(|f| f.p90_ns)),
                num(f.and_then(|f| f.p999_ns)),
                num(f.and_then(|f| f.p9999_ns)),
                num(f.and_then(|f| f.max_ns)),
                num(f.and_then(|f| f.behind_share)),
                num(f.and_then(|f| f.late_p50_ns)),
                num(f.and_then(|f| f.late_p99_ns)),
                num(f.and_then(|f| f.open_p50_ns)),
                num(f.and_then(|f| f.lost_share)),
                num(f.and_then(|f| f.cores_busy)),
                num(f.and_then(|f| f.cpu_ns_per_msg)),
                num(f.and_then(|f| f.peak_rss_bytes)),
                num(floors.as_ref().and_then(|fl| floor::multiple(fl, r)).map(|(x, _)| x)),
                num(waiting_rate),
                num(waiting_p50),
                num(polling_rate),
                num(polling_p50),
                num(r.spread.as_ref().map(|s| s.relative)),
                r.processes,
                r.oversubscribed,
                q(r.reason.as_deref().unwrap_or("")),
            ));
        }
    }
    out
}
