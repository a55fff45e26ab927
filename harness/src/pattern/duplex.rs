//! Both ways at once (`duplex/<size>`): two processes each send a stream to the other at the same
//! time, on two channels, one each way, through the stream calls every library already has. Each
//! peer opens its sending end and its receiving end side by side (an accepting end may wait in
//! its open for the other to connect), then sends on one thread while it receives on another.
//! The figures are both ways' rates together and the slower way's.

use std::sync::mpsc;

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::{Library, Opened, Requests, Setup, Shape, Side};

use super::checks::{Broken, broken, window};
use super::shows::{Panel, RATE, Scale, Shows, Title, rate_only};
use super::spec::{Family, FamilySpec, Spec};
use super::words::{distinct, listed};
use crate::matrix::{Case, Role, size_label};
use crate::results::{Figures, Measure, RoleReport};
use crate::role::loops::{Ordered, Window, receive_loop, send_loop};
use crate::role::transfer::Copied;
use crate::role::{self, ChildArgs};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Both ways at once",
    anchor: "duplex",
    method: |cases| {
        format!(
            "Two processes each send a stream of {} messages to the other at the same time, on two channels, one each \
             way: each process sends on one thread and receives on another, through the library's stream \
             calls. Every message each sent arrived, in order; the figures are both ways' rates together \
             and the slower way's. Polling, each process keeps both its threads spinning, so on two cores \
             the four share them. A library without a channel each way in one process (no round trip) has \
             a dash.",
            listed(&distinct(cases, |c| Some(c.size)).into_iter().map(size_label).collect::<Vec<_>>(), "or")
        )
    },
};

pub const SPEC: Spec = Spec {
    // The rate is both ways' together; the worst is the slower way's.
    names: &[("msgs_per_s", "total_msgs_per_s"), ("worst_msgs_per_s", "slower_msgs_per_s")],
    ..Spec::rate(
        Family::Duplex,
        Shows {
            rows: &[(Measure::MsgsPerS, "both ways together"), (Measure::WorstMsgsPerS, "the slower way")],
            compared: &[Measure::MsgsPerS, Measure::WorstMsgsPerS, Measure::CpuNsPerMsg],
            panels: &[
                RATE,
                Panel {
                    measure: Measure::WorstMsgsPerS,
                    label: "the slower way's M msg/s",
                    scale: Scale::Mega,
                },
            ],
            ..rate_only(Title::AfterFamily(
                "both ways' messages per second together, beside the slower way's",
            ))
        },
        figures,
    )
};

/// Each way checked on its own (every message one peer sent the other received, in its window
/// too) and timed over its sender's window.
fn figures(_: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    let peer = |i: usize| {
        reports
            .iter()
            .find(|r| r.role == Role::Peer && r.index == i)
            .ok_or_else(|| Broken { role: Role::Peer.label(i), reason: "did not report".into() })
    };
    let (a, b) = (peer(0)?, peer(1)?);
    let (there, back) = (way(a, b)?, way(b, a)?);
    Ok(Figures { msgs_per_s: there + back, worst_msgs_per_s: Some(there.min(back)), ..Figures::default() })
}

/// The rate of the way from `from` to `to`, once `to` received all `from` sent.
fn way(from: &RoleReport, to: &RoleReport) -> Result<f64, Broken> {
    if to.receiving.is_none() {
        return Err(broken(to, "reported no counts of what it received".into()));
    }
    let (sent, got) = (from.sent(), to.got());
    if got.received != sent.sent || got.received_measured != sent.measured {
        return Err(broken(
            to,
            format!(
                "received {} messages ({} measured) of the {} {} sent ({} measured)",
                got.received,
                got.received_measured,
                sent.sent,
                from.label(),
                sent.measured
            ),
        ));
    }
    Ok(got.received_measured as f64 / window(std::slice::from_ref(from))?)
}

/// Which end of a peer, as errors name it.
#[derive(Clone, Copy)]
enum End {
    Sending,
    Receiving,
}

impl End {
    fn name(self) -> &'static str {
        match self {
            End::Sending => "sending",
            End::Receiving => "receiving",
        }
    }
}

/// The handle that keeps an end's channel alive for everybody (`Opened::owner`).
type Owner = Option<Box<dyn std::any::Any + Send>>;

/// What an end's thread tells the peer's.
enum Event {
    Opened,
    Failed(End, anyhow::Error),
    /// Its report (boxed: a report is large, and it crosses once) and its channel's owner,
    /// which the peer keeps until the drain.
    Done(End, Result<Box<RoleReport>>, Owner),
}

/// A peer: it sends on channel `index` and receives on the other's, each end opened and run on a
/// thread of its own (no endpoint leaves the thread that opened it), the driver's protocol on
/// this one: ready once both ends are open, one report of both, the drain.
pub fn start<L: Library>(args: &ChildArgs, _case: &Case, setup: &Setup) -> Result<()> {
    if args.role != Role::Peer || args.index > 1 {
        bail!("a {} in a duplex case, which has peers 0 and 1", args.role.label(args.index));
    }
    let (me, other) = (args.index, 1 - args.index);
    let ((out_name, out_dir), (in_name, in_dir)) =
        (role::channel(setup.name, setup.dir, me), role::channel(setup.name, setup.dir, other));
    // Each way is a stream of its own, to its library and to its checks: its one sender is 0.
    let one_way = |name, dir| Setup { name, dir, shape: Shape::Stream, index: 0, ..*setup };
    let (sending, receiving) = (one_way(&out_name, &out_dir), one_way(&in_name, &in_dir));
    let size = setup.size;
    std::thread::scope(|s| {
        let (events_tx, events) = mpsc::channel();
        let (go_out, go_out_rx) = mpsc::channel();
        let (go_in, go_in_rx) = mpsc::channel();
        let to = events_tx.clone();
        spawn(s, End::Sending, move || {
            end(L::stream(&sending, Side::Connect), End::Sending, (to, go_out_rx), |tx, w| {
                send_loop(tx, Copied::new(size, 0), w, role::report_of(args))
            })
        })?;
        spawn(s, End::Receiving, move || {
            end(L::stream(&receiving, Side::Accept), End::Receiving, (events_tx, go_in_rx), |rx, _| {
                receive_loop(rx, Copied::new(size, 0), Ordered::default(), role::report_of(args))
            })
        })?;
        for _ in 0..2 {
            match events.recv() {
                Ok(Event::Opened) => {}
                Ok(Event::Failed(end, e)) => return Err(e.context(format!("set-up: its {} end", end.name()))),
                Ok(Event::Done(..)) | Err(_) => bail!("set-up: an end stopped before it opened"),
            }
        }
        let window = role::ready(args)?;
        for go in [&go_out, &go_in] {
            go.send(window).map_err(|_| anyhow!("an end stopped before the start"))?;
        }
        let (mut sent, mut got, mut owners) = (None, None, Vec::new());
        for _ in 0..2 {
            match events.recv() {
                Ok(Event::Done(end, r, owner)) => {
                    owners.push(owner);
                    let r = *r.with_context(|| format!("its {} end", end.name()))?;
                    match end {
                        End::Sending => sent = Some(r),
                        End::Receiving => got = Some(r),
                    }
                }
                _ => bail!("an end stopped before it reported"),
            }
        }
        let (Some(mut report), Some(got)) = (sent, got) else { bail!("an end reported twice") };
        report.receiving = got.receiving;
        report.shared_mapped_bytes = report.shared_mapped_bytes.max(got.shared_mapped_bytes);
        role::say_result(&report)?;
        // The channels' owners stay until the driver says every peer is done.
        role::until_drain();
        drop(owners);
        Ok(())
    })
}

/// Starts an end's thread in scope `s`.
fn spawn<'s, 'e>(s: &'s std::thread::Scope<'s, 'e>, end: End, body: impl FnOnce() + Send + 's) -> Result<()> {
    std::thread::Builder::new()
        .name(end.name().into())
        .spawn_scoped(s, body)
        .map(|_| ())
        .map_err(|e| anyhow!("starting the thread of its {} end: {e}", end.name()))
}

/// One end, on its thread: it opens, says so, waits for the window (none: the peer gave up), runs
/// its loop, drops its endpoint (a sending end's close is how the other peer's receiver learns it
/// is done), and hands its report and its channel's owner over.
fn end<E>(
    opened: Result<Opened<E>>,
    end: End,
    (events, go): (mpsc::Sender<Event>, mpsc::Receiver<Window>),
    run: impl FnOnce(&mut E, Window) -> Result<RoleReport>,
) {
    let Opened { mut endpoint, owner, buffer } = match opened {
        Ok(o) => o,
        Err(e) => {
            let _ = events.send(Event::Failed(end, e));
            return;
        }
    };
    if events.send(Event::Opened).is_err() {
        return;
    }
    let Ok(window) = go.recv() else { return };
    let done = run(&mut endpoint, window).map(|mut r| {
        r.buffer = buffer.map(Into::into);
        r.shared_mapped_bytes = role::shared_mapped_bytes();
        Box::new(r)
    });
    drop(endpoint);
    let _ = events.send(Event::Done(end, done, owner));
}
