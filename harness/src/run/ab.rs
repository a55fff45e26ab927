//! `run --against OTHER`: the cases of a run, each library measured from two binaries in the same
//! rounds (`ab::order`: a fresh order each round, each library's sides back to back, balanced),
//! plus the base binary once more against itself on one library of each case (the sentinel). At
//! least `ab::MIN_ROUNDS` rounds; then more, only for the libraries whose figures' intervals are
//! still wider than `--resolve`, up to `--max-rounds` or `--budget`. The verdicts (`ab::judge`)
//! are taken over the whole run at each write; the exit code says what they found.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use ipcbench_api::{LibraryInfo, RecvMode};

use super::trial::Launch;
use super::{Opened, Processes, RunContext, open, write};
use crate::ab::{self, order};
use crate::console;
use crate::matrix::Case;
use crate::options::Options;
use crate::report;
use crate::results::ab::{AbRecord, AbSettings, Binary, Side};
use crate::results::{CaseResult, Status};

/// The sides of an A/B run: the candidate's binary, checked, and both binaries' records.
pub struct Plan {
    pub candidate: Launch,
    pub binaries: Vec<Binary>,
    pub seed: u64,
}

/// What an A/B run ended as.
pub struct Ended {
    pub path: PathBuf,
    pub interrupted: bool,
    /// The exit code of its verdicts (`ab::outcome`), and why.
    pub code: u8,
    pub why: Vec<String>,
    pub record: AbRecord,
}

/// `--against`'s binary checked (`ab::binary::check`) and both binaries recorded; whether the
/// other is this very binary.
pub fn plan(opts: &Options) -> Result<(Plan, bool)> {
    let settings = opts.config.ab.as_ref().expect("an A/B run has its settings");
    let libraries: Vec<&str> = opts.libraries.iter().map(|l| l.id).collect();
    let (candidate, same) = ab::binary::check(&settings.against, &libraries)?;
    let plan = Plan {
        candidate: Launch { exe: candidate.path.clone(), handicap: None, side: Some(Side::Candidate) },
        binaries: vec![ab::binary::this_binary()?, candidate],
        seed: order::seed(),
    };
    Ok((plan, same))
}

/// The library of a case that also runs as the sentinel: the control where it is measured,
/// else the first library measured.
fn sentinel_of(libraries: &[LibraryInfo], measured: &[bool]) -> Option<usize> {
    let control = libraries.iter().position(|l| l.id == crate::registry::CONTROL);
    control.filter(|&i| measured[i]).or_else(|| measured.iter().position(|&m| m))
}

pub fn run(opts: &Options, plan: Plan) -> Result<Ended> {
    let settings: &AbSettings = opts.config.ab.as_ref().expect("an A/B run has its settings");
    let record =
        AbRecord { binaries: plan.binaries, seed: plan.seed, figures: Vec::new(), trials: 0, wall_s: None };
    let Opened { path, mut doc, run_dir, _lock, .. } = open(opts, None, Some(record), &Processes)?;
    let began = Instant::now();
    let total = opts.cases.len() * opts.libraries.len();
    let ctx = RunContext::new(opts, &run_dir, &doc, 0, total, &Processes)?;
    let base = Launch { side: Some(Side::Base), ..Launch::this().map_err(|e| anyhow::anyhow!(e))? };
    let sentinel = Launch { side: Some(Side::Sentinel), ..Launch::this().map_err(|e| anyhow::anyhow!(e))? };
    let launch = |side| match side {
        Side::Base => &base,
        Side::Candidate => &plan.candidate,
        Side::Sentinel => &sentinel,
    };
    let mut draw = order::Draw::new(plan.seed);
    // Trials run, results failed, libraries done (the progress lines count libraries, not sides).
    let (mut trials, mut failed, mut done, mut stop) = (0usize, 0usize, 0usize, false);
    for case in &opts.cases {
        let mut row: Vec<Vec<CaseResult>> = opts
            .libraries
            .iter()
            .map(|lib| {
                let mut r = ctx.begin(case, lib);
                r.side = Some(Side::Base);
                vec![r]
            })
            .collect();
        let measured: Vec<bool> = row.iter().map(|sides| sides[0].status == Status::Ok).collect();
        let sentinel_at = sentinel_of(&opts.libraries, &measured);
        for (i, sides) in row.iter_mut().enumerate() {
            let more: &[Side] =
                if Some(i) == sentinel_at { &[Side::Candidate, Side::Sentinel] } else { &[Side::Candidate] };
            for &side in more.iter().filter(|_| measured[i]) {
                sides.push(CaseResult { side: Some(side), ..sides[0].clone() });
            }
        }
        // A first round's trials: each library's modes, on each of its sides.
        let per_round: usize = (0..row.len())
            .filter(|&i| measured[i])
            .map(|i| opts.libraries[i].modes.len() * row[i].len())
            .sum();
        ctx.progress.borrow_mut().trials_added(per_round * settings.min_rounds as usize);
        let sides: Vec<Vec<Side>> = row.iter().map(|r| r.iter().filter_map(|x| x.side).collect()).collect();
        let order = order::CaseOrder::new(&mut draw, &sides);
        // What a plain run of the case takes: its base's trials of each round, `opts.config.runs`
        // times.
        let plain_trials: usize =
            (0..row.len()).filter(|&i| measured[i]).map(|i| opts.libraries[i].modes.len()).sum::<usize>()
                * opts.config.runs as usize;
        let (case_trials, case_began) = (trials, Instant::now());
        let figure = ab::paired_figure(settings, case.pattern());
        for round in 1..=settings.max_rounds {
            // Each library still running, with the receive modes this round runs: every one in
            // the first rounds, then those whose figure is still open.
            let modes: Vec<&'static [RecvMode]> = (0..row.len())
                .map(|i| {
                    let lib = &opts.libraries[i];
                    if !measured[i] || row[i].iter().any(|r| r.status != Status::Ok) {
                        &[]
                    } else if round <= settings.min_rounds {
                        lib.modes
                    } else {
                        open_modes(lib.modes, &row[i], figure, settings.resolve)
                    }
                })
                .collect();
            let active: Vec<usize> = (0..row.len()).filter(|&i| !modes[i].is_empty()).collect();
            let next: usize = active.iter().map(|&i| modes[i].len() * row[i].len()).sum();
            let over_budget = match settings.budget_s {
                Some(b) => began.elapsed().as_secs_f64() > b,
                None => over_plain(
                    case_began.elapsed().as_secs_f64(),
                    trials - case_trials,
                    next,
                    plain_trials,
                    window_s(opts),
                ),
            };
            if active.is_empty() || (round > settings.min_rounds && over_budget) {
                break;
            }
            if round > settings.min_rounds {
                ctx.progress.borrow_mut().trials_added(next);
            }
            for slot in order.round(&mut draw, round, &active) {
                let lib = &LibraryInfo { modes: modes[slot.library], ..opts.libraries[slot.library].clone() };
                let sides = &mut row[slot.library];
                if sides.iter().any(|r| r.status != Status::Ok) {
                    continue;
                }
                let result =
                    sides.iter_mut().find(|r| r.side == Some(slot.side)).expect("each side has a result");
                ctx.one_run(launch(slot.side), case, lib, result, round, &mut trials);
                if result.status == Status::Interrupted {
                    stop = true;
                    break;
                }
            }
            if stop {
                break;
            }
        }
        for (i, sides) in row.into_iter().enumerate() {
            let figures = {
                let others: Vec<&CaseResult> = sides[1..].iter().collect();
                ab::figures(&sides[0], &others, figure)
            };
            let ab = doc.ab.as_mut().expect("an A/B file has its record");
            ab.figures.extend(figures);
            ab::judge(&mut ab.figures, settings.threshold);
            let line = case_line(case, &opts.libraries[i], &sides, ab);
            for mut r in sides {
                if !r.modes.is_empty() {
                    ctx.others(&mut r);
                }
                failed += usize::from(r.status == Status::Failed);
                doc.results.push(r);
            }
            super::resettle(&mut doc, &[]);
            done += 1;
            ctx.progress.borrow_mut().result(done, &line);
        }
        if let Some(ab) = doc.ab.as_mut() {
            ab.trials = trials;
        }
        write(&doc, &path)?;
        if stop {
            break;
        }
    }
    let wall_s = began.elapsed().as_secs_f64();
    if let Some(ab) = doc.ab.as_mut() {
        ab.wall_s = Some(wall_s);
    }
    let interrupted = ctx.close(&mut doc, &path)?;
    let record = doc.ab.clone().expect("an A/B file has its record");
    let (code, why) = ab::outcome(&record, settings, failed);
    console::out(&report::terminal::ab(&record, settings));
    console::say(&wall_text(opts, &doc.results, trials, wall_s));
    Ok(Ended { path, interrupted, code, why, record })
}

/// Without `--budget`, a case's extra rounds stop where one more would take the case past
/// `ab::PLAIN_TIMES` what a plain default run of it takes (`plain` trials): `done` trials so far
/// in `elapsed_s`, `next` the next round's, each trial's window and warm-up `window_s`.
fn over_plain(elapsed_s: f64, done: usize, next: usize, plain: usize, window_s: f64) -> bool {
    done > 0
        && elapsed_s + next as f64 * elapsed_s / done as f64
            > ab::PLAIN_TIMES * plain_s(elapsed_s, done, plain, window_s)
}

/// A trial's window and warm-up in this run.
fn window_s(opts: &Options) -> f64 {
    (opts.config.duration + opts.config.warmup).as_secs_f64()
}

/// What `plain` trials of a plain default run take, at the pace of `done` trials of this run
/// in `elapsed_s` whose windows and warm-ups were `window_s`: each a default window and warm-up
/// plus what this run's trials took beyond theirs (starting, probing, ending).
fn plain_s(elapsed_s: f64, done: usize, plain: usize, window_s: f64) -> f64 {
    if done == 0 {
        return 0.0;
    }
    let beyond = (elapsed_s / done as f64 - window_s).max(0.0);
    let default = (crate::results::DEFAULT_DURATION + crate::results::DEFAULT_WARMUP).as_secs_f64();
    plain as f64 * (default + beyond)
}

/// The receive modes of `all` in which a library's `figure`, on any side against the base, still
/// has an interval wider than `resolve`: each of `all`'s own, or none.
fn open_modes(
    all: &'static [RecvMode],
    sides: &[CaseResult],
    figure: crate::results::Figure,
    resolve: f64,
) -> &'static [RecvMode] {
    let open = |mode| sides[1..].iter().any(|other| ab::needs_more(&sides[0], other, mode, figure, resolve));
    match all.iter().filter(|&&m| open(m)).count() {
        0 => &[],
        n if n == all.len() => all,
        _ if open(RecvMode::Polling) => &[RecvMode::Polling],
        _ => &[RecvMode::Waiting],
    }
}

/// The line a library's A/B prints as its case ends: each side and mode's ratio and interval as
/// the verdicts stand so far.
fn case_line(case: &Case, lib: &LibraryInfo, sides: &[CaseResult], ab: &AbRecord) -> String {
    if let Some(r) = sides.iter().find(|r| r.status != Status::Ok) {
        let side = r.side.map_or("", |s| s.as_str());
        return format!(
            "{} {} ({side}): {}",
            case.name,
            lib.id,
            r.reason.as_deref().unwrap_or(r.status.as_str())
        );
    }
    let each: Vec<String> = ab
        .figures
        .iter()
        .filter(|f| f.case == case.name && f.library == lib.id)
        .map(|f| {
            format!(
                "{}{} x{:.3} [{:.3}, {:.3}] {} rounds",
                f.mode.as_str(),
                if f.side == Side::Sentinel { " (sentinel)" } else { "" },
                f.ratio,
                f.low,
                f.high,
                f.rounds
            )
        })
        .collect();
    format!("{} {}: {}", case.name, lib.id, each.join("; "))
}

/// The run's wall time beside what a plain run of its cases (its runs of one side) would take
/// at this run's pace.
fn wall_text(opts: &Options, results: &[CaseResult], trials: usize, wall_s: f64) -> String {
    let plain: usize = results
        .iter()
        .filter(|r| r.side == Some(Side::Base) && r.status == Status::Ok)
        .map(|r| r.modes.len() * opts.config.runs as usize)
        .sum();
    let estimate = plain_s(wall_s, trials, plain, window_s(opts));
    let times = if estimate > 0.0 { format!(": {:.1}x that", wall_s / estimate) } else { String::new() };
    format!(
        "ipcbench: the A/B took {} for {trials} trials; a plain run of these cases ({} runs of one side, {plain} \
         trials of its default windows) takes about {} at its pace{times}",
        crate::format::duration_text(wall_s),
        opts.config.runs,
        crate::format::duration_text(estimate)
    )
}
