//! The driver with a scripted executor: no process started, no host probed, no window waited
//! for. What a run does with its trials' records (rounds, extra rounds in a host state,
//! failures, a resume, the results file) is held here in milliseconds; the real processes are
//! the CLI tests'.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Parser;
use ipcbench_api::RecvMode;

use super::*;
use crate::floors::Floors;
use crate::machine::Conditions;
use crate::options::Measure;
use crate::results::{Failure, Figures};

/// A run's directory is named after the process: one driver at a time in this test binary.
static ONE_RUN: Mutex<()> = Mutex::new(());

#[derive(Parser)]
struct Line {
    #[command(flatten)]
    measure: Measure,
}

/// The options of `ipcbench run CASES --out OUT ARGS...`.
fn options(cases: &[&str], out: &Path, args: &[&str]) -> Options {
    let line = ["run", "--out", out.to_str().unwrap()].into_iter().chain(args.iter().copied());
    let measure = Line::try_parse_from(line).unwrap().measure;
    let wanted: Vec<String> = cases.iter().map(|c| c.to_string()).collect();
    measure.options(matrix::select(&matrix::matrix(), &wanted)).unwrap()
}

/// A trial as the script saw it: library, mode, and the run it was (its `number`).
type Seen = (&'static str, RecvMode, usize);

/// A trial's rate, or why it failed.
type Rate = Box<dyn Fn(&Trial) -> Result<f64, String>>;

/// What the executor does: each trial's rate or failure, and the host's polling floor at probe
/// `k` (from 0; two a trial, before and after, and a third when those two differ), scripted.
struct Script {
    rate: Rate,
    polling_ns: Box<dyn Fn(usize) -> f64>,
    probes: Cell<usize>,
    seen: RefCell<Vec<Seen>>,
    /// The clock's first reading, the driver's start.
    began: Instant,
    clock_read: Cell<bool>,
}

impl Script {
    fn new(rate: impl Fn(&Trial) -> Result<f64, String> + 'static) -> Script {
        Script {
            rate: Box::new(rate),
            polling_ns: Box::new(|_| 100.0),
            probes: Cell::new(0),
            seen: RefCell::default(),
            began: Instant::now(),
            clock_read: Cell::new(false),
        }
    }
}

impl Executor for Script {
    fn conditions(&self, others: Vec<u32>, _: &[usize]) -> Conditions {
        Conditions { other_runs: others, floors: Some(Floors::default()), ..Conditions::default() }
    }

    fn floors(&self, _: usize, _: &[usize]) -> Floors {
        Floors::default()
    }

    fn probe(&self, _: usize, _: Option<(usize, usize)>) -> Option<Probe> {
        let k = self.probes.get();
        self.probes.set(k + 1);
        let polling_ns = Some((self.polling_ns)(k));
        Some(Probe { polling_ns, waiting_ns: Some(20_000.0), syscall_ns: 100.0 })
    }

    fn trial(&self, t: &Trial) -> Result<RunRecord, TrialError> {
        self.seen.borrow_mut().push((t.library, t.mode, t.number));
        let msgs_per_s = (self.rate)(t)
            .map_err(|e| TrialError::Failed(Failure::Killed { role: "receiver 0".into(), signal: 9 }, e))?;
        let figures = Figures { msgs_per_s, ..Figures::default() };
        Ok(RunRecord::of(figures))
    }

    /// After its first reading (the driver's start), a clock a thousand seconds on that moves a
    /// millisecond a trial: each trial takes a millisecond, within any budget of the run's time.
    fn now(&self) -> Instant {
        if !self.clock_read.replace(true) {
            return self.began;
        }
        self.began + Duration::from_secs(1000) + Duration::from_millis(self.seen.borrow().len() as u64)
    }
}

/// A results folder of its own, removed with what it holds when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new() -> Folder {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("ipcbench-driver-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        Folder(path)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A run of `cases` over `args` in a fresh folder, with `script`: its outcome and its file,
/// read back.
fn run(cases: &[&str], args: &[&str], script: &Script) -> (Outcome, Document, PathBuf, Folder) {
    let _one = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let out = Folder::new();
    let opts = options(cases, &out.0, args);
    let (outcome, path) = run_with(&opts, None, script).unwrap();
    let doc = results::load(&path).unwrap();
    (outcome, doc, path, out)
}

fn result<'d>(doc: &'d Document, case: &str, library: &str) -> &'d CaseResult {
    doc.results.iter().find(|r| r.case == case && r.library == library).unwrap()
}

/// Interleaved rounds: each round runs every library's every mode once, the rounds numbered in
/// the records; each result's figure is the median of its runs, and the file is complete.
#[test]
fn rounds_run_every_library_and_the_file_holds_each_median() {
    let script = Script::new(|t| Ok(if t.library == "uds" { 1_000.0 + t.number as f64 } else { 5_000.0 }));
    let (outcome, doc, _, _dir) = run(&["stream/16B"], &["--lib", "uds,shm-ring", "--runs", "3"], &script);
    assert!(matches!(outcome, Outcome::Complete { failed: 0 }));
    assert_eq!(doc.status, RunStatus::Complete);
    let seen = script.seen.borrow();
    assert_eq!(seen.len(), 12, "3 runs of 2 modes of 2 libraries: {seen:?}");
    // Trials are numbered in the order they ran.
    assert!(seen.iter().enumerate().all(|(i, s)| s.2 == i + 1), "{seen:?}");
    // Each round holds one trial of every library's every mode.
    for round in seen.chunks(4) {
        let mut libs: Vec<(&str, RecvMode)> = round.iter().map(|s| (s.0, s.1)).collect();
        libs.sort_by_key(|(l, m)| (*l, m.as_str()));
        libs.dedup();
        assert_eq!(libs.len(), 4, "{round:?}");
    }
    let uds = result(&doc, "stream/16B", "uds");
    for m in &uds.modes {
        let rounds: Vec<Option<u32>> = m.runs.iter().map(|r| r.round).collect();
        assert_eq!(rounds, [Some(1), Some(2), Some(3)]);
        let mut rates: Vec<f64> = m.runs.iter().map(|r| r.figures.msgs_per_s).collect();
        rates.sort_by(f64::total_cmp);
        assert_eq!(m.median.unwrap().msgs_per_s, rates[1], "the middle run");
    }
    assert_eq!(result(&doc, "stream/16B", "shm-ring").median.unwrap().msgs_per_s, 5_000.0);
}

/// A failed trial fails its result (its mode and run named in the reason) and no other; the
/// run goes on and counts it.
#[test]
fn a_failed_trial_fails_its_result_alone() {
    let script = Script::new(|t| {
        if t.library == "uds" && t.mode == RecvMode::Polling && t.number > 4 {
            Err("the receiver died".into())
        } else {
            Ok(1_000.0)
        }
    });
    let (outcome, doc, _, _dir) = run(&["stream/16B"], &["--lib", "uds,shm-ring", "--runs", "3"], &script);
    assert!(matches!(outcome, Outcome::Complete { failed: 1 }));
    let uds = result(&doc, "stream/16B", "uds");
    assert_eq!(uds.status, Status::Failed);
    assert_eq!(uds.failure, Some(Failure::Killed { role: "receiver 0".into(), signal: 9 }));
    assert_eq!(uds.reason.as_deref(), Some("polling receive, run 2: the receiver died"));
    assert_eq!(uds.median, None, "a failed result has no figure");
    let ring = result(&doc, "stream/16B", "shm-ring");
    assert_eq!(ring.status, Status::Ok);
    assert!(ring.modes.iter().all(|m| m.runs.len() == 3));
    // Once failed, a result takes no more trials: both modes of round 1, and round 2's two.
    assert_eq!(script.seen.borrow().iter().filter(|s| s.0 == "uds").count(), 4);
}

/// A result with too few runs in its case's host state takes an extra round there: the host
/// in state A for one of the waiting mode's three runs and two of the polling mode's (A and B
/// tie, so the case's state is A, the first), then A again.
#[test]
fn too_few_runs_in_the_cases_state_take_an_extra_round() {
    let mut script = Script::new(|_| Ok(1_000.0));
    // Trials in order: waiting, polling of rounds 1, 2, 3, then the extra round's.
    const STATES: [f64; 6] = [100.0, 100.0, 400.0, 100.0, 400.0, 400.0];
    // Two probes a trial, alike: the host stays where the script puts it.
    script.polling_ns = Box::new(|k| STATES.get(k / 2).copied().unwrap_or(100.0));
    let (_, doc, _, _dir) = run(&["stream/16B"], &["--lib", "shm-ring", "--runs", "3"], &script);
    let ring = result(&doc, "stream/16B", "shm-ring");
    assert_eq!(script.seen.borrow().len(), 8, "one extra round of both modes");
    for m in &ring.modes {
        let rounds: Vec<Option<u32>> = m.runs.iter().map(|r| r.round).collect();
        assert_eq!(rounds, [Some(1), Some(2), Some(3), Some(4)], "{}", m.mode);
        let in_a = m.runs.iter().filter(|r| r.state.as_deref() == Some("A")).count();
        assert!(in_a >= 2, "{}: {in_a} runs in A", m.mode);
    }
    assert_eq!(ring.host_state.as_ref().map(|s| s.state.as_str()), Some("A"));
    assert_eq!(doc.host_cost.map(|c| c.extra_runs), Some(2));
}

/// A resumed file keeps its done results as they were and measures the rest; the file ends
/// complete, with its resume noted.
#[test]
fn a_resume_keeps_what_was_done_and_runs_the_rest() {
    let script = Script::new(|_| Ok(2_000.0));
    let (_, mut doc, path, _dir) =
        run(&["stream/16B", "stream/1KiB"], &["--lib", "shm-ring", "--runs", "3"], &script);
    // As a run interrupted in its second case leaves its file.
    let done = result(&doc, "stream/16B", "shm-ring").clone();
    doc.results.iter_mut().filter(|r| r.case == "stream/1KiB").for_each(|r| r.status = Status::Interrupted);
    doc.status = RunStatus::Interrupted;
    super::write(&doc, &path).unwrap();
    let _one = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let measure = Line::try_parse_from(["run"]).unwrap().measure;
    let (opts, resume) = measure.resume(path.clone()).unwrap();
    let again = Script::new(|_| Ok(3_000.0));
    let (outcome, resumed) = run_with(&opts, Some(resume), &again).unwrap();
    assert!(matches!(outcome, Outcome::Complete { failed: 0 }));
    assert_eq!(resumed, path, "the same file");
    let doc = results::load(&path).unwrap();
    assert_eq!(doc.status, RunStatus::Complete);
    assert_eq!(doc.resumed.len(), 1);
    assert_eq!(again.seen.borrow().len(), 6, "only the interrupted case ran again");
    let kept = result(&doc, "stream/16B", "shm-ring");
    assert_eq!(serde_json::to_value(kept).unwrap(), serde_json::to_value(&done).unwrap());
    assert_eq!(result(&doc, "stream/1KiB", "shm-ring").median.unwrap().msgs_per_s, 3_000.0);
}

/// A trial whose host probe moved under it (before and after apart, and a second look still
/// apart) is taken again; the run kept says how many times, and the retake is counted in the
/// run's cost.
#[test]
fn a_trial_whose_host_moved_is_taken_again() {
    let mut script = Script::new(|_| Ok(1_000.0));
    // The first trial's probes: before, after (moved), a second look (still moved); then its
    // retake's, alike.
    script.polling_ns = Box::new(|k| if matches!(k, 1 | 2) { 400.0 } else { 100.0 });
    let (_, doc, _, _dir) = run(&["stream/16B"], &["--lib", "shm-ring", "--runs", "3"], &script);
    assert_eq!(script.seen.borrow().len(), 7, "six trials and one retake");
    let ring = result(&doc, "stream/16B", "shm-ring");
    let first = &ring.modes[0].runs[0];
    let host = first.host.as_ref().unwrap();
    assert_eq!((host.retakes, host.moved), (1, false), "kept from its retake, which held still");
    assert_eq!(first.state.as_deref(), Some("A"));
    assert_eq!(doc.host_cost.map(|c| c.retakes), Some(1));
    assert!(ring.modes.iter().all(|m| m.runs.len() == 3));
}

/// A host that moves under every attempt is retaken `RETAKES` times, then kept and marked as
/// moved, in no state.
#[test]
fn a_host_that_never_holds_still_is_kept_marked_after_its_retakes() {
    let mut script = Script::new(|_| Ok(1_000.0));
    // Every attempt: before 100 ns, after and a second look 400 ns.
    script.polling_ns = Box::new(|k| if k % 3 == 0 { 100.0 } else { 400.0 });
    let (_, doc, _, _dir) = run(&["stream/16B"], &["--lib", "shm-ring", "--runs", "1"], &script);
    let retakes = crate::host::states::RETAKES as usize;
    assert_eq!(script.seen.borrow().len(), 2 * (1 + retakes), "each mode's trial and its retakes");
    for m in &result(&doc, "stream/16B", "shm-ring").modes {
        let run = &m.runs[0];
        let host = run.host.as_ref().unwrap();
        assert_eq!((host.retakes as usize, host.moved), (retakes, true), "{}", m.mode);
        assert_eq!(run.state, None, "{}: a moved run is in no state", m.mode);
    }
}
