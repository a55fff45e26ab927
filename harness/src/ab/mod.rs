//! "Did my change make it faster?": two builds in the same rounds (`run --against OTHER`). This
//! room holds what an A/B run decides, apart from running it (`run::ab`): whether the other binary
//! may be driven (`binary`), the order of each round (`order`), the statistics of the rounds'
//! ratios (`stats`), and here each figure's pairing, the verdicts over the whole run, and the
//! exit code they make.

pub mod binary;
pub mod order;
pub mod stats;

use crate::analysis;
use crate::results::ab::{AbFigure, AbRecord, AbSettings, AbVerdict, Side};
use crate::results::{CaseResult, Figure, HostRecord, Status};
use stats::Paired;

pub use crate::results::ab::{MAX_ROUNDS, MIN_ROUNDS, RESOLVE, THRESHOLD};

/// Without `--budget`, a case's rounds stop short of taking more than this many times what a
/// plain default run of it takes (3 runs of one side, each 1 s after 0.3 s of warm-up): an A/B
/// run's shorter windows (`AB_DURATION`) take its 8 rounds of two sides in about 1.7 times that,
/// and the rest goes to the figures still open.
pub const PLAIN_TIMES: f64 = 6.0;

/// The exit code of an A/B run that found something slower (or failed a result).
pub const EXIT_SLOWER: u8 = 1;
/// The exit code of an A/B run that could not tell: a figure unresolved, or a sentinel called
/// changed.
pub const EXIT_UNTOLD: u8 = 3;

/// The figure an A/B run pairs: `settings.figure` where the calibration set it, else the counted
/// figure of the case's pattern (a rate, or a round trip's p50).
pub fn paired_figure(settings: &AbSettings, pattern: crate::matrix::Pattern) -> Figure {
    settings.figure.unwrap_or_else(|| analysis::counted(pattern))
}

/// Each round's ratio of `other`'s `figure` over `base`'s, in `mode`, over the rounds both ran
/// and gave it in one placement of the host (`held`); and how many rounds both ran without
/// holding.
pub fn paired_rounds(
    base: &CaseResult,
    other: &CaseResult,
    mode: ipcbench_api::RecvMode,
    figure: Figure,
) -> (Vec<f64>, u32) {
    let (theirs, ours) = (rounds_of(other, mode, figure), rounds_of(base, mode, figure));
    let mut unheld = 0;
    let ratios = ours
        .into_iter()
        .filter_map(|(round, b, bh)| {
            let &(_, o, oh) = theirs.iter().find(|(k, _, _)| *k == round)?;
            if !held(bh, oh) {
                unheld += 1;
                return None;
            }
            (b > 0.0).then(|| o / b)
        })
        .collect();
    (ratios, unheld)
}

/// Each run of `r` in `mode` that gave `figure`: its round, its figure, its probes.
fn rounds_of(
    r: &CaseResult,
    mode: ipcbench_api::RecvMode,
    figure: Figure,
) -> Vec<(u32, f64, Option<&HostRecord>)> {
    r.modes
        .iter()
        .filter(|m| m.mode == mode)
        .flat_map(|m| &m.runs)
        .filter_map(|run| Some((run.round?, analysis::value(figure, &run.figures)?, run.host.as_ref())))
        .collect()
}

/// The most two runs' polling floors after their windows may differ by for the runs to be
/// paired: the host's placements here give about 140 ns and 260 to 400 ns, and a run's rate
/// follows its floor (the first A/B of 2026-12-05: FastIPC's 1 KiB stream at 6.3 M msg/s
/// after every floor near 140 ns, 1.5 to 1.8 M after every one from 260 ns).
pub const HELD: f64 = 1.5;

/// Whether two runs of a round were taken in one placement of the host: their polling floors
/// right after their windows lie within `HELD` of each other (or neither could be measured).
/// The probe after a window is taken while the vCPUs still sit where the window had them; the
/// one before it often finds them apart after the idle moment of the previous trial's end. The
/// probes are the driver's, between trials: no binary under test moves them, so a round left
/// out for them favours neither side. Runs without probes (one core) always hold.
fn held(a: Option<&HostRecord>, b: Option<&HostRecord>) -> bool {
    match (a.map(|h| h.after.polling_ns), b.map(|h| h.after.polling_ns)) {
        (Some(Some(x)), Some(Some(y))) => x.max(y) <= HELD * x.min(y),
        (Some(x), Some(y)) => x.is_none() && y.is_none(),
        _ => true,
    }
}

/// Whether `other` against `base` in `mode` still needs rounds to tell `resolve` of `figure`.
pub fn needs_more(
    base: &CaseResult,
    other: &CaseResult,
    mode: ipcbench_api::RecvMode,
    figure: Figure,
    resolve: f64,
) -> bool {
    stats::needs_more(Paired::of(&paired_rounds(base, other, mode, figure).0).as_ref(), resolve)
}

/// The `figure`s of one library of a case: each mode of each side against the base, where all
/// its sides passed. Their verdicts wait for `judge`, over the whole run.
pub fn figures(base: &CaseResult, others: &[&CaseResult], figure: Figure) -> Vec<AbFigure> {
    if base.status != Status::Ok || others.iter().any(|o| o.status != Status::Ok) {
        return Vec::new();
    }
    let median = |r: &CaseResult, mode| {
        let values: Vec<f64> = r
            .modes
            .iter()
            .filter(|m| m.mode == mode)
            .flat_map(|m| &m.runs)
            .filter_map(|run| analysis::value(figure, &run.figures))
            .collect();
        crate::noise::middle(values)
    };
    let mut out = Vec::new();
    for other in others {
        for m in &base.modes {
            let (ratios, unheld) = paired_rounds(base, other, m.mode, figure);
            let (Some(b), Some(o)) = (median(base, m.mode), median(other, m.mode)) else { continue };
            let paired = Paired::of(&ratios);
            let (ratio, low, high) = paired.map_or((o / b, o / b, o / b), |p| p.ratio());
            out.push(AbFigure {
                case: base.case.clone(),
                library: base.library.clone(),
                mode: m.mode,
                figure,
                side: other.side.unwrap_or(Side::Candidate),
                base: b,
                other: o,
                ratio,
                low,
                high,
                rounds: ratios.len() as u32,
                unheld,
                resolution: paired.map(|p| p.resolution()),
                p: 1.0,
                verdict: AbVerdict::Unresolved,
            });
        }
    }
    out
}

/// Every figure's p value against the threshold and its verdict, the correction taken over all
/// the run's figures (the sentinels' with the candidate's).
pub fn judge(figures: &mut [AbFigure], threshold: f64) {
    let paired: Vec<Option<(f64, f64)>> = figures
        .iter()
        .map(|f| {
            (f.resolution.is_some() && f.ratio > 0.0).then(|| (f.ratio.ln(), f.high.ln() - f.ratio.ln()))
        })
        .collect();
    let p: Vec<f64> = figures
        .iter()
        .zip(&paired)
        .map(|(f, x)| x.map_or(1.0, |(mean, h)| stats::p_beyond(mean, h, f.rounds as usize, threshold)))
        .collect();
    let passed = stats::benjamini_hochberg(&p, stats::FALSE_DISCOVERY);
    for (i, f) in figures.iter_mut().enumerate() {
        f.p = p[i];
        f.verdict = match paired[i] {
            Some((mean, h)) => {
                stats::judged(mean, h, threshold, f.figure.measure().higher_is_better(), passed[i])
            }
            None => AbVerdict::Unresolved,
        };
    }
}

/// What an A/B run found, as its exit code and the sentences that say why.
pub fn outcome(record: &AbRecord, settings: &AbSettings, failed: usize) -> (u8, Vec<String>) {
    let of =
        |side: Side, v: AbVerdict| record.figures.iter().filter(|f| f.side == side && f.verdict == v).count();
    let changed_sentinels: Vec<&AbFigure> = record
        .figures
        .iter()
        .filter(|f| f.side == Side::Sentinel && matches!(f.verdict, AbVerdict::Slower | AbVerdict::Faster))
        .collect();
    let slower = of(Side::Candidate, AbVerdict::Slower);
    let unresolved = of(Side::Candidate, AbVerdict::Unresolved) + of(Side::Sentinel, AbVerdict::Unresolved);
    let mut why = Vec::new();
    if !changed_sentinels.is_empty() {
        let each: Vec<String> = changed_sentinels
            .iter()
            .map(|f| format!("{} {} {}", f.case, f.library, f.mode.as_str()))
            .collect();
        why.push(format!(
            "the sentinel (the base binary against itself) was called {} in {}: the host moved faster than a \
             round, and this run's pairing did not hold; run it again",
            changed_sentinels[0].verdict.as_str(),
            each.join(", ")
        ));
        return (EXIT_UNTOLD, why);
    }
    if failed > 0 {
        why.push(format!("{failed} result(s) failed: their reasons are in the results file"));
    }
    if slower > 0 {
        why.push(format!(
            "{slower} figure(s) slower beyond {}",
            crate::format::whole_percent(settings.threshold)
        ));
    }
    if failed > 0 || slower > 0 {
        return (EXIT_SLOWER, why);
    }
    if unresolved > 0 {
        let name = |f: &&AbFigure| {
            let sentinel = if f.side == Side::Sentinel { " (sentinel)" } else { "" };
            let tells = f.resolution.map_or("one round".into(), |r| format!("±{:.1}%", 100.0 * r));
            format!(
                "{} {}{sentinel} {} x{:.3} {tells} ({} rounds)",
                f.case,
                f.library,
                f.mode.as_str(),
                f.ratio,
                f.rounds
            )
        };
        // An interval narrower than --resolve stopped taking rounds on its width, yet reaches
        // across the threshold: the change is about the threshold's own size.
        let (edge, wide): (Vec<&AbFigure>, Vec<&AbFigure>) = record
            .figures
            .iter()
            .filter(|f| f.verdict == AbVerdict::Unresolved)
            .partition(|f| f.resolution.is_some_and(|r| r <= settings.resolve));
        let threshold = crate::format::whole_percent(settings.threshold);
        if !wide.is_empty() {
            let stop = if wide.iter().all(|f| f.rounds + f.unheld >= settings.max_rounds) {
                format!("the cap of {} rounds", settings.max_rounds)
            } else if settings.budget_s.is_some() {
                format!("--budget or the cap of {} rounds", settings.max_rounds)
            } else {
                format!(
                    "{PLAIN_TIMES} times a plain default run's time (no --budget given) or the cap of {} rounds",
                    settings.max_rounds
                )
            };
            let named: Vec<String> = wide.iter().map(name).collect();
            why.push(format!(
                "{} figure(s) unresolved: their intervals reach past ±{threshold}, still wider than --resolve where \
                 {stop} stopped their rounds (more --budget or --max-rounds, or --allow-unresolved): {}",
                wide.len(),
                named.join(", ")
            ));
        }
        if !edge.is_empty() {
            let named: Vec<String> = edge.iter().map(name).collect();
            why.push(format!(
                "{} figure(s) unresolved at the threshold: their intervals are narrower than --resolve but reach \
                 across ±{threshold}, a change of about the threshold's own size (a --threshold further from it \
                 decides them): {}",
                edge.len(),
                named.join(", ")
            ));
        }
        if !settings.allow_unresolved {
            return (EXIT_UNTOLD, why);
        }
    }
    (0, why)
}

#[cfg(test)]
mod tests;
