//! The head-to-head sentences, in the comparison's form, computed from the results: how often
//! each library is the fastest or level with it, and each library against the one that leads
//! most often, with the smallest round trip's ratio.

use std::collections::BTreeMap;

use super::View;
use crate::analysis::{self, Rank};
use crate::format::{ratio_span, size_words};
use crate::matrix::{Pattern, size_label};
use crate::results::Status;

/// Per library on one machine: (rows it ran in, rows where it was the fastest or level).
fn standings(view: &View) -> BTreeMap<(usize, String), (usize, usize)> {
    let mut out = BTreeMap::new();
    for (lib, s) in &view.columns {
        for case in &view.cases {
            let Some(r) = view.result(case, lib, *s) else { continue };
            let Some(rank) = analysis::rank(r, view.row(case, *s)) else { continue };
            let e: &mut (usize, usize) = out.entry((*s, lib.clone())).or_default();
            e.0 += 1;
            if rank != Rank::Behind {
                e.1 += 1;
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
        let mut ranked: Vec<(&String, (usize, usize))> =
            standing.iter().filter(|((src, _), _)| *src == i).map(|((_, l), v)| (l, *v)).collect();
        ranked.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        for (lib, (ran, top)) in &ranked {
            lines.push(format!(
                "{lib} is the fastest, or level with the fastest, in {top} of the {ran} measurements where it ran{on}."
            ));
        }
    }
    // Every library against the one that leads most often, over every machine together.
    let mut lead: BTreeMap<&String, usize> = BTreeMap::new();
    for ((_, l), (_, top)) in &standing {
        *lead.entry(l).or_default() += top;
    }
    let Some(leader) = lead.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(l, _)| (*l).clone())
    else {
        return lines;
    };
    let quoted = quoted_round_trip(view);
    for other in view.libraries.iter().filter(|l| **l != leader) {
        let (mut both, mut wins) = (0, 0);
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
                if a.status != Status::Ok || b.status != Status::Ok {
                    continue;
                }
                both += 1;
                if x > y {
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
        let mut line =
            format!("{leader} is faster than {other} in {wins} of the {both} measurements where both ran");
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
