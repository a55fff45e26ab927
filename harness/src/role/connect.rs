//! The connect cases' roles. The receiver opens a fresh endpoint for each sender, says so, takes
//! that sender's one message and its end, and closes it; each sender is a fresh process that
//! reads the clock, opens its endpoint and sends one message stamped with that instant. The
//! receiver times each from the stamp to its arrival: the sender's whole set-up (its library's
//! start, discovery, handshakes) and its first message's delivery.

use std::io::BufRead;

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::{Library, Opened, Received, Rx, Setup, Side, Tx};

use super::message::{self, MEASURED};
use super::transfer::arrived;
use super::{ChildArgs, report_of, say, say_result};
use crate::histogram;
use crate::matrix::Role;
use crate::results::{Receiving, RoleReport, Sending};

/// The channel of attempt `k` of a trial: every sender meets a channel of its own, so that no
/// library's leftover of the previous one is in the way (the driver removes each one's at the
/// end).
pub fn attempt_name(trial: &str, k: usize) -> String {
    format!("{trial}-c{k}")
}

pub fn run<L: Library>(args: &ChildArgs, setup: &Setup) -> Result<()> {
    let report = report_of(args);
    match (args.role, args.connects, args.attempt) {
        (Role::Receiver, Some(n), _) => {
            let report = receive::<L>(setup, n, report)?;
            say_result(&report)
        }
        (Role::Sender, _, Some(k)) => send::<L>(setup, k, report),
        (role, _, _) => bail!("a {} without --connects (a receiver) or --attempt (a sender)", role.as_str()),
    }
}

/// The receiver: for each of `n` senders in turn, "opening k", its endpoint, "ready k" (an
/// endpoint that waits in its open for a sender, as a socket's accept does, says it only then),
/// the sender's one message ("got k", upon which the driver lets the sender end) and its end.
fn receive<L: Library>(setup: &Setup, n: usize, mut report: RoleReport) -> Result<RoleReport> {
    let mut hist = histogram::recording();
    let mut got = Receiving::default();
    let mut buf = vec![0u8; setup.size];
    for k in 0..n {
        let name = attempt_name(setup.name, k);
        let mine = Setup { name: &name, ..*setup };
        say(&format!("opening {k}"))?;
        let Opened { mut endpoint, owner, .. } =
            L::stream(&mine, Side::Accept).with_context(|| format!("opening the endpoint for sender {k}"))?;
        say(&format!("ready {k}"))?;
        let mut first = true;
        loop {
            match endpoint.recv(&mut buf).with_context(|| format!("receiving from sender {k}"))? {
                Received::Message(len) => {
                    let now = message::now_ns();
                    let (h, opened_at) =
                        message::read_timed(arrived(&buf, len)?, setup.size).map_err(|e| anyhow!(e))?;
                    if !first || h.seq != 0 || h.sender != 0 || h.phase != MEASURED {
                        bail!("sender {k} sends one message, number 0; message {} came", h.seq);
                    }
                    first = false;
                    hist.saturating_record(now.saturating_sub(opened_at));
                    got.received += 1;
                    got.received_measured += 1;
                    say(&format!("got {k}"))?;
                }
                Received::Empty => {}
                Received::Lost(lost) => bail!("the library says {lost} messages of sender {k} were lost"),
                Received::Closed if first => bail!("sender {k}'s channel ended before its message came"),
                Received::Closed => break,
            }
        }
        drop(endpoint);
        drop(owner);
    }
    report.receiving = Some(got);
    report.latency = histogram::buckets(&hist);
    Ok(report)
}

/// A sender: the clock, its endpoint, its one message stamped with that instant, its report;
/// then, once the driver says the message arrived (or is gone), its end. (A sender that ended
/// at once would take its message with it in a library whose data lives with the sender.)
fn send<L: Library>(setup: &Setup, k: usize, mut report: RoleReport) -> Result<()> {
    let name = attempt_name(setup.name, k);
    let mine = Setup { name: &name, ..*setup };
    let mut buf = vec![0u8; setup.size];
    message::init_timed(&mut buf, 0);
    let start = message::now_ns();
    let Opened { mut endpoint, owner, .. } =
        L::stream(&mine, Side::Connect).context("opening its endpoint")?;
    let opened = message::now_ns();
    message::stamp_timed(&mut buf, 0, MEASURED, start);
    endpoint.send(&buf).context("sending its message")?;
    report.sending =
        Some(Sending { sent: 1, measured: 1, window_start_ns: start, window_end_ns: message::now_ns() });
    report.open_ns = Some(opened - start);
    say_result(&report)?;
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    // Its end tells the receiver it is done.
    drop(endpoint);
    drop(owner);
    Ok(())
}
