//! Where each library stands among its rivals, from the results alone: its standing on each
//! machine (the summary table's counts, its ratios to the best of each row, its CPU per message)
//! and how one library fares against another case by case (the questions' counts and ratios).
//! Which cases two libraries both ran is decided once, by `both_ran`, for the questions and the
//! claims alike. The report words these and computes none of them. `sources[i]` is one file's
//! results.

use std::collections::BTreeMap;

use ipcbench_api::Transfer;

use super::{Rank, behind, counted, level, median_goodness, rank, states};
use crate::noise::middle;
use crate::results::{CaseResult, Figure};

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

/// Whether a result counts in its row: a copy (a loan is shown beside its copy, never ranked
/// with it) that passed with the figure that counts and the runs behind it, and, where the
/// file's runs carry the host's probes, is ranked in its case's host state.
pub fn counts(r: &CaseResult) -> bool {
    r.transfer == Transfer::Copy
        && median_goodness(r).is_some()
        && r.best().is_some()
        && r.host_state.as_ref().is_none_or(|s| s.ranked)
}

/// The results of one case on one machine: the row a result is ranked in.
fn row<'a>(results: &'a [CaseResult], case: &str) -> Vec<&'a CaseResult> {
    results.iter().filter(|r| r.case == case).collect()
}

/// Every library's standing on every machine, keyed by (source, library).
pub fn standings(sources: &[&[CaseResult]]) -> BTreeMap<(usize, String), Standing> {
    let mut out = BTreeMap::new();
    for (s, results) in sources.iter().enumerate() {
        for r in results.iter().filter(|r| counts(r)) {
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

/// The cases two libraries both ran on one machine: the one count of them that the questions
/// and the claims give. A case is counted where both have a result that `counts` there (passed,
/// with its figure, and where the runs carry probes, ranked in the case's host state: both
/// figures are of that one state). A case where either side ran more processes than the machine
/// has cores is set apart, as the standings set it apart: it measures the scheduler as much as
/// the library.
#[derive(Clone, Debug, Default)]
pub struct BothRan<'a> {
    /// Each case counted: `a`'s result and `b`'s, in the file's order.
    pub cases: Vec<(&'a CaseResult, &'a CaseResult)>,
    /// The cases set apart, oversubscribed.
    pub oversubscribed: Vec<&'a str>,
}

/// The cases `a` and `b` both ran in one file's `results` (`BothRan` says what counts).
pub fn both_ran<'a>(results: &'a [CaseResult], a: &str, b: &str) -> BothRan<'a> {
    let mut out = BothRan::default();
    for ra in results.iter().filter(|r| r.library == a && counts(r)) {
        let Some(rb) = results.iter().find(|r| r.case == ra.case && r.library == b && counts(r)) else {
            continue;
        };
        if ra.oversubscribed || rb.oversubscribed {
            out.oversubscribed.push(ra.case.as_str());
        } else {
            out.cases.push((ra, rb));
        }
    }
    out
}

/// One case both ran: the first's figure over the second's, the way round that reads more than
/// 1 where the first is faster (a rate over a rate; a time, the second's over the first's).
#[derive(Clone, Debug)]
pub struct CaseRatio {
    pub case: String,
    /// The figure is a time (a p50), not a rate: the two are ranged apart.
    pub time: bool,
    pub ratio: f64,
    /// A sender of either side fell behind its schedule (`analysis::behind`): its time measures
    /// the queue that built up, not the library, and is left out of the ratios' median and ranges.
    pub behind: bool,
}

/// One library against another over every case both ran (`both_ran`) on each machine.
#[derive(Clone, Debug, Default)]
pub struct Pair {
    pub wins: usize,
    pub level: usize,
    pub slower: usize,
    /// Cases left out because one side was oversubscribed.
    pub oversubscribed: usize,
    /// Case by case, every case counted.
    pub ratios: Vec<CaseRatio>,
    /// The cases where the first was slower (the second wins), in the order given.
    pub slower_in: Vec<String>,
    /// The quoted round trip: the least and greatest ratio of the second's p50 over the first's,
    /// over every pair of their runs.
    pub round_trip: Option<(f64, f64)>,
}

impl Pair {
    /// How many cases both ran, the oversubscribed ones apart.
    pub fn both(&self) -> usize {
        self.wins + self.level + self.slower
    }

    /// The ratios read: those where no sender fell behind.
    fn read(&self) -> impl Iterator<Item = &CaseRatio> {
        self.ratios.iter().filter(|r| !r.behind)
    }

    /// The median ratio over the cases both ran, those where a sender fell behind left out.
    pub fn median(&self) -> Option<f64> {
        middle(self.read().map(|r| r.ratio).collect())
    }

    /// How many ratios of one kind of figure (times, or rates) are read, and the least and the
    /// greatest of them: a rate and a time are never ranged together.
    pub fn range(&self, time: bool) -> Option<(usize, f64, f64)> {
        let mut of = self.read().filter(|r| r.time == time).map(|r| r.ratio);
        let first = of.next()?;
        Some(of.fold((1, first, first), |(n, lo, hi), x| (n + 1, lo.min(x), hi.max(x))))
    }

    /// The cases left out of the ratios because a sender fell behind, in the order given.
    pub fn behind(&self) -> Vec<&str> {
        self.ratios.iter().filter(|r| r.behind).map(|r| r.case.as_str()).collect()
    }
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

/// `a` against `b` over the cases both ran on every machine; `quoted` is the round trip whose
/// runs are paired.
pub fn pair(sources: &[&[CaseResult]], a: &str, b: &str, quoted: Option<&str>) -> Pair {
    let mut p = Pair::default();
    for results in sources {
        let both = both_ran(results, a, b);
        p.oversubscribed += both.oversubscribed.len();
        for (ra, rb) in both.cases {
            // `counts` holds a goodness on both sides.
            let (Some(ga), Some(gb)) = (median_goodness(ra), median_goodness(rb)) else { continue };
            p.ratios.push(CaseRatio {
                case: ra.case.clone(),
                time: counted(ra.pattern) == Figure::P50Ns,
                ratio: ga / gb.max(f64::MIN_POSITIVE),
                behind: behind(ra) || behind(rb),
            });
            if level(ra, rb) {
                p.level += 1;
            } else if ga > gb {
                p.wins += 1;
            } else {
                p.slower += 1;
                p.slower_in.push(ra.case.clone());
            }
            if quoted == Some(ra.case.as_str())
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
    /// are as many as it says, its count is `both_ran`'s, and each side's standing counts what
    /// it passed.
    #[test]
    fn a_pair_and_a_standing_count_what_they_say() {
        let doc = crate::report::Source::committed("run-2026-12-02T01-50-18Z").doc;
        let sources = [doc.results.as_slice()];
        let (a, b) = (&doc.libraries[0].id, &doc.libraries[1].id);
        let p = pair(&sources, a, b, Some("stream-rtt/16B"));
        assert_eq!(p.both(), p.ratios.len());
        assert_eq!(p.slower_in.len(), p.slower);
        assert!(p.ratios.len() + p.oversubscribed > 0);
        let both = both_ran(&doc.results, a, b);
        assert_eq!((both.cases.len(), both.oversubscribed.len()), (p.both(), p.oversubscribed));
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

    fn ratio(case: &str, time: bool, ratio: f64, behind: bool) -> CaseRatio {
        CaseRatio { case: case.into(), time, ratio, behind }
    }

    /// Rates and times are ranged apart, never together; a case where a sender fell behind is
    /// left out of the median and the ranges, and named.
    #[test]
    fn rates_and_times_are_ranged_apart_and_behind_is_left_out() {
        let p = Pair {
            wins: 3,
            slower: 1,
            ratios: vec![
                ratio("stream/16B", false, 2.0, false),
                ratio("queue/1x1/16B", false, 3.0, false),
                ratio("stream-rtt/16B", true, 100.0, false),
                ratio("latency/10M/16B", true, 0.0001, true),
            ],
            ..Pair::default()
        };
        assert_eq!(p.range(false), Some((2, 2.0, 3.0)));
        assert_eq!(p.range(true), Some((1, 100.0, 100.0)));
        assert_eq!(p.median(), Some(3.0));
        assert_eq!(p.behind(), ["latency/10M/16B"]);
        assert_eq!(p.both(), 4);
    }
}
