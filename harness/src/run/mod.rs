//! The driver: runs each (case, library, receive mode, run) as a trial of fresh processes, one
//! per role, from this same binary, in the order `schedule` gives; turns each result's runs
//! into its figures (`analysis`); and rewrites the results file as each result is done. It never
//! sends or receives through a library: only the children do.
//!
//! `dir` is the run's directory and the clean-up of runs killed before, `trial` one trial and
//! its protocol, `children` the trial's processes, `ledger` each result's record before and
//! after its runs, and `executor` what a run asks of the world (the machine, the host's probes,
//! each trial, the clock), which the driver's unit tests script.

pub mod ab;
pub mod children;
mod connect;
pub mod dir;
pub mod executor;
pub mod ledger;
mod open;
mod progress;
pub mod schedule;
pub mod trial;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use ipcbench_api::LibraryInfo;

use crate::analysis::{self, states};
use crate::console;
use crate::host::{self, probe::Probe, probe::Ticks};
use crate::machine;
use crate::matrix::{self, Case};
use crate::options::{Options, Resume};
use crate::report::{Source, terminal};
use crate::results::{
    self, AutoRuns, CaseResult, Document, HostCost, HostRecord, Order, RunRecord, RunStatus, Status,
};
pub use executor::{Executor, Processes};
pub(crate) use open::{Opened, now, open};
use progress::Progress;
use schedule::Step;
use trial::{Launch, Trial, TrialError};

/// Set by Ctrl-C (SIGINT) or SIGTERM: the driver stops the trial, keeps what is done, and exits.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// What a run ended as.
pub enum Outcome {
    Complete { failed: usize },
    Interrupted,
}

pub fn run(opts: &Options, resume: Option<Resume>) -> Result<(Outcome, PathBuf)> {
    run_with(opts, resume, &Processes)
}

/// A run whose machine, host and trials are `exec`'s: prepare the file and directory, plan,
/// run each case, then close.
pub fn run_with(opts: &Options, resume: Option<Resume>, exec: &dyn Executor) -> Result<(Outcome, PathBuf)> {
    let Opened { path, mut doc, kept, run_dir, _lock } = open(opts, resume, None, exec)?;
    let planned = planned(opts, &kept, doc.machine.cores);
    let ctx = RunContext::new(opts, &run_dir, &doc, planned, opts.cases.len() * opts.libraries.len(), exec)?;
    console::say(&format!("ipcbench: expected: {}", ctx.progress.borrow().expected()));
    let mut sitting = Sitting { doc: &mut doc, kept: &kept, path: &path, trials: 0, failed: 0, stop: false };
    for case in &opts.cases {
        ctx.case(case, &mut sitting)?;
        if sitting.stop {
            break;
        }
    }
    let failed = sitting.failed;
    // A resumed run interrupted again keeps what it had not reached yet.
    for r in &kept {
        if !doc.results.iter().any(|x| x.case == r.case && x.library == r.library) {
            doc.results.push(r.clone());
        }
    }
    resettle(&mut doc, &kept);
    let interrupted = ctx.close(&mut doc, &path)?;
    console::out(&terminal::medians(&Source::new(doc, path.clone()), opts.watch.wide, console::width()));
    Ok((if interrupted { Outcome::Interrupted } else { Outcome::Complete { failed } }, path))
}

/// The trials planned: every run of every receive mode of each result still to measure.
fn planned(opts: &Options, kept: &[CaseResult], cores: usize) -> usize {
    opts.cases
        .iter()
        .flat_map(|case| opts.libraries.iter().map(move |lib| (case, lib)))
        .filter(|(case, lib)| !kept.iter().any(|r| r.case == case.name && r.library == lib.id))
        .filter(|(case, lib)| {
            ledger::begin(case, lib, cores, opts.config.skip_oversubscribed, opts.config.buffer).status
                == Status::Ok
        })
        .map(|(_, lib)| lib.modes.len() * opts.config.runs as usize)
        .sum()
}

/// A run's file as its cases go by: the document, the results a resume kept, where it is
/// written, the trials so far, the results failed, and whether the run was interrupted.
struct Sitting<'s> {
    doc: &'s mut Document,
    kept: &'s [CaseResult],
    path: &'s Path,
    trials: usize,
    failed: usize,
    stop: bool,
}

/// The results file rewritten whole, atomically, each result's figures under its pattern's
/// names; a failure says how to go on.
pub(crate) fn write(doc: &Document, path: &Path) -> Result<()> {
    results::write_atomically(doc, path, |p| crate::pattern::spec(p).names).with_context(|| {
        format!("the run stopped; once there is room, `ipcbench run --resume {}` goes on", path.display())
    })
}

/// What every case of a run shares.
pub struct RunContext<'a> {
    pub opts: &'a Options,
    pub dir: &'a Path,
    pub tag: &'a str,
    pub cores: usize,
    /// The CPUs the driver may use, which `--pin` hands out.
    pub cpus: Vec<usize>,
    /// The other runs already warned about.
    warned: RefCell<Vec<u32>>,
    progress: RefCell<Progress>,
    /// When the driver began, and the seconds from the file's start to then: a run's place on
    /// the file's timeline.
    clock: (std::time::Instant, f64),
    /// What the probes, retakes and extra rounds have cost so far (its `wall_s` unused); the
    /// retakes' time is also what their budget is held to.
    cost: std::cell::Cell<HostCost>,
    /// This binary, as the trials of a plain run (and an A/B run's base) start their children.
    pub launch: Launch,
    /// Whether a trial whose host probe moved is taken again: not in an A/B run, whose pairing
    /// is its answer to a moving host.
    pub retakes: bool,
    /// What measures the machine, probes the host and runs each trial.
    exec: &'a dyn Executor,
}

/// The most of a run's time that retakes may take (the probes themselves took 1.6-1.7 % more
/// here: `host_cost` in every file).
const RETAKE_SHARE: f64 = 0.10;

/// The document's states and every result's state anew (`analysis::states::resettle`), but
/// the results a resumed run kept stay as they were measured.
fn resettle(doc: &mut Document, kept: &[CaseResult]) {
    states::resettle(doc);
    for r in &mut doc.results {
        if let Some(k) = kept.iter().find(|k| k.case == r.case && k.library == r.library) {
            *r = k.clone();
        }
    }
}

/// Seconds from `started` (the file's start, RFC 3339) to now: 0 for a new file, the time
/// since its start for a resumed one.
fn since_start(started: &str) -> f64 {
    humantime::parse_rfc3339(started)
        .ok()
        .and_then(|t| std::time::SystemTime::now().duration_since(t).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

impl<'a> RunContext<'a> {
    pub(crate) fn new(
        opts: &'a Options,
        run_dir: &'a dir::RunDir,
        doc: &Document,
        planned: usize,
        total: usize,
        exec: &'a dyn Executor,
    ) -> Result<RunContext<'a>> {
        let launch = Launch::this().map_err(|e| anyhow::anyhow!(e))?;
        Ok(RunContext {
            progress: RefCell::new(Progress::new(
                planned,
                total,
                opts.config.warmup + opts.config.duration,
                opts.watch.verbose,
            )),
            opts,
            dir: &run_dir.path,
            tag: &run_dir.tag,
            cores: doc.machine.cores,
            cpus: machine::allowed_cpus(),
            warned: Default::default(),
            clock: (exec.now(), since_start(&doc.started)),
            cost: Default::default(),
            launch,
            retakes: opts.config.ab.is_none(),
            exec,
        })
    }

    /// One case: its results, each kept from before or new, run in the steps its schedule gives;
    /// each result written to the file as it is done.
    fn case(&self, case: &Case, s: &mut Sitting) -> Result<()> {
        let opts = self.opts;
        // The results of this case, in the libraries' order (a step's `library` indexes both):
        // each one kept, or new.
        let mut row: Vec<(CaseResult, bool)> = opts
            .libraries
            .iter()
            .map(|lib| match s.kept.iter().find(|r| r.case == case.name && r.library == lib.id) {
                Some(r) => (r.clone(), false),
                None => (self.begin(case, lib), true),
            })
            .collect();
        let measured: Vec<bool> = row.iter().map(|(r, new)| *new && r.status == Status::Ok).collect();
        for step in schedule::case(opts.config.order, opts.config.runs, &measured) {
            match step {
                Step::Run { library, run } => {
                    let result = &mut row[library].0;
                    if s.stop || result.status != Status::Ok {
                        continue;
                    }
                    self.one_run(&self.launch, case, &opts.libraries[library], result, run, &mut s.trials);
                    s.stop = result.status == Status::Interrupted;
                }
                Step::Extra => {
                    s.stop = s.stop || self.extra_rounds(case, s.doc, &mut row, &measured, &mut s.trials);
                }
                Step::Finish { library } => self.finish(case, library, &mut row[library], s)?,
            }
        }
        Ok(())
    }

    /// A result's last step: `--runs auto`'s further runs, then into the file.
    fn finish(
        &self,
        case: &Case,
        library: usize,
        (result, new): &mut (CaseResult, bool),
        s: &mut Sitting,
    ) -> Result<()> {
        let opts = self.opts;
        if *new
            && !s.stop
            && let Some(auto) = opts.config.runs_auto
        {
            self.more_runs(case, &opts.libraries[library], result, auto, &mut s.trials);
            s.stop = result.status == Status::Interrupted;
        }
        if *new {
            if s.stop {
                ledger::cut_short(result, opts.config.runs);
            }
            if !result.modes.is_empty() {
                self.others(result);
            }
        }
        s.doc.results.push(result.clone());
        // Every result in its case's state, as the states stand with this one's runs.
        resettle(s.doc, s.kept);
        if *new {
            let result = s.doc.results.last().expect("just pushed");
            s.failed += (result.status == Status::Failed) as usize;
            self.result_done(s.doc.results.len(), result);
        }
        // As each result comes: a run killed now loses only the case under way.
        write(s.doc, s.path)
    }

    /// A new result of a case for a library, before its runs: measured, or a dash or a skip.
    pub(crate) fn begin(&self, case: &Case, lib: &LibraryInfo) -> CaseResult {
        let c = &self.opts.config;
        let mut r = ledger::begin(case, lib, self.cores, c.skip_oversubscribed, c.buffer);
        if r.status == Status::Ok {
            r.placement = c.pin.map(|pin| ledger::placement(case, pin, &self.cpus));
        }
        r
    }

    /// A new result is done: its line, as the `n`th result of the file.
    pub(crate) fn result_done(&self, n: usize, result: &CaseResult) {
        let line = terminal::progress_line(result);
        self.progress.borrow_mut().result(n, &line);
    }

    /// After the last trial: the floors again, the status, what watching the host cost, and the
    /// file's last write. Whether the run was interrupted.
    pub(crate) fn close(&self, doc: &mut Document, path: &Path) -> Result<bool> {
        let interrupted = INTERRUPTED.load(Ordering::SeqCst);
        if !interrupted && let Some(c) = doc.conditions.as_mut() {
            c.floors_after = Some(self.exec.floors(self.cores, &matrix::sizes_of(&self.opts.cases)));
        }
        doc.status = if interrupted { RunStatus::Interrupted } else { RunStatus::Complete };
        doc.finished = Some(now());
        // A run whose trials carried no probe (one core, or no case measured) cost nothing to watch.
        let cost = self.cost();
        if cost.probes_s > 0.0 {
            let total = doc.host_cost.map_or(cost, |before| before.plus(cost));
            console::say(&format!("ipcbench: watching the host took {}", total.text()));
            doc.host_cost = Some(total);
        }
        write(doc, path)?;
        Ok(interrupted)
    }

    /// The other runs alive now: each new one is warned about once; all go in the result.
    fn others(&self, result: &mut CaseResult) {
        let live = dir::live_others();
        let mut warned = self.warned.borrow_mut();
        for &pid in &live {
            if !warned.contains(&pid) {
                warned.push(pid);
                console::say(&format!(
                    "ipcbench: warning: another ipcbench run (pid {pid}) is running on this machine; its \
                     processes compete for the {} cores and disturb these figures (each case it overlaps \
                     records it in concurrent_runs)",
                    self.cores
                ));
            }
            if !result.concurrent_runs.contains(&pid) {
                result.concurrent_runs.push(pid);
            }
        }
    }

    /// A trial between two probes of the host; taken again (at most `RETAKES` times) while its
    /// probe moved between before and after, then kept and marked.
    fn probed(&self, mut trial: Trial, trials: &mut usize) -> Result<RunRecord, TrialError> {
        let cpus =
            self.opts.config.pin.and_then(|pin| Some((pin.cpu(&self.cpus, 0)?, pin.cpu(&self.cpus, 1)?)));
        let mut retakes = 0;
        loop {
            let at_s = self.clock.1 + self.since_began();
            let ticks = Ticks::now();
            let before = self.probe(cpus);
            let began = self.exec.now();
            let mut record = self.exec.trial(&trial)?;
            let took = self.exec.now() - began;
            let mut after = self.probe(cpus);
            let steal_share = ticks.zip(Ticks::now()).and_then(|(a, b)| a.steal_share(b));
            let Some((before, first)) = before.zip(after) else { return Ok(record) };
            // A second look a moment later: the host flits between placements for a few
            // milliseconds now and then, which says nothing of the window before.
            let mut refuted = None;
            if host::states::moved_between(&before, &first)
                && let Some(again) = self.probe(cpus)
                && !host::states::moved_between(&before, &again)
            {
                (refuted, after) = (Some(first), Some(again));
            }
            let after = after.unwrap_or(first);
            let mut host = HostRecord { before, after, steal_share, at_s, retakes, moved: false, refuted };
            host.moved = host::states::moved(&host);
            // Retakes stay within their share of the run's time so far: a host that flits all
            // the time costs the run a bounded share, and the runs it could not retake are
            // marked instead.
            let spent = self.cost.get().retakes_s + took.as_secs_f64();
            let within = spent <= RETAKE_SHARE * self.since_began();
            if self.retakes
                && host.moved
                && retakes < host::states::RETAKES
                && within
                && !INTERRUPTED.load(Ordering::SeqCst)
            {
                self.add_cost(HostCost { retakes: 1, retakes_s: took.as_secs_f64(), ..HostCost::default() });
                retakes += 1;
                *trials += 1;
                trial.number = *trials;
                if self.opts.watch.verbose {
                    console::say(&format!(
                        "    the host's probe moved ({} before, {} after): taken again",
                        host.before.text(),
                        host.after.text()
                    ));
                }
                continue;
            }
            record.host = Some(host);
            return Ok(record);
        }
    }

    /// A probe of the host, its time counted in the run's cost.
    fn probe(&self, cpus: Option<(usize, usize)>) -> Option<Probe> {
        let began = std::time::Instant::now();
        let p = self.exec.probe(self.cores, cpus);
        self.add_cost(HostCost { probes_s: began.elapsed().as_secs_f64(), ..HostCost::default() });
        p
    }

    /// Seconds since the driver began, on the executor's clock.
    fn since_began(&self) -> f64 {
        (self.exec.now() - self.clock.0).as_secs_f64()
    }

    /// Adds `part` to the run's cost.
    fn add_cost(&self, part: HostCost) {
        self.cost.set(self.cost.get().plus(part));
    }

    /// What watching the host cost this part of the run, its whole time since the driver began.
    fn cost(&self) -> HostCost {
        HostCost { wall_s: self.since_began(), ..self.cost.get() }
    }

    /// `--runs auto`: more runs of a measured result until every mode's figure resolves
    /// `auto.resolve` (`analysis::resolution` of the runs it is taken from) or the cap is
    /// reached; records the runs it took. The rule reads the interval's width only, never
    /// whether a difference has shown.
    fn more_runs(
        &self,
        case: &Case,
        lib: &LibraryInfo,
        result: &mut CaseResult,
        auto: AutoRuns,
        trials: &mut usize,
    ) {
        if result.status != Status::Ok {
            return;
        }
        let resolved = |r: &CaseResult| {
            r.modes.iter().all(|m| {
                analysis::resolution(r.pattern, analysis::figure_runs(r.pattern, &m.runs))
                    .is_some_and(|x| x <= auto.resolve)
            })
        };
        let mut runs = self.opts.config.runs;
        while result.status == Status::Ok && runs < auto.max_runs && !resolved(result) {
            runs += 1;
            self.progress.borrow_mut().trials_added(lib.modes.len());
            self.one_run(&self.launch, case, lib, result, runs, trials);
        }
        if result.status == Status::Ok {
            result.runs_taken = Some(runs);
        }
    }

    /// After a case's rounds: extra rounds, each of the results that still need runs in the
    /// case's host state (`analysis::states::needs_more`), at most `EXTRA_ROUNDS` times the
    /// runs. Returns whether the run was interrupted.
    fn extra_rounds(
        &self,
        case: &Case,
        doc: &mut Document,
        row: &mut [(CaseResult, bool)],
        measured: &[bool],
        trials: &mut usize,
    ) -> bool {
        let runs = self.opts.config.runs;
        // `--runs auto` has a rule of its own for more runs.
        if self.opts.config.runs_auto.is_some() {
            return false;
        }
        for k in 1..=states::EXTRA_ROUNDS * runs {
            doc.states = host::states::assign(doc.results.iter_mut().chain(row.iter_mut().map(|(r, _)| r)));
            let state = states::case_state(row.iter().map(|(r, _)| r));
            let needy: Vec<usize> = (0..row.len())
                .filter(|&i| measured[i] && states::needs_more(&row[i].0, state.as_deref(), runs))
                .collect();
            if needy.is_empty() {
                break;
            }
            for i in needy {
                let lib = &self.opts.libraries[i];
                self.progress.borrow_mut().trials_added(lib.modes.len());
                let (began, had) = (std::time::Instant::now(), row[i].0.run_count());
                self.one_run(&self.launch, case, lib, &mut row[i].0, runs + k, trials);
                let extra_runs = (row[i].0.run_count() - had) as u32;
                self.add_cost(HostCost {
                    extra_runs,
                    extra_s: began.elapsed().as_secs_f64(),
                    ..HostCost::default()
                });
                if row[i].0.status == Status::Interrupted {
                    return true;
                }
            }
        }
        false
    }

    /// Run `run_no` of every receive mode of the library, in turn; a failure or an
    /// interruption ends the case.
    fn one_run(
        &self,
        launch: &Launch,
        case: &Case,
        lib: &LibraryInfo,
        result: &mut CaseResult,
        run_no: u32,
        trials: &mut usize,
    ) {
        let opts = self.opts;
        // Checked as each run starts: a library set up early in a case but run late (the
        // sequential order) records the runs that overlapped its own trials, not the case's.
        self.others(result);
        for (m, &mode) in lib.modes.iter().enumerate() {
            *trials += 1;
            let of = match (launch.side, opts.config.runs_auto) {
                (Some(side), _) => format!("{run_no} ({})", side.as_str()),
                (None, Some(auto)) => format!("{run_no} (auto, at most {})", auto.max_runs),
                (None, None) if run_no > opts.config.runs => {
                    format!("{run_no} (an extra round: its host state)")
                }
                (None, None) => format!("{run_no}/{}", opts.config.runs),
            };
            let what = format!("{} {} {mode} run {of}", case.name, lib.id);
            if opts.watch.verbose {
                console::say(&format!("  {what}"));
            }
            self.progress.borrow_mut().trial_starts(&what);
            let fault = opts.fault.as_ref().filter(|f| f.applies(case, m == 0, run_no));
            let trial = Trial {
                ctx: self,
                launch,
                case,
                library: lib.id,
                requests: lib.requests,
                mode,
                number: *trials,
                fault,
            };
            let outcome = self.probed(trial, trials);
            self.progress.borrow_mut().trial_ends();
            match outcome {
                Ok(mut record) => {
                    // Rounds pair rivals' runs; runs in sequence, minutes apart, pair nothing.
                    record.round = (opts.config.order != Order::Sequential).then_some(run_no);
                    // By its mode: an A/B run's extra rounds run only a library's open modes.
                    let into =
                        result.modes.iter_mut().find(|x| x.mode == mode).expect("every mode has a place");
                    into.runs.push(record);
                }
                Err(TrialError::Interrupted) => ledger::interrupted(result),
                Err(TrialError::Failed(kind, reason)) => {
                    result.status = Status::Failed;
                    result.failure = Some(kind);
                    result.reason = Some(format!("{mode} receive, run {run_no}: {reason}"));
                }
            }
            if result.status != Status::Ok {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
