//! The head-to-head sentences, in the comparison's form, computed from the results: how often
//! each library is the fastest or level with it, and each library against the one that leads
//! most often, with the smallest round trip's ratio. Oversubscribed results are counted apart
//! (they measure the scheduler as much as the library), and two results whose intervals overlap
//! are level, not a win.

use std::collections::BTreeMap;

use super::View;
use crate::analysis::{self, Rank};
use crate::format::{ratio_span, size_words};
use crate::matrix::{Pattern, size_label};
use crate::results::Status;

/// Per library on one machine: rows it ran in, rows where it was the fastest or level, and
/// the oversubscribed rows it ran in, left out of both.
#[derive(Clone, Copy, Default)]
struct Standing {
    ran: usize,
    top: usize,
    oversubscribed: usize,
}

fn standings(view: &View) -> BTreeMap<(usize, String), Standing> {
    let mut out = BTreeMap::new();
    for (lib, s) in &view.columns {
        for case in &view.cases {
            let Some(r) = view.result(case, lib, *s) else { continue };
            let Some(rank) = analysis::rank(r, view.row(case, *s)) else { continue };
            let e: &mut Standing = out.entry((*s, lib.clone())).or_default();
            if r.oversubscribed {
                e.oversubscribed += 1;
                continue;
            }
            e.ran += 1;
            if rank != Rank::Behind {
                e.top += 1;
            }
        }
    }
    out
}

/// The round trip the sentences quote: the one of the smallest messages.
fn quoted_round_trip<'a>(view: &View<'a>) -> Option<(&'a str, usize)> {
    view.sources
        .iter()
        .flat_map(|s| s.doc.results.iter())
        .filter(|r| r.pattern == Pattern::StreamRtt && r.batch.is_none())
        .min_by_key(|r| r.size)
        .map(|r| (r.case.as_str(), r.size))
}

pub fn lines(view: &View) -> Vec<String> {
    let standing = standings(view);
    let mut lines = Vec::new();
    for (i, s) in view.sources.iter().enumerate() {
        let on = if view.sources.len() > 1 { format!(" on {}", s.label) } else { String::new() };
        let mut ranked: Vec<(&String, Standing)> =
            standing.iter().filter(|((src, _), _)| *src == i).map(|((_, l), v)| (l, *v)).collect();
        ranked.sort_by(|a, b| b.1.top.cmp(&a.1.top).then(a.0.cmp(b.0)));
        for (lib, Standing { ran, top, oversubscribed }) in &ranked {
            let apart = match oversubscribed {
                0 => String::new(),
                n => format!(" ({n} oversubscribed left out)"),
            };
            lines.push(format!(
                "{lib} is the fastest, or level with the fastest, in {top} of the {ran} measurements where it ran{on}{apart}."
            ));
        }
    }
    // Every library against the one that leads most often, over every machine together.
    let mut lead: BTreeMap<&String, usize> = BTreeMap::new();
    for ((_, l), st) in &standing {
        *lead.entry(l).or_default() += st.top;
    }
    let Some(leader) = lead.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(l, _)| (*l).clone())
    else {
        return lines;
    };
    let quoted = quoted_round_trip(view);
    for other in view.libraries.iter().filter(|l| **l != leader) {
        let (mut both, mut wins, mut level) = (0, 0, 0);
        let mut rtt: Vec<f64> = Vec::new();
        for (i, _) in view.sources.iter().enumerate() {
            for case in &view.cases {
                let (Some(a), Some(b)) = (view.result(case, &leader, i), view.result(case, other, i)) else {
                    continue;
                };
                let (Some(x), Some(y)) = (
                    a.median.as_ref().and_then(|f| analysis::goodness(a.pattern, f)),
                    b.median.as_ref().and_then(|f| analysis::goodness(b.pattern, f)),
                ) else {
                    continue;
                };
                if a.status != Status::Ok || b.status != Status::Ok || a.oversubscribed {
                    continue;
                }
                both += 1;
                if analysis::level(a, b) {
                    level += 1;
                } else if x > y {
                    wins += 1;
                }
                if quoted.is_some_and(|(q, _)| q == case) {
                    rtt.push(x / y);
                }
            }
        }
        if both == 0 {
            continue;
        }
        let mut line = format!(
            "{leader} is faster than {other} in {wins}, level in {level} and slower in {} of the {both} measurements \
             where both ran",
            both - wins - level
        );
        if let (false, Some((_, size))) = (rtt.is_empty(), quoted) {
            // Said of whichever is quicker, as "N times as quick".
            let (quick, slow, ratios): (&str, &str, Vec<f64>) = if rtt.iter().sum::<f64>() >= rtt.len() as f64
            {
                (&leader, other, rtt)
            } else {
                (other, &leader, rtt.iter().map(|x| 1.0 / x).collect())
            };
            let lo = ratios.iter().copied().fold(f64::MAX, f64::min);
            let hi = ratios.iter().copied().fold(f64::MIN, f64::max);
            line.push_str(&format!(
                "; a {} round trip (p50) is {} times as quick with {quick} as with {slow}",
                size_words(size, &size_label(size)),
                ratio_span(lo, hi)
            ));
        }
        line.push('.');
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::report::Source;
    use crate::results;

    /// The committed full run: 10 of its 30 cases oversubscribed on 2 cores.
    fn full_run() -> Source {
        let name = "results/run-2026-12-01T21-09-44Z.json";
        let doc = results::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name)).unwrap();
        Source::new(doc, PathBuf::from(name))
    }

    #[test]
    fn oversubscribed_results_are_counted_apart_and_overlaps_are_level() {
        let source = full_run();
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let lines = lines(&view);
        let ok = |lib: &str, over: bool| {
            source
                .doc
                .results
                .iter()
                .filter(|r| r.library == lib && r.status == Status::Ok && r.oversubscribed == over)
                .count()
        };
        let zmq = lines.iter().find(|l| l.starts_with("zmq is the fastest")).unwrap();
        assert!(
            zmq.contains(&format!(
                " of the {} measurements where it ran ({} oversubscribed left out).",
                ok("zmq", false),
                ok("zmq", true)
            )),
            "{zmq}"
        );
        assert!(ok("zmq", true) > 0);
        let versus: Vec<&String> = lines.iter().filter(|l| l.contains(" is faster than ")).collect();
        assert!(!versus.is_empty());
        for l in versus {
            // "A is faster than B in W, level in L and slower in S of the N measurements"
            let n = |after: &str| -> usize {
                l.split(after)
                    .nth(1)
                    .unwrap()
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            assert_eq!(n(" in ") + n("level in ") + n("slower in "), n(" of the "), "{l}");
        }
    }
}
