//! The medians as CSV (`medians.csv`): every result of every file, one line each (RFC 4180).

use super::View;

/// Every result as one CSV line (RFC 4180 quoting).
pub fn csv(view: &View) -> String {
    let q = |s: &str| {
        if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
    };
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let mut out = String::from(
        "machine,case,pattern,size,batch,library,status,best_mode,msgs_per_s,p50_ns,p99_ns,lost_share,spread_relative,processes,oversubscribed,reason\n",
    );
    for s in view.sources {
        for r in &s.doc.results {
            let f = r.median;
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                q(&s.label),
                q(&r.case),
                r.pattern.as_str(),
                r.size,
                r.batch.map(|b| b.to_string()).unwrap_or_default(),
                q(&r.library),
                r.status.as_str(),
                r.best_mode.map_or("", |m| m.as_str()),
                num(f.map(|f| f.msgs_per_s)),
                num(f.and_then(|f| f.p50_ns)),
                num(f.and_then(|f| f.p99_ns)),
                num(f.and_then(|f| f.lost_share)),
                num(r.spread.as_ref().map(|s| s.relative)),
                r.processes,
                r.oversubscribed,
                q(r.reason.as_deref().unwrap_or("")),
            ));
        }
    }
    out
}
