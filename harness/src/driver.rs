//! The driver: runs each (case, library, receive mode, run) as a trial of fresh processes, one
//! per role, from this same binary; enforces deadlines; turns the children's reports into
//! figures; and writes the results file as each case finishes. It never sends or receives
//! through a library: only the children do.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ipcbench_api::{LibraryInfo, RecvMode, Requests, Shape};

use crate::cases::{Case, Role};
use crate::child::ChildArgs;
use crate::fault::{self, Fault};
use crate::figures::{self, Figures, RoleReport};
use crate::results::{self, CaseResult, Document, LibraryRecord, ModeResult, RunRecord, Settings, Spread};
use crate::{message, registry, runs, table};

/// Set by Ctrl-C (SIGINT) or SIGTERM: the driver stops the trial, keeps what is done, and exits.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit code of a run that was interrupted, by SIGINT or SIGTERM (128 + SIGINT, as shells
/// report a Ctrl-C).
pub const EXIT_INTERRUPTED: i32 = 130;

/// How much of a failed child's standard error goes into the reason.
const STDERR_TAIL: usize = 1500;

pub struct Options {
    pub cases: Vec<Case>,
    pub libraries: Vec<LibraryInfo>,
    pub runs: u32,
    pub duration: Duration,
    pub warmup: Duration,
    pub setup_timeout: Duration,
    pub out: PathBuf,
    pub skip_oversubscribed: bool,
    pub verbose: bool,
    /// How long after the measured window a trial may take to drain and report.
    pub grace: Duration,
    /// A signal to send one role on purpose (the fault suite; docs/FAULTS.md).
    pub fault: Option<Fault>,
    pub order: Order,
}

/// What a run ended as.
pub enum Outcome {
    Complete { failed: usize },
    Interrupted,
}

/// How the trials of a case are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Each library's runs one after another (its receive modes alternating).
    Sequential,
    /// Rounds: run 1 of every library, then run 2 of every library, ... (A B A B): a drift of
    /// the machine (heat, another process) reaches every library alike.
    Interleaved,
}

impl Order {
    pub fn parse(text: &str) -> Option<Order> {
        match text {
            "sequential" => Some(Order::Sequential),
            "interleaved" => Some(Order::Interleaved),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Sequential => "sequential",
            Order::Interleaved => "interleaved",
        }
    }
}

/// The reason of a case the run's interruption cut short.
const INTERRUPTED_REASON: &str = "the run was interrupted (Ctrl-C or SIGTERM)";

/// A run's spread across its runs above this share of the median is flagged as noisy.
pub const NOISY: f64 = 0.10;

/// A results file to finish (`run --resume`): where it is and what it holds.
pub struct Resume {
    pub path: PathBuf,
    pub doc: Document,
}

pub fn run(opts: &Options, resume: Option<Resume>) -> Result<(Outcome, PathBuf)> {
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("creating the results folder {}", opts.out.display()))?;
    let now = || humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let stale = runs::remove_stale();
    if !stale.is_empty() {
        eprintln!(
            "ipcbench: removed what {} run(s) killed before they could clean up left (pid {})",
            stale.len(),
            stale.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        );
    }
    let conditions = crate::doctor::Conditions::now();
    let dir = runs::RunDir::create()?;
    let machine = results::Machine::this();
    let cores = machine.cores;
    let (path, mut doc, kept) = match resume {
        Some(Resume { path, mut doc }) => {
            // The cases done stay; an interrupted one runs again, whole.
            let kept: Vec<CaseResult> = doc.results.drain(..).filter(|r| r.status != "interrupted").collect();
            doc.status = "running".into();
            doc.finished = None;
            doc.resumed.push(now());
            (path, doc, kept)
        }
        None => {
            let started = now();
            // One file per run: a second run started in the same second gets a suffix.
            let stem = format!("run-{}", started.replace(':', "-"));
            let path = (1..)
                .map(|n| {
                    opts.out.join(if n == 1 { format!("{stem}.json") } else { format!("{stem}-{n}.json") })
                })
                .find(|p| !p.exists())
                .expect("some suffix is free");
            let doc = Document {
                schema_version: results::SCHEMA_VERSION,
                tool: format!("ipcbench {}", env!("CARGO_PKG_VERSION")),
                started,
                finished: None,
                status: "running".into(),
                resumed: Vec::new(),
                settings: Settings {
                    runs: opts.runs,
                    duration_s: opts.duration.as_secs_f64(),
                    warmup_s: opts.warmup.as_secs_f64(),
                    setup_timeout_s: opts.setup_timeout.as_secs_f64(),
                    skip_oversubscribed: opts.skip_oversubscribed,
                    order: opts.order.as_str().into(),
                    cases: opts.cases.iter().map(|c| c.name.clone()).collect(),
                    libraries: opts.libraries.iter().map(|l| l.id.to_string()).collect(),
                },
                machine,
                conditions: None,
                toolchain: [("rustc".to_string(), env!("IPCBENCH_RUSTC").to_string())].into(),
                libraries: opts.libraries.iter().map(LibraryRecord::new).collect(),
                results: Vec::new(),
            };
            (path, doc, Vec::new())
        }
    };
    if conditions.busy_cores > crate::doctor::BUSY {
        eprintln!(
            "ipcbench: warning: the machine is busy: other processes kept {:.1} of its {cores} cores busy just \
             now; the figures will be lower and noisier (`ipcbench doctor` says more)",
            conditions.busy_cores
        );
    }
    // A resumed file keeps the conditions of its start.
    doc.conditions.get_or_insert(conditions);
    results::write_atomically(&doc, &path)?;
    let total = opts.cases.len() * opts.libraries.len();
    eprintln!(
        "ipcbench: {} cases x {} libraries, {} runs of {:?} after {:?} of warm-up ({} order), on {} cores; results in {}",
        opts.cases.len(),
        opts.libraries.len(),
        opts.runs,
        opts.duration,
        opts.warmup,
        opts.order.as_str(),
        cores,
        path.display()
    );
    if !kept.is_empty() {
        eprintln!("ipcbench: resuming: {} of {total} done before, kept; running the rest", kept.len());
    }

    let ctx = RunContext { opts, dir: &dir.path, tag: &dir.tag, cores, warned: Default::default() };
    let mut trials = 0usize;
    let mut failed = 0;
    let mut stop = false;
    for case in &opts.cases {
        let done =
            |lib: &LibraryInfo| kept.iter().find(|r| r.case == case.name && r.library == lib.id).cloned();
        // The results of this case, in the libraries' order: each one kept or to run.
        let mut row: Vec<(CaseResult, bool)> = Vec::new();
        for lib in &opts.libraries {
            match done(lib) {
                Some(r) => row.push((r, false)),
                None if stop => {}
                None => row.push((ctx.begin(case, lib), true)),
            }
        }
        let to_run: Vec<usize> = (0..row.len()).filter(|&i| row[i].1 && row[i].0.status == "ok").collect();
        let lib_of =
            |r: &CaseResult| opts.libraries.iter().find(|l| l.id == r.library).expect("a library of the run");
        if opts.order == Order::Interleaved {
            'rounds: for run_no in 1..=opts.runs {
                for &i in &to_run {
                    if row[i].0.status == "ok" {
                        ctx.one_run(case, lib_of(&row[i].0), &mut row[i].0, run_no, &mut trials);
                    }
                    if row[i].0.status == "interrupted" {
                        stop = true;
                        break 'rounds;
                    }
                }
            }
        }
        for (mut result, new) in row {
            if new && opts.order == Order::Sequential && !stop && result.status == "ok" {
                for run_no in 1..=opts.runs {
                    ctx.one_run(case, lib_of(&result), &mut result, run_no, &mut trials);
                    if result.status != "ok" {
                        break;
                    }
                }
                stop = result.status == "interrupted";
            }
            if new {
                if stop
                    && result.status == "ok"
                    && result.modes.iter().any(|m| m.runs.len() < opts.runs as usize)
                {
                    result.status = "interrupted".into();
                    result.reason = Some(INTERRUPTED_REASON.into());
                }
                ctx.finish(case, &mut result);
                failed += (result.status == "failed") as usize;
                eprintln!("[{}/{total}] {}", doc.results.len() + 1, table::progress_line(&result));
            }
            doc.results.push(result);
            // As each result comes: a run killed now loses only the case under way.
            results::write_atomically(&doc, &path)?;
        }
        if stop {
            break;
        }
    }
    // A resumed run interrupted again keeps what it had not reached yet.
    for r in kept {
        if !doc.results.iter().any(|x| x.case == r.case && x.library == r.library) {
            doc.results.push(r);
        }
    }
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    doc.status = if interrupted { "interrupted" } else { "complete" }.into();
    doc.finished = Some(now());
    results::write_atomically(&doc, &path)?;
    println!("{}", table::medians(&doc));
    Ok((if interrupted { Outcome::Interrupted } else { Outcome::Complete { failed } }, path))
}

/// What every case of a run shares.
struct RunContext<'a> {
    opts: &'a Options,
    dir: &'a Path,
    tag: &'a str,
    cores: usize,
    /// The other runs already warned about.
    warned: std::cell::RefCell<Vec<u32>>,
}

impl RunContext<'_> {
    /// The other runs alive now: each new one is warned about once; all go in the result.
    fn others(&self, result: &mut CaseResult) {
        let live = runs::live_others();
        let mut warned = self.warned.borrow_mut();
        for &pid in &live {
            if !warned.contains(&pid) {
                warned.push(pid);
                eprintln!(
                    "ipcbench: warning: another ipcbench run (pid {pid}) is running on this machine; its \
                     processes compete for the {} cores and disturb these figures (each case it overlaps \
                     records it in concurrent_runs)",
                    self.cores
                );
            }
            if !result.concurrent_runs.contains(&pid) {
                result.concurrent_runs.push(pid);
            }
        }
    }

    /// One case for one library, before any trial: a dash, a skip, or "ok" with a place for
    /// each receive mode's runs.
    fn begin(&self, case: &Case, lib: &LibraryInfo) -> CaseResult {
        let (opts, cores) = (self.opts, self.cores);
        let processes = case.roles().len();
        let mut result = CaseResult {
            case: case.name.clone(),
            pattern: case.pattern().into(),
            size: case.size,
            batch: (case.batch > 1).then_some(case.batch),
            library: lib.id.into(),
            processes,
            oversubscribed: processes > cores,
            status: "ok".into(),
            reason: None,
            best_mode: None,
            median: None,
            spread: None,
            note: None,
            concurrent_runs: Vec::new(),
            modes: Vec::new(),
        };
        let support = case.support(&lib.capabilities);
        if !support.is_yes() {
            result.status = "unsupported".into();
            result.reason = Some(support.text().into());
            return result;
        }
        if let Some((largest, why)) = &lib.largest_message
            && case.size > *largest
        {
            result.status = "unsupported".into();
            result.reason =
                Some(format!("messages of {} bytes, where at most {largest} fit: {why}", case.size));
            return result;
        }
        if let (Shape::Service { servers, .. }, Requests::ToEveryServer) = (case.shape, lib.requests)
            && servers > 1
        {
            result.note = Some(format!(
                "every request went to all {servers} servers and each answered it: {}'s servers do not \
                 share a load; each client took the first reply",
                lib.name
            ));
        }
        if result.oversubscribed && opts.skip_oversubscribed {
            result.status = "skipped".into();
            result.reason = Some(format!("oversubscribed: {processes} processes on {cores} cores"));
            return result;
        }
        result.modes = lib
            .modes
            .iter()
            .map(|m| ModeResult { mode: m.as_str().into(), runs: Vec::new(), median: None })
            .collect();
        result
    }

    /// Run `run_no` of every receive mode of the library, in turn; a failure or an
    /// interruption ends the case.
    fn one_run(
        &self,
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
            if opts.verbose {
                eprintln!("  {} {} {mode} run {run_no}/{}", case.name, lib.id, opts.runs);
            }
            let fault = opts.fault.as_ref().filter(|f| f.applies(case, m == 0, run_no));
            let trial = Trial {
                ctx: self,
                case,
                library: lib.id,
                requests: lib.requests,
                mode,
                number: *trials,
                fault,
            };
            match trial.run() {
                Ok(record) => result.modes[m].runs.push(record),
                Err(TrialError::Interrupted) => {
                    result.status = "interrupted".into();
                    result.reason = Some(INTERRUPTED_REASON.into());
                }
                Err(TrialError::Failed(reason)) => {
                    result.status = "failed".into();
                    result.reason = Some(format!("{mode} receive, run {run_no}: {reason}"));
                }
            }
            if result.status != "ok" {
                return;
            }
        }
    }

    /// Each mode's medians, the library's figure (the better mode's) and its spread.
    fn finish(&self, case: &Case, result: &mut CaseResult) {
        if result.modes.is_empty() {
            return;
        }
        for m in &mut result.modes {
            let figures: Vec<Figures> = m.runs.iter().map(|r| r.figures).collect();
            m.median = figures::median(&figures);
        }
        self.others(result);
        if result.status != "ok" {
            return;
        }
        let best = result
            .modes
            .iter()
            .filter_map(|m| m.median.map(|f| (m, f)))
            .max_by(|a, b| faster(case, &a.1, &b.1));
        if let Some((mode, f)) = best {
            result.spread = Spread::of(case.shape == Shape::RoundTrip, &mode.runs, &f);
            result.best_mode = Some(mode.mode.clone());
            result.median = Some(f);
        }
    }
}

/// Which of two medians is the better figure: for a round trip, whose figure is its latency,
/// the lower p50; else the higher rate.
fn faster(case: &Case, a: &Figures, b: &Figures) -> std::cmp::Ordering {
    match (case.shape, a.p50_ns, b.p50_ns) {
        (Shape::RoundTrip, Some(x), Some(y)) => y.total_cmp(&x),
        _ => a.msgs_per_s.total_cmp(&b.msgs_per_s),
    }
}

enum TrialError {
    Interrupted,
    Failed(String),
}

struct Trial<'a> {
    ctx: &'a RunContext<'a>,
    case: &'a Case,
    library: &'static str,
    requests: Requests,
    mode: RecvMode,
    number: usize,
    fault: Option<&'a Fault>,
}

/// A fault due at an instant: the signal and the child it goes to.
struct Armed {
    at: Instant,
    child: usize,
    signal: i32,
    when: &'static str,
}

/// The children of one trial; whatever happens, none outlives it.
struct Children {
    procs: Vec<Proc>,
}

struct Proc {
    role: Role,
    index: usize,
    child: Child,
    stdin: Option<ChildStdin>,
    stderr: Arc<Mutex<Vec<u8>>>,
    ready: bool,
    report: Option<RoleReport>,
}

impl Proc {
    fn label(&self) -> String {
        format!("{} {}", self.role.as_str(), self.index)
    }

    /// Whether the process is stopped (SIGSTOP, or a debugger): it will never report.
    fn stopped(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).is_ok_and(|stat| {
            // The state follows the command's closing parenthesis.
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| matches!(rest.trim_start().chars().next(), Some('T' | 't')))
        })
    }

    fn signal(&self, signal: i32) {
        // SAFETY: our own child's pid; it is not reaped before `Children` drops.
        unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
    }

    fn stderr_tail(&self) -> String {
        let err = self.stderr.lock().map(|b| b.clone()).unwrap_or_default();
        let text = String::from_utf8_lossy(&err);
        let text = text.trim();
        if text.is_empty() {
            return String::new();
        }
        let start = text.len().saturating_sub(STDERR_TAIL);
        let start = (start..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        format!(": {}", text[start..].replace('\n', " | "))
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.child.kill();
        }
        for p in &mut self.procs {
            let _ = p.child.wait();
        }
    }
}

/// What the driver is waiting for, for the message of a missed deadline.
#[derive(Clone, Copy)]
enum Stage {
    SettingUp,
    Running,
}

enum Event {
    Line(usize, String),
    End(usize),
}

impl Trial<'_> {
    fn run(&self) -> Result<RunRecord, TrialError> {
        let trial_dir = self.ctx.dir.join(format!("t{}", self.number));
        std::fs::create_dir_all(&trial_dir)
            .map_err(|e| TrialError::Failed(format!("creating {}: {e}", trial_dir.display())))?;
        let outcome = self.run_in(&trial_dir);
        // Every child is gone now: what they left goes too; the trial's directory last, as a
        // run killed before this point is cleaned by the next from it.
        runs::remove_shared_memory(&self.name());
        registry::remove_leftovers(self.library, &self.name());
        let _ = std::fs::remove_dir_all(&trial_dir);
        outcome
    }

    /// The trial's name, unique to the run: adapters name their channels and files after it.
    fn name(&self) -> String {
        format!("{}t{}", self.ctx.tag, self.number)
    }

    /// Starts role `index` of `role` as child `i`, with threads that pass its output lines to
    /// `events` and keep its standard error.
    fn spawn(
        &self,
        exe: &Path,
        trial_dir: &Path,
        i: usize,
        role: Role,
        index: usize,
        events: mpsc::Sender<Event>,
    ) -> Result<Proc, TrialError> {
        let opts = self.ctx.opts;
        let args = ChildArgs {
            library: self.library.into(),
            case: self.case.name.clone(),
            role,
            index,
            mode: self.mode,
            name: self.name(),
            dir: trial_dir.to_path_buf(),
            warmup: opts.warmup,
            duration: opts.duration,
            setup_timeout: opts.setup_timeout,
        };
        let mut cmd = Command::new(exe);
        // A library's temporary files (ipc-channel's rendezvous socket, for one) go in the
        // trial's directory, which the driver removes whatever becomes of the child.
        cmd.arg("child")
            .args(args.to_args())
            .env("TMPDIR", trial_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: prctl and getppid are async-signal-safe. A child dies with the driver, even
        // a killed one; a driver that died before the prctl took effect is seen by getppid.
        let driver = std::process::id() as libc::pid_t;
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != driver {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| TrialError::Failed(format!("starting {} {index}: {e}", role.as_str())))?;
        if opts.verbose {
            eprintln!("    spawned {} {index} pid {}", role.as_str(), child.id());
        }
        let stdout = child.stdout.take().expect("piped");
        let mut stderr_pipe = child.stderr.take().expect("piped");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr_pipe.read(&mut buf) {
                if let Ok(mut s) = sink.lock() {
                    s.extend_from_slice(&buf[..n]);
                }
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if events.send(Event::Line(i, line)).is_err() {
                    return;
                }
            }
            let _ = events.send(Event::End(i));
        });
        let stdin = child.stdin.take();
        Ok(Proc { role, index, child, stdin, stderr, ready: false, report: None })
    }

    fn run_in(&self, trial_dir: &Path) -> Result<RunRecord, TrialError> {
        let exe =
            std::env::current_exe().map_err(|e| TrialError::Failed(format!("finding this binary: {e}")))?;
        let (tx, events) = mpsc::channel();
        let mut children = Children { procs: Vec::new() };
        for (i, (role, index)) in self.case.roles().into_iter().enumerate() {
            children.procs.push(self.spawn(&exe, trial_dir, i, role, index, tx.clone())?);
        }
        drop(tx);

        let target = self.fault.and_then(|f| Some((f, f.target(&self.case.roles())?)));
        let mut armed = None;

        // Set-up: every role ready.
        let setup_deadline = Instant::now() + self.ctx.opts.setup_timeout + Duration::from_secs(5);
        while children.procs.iter().any(|p| !p.ready) {
            match self.next(&events, setup_deadline, &children, Stage::SettingUp, &mut armed)? {
                Event::Line(i, l) if l == "ready" => {
                    match target {
                        // The fault: the role's endpoint is open and it never starts.
                        Some((f, t)) if t == i && f.stage == fault::Stage::Setup => {
                            self.inject(&children, i, f.signal, "set-up")
                        }
                        _ => children.procs[i].ready = true,
                    }
                }
                Event::Line(i, l) => return Err(self.protocol(&children, i, &l)),
                Event::End(i) => return Err(self.died(&mut children, i, "during set-up")),
            }
        }

        // Go: one start instant for all, a little ahead so every child is waiting for it.
        let start = message::now_ns() + 20_000_000;
        for p in &mut children.procs {
            let ok =
                p.stdin.as_mut().is_some_and(|s| writeln!(s, "go {start}").and_then(|_| s.flush()).is_ok());
            if !ok {
                return Err(TrialError::Failed(format!(
                    "{} closed its input before the start{}",
                    p.label(),
                    p.stderr_tail()
                )));
            }
        }
        let (warmup, window) = (self.ctx.opts.warmup, self.ctx.opts.duration);
        let at = Instant::now() + Duration::from_millis(20);
        armed = match target {
            Some((f, child)) if f.stage == fault::Stage::Warmup => {
                Some(Armed { at: at + warmup / 2, child, signal: f.signal, when: "warm-up" })
            }
            Some((f, child)) if f.stage == fault::Stage::Window => {
                Some(Armed { at: at + warmup + window / 2, child, signal: f.signal, when: "measured window" })
            }
            _ => None,
        };
        let run_deadline = Instant::now() + warmup + window + self.ctx.opts.grace;
        while children.procs.iter().any(|p| p.report.is_none()) {
            match self.next(&events, run_deadline, &children, Stage::Running, &mut armed)? {
                Event::Line(i, l) => {
                    let Some(json) = l.strip_prefix("result ") else {
                        return Err(self.protocol(&children, i, &l));
                    };
                    let report: RoleReport = serde_json::from_str(json).map_err(|e| {
                        TrialError::Failed(format!(
                            "{} reported unreadable figures ({e}): {json}",
                            children.procs[i].label()
                        ))
                    })?;
                    children.procs[i].report = Some(report);
                    let senders_done =
                        children.procs.iter().all(|p| !p.role.is_driving() || p.report.is_some());
                    if children.procs[i].role.is_driving() && senders_done {
                        // Every sender is done: owners may now end their channels.
                        for p in &mut children.procs {
                            if let Some(mut s) = p.stdin.take() {
                                let _ = writeln!(s, "drain");
                            }
                        }
                    }
                }
                Event::End(i) => {
                    if children.procs[i].report.is_none() {
                        return Err(self.died(&mut children, i, "before reporting"));
                    }
                }
            }
        }
        for p in &mut children.procs {
            p.stdin.take();
        }
        // Every child reported: each should now exit cleanly.
        let exit_deadline = Instant::now() + Duration::from_secs(5);
        for p in &mut children.procs {
            let status = loop {
                if INTERRUPTED.load(Ordering::SeqCst) {
                    return Err(TrialError::Interrupted);
                }
                match p.child.try_wait() {
                    Ok(Some(status)) => break status,
                    Ok(None) if Instant::now() < exit_deadline => {
                        std::thread::sleep(Duration::from_millis(2))
                    }
                    Ok(None) => {
                        return Err(TrialError::Failed(format!("{} reported but did not exit", p.label())));
                    }
                    Err(e) => return Err(TrialError::Failed(format!("waiting for {}: {e}", p.label()))),
                }
            };
            if !status.success() {
                if by_interrupt(status) {
                    return Err(TrialError::Interrupted);
                }
                let why = format!("{} reported, then {}{}", p.label(), describe(status), p.stderr_tail());
                return Err(TrialError::Failed(why));
            }
        }
        let roles: Vec<RoleReport> = children.procs.iter_mut().filter_map(|p| p.report.take()).collect();
        let figures = figures::figures(self.case, &roles, self.requests)
            .map_err(|b| TrialError::Failed(format!("{}: {}", b.role, b.reason)))?;
        let roles = roles.into_iter().map(|r| RoleReport { latency: Vec::new(), ..r }).collect();
        Ok(RunRecord { figures, roles })
    }

    /// Sends an injected fault's signal to child `i`.
    fn inject(&self, children: &Children, i: usize, signal: i32, when: &str) {
        let p = &children.procs[i];
        if self.ctx.opts.verbose {
            eprintln!(
                "    fault: {} to {} (pid {}) in its {when}",
                signal_name(signal),
                p.label(),
                p.child.id()
            );
        }
        p.signal(signal);
    }

    /// The next line or end from any child, before the deadline, unless interrupted; an armed
    /// fault goes off on the way.
    fn next(
        &self,
        events: &Receiver<Event>,
        deadline: Instant,
        children: &Children,
        stage: Stage,
        armed: &mut Option<Armed>,
    ) -> Result<Event, TrialError> {
        loop {
            if INTERRUPTED.load(Ordering::SeqCst) {
                return Err(TrialError::Interrupted);
            }
            if let Some(a) = armed.take_if(|a| a.at <= Instant::now()) {
                self.inject(children, a.child, a.signal, a.when);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let (doing, budget) = match stage {
                    Stage::SettingUp => ("setting up", "the set-up timeout and 5 s".to_string()),
                    Stage::Running => (
                        "running",
                        format!("the warm-up, the window and a grace of {:?}", self.ctx.opts.grace),
                    ),
                };
                let waiting: Vec<String> = children
                    .procs
                    .iter()
                    .filter(|p| match stage {
                        Stage::SettingUp => !p.ready,
                        Stage::Running => p.report.is_none(),
                    })
                    .map(|p| {
                        let stopped = if p.stopped() { " (stopped: SIGSTOP or a debugger)" } else { "" };
                        format!("{}{stopped}{}", p.label(), p.stderr_tail())
                    })
                    .collect();
                return Err(TrialError::Failed(format!(
                    "deadline passed while {doing} ({budget}): still waiting for {}",
                    waiting.join("; ")
                )));
            }
            let wake = armed.as_ref().map_or(left, |a| a.at.saturating_duration_since(Instant::now()));
            match events.recv_timeout(left.min(wake).min(Duration::from_millis(50))) {
                Ok(ev) => return Ok(ev),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(TrialError::Failed("every child's output closed".to_string()));
                }
            }
        }
    }

    /// Child `i` ended before it should have. Its siblings often end soon after, of its end (a
    /// sender whose receiver is gone); the reason names the cause: a child that a signal ended,
    /// if there is one, else child `i`; and then what else ended.
    fn died(&self, children: &mut Children, i: usize, when: &str) -> TrialError {
        // Its output closed: it is ending; wait a moment for its status, and for its siblings.
        let deadline = Instant::now() + Duration::from_secs(2);
        while children.procs[i].child.try_wait().is_ok_and(|s| s.is_none()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(100));
        let mut ended: Vec<(usize, std::process::ExitStatus)> = Vec::new();
        for (j, p) in children.procs.iter_mut().enumerate() {
            if let Ok(Some(status)) = p.child.try_wait() {
                ended.push((j, status));
            }
        }
        if ended.iter().any(|&(_, s)| by_interrupt(s)) {
            return TrialError::Interrupted;
        }
        let first = ended
            .iter()
            .find(|(_, s)| s.signal().is_some())
            .or_else(|| ended.iter().find(|(j, _)| *j == i))
            .copied();
        let Some((cause, status)) = first else {
            let p = &children.procs[i];
            return TrialError::Failed(format!("{} closed its output {when}{}", p.label(), p.stderr_tail()));
        };
        let p = &children.procs[cause];
        let mut reason = format!("{} {} {when}{}", p.label(), describe(status), p.stderr_tail());
        for &(j, s) in ended.iter().filter(|(j, _)| *j != cause) {
            let q = &children.procs[j];
            reason.push_str(&format!("; then {} {}{}", q.label(), describe(s), q.stderr_tail()));
        }
        TrialError::Failed(reason)
    }

    fn protocol(&self, children: &Children, i: usize, line: &str) -> TrialError {
        TrialError::Failed(format!(
            "{} said {line:?}, which the driver did not expect",
            children.procs[i].label()
        ))
    }
}

/// Whether a child's end is the run's interruption. A Ctrl-C at a terminal reaches the children
/// too, and may end one before the driver's own handler has run: give the handler a moment.
fn by_interrupt(status: std::process::ExitStatus) -> bool {
    if matches!(status.signal(), Some(libc::SIGINT | libc::SIGTERM)) {
        std::thread::sleep(Duration::from_millis(300));
    }
    INTERRUPTED.load(Ordering::SeqCst)
}

fn describe(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig} ({})", signal_name(sig)),
        _ => "ended".into(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGPIPE => "SIGPIPE",
        _ => "a signal",
    }
}

/// The libraries by id, in the registry's order; an unknown one is an error naming the nearest.
pub fn libraries(wanted: Option<&str>) -> Result<Vec<LibraryInfo>> {
    let ids: Vec<&str> = match wanted {
        None => registry::IDS.to_vec(),
        Some(list) => list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect(),
    };
    if ids.is_empty() {
        anyhow::bail!("--lib names no library: the libraries built in are {}", registry::IDS.join(", "));
    }
    let mut out: Vec<LibraryInfo> = Vec::new();
    for id in ids {
        let info = registry::info(id)?;
        if !out.iter().any(|l| l.id == info.id) {
            out.push(info);
        }
    }
    Ok(out)
}
