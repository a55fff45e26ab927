//! The rules of `analysis` on hand-made runs.

use super::*;
use crate::results::ModeResult;
use ipcbench_api::RecvMode;

fn case(name: &str) -> Case {
    crate::matrix::find(name).unwrap()
}

#[test]
fn medians_take_the_middle_run() {
    let f = |r| Figures { msgs_per_s: r, ..Default::default() };
    assert_eq!(median(&[f(3.0), f(1.0), f(2.0)]).unwrap().msgs_per_s, 2.0);
    assert_eq!(median(&[f(1.0), f(2.0)]).unwrap().msgs_per_s, 1.5);
    assert!(median(&[]).is_none());
}

/// A result of `pattern` with one receive mode per entry of `modes`, each mode's runs'
/// (rate, p50) as given.
fn measured(pattern: &str, modes: &[(RecvMode, &[(f64, f64)])]) -> CaseResult {
    let case = case(pattern);
    // A passed result of the case, built here (the driver's ledger is not this module's to use).
    let mut r = CaseResult {
        case: case.name.clone(),
        params: None,
        pattern: case.pattern(),
        size: case.size,
        batch: None,
        transfer: ipcbench_api::Transfer::Copy,
        library: "fastipc".into(),
        side: None,
        processes: case.roles().len(),
        oversubscribed: false,
        status: Status::Ok,
        reason: None,
        failure: None,
        best_mode: None,
        median: None,
        spread: None,
        note: None,
        placement: None,
        resolution: None,
        runs_taken: None,
        concurrent_runs: Vec::new(),
        host_state: None,
        load: None,
        modes: Vec::new(),
    };
    r.modes = modes
        .iter()
        .map(|(mode, runs)| ModeResult {
            mode: *mode,
            runs: runs
                .iter()
                .map(|&(rate, p50)| {
                    RunRecord::of(Figures {
                        msgs_per_s: rate,
                        p50_ns: Some(p50),
                        p99_ns: Some(p50 * 2.0),
                        ..Figures::default()
                    })
                })
                .collect(),
            median: None,
        })
        .collect();
    settle(&mut r);
    r
}

#[test]
fn the_better_mode_wins_by_the_figure_its_pattern_counts() {
    use RecvMode::{Polling, Waiting};
    // A stream counts its rate: polling's higher rate wins though its p50 is worse.
    let s = measured("stream/16B", &[(Waiting, &[(1e6, 10.0)]), (Polling, &[(2e6, 50.0)])]);
    assert_eq!((s.best_mode, s.median.unwrap().msgs_per_s), (Some(Polling), 2e6));
    // A round trip counts its p50: waiting's lower p50 wins though its rate is lower.
    let r = measured("stream-rtt/16B", &[(Waiting, &[(1e6, 10.0)]), (Polling, &[(2e6, 50.0)])]);
    assert_eq!((r.best_mode, r.median.unwrap().p50_ns), (Some(Waiting), Some(10.0)));
    assert_eq!(r.spread.as_ref().unwrap().figure, Figure::P50Ns);
    assert_eq!(counted(Pattern::Service), Figure::MsgsPerS);
    // A failed result keeps each mode's median, and has no figure.
    let mut failed = measured("stream/16B", &[(Waiting, &[(1e6, 10.0)])]);
    failed.status = Status::Failed;
    failed.median = None;
    settle(&mut failed);
    assert!(failed.median.is_none() && failed.modes[0].median.is_some());
}

#[test]
fn the_spread_is_the_runs_range_over_the_median_and_noisy_above_the_threshold() {
    let runs: &[(f64, f64)] = &[(90.0, 1.0), (100.0, 1.0), (120.0, 1.0)];
    let r = measured("stream/16B", &[(RecvMode::Waiting, runs)]);
    let s = r.spread.as_ref().unwrap();
    assert_eq!((s.figure, s.min, s.max), (Figure::MsgsPerS, 90.0, 120.0));
    assert!((s.relative - 0.3).abs() < 1e-12);
    assert!(noisy(&r));
    let quiet: &[(f64, f64)] = &[(96.0, 1.0), (100.0, 1.0), (105.0, 1.0)];
    assert!(!noisy(&measured("stream/16B", &[(RecvMode::Waiting, quiet)])), "9% is not noisy");
}

#[test]
fn a_result_whose_runs_reach_the_fastest_is_level_and_one_below_is_behind() {
    let w = RecvMode::Waiting;
    let fastest = measured("stream/16B", &[(w, &[(90.0, 1.0), (100.0, 1.0), (110.0, 1.0)])]);
    let level = measured("stream/16B", &[(w, &[(70.0, 1.0), (80.0, 1.0), (95.0, 1.0)])]);
    let behind = measured("stream/16B", &[(w, &[(70.0, 1.0), (80.0, 1.0), (85.0, 1.0)])]);
    let row = [&fastest, &level, &behind];
    assert_eq!(rank(&fastest, row), Some(Rank::Fastest));
    assert_eq!(rank(&level, row), Some(Rank::Level));
    assert_eq!(rank(&behind, row), Some(Rank::Behind));
    // Round trips rank by latency: the lowest p50 is the fastest.
    let quick = measured("stream-rtt/16B", &[(w, &[(1.0, 500.0)])]);
    let slow = measured("stream-rtt/16B", &[(w, &[(2.0, 900.0)])]);
    assert_eq!(rank(&quick, [&quick, &slow]), Some(Rank::Fastest));
    assert_eq!(rank(&slow, [&quick, &slow]), Some(Rank::Behind));
}

/// A split result (its runs in two clusters apart) is ranked by the cluster its figure is from:
/// its two fast runs do not make it level with a fastest its figure is five times below.
#[test]
fn a_split_result_is_ranked_by_its_figures_cluster() {
    let w = RecvMode::Waiting;
    let runs = |rates: &[f64]| -> Vec<(f64, f64)> { rates.iter().map(|&r| (r, 1.0)).collect() };
    let steady = runs(&[95.0, 100.0, 105.0, 100.0, 98.0, 102.0]);
    let split = runs(&[20.0, 21.0, 200.0, 22.0, 210.0, 21.0]);
    let fastest = measured("stream/16B", &[(w, steady.as_slice())]);
    let split = measured("stream/16B", &[(w, split.as_slice())]);
    assert_eq!(split.median.unwrap().msgs_per_s, 21.0, "the larger cluster's median");
    let (lo, _, hi) = interval(&split).unwrap();
    assert!(lo >= 20.0 && hi <= 22.0, "its cluster's interval: {lo} to {hi}");
    assert_eq!(rank(&split, [&fastest, &split]), Some(Rank::Behind));
}

/// The sustainable rate is the last of the rates, from the lowest, at which the sender kept its
/// schedule and the p99 stayed within its multiple of the lowest rate's; a rate that held
/// after one that did not is not reached.
#[test]
fn the_sustainable_rate_stops_at_the_first_rate_that_did_not_hold() {
    let at = |behind: f64, p99: f64| Figures {
        behind_share: Some(behind),
        p99_ns: Some(p99),
        ..Figures::default()
    };
    let points = [
        (100_000, at(0.0, 2_000.0)),
        (1_000, at(0.0, 1_000.0)),
        (1_000_000, at(0.5, 1_000.0)),
        (10_000, at(0.005, 9_000.0)),
        (3_000_000, at(0.0, 1_000.0)),
    ];
    assert_eq!(sustainable(&points), Some(100_000));
    let p99_past = [(1_000, at(0.0, 1_000.0)), (10_000, at(0.0, 10_001.0)), (100_000, at(0.0, 1_000.0))];
    assert_eq!(sustainable(&p99_past), Some(1_000));
    assert_eq!(sustainable(&[(1_000, at(0.02, 1_000.0))]), None);
    assert_eq!(sustainable(&[]), None);
}
