use ipcbench_api::RecvMode;

use super::*;
use crate::results::ab::Binary;
use crate::results::{ModeResult, RunRecord};

/// A stream result of the control on `side`, one polling run per round at these rates.
fn stream(side: Side, rates: &[f64]) -> CaseResult {
    // A passed result as a file holds it, before its runs.
    let mut r: CaseResult = serde_json::from_value(serde_json::json!({
        "case": "stream/16B", "pattern": "stream", "size": 16, "library": crate::registry::CONTROL,
        "processes": 2, "oversubscribed": false, "status": "ok",
    }))
    .unwrap();
    r.side = Some(side);
    r.modes = vec![ModeResult {
        mode: RecvMode::Polling,
        runs: rates
            .iter()
            .enumerate()
            .map(|(i, &rate)| RunRecord {
                round: Some(i as u32 + 1),
                ..RunRecord::of(crate::results::Figures { msgs_per_s: rate, ..Default::default() })
            })
            .collect(),
        median: None,
    }];
    r
}

/// Rates that scatter by about 1 % around `rate`, round by round (a fixed pattern).
fn around(rate: f64, n: usize) -> Vec<f64> {
    let pattern = [0.0, 0.01, -0.01, 0.005, -0.005, 0.015, -0.015, 0.0025, -0.0025];
    (0..n).map(|i| rate * (1.0 + pattern[i % pattern.len()])).collect()
}

fn record(figures: Vec<AbFigure>) -> AbRecord {
    let binary = |side| Binary {
        side,
        path: "/bin/ipcbench".into(),
        version: "0".into(),
        build: "b".into(),
        libraries: Vec::new(),
    };
    AbRecord {
        binaries: vec![binary(Side::Base), binary(Side::Candidate)],
        seed: 1,
        figures,
        trials: 0,
        wall_s: None,
    }
}

fn settings() -> AbSettings {
    AbSettings {
        against: "/bin/other".into(),
        threshold: THRESHOLD,
        resolve: RESOLVE,
        min_rounds: MIN_ROUNDS,
        max_rounds: MAX_ROUNDS,
        budget_s: None,
        allow_unresolved: false,
        handicap_ns: None,
        figure: None,
    }
}

/// Each round pairs the two sides' runs of that round; a round one side lacks is left out.
#[test]
fn the_ratios_pair_runs_of_the_same_round() {
    let base = stream(Side::Base, &[100.0, 200.0, 400.0]);
    let other = stream(Side::Candidate, &[110.0, 180.0]);
    let ratios = |mode| paired_rounds(&base, &other, mode, Figure::MsgsPerS).0;
    assert_eq!(ratios(RecvMode::Polling), [1.1, 0.9]);
    assert!(ratios(RecvMode::Waiting).is_empty());
}

/// A candidate 10 % slower in every round, a sentinel level with the base, and noise too wide:
/// slower, no change and unresolved, and the exit codes they make.
#[test]
fn known_changes_get_their_verdicts_and_exit_codes() {
    let base = around(1e6, 10);
    let slower: Vec<f64> = around(0.9e6, 10).into_iter().rev().collect();
    let b = stream(Side::Base, &base);
    let c = stream(Side::Candidate, &slower);
    let s = stream(Side::Sentinel, &around(1e6, 10).into_iter().rev().collect::<Vec<_>>());
    let mut figures = figures(&b, &[&c, &s], Figure::MsgsPerS);
    judge(&mut figures, THRESHOLD);
    let verdicts: Vec<(Side, AbVerdict)> = figures.iter().map(|f| (f.side, f.verdict)).collect();
    assert_eq!(verdicts, [(Side::Candidate, AbVerdict::Slower), (Side::Sentinel, AbVerdict::NoChange)]);
    assert!((figures[0].ratio - 0.9).abs() < 0.01, "{}", figures[0].ratio);
    assert_eq!(figures[0].rounds, 10);
    assert_eq!(outcome(&record(figures.clone()), &settings(), 0).0, EXIT_SLOWER);

    // The same candidate level with the base: exit 0.
    let level = stream(Side::Candidate, &around(1e6, 10).into_iter().rev().collect::<Vec<_>>());
    let mut figures = super::figures(&b, &[&level, &s], Figure::MsgsPerS);
    judge(&mut figures, THRESHOLD);
    assert!(figures.iter().all(|f| f.verdict == AbVerdict::NoChange), "{figures:?}");
    assert_eq!(outcome(&record(figures.clone()), &settings(), 0), (0, Vec::new()));
    // A failed result makes it 1, whatever the figures say.
    assert_eq!(outcome(&record(figures), &settings(), 1).0, EXIT_SLOWER);

    // Noise of ±20 %: unresolved, exit 3, or 0 when unresolved is allowed.
    let wide: Vec<f64> = (0..10).map(|i| if i % 2 == 0 { 1.2e6 } else { 0.8e6 }).collect();
    let noisy = stream(Side::Candidate, &wide);
    let mut figures = super::figures(&b, &[&noisy, &s], Figure::MsgsPerS);
    judge(&mut figures, THRESHOLD);
    assert_eq!(figures[0].verdict, AbVerdict::Unresolved);
    let (code, why) = outcome(&record(figures.clone()), &settings(), 0);
    assert_eq!(code, EXIT_UNTOLD);
    assert!(
        why[0].contains("1 figure(s) unresolved: their intervals reach past ±5%")
            && why[0].contains("(10 rounds)"),
        "{why:?}"
    );
    let allowed = AbSettings { allow_unresolved: true, ..settings() };
    assert_eq!(outcome(&record(figures), &allowed, 0).0, 0);
}

/// A change of about the threshold itself, told finely, is unresolved "at the threshold", not
/// blamed on the rounds' cap: its interval is narrower than --resolve.
#[test]
fn a_change_at_the_threshold_is_named_as_such() {
    let b = stream(Side::Base, &around(1e6, 10));
    let edge: Vec<f64> = around(0.952e6, 10).into_iter().rev().collect();
    let c = stream(Side::Candidate, &edge);
    let mut figures = figures(&b, &[&c], Figure::MsgsPerS);
    judge(&mut figures, THRESHOLD);
    assert_eq!(figures[0].verdict, AbVerdict::Unresolved);
    assert!(figures[0].resolution.unwrap() <= RESOLVE, "{figures:?}");
    let (code, why) = outcome(&record(figures), &settings(), 0);
    assert_eq!(code, EXIT_UNTOLD);
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(
        why[0].starts_with("1 figure(s) unresolved at the threshold") && why[0].contains("x0.95"),
        "{why:?}"
    );
}

/// A sentinel called changed makes the run exit 3 whatever else it found, a slower candidate
/// included: its pairing did not hold.
#[test]
fn a_sentinel_called_changed_makes_the_run_untold() {
    let b = stream(Side::Base, &around(1e6, 10));
    let c = stream(Side::Candidate, &around(0.8e6, 10));
    let moved = stream(Side::Sentinel, &around(1.2e6, 10));
    let mut figures = figures(&b, &[&c, &moved], Figure::MsgsPerS);
    judge(&mut figures, THRESHOLD);
    assert_eq!(figures[1].verdict, AbVerdict::Faster);
    let (code, why) = outcome(&record(figures), &settings(), 0);
    assert_eq!(code, EXIT_UNTOLD);
    assert!(why[0].contains("the sentinel") && why[0].contains("did not hold"), "{why:?}");
}

/// A side that failed gives no figures; a library with one round gives an unresolved figure,
/// never a verdict.
#[test]
fn a_failed_side_gives_no_figure_and_one_round_tells_nothing() {
    let b = stream(Side::Base, &around(1e6, 10));
    let mut c = stream(Side::Candidate, &around(1e6, 10));
    c.status = Status::Failed;
    assert!(figures(&b, &[&c], Figure::MsgsPerS).is_empty());
    let one = stream(Side::Candidate, &[0.5e6]);
    let mut f = figures(&b, &[&one], Figure::MsgsPerS);
    judge(&mut f, THRESHOLD);
    assert_eq!((f[0].rounds, f[0].resolution, f[0].verdict), (1, None, AbVerdict::Unresolved));
    // Written and read back: no infinity or NaN in the file.
    let text = serde_json::to_string(&record(f.clone())).unwrap();
    assert_eq!(serde_json::from_str::<AbRecord>(&text).unwrap().figures, f);
}

/// A round whose two runs the host's probes saw in different placements, or moving, is left out
/// of the ratio and counted; one in a single placement pairs.
#[test]
fn a_round_the_host_moved_in_is_left_out() {
    use crate::results::{HostRecord, Probe};
    let host = |before: f64, after: f64| {
        let probe = |polling| Probe { polling_ns: Some(polling), waiting_ns: None, syscall_ns: 100.0 };
        Some(HostRecord {
            before: probe(before),
            after: probe(after),
            steal_share: None,
            at_s: 0.0,
            retakes: 0,
            moved: false,
            refuted: None,
        })
    };
    let mut b = stream(Side::Base, &[38e6, 38e6, 38e6, 12e6]);
    let mut c = stream(Side::Candidate, &[39e6, 12e6, 12e6, 12.5e6]);
    let probes = [
        ((140.0, 140.0), (150.0, 140.0)),
        ((140.0, 140.0), (380.0, 380.0)),
        ((140.0, 150.0), (140.0, 261.0)),
        ((380.0, 370.0), (380.0, 390.0)),
    ];
    for (i, ((b0, b1), (c0, c1))) in probes.into_iter().enumerate() {
        b.modes[0].runs[i].host = host(b0, b1);
        c.modes[0].runs[i].host = host(c0, c1);
    }
    let (ratios, unheld) = paired_rounds(&b, &c, RecvMode::Polling, Figure::MsgsPerS);
    assert_eq!(unheld, 2);
    assert_eq!(ratios.len(), 2);
    assert!((ratios[0] - 39.0 / 38.0).abs() < 1e-12 && (ratios[1] - 12.5 / 12.0).abs() < 1e-12, "{ratios:?}");
    let f = figures(&b, &[&c], Figure::MsgsPerS);
    assert_eq!((f[0].rounds, f[0].unheld), (2, 2));
}
