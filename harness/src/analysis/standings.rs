//! Where each library stands among its rivals, from the results alone: its standing on each
//! machine (the summary table's counts, its ratios to the best of each row, its CPU per message)
//! and how one library fares against another case by case (the questions' counts and ratios).
//! The report words these and computes none of them. `sources[i]` is one file's results.

use std::collections::BTreeMap;

use crate::results::CaseResult;

use super::{Rank, level, median_goodness, rank, states};

/// Per library on one machine: the cases it passed, the rows (oversubscribed aside) where it
/// was the fastest or level, the oversubscribed rows left out, and, over the rows counted, its
/// ratios to the best of each row and its CPU per message.
#[derive(Clone, Default)]
pub struct Standing {
    pub passed: usize,
    pub ran: usize,
    pub top: usize,
    pub oversubscribed: usize,
    pub ratios: Vec<f64>,
    pub cpu_ns: Vec<f64>,
}

/// The results of one case on one machine: the row a result is ranked in.
fn row<'a>(results: &'a [CaseResult], case: &str) -> Vec<&'a CaseResult> {
    results.iter().filter(|r| r.case == case).collect()
}

/// Every library's standing on every machine, keyed by (source, library).
pub fn standings(sources: &[&[CaseResult]]) -> BTreeMap<(usize, String), Standing> {
    let mut out = BTreeMap::new();
    for (s, results) in sources.iter().enumerate() {
        // The loan cases are shown beside the copies they answer, never ranked with them.
        for r in results.iter().filter(|r| r.transfer == ipcbench_api::Transfer::Copy) {
            let row = row(results, &r.case);
            let Some(rank) = rank(r, row.iter().copied()) else { continue };
            let e: &mut Standing = out.entry((s, r.library.clone())).or_default();
            e.passed += 1;
            if r.oversubscribed {
                e.oversubscribed += 1;
                continue;
            }
            e.ran += 1;
            if rank != Rank::Behind {
                e.top += 1;
            }
            if r.host_state.is_some() {
                // Paired within rounds, in the case's state.
                e.ratios.extend(states::ratio_to_best(r, row.iter().copied()));
            } else if let Some(mine) = median_goodness(r).filter(|g| *g > 0.0) {
                // The best median of the row (its goodness): no interval is needed for it.
                let best = row.iter().copied().filter_map(median_goodness).fold(0.0, f64::max);
                e.ratios.push(best / mine);
            }
            e.cpu_ns.extend(r.median.and_then(|f| f.cpu_ns_per_msg));
        }
    }
    out
}

/// A figure's ratio to the best of its row, the better way round (1 for the best, more for the
/// rest): a rate's best over its own, a time's own over the best.
pub fn ratio_to_best(value: f64, row: impl Iterator<Item = f64>, higher_is_better: bool) -> f64 {
    if higher_is_better { row.fold(0.0, f64::max) / value } else { value / row.fold(f64::MAX, f64::min) }
}

/// One library against another over every case both passed on each machine.
#[derive(Clone, Debug, Default)]
pub struct Pair {
    pub wins: usize,
    pub level: usize,
    pub slower: usize,
    /// Cases left out because one side was oversubscribed.
    pub oversubscribed: usize,
    /// Case by case, the first's goodness over the second's (a rate over a rate, a time's inverse).
    pub ratios: Vec<f64>,
    /// The cases where the first was slower, in the order given.
    pub slower_in: Vec<String>,
    /// The quoted round trip: the least and greatest ratio of the second's p50 over the first's,
    /// over every pair of their runs.
    pub round_trip: Option<(f64, f64)>,
}

/// A passed result's goodness, with the result.
fn good(r: Option<&CaseResult>) -> Option<(&CaseResult, f64)> {
    let r = r?;
    Some((r, median_goodness(r)?))
}

/// The ratios of two results' round trips (b's p50 over a's) over every pair of their runs,
/// each in its better mode: the least and the greatest.
fn run_ratios(a: &CaseResult, b: &CaseResult) -> Option<(f64, f64)> {
    let p50s = |r: &CaseResult| -> Vec<f64> {
        r.best().map(|m| m.runs.iter().filter_map(|run| run.figures.p50_ns).collect()).unwrap_or_default()
    };
    let (pa, pb) = (p50s(a), p50s(b));
    let all: Vec<f64> =
        pa.iter().flat_map(|x| pb.iter().map(move |y| y / x)).filter(|r| r.is_finite()).collect();
    let lo = all.iter().copied().reduce(f64::min)?;
    Some((lo, all.iter().copied().fold(lo, f64::max)))
}

/// `a` against `b` over `cases` on every machine; `quoted` is the round trip whose runs are
/// paired.
pub fn pair(sources: &[&[CaseResult]], cases: &[String], a: &str, b: &str, quoted: Option<&str>) -> Pair {
    let mut p = Pair::default();
    for results in sources {
        let find = |case: &str, lib: &str| {
            results
                .iter()
                .find(|r| r.case == case && r.library == lib && r.transfer == ipcbench_api::Transfer::Copy)
        };
        for case in cases {
            let (Some((ra, ga)), Some((rb, gb))) = (good(find(case, a)), good(find(case, b))) else {
                continue;
            };
            if ra.oversubscribed || rb.oversubscribed {
                p.oversubscribed += 1;
                continue;
            }
            p.ratios.push(ga / gb);
            if level(ra, rb) {
                p.level += 1;
            } else if ga > gb {
                p.wins += 1;
            } else {
                p.slower += 1;
                p.slower_in.push(case.clone());
            }
            if quoted == Some(case.as_str())
                && let Some((lo, hi)) = run_ratios(ra, rb)
            {
                p.round_trip = Some(p.round_trip.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))));
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_to_the_best_is_one_for_the_best_and_more_for_the_rest() {
        let row = [1.0, 2.0, 4.0];
        assert_eq!(ratio_to_best(4.0, row.into_iter(), true), 1.0);
        assert_eq!(ratio_to_best(2.0, row.into_iter(), true), 2.0);
        assert_eq!(ratio_to_best(1.0, row.into_iter(), false), 1.0);
        assert_eq!(ratio_to_best(4.0, row.into_iter(), false), 4.0);
    }

    /// Over the committed reference run: a pair's counts add up to its ratios, its slower cases
    /// are as many as it says, and each side's standing counts what it passed.
    #[test]
    fn a_pair_and_a_standing_count_what_they_say() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/run-2026-12-02T01-50-18Z.json");
        let doc = crate::results::load(&path).unwrap();
        let sources = [doc.results.as_slice()];
        let cases: Vec<String> = doc.results.iter().map(|r| r.case.clone()).fold(Vec::new(), |mut v, c| {
            if !v.contains(&c) {
                v.push(c);
            }
            v
        });
        let (a, b) = (&doc.libraries[0].id, &doc.libraries[1].id);
        let p = pair(&sources, &cases, a, b, Some("stream-rtt/16B"));
        assert_eq!(p.wins + p.level + p.slower, p.ratios.len());
        assert_eq!(p.slower_in.len(), p.slower);
        assert!(p.ratios.len() + p.oversubscribed > 0);
        let (lo, hi) = p.round_trip.expect("both ran stream-rtt/16B");
        assert!(lo > 0.0 && lo <= hi);
        let all = standings(&sources);
        for ((_, lib), st) in &all {
            let ok =
                doc.results.iter().filter(|r| &r.library == lib && r.status == crate::results::Status::Ok);
            assert_eq!(st.passed, ok.count(), "{lib}");
            assert_eq!(st.ran + st.oversubscribed, st.passed, "{lib}");
            assert!(st.top <= st.ran && st.ratios.iter().all(|x| *x >= 1.0 - 1e-9), "{lib}");
        }
    }
}
