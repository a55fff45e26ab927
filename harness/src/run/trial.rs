//! One trial: one run of one case for one library in one receive mode, as fresh processes. The
//! protocol with them (ready, go, result, drain; docs/ARCHITECTURE.md), its deadlines, the
//! faults injected on purpose, and what a child's death means for the reason.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use ipcbench_api::{RecvMode, Requests};

use super::children::{Children, Event, Proc, by_interrupt, describe, signal_name};
use super::{INTERRUPTED, RunContext, dir};
use crate::analysis;
use crate::fault::{self, Fault};
use crate::host::load;
use crate::matrix::{Case, Pace, Role};
use crate::pattern::EMPTY_WINDOW;
use crate::registry;
use crate::results::{Failure, RoleReport, RunRecord};
use crate::role::connect::attempt_name;
use crate::role::{self, ChildArgs, message};

/// How a reason marks a process the kernel shows stopped.
const STOPPED: &str = " (stopped: SIGSTOP or a debugger)";

/// Why a trial gave no figures: interrupted, or failed (its kind, and its words).
pub enum TrialError {
    Interrupted,
    Failed(Failure, String),
}

/// Which binary a trial's children start from (this one, or an A/B run's other), and what
/// it adds to their arguments.
pub struct Launch {
    pub exe: std::path::PathBuf,
    /// `doctor --calibrate`: the busy wait before each message the control's sender sends.
    pub handicap: Option<Duration>,
    /// An A/B run's side; none in a plain run.
    pub side: Option<crate::results::ab::Side>,
}

impl Launch {
    /// This binary, as a plain run starts its children.
    pub fn this() -> Result<Launch, String> {
        let exe = std::env::current_exe().map_err(|e| format!("finding this binary: {e}"))?;
        Ok(Launch { exe, handicap: None, side: None })
    }
}

pub struct Trial<'a> {
    pub ctx: &'a RunContext<'a>,
    pub launch: &'a Launch,
    pub case: &'a Case,
    pub library: &'static str,
    pub requests: Requests,
    pub mode: RecvMode,
    /// Counts the run's trials from 1: the trial's name and directory.
    pub number: usize,
    pub fault: Option<&'a Fault>,
}

/// A fault due at an instant: the signal and the child it goes to.
struct Armed {
    at: Instant,
    child: usize,
    signal: i32,
    when: &'static str,
    /// A stall: SIGCONT this long after.
    resume_after: Option<Duration>,
}

/// What the driver is waiting for, for the message of a missed deadline.
#[derive(Clone, Copy)]
enum Stage {
    SettingUp,
    Running,
}

impl Trial<'_> {
    pub fn run(&self) -> Result<RunRecord, TrialError> {
        let trial_dir = self.ctx.dir.join(format!("t{}", self.number));
        let mut names = match self.case.channels() {
            Some(n) => (0..n).map(|i| role::channel(&self.name(), trial_dir.as_path(), i).0).collect(),
            None => vec![self.name()],
        };
        if self.case.pace == Pace::Connect {
            names.extend((0..self.ctx.opts.config.connects as usize).map(|k| attempt_name(&self.name(), k)));
        }
        let need = registry::shared_memory(
            self.library,
            self.case.shape,
            self.case.size,
            self.ctx.opts.config.buffer,
        ) * self.case.pairs.unwrap_or(1) as u64;
        dir::check_shared_memory(&names, need).map_err(|e| TrialError::Failed(Failure::Machine, e))?;
        // Written before any child starts, removed when this drops: the children are gone by
        // then (`run_in`'s `Children` is dropped first), whatever ended the trial.
        let _files =
            dir::TrialFiles::create(trial_dir.clone(), dir::Manifest { library: self.library.into(), names })
                .map_err(|e| TrialError::Failed(Failure::Machine, e))?;
        self.run_in(&trial_dir)
    }

    /// The trial's name, unique to the run: adapters name their channels and files after it.
    fn name(&self) -> String {
        format!("{}t{}", self.ctx.tag, self.number)
    }

    /// What the driver tells child `role` `index` of this trial.
    pub(super) fn child_args(&self, role: Role, index: usize, trial_dir: &Path) -> ChildArgs {
        let opts = self.ctx.opts;
        // Each pair of a pairs case has a name and a directory of its own; a duplex case's
        // peers each hold both of its channels (`role::channel`).
        let (name, dir) = match self.case.pairs {
            Some(_) => role::channel(&self.name(), trial_dir, index),
            None => (self.name(), trial_dir.to_path_buf()),
        };
        let slow = role == Role::Subscriber && self.case.is_slow(index);
        ChildArgs {
            library: self.library.into(),
            case: self.case.name.clone(),
            role,
            index,
            mode: self.mode,
            name,
            dir,
            warmup: opts.config.warmup,
            duration: opts.config.duration,
            setup_timeout: opts.config.setup_timeout,
            buffer: opts.config.buffer,
            connects: None,
            attempt: None,
            cpu: opts.config.pin.and_then(|pin| {
                let i = self.case.roles().iter().position(|r| *r == (role, index))?;
                pin.cpu(&self.ctx.cpus, i)
            }),
            slow_work: slow.then_some(opts.config.slow_work),
            verify: opts.config.verify,
            handicap: self.launch.handicap,
        }
    }

    /// Starts child `i` of the trial, whose events go to `events`; a child that cannot start
    /// fails the trial, naming its role.
    pub(super) fn start(
        &self,
        exe: &Path,
        args: &ChildArgs,
        i: usize,
        events: &mpsc::Sender<Event>,
    ) -> Result<Proc, TrialError> {
        Proc::start(exe, args, i, events.clone(), self.ctx.opts.watch.verbose)
            .map_err(|e| TrialError::Failed(Failure::Spawn { role: Some(args.role.label(args.index)) }, e))
    }

    fn run_in(&self, trial_dir: &Path) -> Result<RunRecord, TrialError> {
        let exe = &self.launch.exe;
        if self.case.pace == Pace::Connect {
            return self.connect_in(exe, trial_dir);
        }
        for i in 0..self.case.channels().unwrap_or(0) {
            let dir = role::channel(&self.name(), trial_dir, i).1;
            std::fs::create_dir(&dir).map_err(|e| {
                TrialError::Failed(
                    Failure::Machine,
                    format!("creating channel {i}'s directory {}: {e}", dir.display()),
                )
            })?;
        }
        let (tx, events) = mpsc::channel();
        let mut children = Children { procs: Vec::new() };
        for (i, (role, index)) in self.case.roles().into_iter().enumerate() {
            let args = self.child_args(role, index, trial_dir);
            children.procs.push(self.start(exe, &args, i, &tx)?);
        }
        drop(tx);

        let target = self.fault.and_then(|f| Some((f, f.target(&self.case.roles())?)));
        let mut armed = None;

        // Set-up: every role ready.
        let setup_deadline = Instant::now() + self.ctx.opts.config.setup_timeout + Duration::from_secs(5);
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
                return Err(TrialError::Failed(
                    Failure::closed(p.label()),
                    format!("{} closed its input before the start{}", p.label(), p.stderr_tail()),
                ));
            }
        }
        let (warmup, window) = (self.ctx.opts.config.warmup, self.ctx.opts.config.duration);
        let at = Instant::now() + Duration::from_millis(20);
        armed = match target {
            Some((f, child)) if f.stage == fault::Stage::Warmup => {
                let at = at + warmup / 2;
                Some(Armed { at, child, signal: f.signal, when: "warm-up", resume_after: f.resume_after })
            }
            Some((f, child)) if f.stage == fault::Stage::Window => {
                let (at, when) = (at + warmup + window / 2, "measured window");
                Some(Armed { at, child, signal: f.signal, when, resume_after: f.resume_after })
            }
            _ => None,
        };
        // What else ran beside the window: read at its start and its end (`host::load`).
        let pids: Vec<u32> = children.procs.iter().map(|p| p.child.id()).collect();
        let sampler = load::sample(at + warmup, at + warmup + window, self.load_cpus(), pids);
        let run_deadline = Instant::now() + warmup + window + self.ctx.opts.watch.grace;
        while children.procs.iter().any(|p| p.report.is_none()) {
            match self.next(&events, run_deadline, &children, Stage::Running, &mut armed)? {
                Event::Line(i, l) => {
                    let Some(json) = l.strip_prefix("result ") else {
                        return Err(self.protocol(&children, i, &l));
                    };
                    take_report(&mut children.procs[i], json)?;
                    // Every sender is done (and a broadcast's every subscriber, which ends by the
                    // publisher's end, never by an owner: a publisher that owns what its
                    // subscribers still read, as Aeron's embedded media driver, outlives them):
                    // owners may now end their channels.
                    let broadcast = matches!(self.case.shape, ipcbench_api::Shape::Broadcast { .. });
                    let done = |p: &Proc| p.report.is_some() || !(p.role.is_driving() || broadcast);
                    if children.procs.iter().all(done) {
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
        // Its second reading, at the window's end, before any child is reaped: an ended child's
        // times stay readable until then.
        let window = sampler.and_then(|h| h.join().ok().flatten());
        for p in &mut children.procs {
            p.stdin.take();
        }
        // Every child reported: each should now exit cleanly.
        for p in &mut children.procs {
            exits_cleanly(p)?;
        }
        self.record(&mut children, window.as_ref())
    }

    /// The CPUs the trial's processes could use: those its roles are pinned to, else every CPU
    /// this driver may use.
    fn load_cpus(&self) -> Vec<usize> {
        let Some(pin) = self.ctx.opts.config.pin else { return self.ctx.cpus.clone() };
        let mut cpus: Vec<usize> =
            (0..self.case.roles().len()).filter_map(|i| pin.cpu(&self.ctx.cpus, i)).collect();
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }

    /// The trial's record from every child's report, with the load beside its window where it
    /// was read, or why their reports do not agree (an empty window with what ran in it).
    pub(super) fn record(
        &self,
        children: &mut Children,
        window: Option<&load::Window>,
    ) -> Result<RunRecord, TrialError> {
        let labels: Vec<String> = children.procs.iter().map(Proc::label).collect();
        let roles: Vec<RoleReport> = children.procs.iter_mut().filter_map(|p| p.report.take()).collect();
        let mut record = analysis::run_record(self.case, roles, self.requests).map_err(|b| {
            let cause = match window {
                Some(w) if b.reason.starts_with(EMPTY_WINDOW) => self.why_empty(&labels, w),
                _ => String::new(),
            };
            TrialError::Failed(
                Failure::Disagreement { role: b.role.clone() },
                format!("{}: {}{cause}", b.role, b.reason),
            )
        })?;
        record.load = window.and_then(load::Window::load);
        Ok(record)
    }

    /// What ran in a window a sender sent nothing in: each role's CPU time in it, the load
    /// beside it, and in a lossless broadcast the subscriber likeliest to have held the publisher
    /// back (a slow one by design, else the one that ran least).
    fn why_empty(&self, labels: &[String], w: &load::Window) -> String {
        let ms = |s: f64| format!("{:.0} ms", s * 1e3);
        let ran: Vec<Option<f64>> = (0..labels.len()).map(|i| w.child_cpu_s(i)).collect();
        let each: Vec<String> = labels
            .iter()
            .zip(&ran)
            .map(|(label, cpu)| format!("{label} {}", cpu.map_or_else(|| "unread".into(), ms)))
            .collect();
        let mut text = format!(
            " (no send of its began and ended inside it: its call blocked, or its process did not run, from \
             before the window to past its end); in the window, {} as the driver timed it, each process \
             ran: {}",
            ms(w.seconds()),
            each.join(", ")
        );
        if let Some(l) = w.load() {
            text.push_str(&format!("; beside it: {}", l.text()));
        }
        if let ipcbench_api::Shape::Broadcast { lossy: false, .. } = self.case.shape {
            let subscribers =
                self.case.roles().into_iter().enumerate().filter(|(_, (r, _))| *r == Role::Subscriber);
            let slow: Vec<String> = subscribers
                .clone()
                .filter(|(_, (_, n))| self.case.is_slow(*n))
                .map(|(i, _)| labels[i].clone())
                .collect();
            let least = subscribers
                .filter_map(|(i, _)| Some((i, ran[i]?)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| labels[i].clone());
            match (slow.is_empty(), least) {
                (false, _) => text.push_str(&format!(
                    "; the publisher waits for every subscriber, and {} spend{} {:?} on each message",
                    slow.join(", "),
                    if slow.len() == 1 { "s" } else { "" },
                    self.ctx.opts.config.slow_work
                )),
                (true, Some(least)) => text.push_str(&format!(
                    "; the publisher waits for every subscriber, and {least} ran least in the window"
                )),
                (true, None) => {}
            }
        }
        text
    }

    /// Sends an injected fault's signal to child `i`.
    fn inject(&self, children: &Children, i: usize, signal: i32, when: &str) {
        let p = &children.procs[i];
        if self.ctx.opts.watch.verbose {
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
            if let Some(a) = armed.take_if(|a| a.at <= Instant::now()) {
                self.inject(children, a.child, a.signal, a.when);
                *armed = a.resume_after.map(|d| Armed {
                    at: Instant::now() + d,
                    signal: libc::SIGCONT,
                    resume_after: None,
                    ..a
                });
            }
            let until = armed.as_ref().map_or(deadline, |a| a.at.min(deadline));
            if let Some(ev) = event_before(events, until)? {
                return Ok(ev);
            }
            if Instant::now() < deadline {
                continue;
            }
            let (doing, budget) = match stage {
                Stage::SettingUp => ("setting up", "the set-up timeout and 5 s".to_string()),
                Stage::Running => (
                    "running",
                    format!("the warm-up, the window and a grace of {:?}", self.ctx.opts.watch.grace),
                ),
            };
            let awaited: Vec<&Proc> = children
                .procs
                .iter()
                .filter(|p| match stage {
                    Stage::SettingUp => !p.ready,
                    Stage::Running => p.report.is_none(),
                })
                .collect();
            let words: Vec<String> = awaited
                .iter()
                .map(|p| {
                    let stopped = if p.stopped() { STOPPED } else { "" };
                    format!("{}{stopped}{}", p.label(), p.stderr_tail())
                })
                .collect();
            return Err(TrialError::Failed(
                Failure::Deadline { waiting: awaited.iter().map(|p| p.label()).collect() },
                format!("deadline passed while {doing} ({budget}): still waiting for {}", words.join("; ")),
            ));
        }
    }

    /// Child `i` ended before it should have. Its siblings often end soon after, of its end (a
    /// sender whose receiver is gone); the reason names the cause: a child that a signal ended,
    /// if there is one, else child `i`; and then what else ended.
    pub(super) fn died(&self, children: &mut Children, i: usize, when: &str) -> TrialError {
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
        // A signal sent from outside (SIGKILL: the OOM killer, a user, an injected fault) is
        // never a reaction; a library's own abort often is one, to a peer that went away.
        let first = ended
            .iter()
            .find(|(_, s)| s.signal() == Some(libc::SIGKILL))
            .or_else(|| ended.iter().find(|(_, s)| s.signal().is_some()))
            .or_else(|| ended.iter().find(|(j, _)| *j == i))
            .copied();
        let Some((cause, status)) = first else {
            let p = &children.procs[i];
            let words = format!("{} closed its output {when}{}", p.label(), p.stderr_tail());
            return TrialError::Failed(Failure::closed(p.label()), words);
        };
        let p = &children.procs[cause];
        let mut reason = format!("{} {} {when}{}", p.label(), describe(status), p.stderr_tail());
        if status.signal() == Some(libc::SIGBUS) {
            // What a mapping of shared memory that could not be backed gets on its first touch.
            let free =
                crate::machine::free_space(Path::new("/dev/shm")).map_or("?".into(), crate::format::bytes);
            reason.push_str(&format!(
                " (SIGBUS: shared memory it mapped could not be backed: /dev/shm has {free} free, the case \
                 needs more; make /dev/shm larger)"
            ));
        }
        for &(j, s) in ended.iter().filter(|(j, _)| *j != cause) {
            let q = &children.procs[j];
            reason.push_str(&format!("; then {} {}{}", q.label(), describe(s), q.stderr_tail()));
        }
        // A peer that gave up on a stopped process: the stopped one is the cause to name.
        for (j, q) in children.procs.iter().enumerate() {
            if !ended.iter().any(|&(e, _)| e == j) && q.stopped() {
                reason.push_str(&format!("; {}{STOPPED} was not answering", q.label()));
            }
        }
        TrialError::Failed(Failure::of_end(p.label(), status), reason)
    }

    pub(super) fn protocol(&self, children: &Children, i: usize, line: &str) -> TrialError {
        let role = children.procs[i].label();
        let words = format!("{role} said {line:?}, which the driver did not expect");
        TrialError::Failed(Failure::Protocol { role }, words)
    }
}

/// The next line or end from any child before `until`, or None once it passes; an interrupt
/// ends the wait.
pub(super) fn event_before(events: &Receiver<Event>, until: Instant) -> Result<Option<Event>, TrialError> {
    loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(TrialError::Interrupted);
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        match events.recv_timeout(left.min(Duration::from_millis(50))) {
            Ok(ev) => return Ok(Some(ev)),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                let every = Failure::Exited { role: None, code: None };
                return Err(TrialError::Failed(every, "every child's output closed".to_string()));
            }
        }
    }
}

/// A child's `result` line: its report, kept with it.
pub(super) fn take_report(p: &mut Proc, json: &str) -> Result<(), TrialError> {
    let report: RoleReport = serde_json::from_str(json).map_err(|e| {
        TrialError::Failed(
            Failure::Protocol { role: p.label() },
            format!("{} reported unreadable figures ({e}): {json}", p.label()),
        )
    })?;
    p.report = Some(report);
    Ok(())
}

/// A child that reported: it should now exit, cleanly, within 5 s.
pub(super) fn exits_cleanly(p: &mut Proc) -> Result<(), TrialError> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let status = loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(TrialError::Interrupted);
        }
        match p.child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                return Err(TrialError::Failed(
                    Failure::NoExit { role: p.label() },
                    format!("{} reported but did not exit", p.label()),
                ));
            }
            Err(e) => {
                return Err(TrialError::Failed(Failure::Machine, format!("waiting for {}: {e}", p.label())));
            }
        }
    };
    if !status.success() {
        if by_interrupt(status) {
            return Err(TrialError::Interrupted);
        }
        let why = format!("{} reported, then {}{}", p.label(), describe(status), p.stderr_tail());
        return Err(TrialError::Failed(Failure::of_end(p.label(), status), why));
    }
    Ok(())
}
