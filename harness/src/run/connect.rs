//! One trial of a connect case: a receiver that stays, and a fresh sender process per attempt,
//! started when the receiver's endpoint for it is open. Each sender reports and exits before the
//! next starts.

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::children::{Children, Event, Proc};
use super::trial::{Trial, TrialError, event_before, exits_cleanly, take_report};
use crate::matrix::Role;
use crate::results::{Failure, RunRecord};

/// How long after a receiver began opening an endpoint that waits in its open for a sender (a
/// socket's accept) the sender starts: by then its listening socket (or the like) exists.
const SETTLE: Duration = Duration::from_millis(100);

/// Where the receiver is: the attempt whose endpoint it is opening, since when, and whether it
/// said the endpoint is open.
struct Receiving {
    attempt: usize,
    since: Instant,
    ready: bool,
}

impl Trial<'_> {
    pub(super) fn connect_in(&self, exe: &Path, trial_dir: &Path) -> Result<RunRecord, TrialError> {
        let opts = self.ctx.opts;
        let attempts = opts.config.connects as usize;
        let (tx, events) = mpsc::channel();
        let mut children = Children { procs: Vec::new() };
        let mut args = self.child_args(Role::Receiver, 0, trial_dir);
        args.connects = Some(attempts);
        children.procs.push(self.start(exe, &args, 0, &tx)?);
        let mut receiving: Option<Receiving> = None;
        let budget = opts.config.setup_timeout + Duration::from_secs(5);
        for k in 0..attempts {
            // Until the receiver's endpoint for sender k is open, or has been opening for SETTLE.
            let deadline = Instant::now() + budget;
            loop {
                let until = match &receiving {
                    Some(r) if r.attempt == k && r.ready => break,
                    Some(r) if r.attempt == k => (r.since + SETTLE).min(deadline),
                    _ => deadline,
                };
                match event_before(&events, until)? {
                    Some(ev) => self.follow(ev, &mut children, &mut receiving)?,
                    None if receiving.as_ref().is_some_and(|r| r.attempt == k) => break,
                    None => {
                        let what = format!("the receiver to open its endpoint for sender {k}");
                        return Err(late(budget, &what, &[&children.procs[0]]));
                    }
                }
            }
            let mut args = self.child_args(Role::Sender, 0, trial_dir);
            args.attempt = Some(k);
            let i = children.procs.len();
            children.procs.push(self.start(exe, &args, i, &tx)?);
            // Until sender k has reported and ended.
            let deadline = Instant::now() + budget;
            loop {
                match event_before(&events, deadline)? {
                    // Its report comes before its output ends (one pipe, in order).
                    Some(Event::End(j)) if j == i && children.procs[i].report.is_some() => break,
                    Some(ev) => self.follow(ev, &mut children, &mut receiving)?,
                    None => {
                        let what = format!("sender {k} to report and end");
                        return Err(late(budget, &what, &[&children.procs[i], &children.procs[0]]));
                    }
                }
            }
            exits_cleanly(&mut children.procs[i])?;
        }
        drop(tx);
        let deadline = Instant::now() + budget;
        while children.procs[0].report.is_none() {
            match event_before(&events, deadline)? {
                Some(ev) => self.follow(ev, &mut children, &mut receiving)?,
                None => {
                    let what = "the receiver's report after the last sender";
                    return Err(late(budget, what, &[&children.procs[0]]));
                }
            }
        }
        exits_cleanly(&mut children.procs[0])?;
        // A connect case's window is its senders' one after another: no load is read beside it.
        self.record(&mut children, None)
    }

    /// One child's line or end, in a connect trial.
    fn follow(
        &self,
        ev: Event,
        children: &mut Children,
        receiving: &mut Option<Receiving>,
    ) -> Result<(), TrialError> {
        match ev {
            Event::Line(i, l) => {
                if let Some(json) = l.strip_prefix("result ") {
                    return take_report(&mut children.procs[i], json);
                }
                let said = |word: &str| l.strip_prefix(word).and_then(|k| k.parse::<usize>().ok());
                match (i, said("opening "), said("ready "), said("got ")) {
                    (0, Some(attempt), _, _) => {
                        *receiving = Some(Receiving { attempt, since: Instant::now(), ready: false })
                    }
                    (0, _, Some(attempt), _) if receiving.as_ref().is_some_and(|r| r.attempt == attempt) => {
                        if let Some(r) = receiving.as_mut() {
                            r.ready = true;
                        }
                    }
                    // Sender k's message arrived: its input closes, and it ends.
                    (0, _, _, Some(k)) if k + 1 < children.procs.len() => {
                        children.procs[k + 1].stdin.take();
                    }
                    _ => return Err(self.protocol(children, i, &l)),
                }
                Ok(())
            }
            // A child's output ends as it exits, after its report; before it, that is a death.
            Event::End(i) if children.procs[i].report.is_some() => Ok(()),
            Event::End(i) => Err(self.died(children, i, "before reporting")),
        }
    }
}

/// A deadline passed while waiting for `what`: the reason, with what the processes awaited
/// wrote to their standard error.
fn late(budget: Duration, what: &str, awaited: &[&Proc]) -> TrialError {
    let tails: Vec<String> = awaited.iter().map(|p| format!("{}{}", p.label(), p.stderr_tail())).collect();
    TrialError::Failed(
        Failure::Deadline { waiting: awaited.iter().map(|p| p.label()).collect() },
        format!("deadline passed ({budget:?}) waiting for {what}: {}", tails.join("; ")),
    )
}
