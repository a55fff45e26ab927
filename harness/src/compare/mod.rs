//! `ipcbench compare OLD NEW`: for each case, library, receive mode and figure both files
//! measured, the change from OLD to NEW with its interval (`noise::change`, over the runs behind
//! each median) and a verdict. A change counts only when it is beyond the threshold and its
//! interval leaves out zero; everything else is "no change", said apart when the noise alone
//! could hide the change. Slower anywhere exits 1, so the command can gate a library's CI.

mod drift;
mod notes;
mod states;
mod text;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use ipcbench_api::RecvMode;
use serde::Serialize;

use crate::floors::Floors;
use crate::format::{nanos, rate, whole_percent};
use crate::noise::{self, CONFIDENCE, middle};
use crate::pattern::spec;
use crate::results::{self, CaseResult, Document, Measure, Status};

/// A figure's value as the tables print it: a rate, or a time.
fn value_text(m: Measure, v: f64) -> String {
    if m == Measure::MsgsPerS { rate(v) } else { nanos(v) }
}

/// What a change amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    /// Within the threshold.
    NoChange,
    /// Beyond the threshold, but the interval holds zero: the runs cannot tell.
    WithinNoise,
    /// The two files measured it in no common state of the host: no verdict.
    NoSharedState,
    /// Beyond the threshold, with fewer than `VERDICT_RUNS` runs on a side: no verdict.
    TooFewRuns,
    /// Beyond the threshold, but not beyond it once the case's other libraries' shift between
    /// the two sittings is taken out, or not beyond either file's resolution, or not surviving
    /// the correction over every figure: two sittings cannot tell it; `run --against` can.
    WithinDrift,
}

/// The runs a side needs for a verdict. With two a side, chance alone puts one side's runs all
/// beyond the other's in 2 of their 6 orders, and the interval then leaves out zero: a third of
/// the rows that vary beyond the threshold would be called changed between two runs of one
/// binary. With three it is 2 of 20 (`chance`).
pub const VERDICT_RUNS: usize = 3;

/// The chance that `n` runs a side of one binary fall all of one side beyond all of the other,
/// which is when a bootstrap of so few runs calls a change: 2 of the C(2n, n) orders.
pub fn chance(n: usize) -> f64 {
    let orders = (0..n).fold(1.0, |c, k| c * (2 * n - k) as f64 / (k + 1) as f64);
    2.0 / orders
}

impl Verdict {
    fn text(self, m: Measure) -> &'static str {
        match (self, m) {
            (Verdict::Faster, Measure::CpuNsPerMsg) => "cheaper",
            (Verdict::Slower, Measure::CpuNsPerMsg) => "costlier",
            (Verdict::Faster, _) => "faster",
            (Verdict::Slower, _) => "slower",
            (Verdict::NoChange, _) => "no change",
            (Verdict::WithinNoise, _) => "no change within noise",
            (Verdict::NoSharedState, _) => "no shared host state",
            (Verdict::TooFewRuns, _) => "too few runs to tell",
            (Verdict::WithinDrift, _) => "within the sittings' drift",
        }
    }
}

/// One figure of one case, library and mode in both files.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub case: String,
    pub library: String,
    pub mode: String,
    pub figure: Measure,
    pub old: f64,
    pub new: f64,
    pub old_runs: usize,
    pub new_runs: usize,
    /// The smallest change each side's figure tells on its own (`noise::resolution` of the runs
    /// compared): what a third file of as many runs could be told apart from it by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_resolution: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_resolution: Option<f64>,
    /// (new - old) / old, and its interval.
    pub change: f64,
    pub low: f64,
    pub high: f64,
    pub verdict: Verdict,
    /// The host state (of both files' probes found together) whose runs were compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The median change of the case's other libraries' figures of this kind between the two
    /// files (absent where no other library has one): what the sittings moved by alike.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<f64>,
    /// The change relative to the drift: (1 + change) / (1 + drift) - 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative: Option<f64>,
    /// The one-sided p value of the relative change lying beyond the threshold (Welch's t on the
    /// runs' logarithms, doubled), which the correction over every row reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    /// What the reader must know of this row: the states of each side where they share none,
    /// or that its runs split into clusters, held each against the nearest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One file as the comparison names it.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    pub path: PathBuf,
    pub started: String,
    pub machine: String,
    pub runs: u32,
    /// The lower of the file's start and end floors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub polling_floor_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_floor_ns: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub old: Side,
    pub new: Side,
    pub threshold: f64,
    pub confidence: f64,
    pub method: &'static str,
    /// What the reader must know about the noise between the files (machines, floors).
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
    /// (case, library, why) of the results only one file measured.
    pub left_out: Vec<(String, String, String)>,
    /// Changes most libraries of a case share: more likely the machine's than the libraries'.
    pub shared: Vec<Shift>,
}

/// One figure of one case that moved the same way for most of the libraries measured in it.
#[derive(Clone, Debug, Serialize)]
pub struct Shift {
    pub case: String,
    pub figure: Measure,
    pub verdict: Verdict,
    /// Rows (library and mode) with that verdict, of all the case's rows of the figure.
    pub rows: usize,
    pub of: usize,
    /// The median change over those rows.
    pub median_change: f64,
}

/// A case's figure moved alike when at least this share of its rows (libraries and modes, at
/// least `SHARED_ROWS` of them) had the same verdict, faster or slower.
const SHARED: f64 = 0.8;
const SHARED_ROWS: usize = 4;

fn shared_shifts(rows: &[Row], threshold: f64) -> Vec<Shift> {
    let mut groups: Vec<((&str, Measure), Vec<&Row>)> = Vec::new();
    for r in rows {
        match groups.iter_mut().find(|(k, _)| *k == (r.case.as_str(), r.figure)) {
            Some((_, v)) => v.push(r),
            None => groups.push(((r.case.as_str(), r.figure), vec![r])),
        }
    }
    let mut out = Vec::new();
    for ((case, figure), group) in groups {
        for verdict in [Verdict::Slower, Verdict::Faster] {
            // Moved beyond the threshold, that way (the verdicts hold the drift apart).
            let way = |r: &&&Row| {
                let better = (r.change > 0.0) == r.figure.higher_is_better();
                r.change.abs() > threshold && better == (verdict == Verdict::Faster)
            };
            let alike: Vec<f64> = group.iter().filter(way).map(|r| r.change).collect();
            if group.len() >= SHARED_ROWS && alike.len() as f64 >= SHARED * group.len() as f64 {
                out.push(Shift {
                    case: case.into(),
                    figure,
                    verdict,
                    rows: alike.len(),
                    of: group.len(),
                    median_change: middle(alike).expect("not empty"),
                });
            }
        }
    }
    out
}

pub const METHOD: &str = "percentile bootstrap of the ratio of the two medians, over the runs behind each";

fn side(path: &Path, doc: &Document) -> Side {
    let floors = doc.conditions.as_ref().and_then(|c| c.lowest_floors());
    let trip = |f: &Option<Floors>, mode| f.as_ref().and_then(|f| f.of(mode)).map(|t| t.p50_ns);
    Side {
        path: path.to_path_buf(),
        started: doc.started.clone(),
        machine: doc.machine.name(),
        runs: doc.settings.config.runs,
        polling_floor_ns: trip(&floors, RecvMode::Polling),
        waiting_floor_ns: trip(&floors, RecvMode::Waiting),
    }
}

fn verdict(m: Measure, (change, low, high): (f64, f64, f64), threshold: f64, runs: usize) -> Verdict {
    let better = (change > 0.0) == m.higher_is_better();
    if change.abs() <= threshold {
        Verdict::NoChange
    } else if runs < VERDICT_RUNS {
        Verdict::TooFewRuns
    } else if low <= 0.0 && high >= 0.0 {
        Verdict::WithinNoise
    } else if better {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
}

/// The result of `r`'s case and library in `doc`.
fn find<'a>(doc: &'a Document, r: &CaseResult) -> Option<&'a CaseResult> {
    doc.results.iter().find(|x| x.case == r.case && x.library == r.library)
}

/// Compares two results files.
pub fn compare(
    (old_path, old): (&Path, &Document),
    (new_path, new): (&Path, &Document),
    threshold: f64,
    across_machines: bool,
) -> Result<Comparison> {
    let mut notes = Vec::new();
    if !old.machine.same_as(&new.machine) {
        if !across_machines {
            bail!(
                "{} was measured on {} and {} on {}: figures of two machines differ by the machines as much \
                 as by the libraries; pass --across-machines to compare them anyway",
                old_path.display(),
                old.machine.name(),
                new_path.display(),
                new.machine.name()
            );
        }
        notes.push(format!(
            "The files come from two machines (OLD: {}; NEW: {}): every change includes the machines' difference.",
            old.machine.name(),
            new.machine.name()
        ));
    }
    let (o, n) = (side(old_path, old), side(new_path, new));
    notes.extend(notes::host((old, &o), (new, &n)));
    let fewest = o.runs.min(n.runs) as usize;
    if fewest <= 3 {
        notes.push(format!(
            "With {fewest} runs behind a median its interval is the runs' whole range: only a change larger than \
             the runs' spread is a verdict (more --runs narrow it). Even so, chance alone puts {fewest} runs of one \
             binary all beyond {fewest} others, and calls a change, in {:.0} % of the figures that vary beyond the \
             threshold; on fewer than {VERDICT_RUNS} runs a side (in their state) a change is too few runs to tell.",
            100.0 * chance(fewest.max(1))
        ));
    }
    let joint = states::Joint::of(old, new);
    notes.extend(notes::states(joint.as_ref(), old, new));
    let mut rows = Vec::new();
    // Each row's runs, OLD's and NEW's, for its test.
    let mut values: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    let mut left_out = Vec::new();
    for (i, r) in new.results.iter().enumerate() {
        let Some(j) = old.results.iter().position(|x| x.case == r.case && x.library == r.library) else {
            if r.status != Status::Unsupported {
                left_out.push((r.case.clone(), r.library.clone(), "only in NEW".into()));
            }
            continue;
        };
        let before = &old.results[j];
        if r.status != Status::Ok || before.status != Status::Ok {
            // Two dashes are the same dash.
            if (r.status, before.status) != (Status::Unsupported, Status::Unsupported) {
                let why = format!("{} in OLD, {} in NEW", before.status.as_str(), r.status.as_str());
                left_out.push((r.case.clone(), r.library.clone(), why));
            }
            continue;
        }
        for (mi, m) in r.modes.iter().enumerate() {
            let Some(bi) = before.modes.iter().position(|x| x.mode == m.mode) else { continue };
            let bm = &before.modes[bi];
            // The runs of the state both files measured the mode in, where their runs carry
            // probes; every run otherwise.
            let state = joint.as_ref().map(|js| states::shared_state(&js.old[j][bi], &js.new[i][mi]));
            // The figures of a pattern worth comparing, as the catalogue lists them.
            for &figure in spec(r.pattern).shows.compared {
                let get = |x: &results::RunRecord| figure.get(&x.figures);
                let (a, b, state, note, ch) = match (&joint, &state) {
                    (Some(js), Some(Ok(s))) => {
                        let a = states::in_state(&bm.runs, &js.old[j][bi], s, get);
                        let b = states::in_state(&m.runs, &js.new[i][mi], s, get);
                        let Some((ch, split)) = states::change(&a, &b) else { continue };
                        let note = split.then(|| {
                            "its runs split into clusters: each of NEW's held against its match in OLD".into()
                        });
                        (a, b, Some(s.clone()), note, ch)
                    }
                    (Some(js), Some(Err((so, sn)))) => {
                        let side =
                            |runs: &[results::RunRecord], st: &[Option<String>], s: &Option<String>| {
                                s.as_deref().map_or_else(
                                    || runs.iter().filter_map(get).collect(),
                                    |s| states::in_state(runs, st, s, get),
                                )
                            };
                        let a: Vec<f64> = side(&bm.runs, &js.old[j][bi], so);
                        let b: Vec<f64> = side(&m.runs, &js.new[i][mi], sn);
                        let (Some(oa), Some(nb)) = (middle(a.clone()), middle(b.clone())) else { continue };
                        let where_ = |which: &str, s: &Option<String>| match s {
                            Some(s) => format!("{which} in state {s} ({})", js.probe_text(s)),
                            None => format!("{which}'s probes all moved"),
                        };
                        let note =
                            format!("no state in common: {}; {}", where_("OLD", so), where_("NEW", sn));
                        let change = if oa > 0.0 { nb / oa - 1.0 } else { 0.0 };
                        values.push((a.clone(), b.clone()));
                        rows.push(Row {
                            case: r.case.clone(),
                            library: r.library.clone(),
                            mode: m.mode.as_str().into(),
                            figure,
                            drift: None,
                            relative: None,
                            p: None,
                            old: oa,
                            new: nb,
                            old_runs: a.len(),
                            new_runs: b.len(),
                            old_resolution: noise::resolution(&a),
                            new_resolution: noise::resolution(&b),
                            change,
                            low: change,
                            high: change,
                            verdict: Verdict::NoSharedState,
                            state: None,
                            note: Some(note),
                        });
                        continue;
                    }
                    _ => {
                        let (a, b): (Vec<f64>, Vec<f64>) = (
                            bm.runs.iter().filter_map(get).collect(),
                            m.runs.iter().filter_map(get).collect(),
                        );
                        let Some(ch) = noise::change(&a, &b) else { continue };
                        (a, b, None, None, ch)
                    }
                };
                values.push((a.clone(), b.clone()));
                rows.push(Row {
                    case: r.case.clone(),
                    library: r.library.clone(),
                    mode: m.mode.as_str().into(),
                    figure,
                    drift: None,
                    relative: None,
                    p: None,
                    old: middle(a.clone()).expect("not empty"),
                    new: middle(b.clone()).expect("not empty"),
                    old_runs: a.len(),
                    new_runs: b.len(),
                    old_resolution: noise::resolution(&a),
                    new_resolution: noise::resolution(&b),
                    change: ch.0,
                    low: ch.1,
                    high: ch.2,
                    verdict: verdict(figure, ch, threshold, a.len().min(b.len())),
                    state,
                    note,
                });
            }
        }
    }
    for r in &old.results {
        if find(new, r).is_none() && r.status != Status::Unsupported {
            left_out.push((r.case.clone(), r.library.clone(), "only in OLD".into()));
        }
    }
    drift::drifted(&mut rows, &values, threshold);
    notes.push(format!(
        "OLD and NEW are two sittings, minutes or days apart: the machine moves between them, here and on most \
         machines, by more than most changes worth finding. Beside each change is the drift, the median change \
         of the case's other libraries and modes, and the change relative to it. A verdict is given only where \
         that relative change lies beyond {}, beyond both files' resolutions, and its test (Welch's t on the runs' \
         logarithms) survives a Benjamini-Hochberg correction at 5% over every row; the rest is within the \
         sittings' drift. To tell a smaller change, measure both builds in one sitting: ipcbench run --against.",
        whole_percent(threshold)
    ));
    let shared = shared_shifts(&rows, threshold);
    Ok(Comparison {
        shared,
        old: o,
        new: n,
        threshold,
        confidence: CONFIDENCE,
        method: METHOD,
        notes,
        rows,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Pattern;

    #[test]
    fn a_verdict_needs_the_threshold_and_the_noise_both() {
        let t = 0.05;
        assert_eq!(verdict(Measure::MsgsPerS, (-0.3, -0.4, -0.2), t, 3), Verdict::Slower);
        assert_eq!(verdict(Measure::P50Ns, (-0.3, -0.4, -0.2), t, 3), Verdict::Faster);
        assert_eq!(verdict(Measure::P50Ns, (0.3, -0.1, 0.6), t, 3), Verdict::WithinNoise);
        assert_eq!(verdict(Measure::MsgsPerS, (0.03, 0.01, 0.05), t, 3), Verdict::NoChange);
        // Two runs a side tell nothing beyond the threshold, however clear their interval.
        assert_eq!(verdict(Measure::MsgsPerS, (-0.3, -0.4, -0.2), t, 2), Verdict::TooFewRuns);
        assert_eq!(verdict(Measure::MsgsPerS, (0.03, 0.01, 0.05), t, 1), Verdict::NoChange);
        assert_eq!(Verdict::Slower.text(Measure::CpuNsPerMsg), "costlier");
    }

    #[test]
    fn so_few_runs_fall_apart_by_chance_this_often() {
        // 1 a side: either order; 2: 2 of 6; 3: 2 of 20; 4: 2 of 70.
        for (n, p) in [(1, 1.0), (2, 1.0 / 3.0), (3, 0.1), (4, 2.0 / 70.0)] {
            assert!((chance(n) - p).abs() < 1e-12, "{n}: {}", chance(n));
        }
    }

    #[test]
    fn a_round_trip_compares_its_latencies_and_a_stream_its_rate() {
        let compared = |p| spec(p).shows.compared;
        assert_eq!(compared(Pattern::StreamRtt), [Measure::P50Ns, Measure::P99Ns, Measure::CpuNsPerMsg]);
        assert_eq!(compared(Pattern::Stream), [Measure::MsgsPerS, Measure::CpuNsPerMsg]);
        assert_eq!(
            compared(Pattern::Service),
            [Measure::MsgsPerS, Measure::P50Ns, Measure::P99Ns, Measure::CpuNsPerMsg]
        );
    }
}
