//! The rules of a file whose runs carry the host's probes: which state a result's figure comes
//! from (its case's: the state the case's runs share most), which results are ranked (enough
//! runs in that state), which results split in two (their runs cluster apart while the host
//! held), and how rivals are held against each other: by ratios within a round, run against
//! run of the same round, not by two intervals taken minutes apart.

use std::collections::BTreeMap;

use super::{Rank, counted_runs, figure_runs, goodness, median, median_goodness, settle, value};
use crate::host::states::groups;
use crate::noise::{median_interval, middle};
use crate::results::{CaseResult, Cluster, Document, Figures, OtherState, ResultState, RunRecord, Status};

/// The runs a result needs in its case's state to be ranked: a majority of the runs asked for.
pub fn need(runs: u32) -> u32 {
    runs.div_ceil(2).max(1)
}

/// A result whose runs in its state split into clusters takes runs until it has this many
/// times the runs asked for in the state, to say each cluster's share.
pub const SPLIT_RUNS: u32 = 2;

/// A case takes at most this many times its runs in extra rounds (for results short of runs in
/// its state, or split): the stated cap on the extra time.
pub const EXTRA_ROUNDS: u32 = 2;

/// A result's runs (in one state) more than this factor apart, sorted, fall into two clusters:
/// a little tighter than the states' gap, since a run's figure is steadier than a probe of a
/// few milliseconds, and wide enough that a round trip's spread within one state (it follows
/// the polling floor, which varied up to 2x, densely, within one state here) rarely splits.
pub const SPLIT_GAP: f64 = 1.8;

/// Label for runs whose probe moved under them.
pub const MOVED: &str = "moved";

/// Whether any run of the result carries a probe.
pub fn probed(r: &CaseResult) -> bool {
    r.modes.iter().flat_map(|m| &m.runs).any(|run| run.host.is_some())
}

/// The state the case's runs share most (ties: the first label), if its runs carry probes.
pub fn case_state<'a>(row: impl IntoIterator<Item = &'a CaseResult>) -> Option<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for run in row.into_iter().flat_map(|r| r.modes.iter().flat_map(|m| &m.runs)) {
        if let Some(s) = run.state.as_deref() {
            *count.entry(s).or_default() += 1;
        }
    }
    let most = count.values().copied().max()?;
    count.into_iter().find(|(_, n)| *n == most).map(|(s, _)| s.to_string())
}

fn state_runs(runs: &[RunRecord], state: &str) -> usize {
    runs.iter().filter(|r| r.state.as_deref() == Some(state)).count()
}

/// The values of the figure that counts, over a result's runs of one mode in `state`.
fn counted_values(r: &CaseResult, runs: &[RunRecord], state: &str) -> Vec<f64> {
    let figure = super::counted(r.pattern);
    runs.iter()
        .filter(|x| x.state.as_deref() == Some(state))
        .filter_map(|x| value(figure, &x.figures))
        .collect()
}

/// Each cluster of `values` (`groups` at `SPLIT_GAP`), when there are at least two of two runs or more: a
/// result that splits in two. Empty otherwise.
pub fn clusters(values: &[f64]) -> Vec<Cluster> {
    split_values(values)
        .into_iter()
        .map(|c| Cluster {
            runs: c.len() as u32,
            share: c.len() as f64 / values.len() as f64,
            median: middle(c).expect("a group is not empty"),
        })
        .collect()
}

/// The values of each group of `values` at `SPLIT_GAP`, low first, when at least two groups
/// hold two or more; empty otherwise. `clusters` and `compare` both take them from here.
pub fn split_values(values: &[f64]) -> Vec<Vec<f64>> {
    let g = groups(values, SPLIT_GAP);
    let n = g.iter().max().map_or(0, |m| m + 1);
    let each: Vec<Vec<f64>> = (0..n)
        .map(|k| values.iter().zip(&g).filter(|(_, gk)| **gk == k).map(|(v, _)| *v).collect())
        .collect();
    if each.iter().filter(|c| c.len() >= 2).count() < 2 {
        return Vec::new();
    }
    each
}

/// Whether a measured result of a probed case needs another run: a mode short of `need` runs in
/// the case's state, or whose runs there fall apart and are fewer than `SPLIT_RUNS` × `runs`.
pub fn needs_more(r: &CaseResult, case: Option<&str>, runs: u32) -> bool {
    let Some(case) = case.filter(|_| r.status == Status::Ok && probed(r)) else { return false };
    r.modes.iter().any(|m| {
        let n = state_runs(&m.runs, case) as u32;
        let split = groups(&counted_values(r, &m.runs, case), SPLIT_GAP).iter().any(|&g| g > 0);
        n < need(runs) || (split && n < SPLIT_RUNS * runs)
    })
}

/// A result's figure once its runs are in, in a file whose runs carry probes: its state (the
/// case's, `case`; or its own most common when it has no run in the case's), the figure from
/// that state's runs (`settle`), whether it is ranked, its other states' runs and figures, and
/// its clusters. A file without probes settles as before.
pub fn settle_in(r: &mut CaseResult, case: Option<&str>, runs: u32) {
    if !probed(r) {
        r.host_state = None;
        settle(r);
        return;
    }
    let all: Vec<&RunRecord> = r.modes.iter().flat_map(|m| &m.runs).collect();
    let own = case_state(std::iter::once(&*r));
    let in_case = case.filter(|c| all.iter().any(|x| x.state.as_deref() == Some(*c)));
    let state = in_case.map(str::to_string).or(own).unwrap_or_else(|| MOVED.to_string());
    r.host_state = Some(ResultState {
        state: state.clone(),
        runs: 0,
        of: 0,
        ranked: false,
        why: None,
        others: Vec::new(),
        clusters: Vec::new(),
    });
    settle(r);
    let Some(mode) = r.best().or(r.modes.first()) else { return };
    let (n, of) = (state_runs(&mode.runs, &state) as u32, mode.runs.len() as u32);
    let mut others: BTreeMap<String, Vec<Figures>> = BTreeMap::new();
    for x in mode.runs.iter().filter(|x| x.state.as_deref() != Some(state.as_str())) {
        others.entry(x.state.clone().unwrap_or_else(|| MOVED.into())).or_default().push(x.figures);
    }
    let others = others
        .into_iter()
        .filter_map(|(s, f)| Some(OtherState { state: s, runs: f.len() as u32, median: median(&f)? }))
        .collect();
    let clusters = clusters(&counted_values(r, &mode.runs, &state));
    let why = match case {
        _ if r.status != Status::Ok => None,
        None => Some("every run's probe moved under it: no state to rank it in".to_string()),
        Some(c) if c != state => {
            Some(format!("no run in its case's state {c} (its runs were in {state}): shown, not ranked"))
        }
        Some(c) if n < need(runs) => Some(format!(
            "only {n} of its {of} runs in its case's state {c}; ranking needs {}: shown, not ranked",
            need(runs)
        )),
        Some(_) => None,
    };
    let s = r.host_state.as_mut().expect("set above");
    (s.runs, s.of, s.ranked, s.why, s.others, s.clusters) =
        (n, of, why.is_none() && r.status == Status::Ok, why, others, clusters);
}

/// The document's states anew from all its runs' probes, and every result settled in its case's
/// state (`settle_in`). A file without probes is left as it is.
pub fn resettle(doc: &mut Document) {
    doc.states = crate::host::states::assign(doc.results.iter_mut());
    if doc.states.is_empty() && !doc.results.iter().any(probed) {
        return;
    }
    let mut cases: Vec<String> = Vec::new();
    for r in &doc.results {
        if !cases.contains(&r.case) {
            cases.push(r.case.clone());
        }
    }
    for case in cases {
        let state = case_state(doc.results.iter().filter(|r| r.case == case));
        for r in doc.results.iter_mut().filter(|r| r.case == case) {
            settle_in(r, state.as_deref(), doc.settings.config.runs);
        }
    }
}

/// Whether a result takes part in its row's ranking.
fn ranked(r: &CaseResult) -> bool {
    r.host_state.as_ref().is_some_and(|s| s.ranked) && median_goodness(r).is_some()
}

/// The goodness of `a` over that of `b` in each round both ran in their state (their figures'
/// modes): the paired ratios, each of two runs seconds apart. Only the runs each figure is from
/// (`figure_runs`): a split result's other cluster would pair it level with rivals its figure
/// is many times slower than.
pub fn paired(a: &CaseResult, b: &CaseResult) -> Vec<f64> {
    let runs = |r: &CaseResult| -> Vec<(u32, f64)> {
        let Some(mode) = r.best() else { return Vec::new() };
        figure_runs(r.pattern, counted_runs(r.state(), &mode.runs))
            .into_iter()
            .filter_map(|x| Some((x.round?, goodness(r.pattern, &x.figures)?)))
            .collect()
    };
    let theirs = runs(b);
    runs(a)
        .into_iter()
        .filter_map(|(round, g)| {
            let (_, h) = theirs.iter().find(|(k, _)| *k == round)?;
            (*h > 0.0).then(|| g / h)
        })
        .collect()
}

/// The fastest ranked result of a row by its median (the first of equals).
fn fastest<'a>(row: impl IntoIterator<Item = &'a CaseResult>) -> Option<&'a CaseResult> {
    row.into_iter()
        .filter(|x| ranked(x))
        .filter_map(|x| Some((x, median_goodness(x)?)))
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
        .map(|(x, _)| x)
}

/// Whether two results can be told apart by their paired ratios: the interval of the median
/// ratio holds 1. None when they share no round (the caller falls back on their intervals).
pub fn level_paired(a: &CaseResult, b: &CaseResult) -> Option<bool> {
    let ratios = paired(a, b);
    let (lo, hi) = median_interval(&ratios)?;
    Some(lo <= 1.0 && hi >= 1.0)
}

/// Where `r` stands in its row, for a file whose runs carry probes: unranked results have no
/// place; the fastest ranked median is the fastest; a result whose paired ratios to it reach 1
/// is level.
pub fn rank<'a>(r: &CaseResult, row: impl IntoIterator<Item = &'a CaseResult>) -> Option<Rank> {
    if !ranked(r) {
        return None;
    }
    let best = fastest(row)?;
    if std::ptr::eq(best, r) || median_goodness(best) == median_goodness(r) {
        return Some(Rank::Fastest);
    }
    let level = level_paired(r, best).unwrap_or_else(|| super::level_by_intervals(r, best));
    Some(if level { Rank::Level } else { Rank::Behind })
}

/// How far `r` stands from the best of its row, the better way round (best over its own
/// goodness): the median of the paired ratios where they share rounds, else of the medians.
pub fn ratio_to_best<'a>(r: &CaseResult, row: impl IntoIterator<Item = &'a CaseResult>) -> Option<f64> {
    if !ranked(r) {
        return None;
    }
    let best = fastest(row)?;
    let ratios: Vec<f64> = paired(best, r);
    middle(ratios).or_else(|| Some(median_goodness(best)? / median_goodness(r).filter(|g| *g > 0.0)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{HostRecord, ModeResult, Probe};
    use ipcbench_api::RecvMode;

    /// A stream result of `lib`, one waiting mode, a run per (round, state, rate); a state of
    /// "" is a run whose probe moved.
    fn result(lib: &str, runs: &[(u32, &str, f64)]) -> CaseResult {
        let case = crate::matrix::find("stream/16B").unwrap();
        let (_, info) = crate::registry::find("fastipc").unwrap();
        let mut r = crate::run::ledger::begin(&case, &info, 64, false, None);
        r.library = lib.into();
        let probe = Probe { polling_ns: Some(100.0), waiting_ns: None, syscall_ns: 90.0 };
        let host = HostRecord {
            before: probe,
            after: probe,
            steal_share: None,
            at_s: 0.0,
            retakes: 0,
            moved: false,
            refuted: None,
        };
        r.modes = vec![ModeResult {
            mode: RecvMode::Waiting,
            runs: runs
                .iter()
                .map(|&(round, state, rate)| RunRecord {
                    round: Some(round),
                    host: Some(host.clone()),
                    state: (!state.is_empty()).then(|| state.to_string()),
                    ..RunRecord::of(Figures { msgs_per_s: rate, ..Figures::default() })
                })
                .collect(),
            median: None,
        }];
        r
    }

    fn settled(mut row: Vec<CaseResult>) -> Vec<CaseResult> {
        let state = case_state(&row);
        for r in &mut row {
            settle_in(r, state.as_deref(), 3);
        }
        row
    }

    #[test]
    fn a_figure_comes_from_its_cases_state_and_keeps_the_others_beside_it() {
        let row = settled(vec![
            result("a", &[(1, "B", 10.0), (2, "B", 11.0), (3, "A", 30.0)]),
            result("b", &[(1, "B", 5.0), (2, "B", 6.0), (3, "", 9.0)]),
        ]);
        let a = &row[0];
        let s = a.host_state.as_ref().unwrap();
        assert_eq!((s.state.as_str(), s.runs, s.of, s.ranked), ("B", 2, 3, true));
        assert_eq!(a.median.unwrap().msgs_per_s, 10.5, "the median of its runs in B alone");
        assert_eq!(s.others.len(), 1);
        assert_eq!(
            (s.others[0].state.as_str(), s.others[0].runs, s.others[0].median.msgs_per_s),
            ("A", 1, 30.0)
        );
        let b = row[1].host_state.as_ref().unwrap();
        assert_eq!((b.others[0].state.as_str(), b.others[0].runs), (MOVED, 1));
    }

    #[test]
    fn a_result_short_of_runs_in_its_cases_state_is_shown_not_ranked_and_asks_for_more() {
        let row = settled(vec![
            result("a", &[(1, "B", 10.0), (2, "B", 11.0), (3, "B", 12.0)]),
            result("b", &[(1, "B", 50.0), (2, "A", 6.0), (3, "A", 6.5)]),
            result("c", &[(1, "A", 7.0), (2, "A", 7.5), (3, "A", 7.0)]),
        ]);
        // B holds 4 runs, A 5: the case ranks in A.
        assert_eq!(case_state(&row).as_deref(), Some("A"));
        let a = row[0].host_state.as_ref().unwrap();
        assert!(!a.ranked && a.why.as_deref().unwrap().starts_with("no run in its case's state A"), "{a:?}");
        assert_eq!(a.state, "B", "shown with its own state's figure");
        let b = row[1].host_state.as_ref().unwrap();
        assert!(b.ranked && b.runs == 2, "{b:?}");
        assert!(needs_more(&row[0], Some("A"), 3) && !needs_more(&row[2], Some("A"), 3));
        assert_eq!(rank(&row[0], &row), None, "not ranked");
        assert_eq!(rank(&row[2], &row), Some(Rank::Fastest));
        assert_eq!(
            rank(&row[1], &row),
            Some(Rank::Behind),
            "6.0 and 6.5 against 7.5 and 7.0 in rounds 2 and 3"
        );
    }

    #[test]
    fn rivals_are_level_when_a_round_of_their_own_reaches_the_fastest() {
        // By their intervals these two are apart; in round 2 "b" beat "a": level.
        let row = settled(vec![
            result("a", &[(1, "A", 10.0), (2, "A", 8.0), (3, "A", 10.5)]),
            result("b", &[(1, "A", 9.0), (2, "A", 8.5), (3, "A", 9.5)]),
        ]);
        assert_eq!(rank(&row[1], &row), Some(Rank::Level));
        let ratio = ratio_to_best(&row[1], &row).unwrap();
        assert!((ratio - 10.5 / 9.5).abs() < 1e-9, "the median of 10/9, 8/8.5 and 10.5/9.5: {ratio}");
        // A rival behind in every round is behind.
        let row = settled(vec![
            result("a", &[(1, "A", 10.0), (2, "A", 8.0), (3, "A", 10.5)]),
            result("b", &[(1, "A", 9.0), (2, "A", 7.5), (3, "A", 9.5)]),
        ]);
        assert_eq!(rank(&row[1], &row), Some(Rank::Behind));
    }

    /// A split result is held against the fastest by the runs its figure is from: one whose
    /// figure is 50 times slower is behind, though its other cluster beat the fastest in two
    /// rounds (pairs/2/stream-rtt/16B, 2026-12-04: FastIPC's six runs between 21.5 k and 2.26 M).
    #[test]
    fn a_split_result_is_not_level_by_its_other_clusters_rounds() {
        let rounds = |rates: [f64; 6]| -> Vec<(u32, &'static str, f64)> {
            (1..).zip(rates).map(|(round, rate)| (round, "A", rate)).collect()
        };
        let row = settled(vec![
            result("best", &rounds([1.166e6, 1.10e6, 1.183e6, 1.190e6, 1.156e6, 1.173e6])),
            result("split", &rounds([21_712.0, 21_521.0, 2_255_284.0, 21_994.0, 1_748_615.0, 21_955.0])),
        ]);
        let split = &row[1];
        assert_eq!(split.host_state.as_ref().unwrap().clusters.len(), 2, "its runs split");
        assert!(split.median.unwrap().msgs_per_s < 22_000.0, "its figure is its larger cluster's");
        assert_eq!(rank(split, &row), Some(Rank::Behind));
        let ratio = ratio_to_best(split, &row).unwrap();
        assert!(ratio > 50.0, "every round of its figure's runs: {ratio}");
    }

    #[test]
    fn runs_that_cluster_apart_are_a_split_result_and_take_more_runs_to_say_so() {
        let three = result("a", &[(1, "A", 3.0e6), (2, "A", 6.1e6), (3, "A", 6.0e6)]);
        assert!(needs_more(&three, Some("A"), 3), "a 2x gap among 3 runs asks for more");
        let r = &settled(vec![result(
            "a",
            &[
                (1, "A", 3.0e6),
                (2, "A", 6.1e6),
                (3, "A", 6.0e6),
                (4, "A", 3.1e6),
                (5, "A", 5.9e6),
                (6, "A", 6.2e6),
            ],
        )])[0];
        assert!(!needs_more(r, Some("A"), 3), "six runs: enough to say the shares");
        let c = &r.host_state.as_ref().unwrap().clusters;
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].median, c[0].runs), (3.05e6, 2));
        assert_eq!((c[1].median, c[1].runs), (6.05e6, 4));
        assert!((c[1].share - 4.0 / 6.0).abs() < 1e-12);
        // A lone outlier is not a second cluster.
        assert!(clusters(&[3.0, 6.0, 6.1, 5.9]).is_empty());
        // A file without probes settles as before, with no state.
        let mut plain = result("a", &[(1, "A", 1.0)]);
        plain.modes[0].runs[0].host = None;
        settle_in(&mut plain, None, 3);
        assert!(plain.host_state.is_none() && plain.median.is_some());
    }
}
