//! The hot loops of the role processes and the checks a receiver makes of what arrives. Every
//! loop is generic over the adapter's endpoint types, so each library gets its own compiled
//! copy: no virtual call, allocation, lock or clock read per message beyond what the figure
//! needs (one clock read per round trip; one per 32 one-way messages). Each loop reads what its
//! window cost (`cost::Meter`) at the window's two edges only.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::{Batch, Loaned, Received, Rx, Tx};

use super::cost::Meter;
use super::message::{self, Header, MEASURED, WARMUP};
use super::taken::Taken;
use super::transfer::{Echo, Put, Take};
use crate::histogram;
use crate::results::{Cost, Receiving, RoleReport, Sending};

/// A one-way sender reads the clock once per this many messages (a power of two).
const CLOCK_EVERY: u64 = 32;

/// Messages between a sender's clock reads: `CLOCK_EVERY`, fewer for large messages (one read
/// per 32 KiB at most), so a slow large-message sender still sees its window's edges in time. A
/// power of two.
fn clock_stride(size: usize) -> u64 {
    let per = ((32 << 10) / size.max(1)).clamp(1, CLOCK_EVERY as usize);
    1 << per.ilog2()
}

/// The measured window, on the machine-wide monotonic clock.
#[derive(Clone, Copy)]
pub struct Window {
    pub start: u64,
    pub measure_from: u64,
    pub end: u64,
}

fn wait_until(instant: u64) {
    let now = message::now_ns();
    if instant > now {
        std::thread::sleep(Duration::from_nanos(instant - now));
    }
}

/// Stream sender, publisher, producer: sends until the window ends, reading the clock once per
/// `clock_stride` messages; the window is the span between the two clock reads that switched
/// phases, so its length is exact whatever the rate. `put` copies each message in or writes it
/// where the library lends memory.
pub fn send_loop<T: Tx, P: Put>(
    tx: &mut T,
    mut put: P,
    w: Window,
    mut report: RoleReport,
) -> Result<RoleReport> {
    let mut phases = Phases::new(w);
    let mut seq: u64 = 0;
    let stride = clock_stride(put.size()) - 1;
    wait_until(w.start);
    while seq & stride != 0 || phases.at(message::now_ns(), seq) {
        put.put(tx, seq, phases.phase).with_context(|| format!("sending message {seq}"))?;
        seq += 1;
    }
    phases.finish(seq, &mut report);
    Ok(report)
}

/// A sending role's phases, switched at its clock reads: warm-up, then the measured window.
struct Phases {
    w: Window,
    phase: u8,
    /// The first message of the measured window.
    measured_from: u64,
    /// The window's edges, as its clock reads saw them.
    counts: Sending,
    meter: Meter,
    cost: Option<Cost>,
}

impl Phases {
    fn new(w: Window) -> Phases {
        Phases {
            w,
            phase: WARMUP,
            measured_from: 0,
            counts: Sending::default(),
            meter: Meter::default(),
            cost: None,
        }
    }

    /// At a clock read `now`, before message `seq`: records the window's edges and its cost;
    /// false once it has ended.
    #[inline(always)]
    fn at(&mut self, now: u64, seq: u64) -> bool {
        if self.phase == WARMUP && now >= self.w.measure_from {
            self.phase = MEASURED;
            self.measured_from = seq;
            self.counts.window_start_ns = now;
            self.meter.begin(now);
        }
        if self.phase == MEASURED && now >= self.w.end {
            self.counts.window_end_ns = now;
            self.cost = self.meter.end(Some(now));
            return false;
        }
        true
    }

    /// After the last of `sent` messages: the sender's counts and its window's cost.
    fn finish(self, sent: u64, report: &mut RoleReport) {
        report.sending = Some(Sending { sent, measured: sent - self.measured_from, ..self.counts });
        report.cost = self.cost;
    }
}

/// The batch cases' sender: as `send_loop`, `n` messages per call, the clock read once per call.
pub fn batch_send_loop<T: Tx>(
    tx: &mut T,
    size: usize,
    n: usize,
    me: u32,
    w: Window,
    mut report: RoleReport,
) -> Result<RoleReport> {
    let mut buf = vec![0u8; size * n];
    for message in buf.chunks_exact_mut(size) {
        message::init(message, me);
    }
    let mut phases = Phases::new(w);
    let mut seq: u64 = 0;
    wait_until(w.start);
    while phases.at(message::now_ns(), seq) {
        for (i, message) in buf.chunks_exact_mut(size).enumerate() {
            message::stamp(message, seq + i as u64, phases.phase);
        }
        tx.send_batch(&buf, size)
            .with_context(|| format!("sending messages {seq} to {}", seq + n as u64 - 1))?;
        seq += n as u64;
    }
    phases.finish(seq, &mut report);
    Ok(report)
}

/// The batch cases' receiver: as `receive_loop`, up to `n` messages per call.
pub fn batch_receive_loop<R: Rx, C: Check>(
    rx: &mut R,
    size: usize,
    n: usize,
    mut check: C,
    mut report: RoleReport,
) -> Result<RoleReport> {
    let mut buf = vec![0u8; size * n];
    let mut got = Receiving::default();
    let mut meter = Meter::default();
    meter.begin_loop();
    loop {
        match rx.recv_batch(&mut buf, size)? {
            Batch::Messages(k) => {
                let Some(messages) = buf.get(..k * size) else {
                    bail!("the adapter reported {k} messages in room for {n}");
                };
                for msg in messages.chunks_exact(size) {
                    let h = message::read(msg, size).map_err(|e| anyhow!(e))?;
                    count(h, &mut check, &mut meter, &mut got)?;
                }
            }
            Batch::Empty => {}
            Batch::Closed => break,
        }
    }
    report.receiving = Some(got);
    report.cost = meter.end(None);
    check.finish(&mut report)?;
    Ok(report)
}

/// A receiver's bookkeeping of one message: the check, the counts, and the start of its
/// measured window (its first measured message).
#[inline(always)]
pub(super) fn count<C: Check>(
    h: Header,
    check: &mut C,
    meter: &mut Meter,
    got: &mut Receiving,
) -> Result<()> {
    check.see(h, got)?;
    got.received += 1;
    if h.phase == MEASURED {
        got.received_measured += 1;
        if !meter.started() {
            meter.begin(message::now_ns());
        }
    }
    Ok(())
}

/// What a receiver proves of the sequence numbers it sees.
pub trait Check: Sized {
    fn see(&mut self, h: Header, got: &mut Receiving) -> Result<()>;

    /// After the last message: what the check leaves for the driver.
    fn finish(self, _report: &mut RoleReport) -> Result<()> {
        Ok(())
    }
}

/// Lossless and ordered, from one sender: every number once, in order.
#[derive(Default)]
pub struct Ordered {
    next: u64,
}

impl Check for Ordered {
    #[inline(always)]
    fn see(&mut self, h: Header, _: &mut Receiving) -> Result<()> {
        if h.seq != self.next || h.sender != 0 {
            return Err(out_of_order(h, self.next, "lost"));
        }
        self.next += 1;
        Ok(())
    }
}

/// Lossy, from one sender: in order and never twice; the gaps are counted as lost.
#[derive(Default)]
pub struct Lossy {
    next: u64,
}

impl Check for Lossy {
    #[inline(always)]
    fn see(&mut self, h: Header, got: &mut Receiving) -> Result<()> {
        if h.seq < self.next || h.sender != 0 {
            return Err(out_of_order(h, self.next, "counted as lost"));
        }
        let gap = h.seq - self.next;
        got.lost += gap;
        if h.phase == MEASURED {
            got.lost_measured += gap;
        }
        self.next = h.seq + 1;
        Ok(())
    }
}

/// A slow subscriber: after its check, spends a fixed time on each message, a busy wait on the
/// clock (the work a slow consumer does; a sleep would hand the core to the others).
pub struct Slow<C> {
    inner: C,
    work_ns: u64,
}

impl<C> Slow<C> {
    pub fn new(inner: C, work: std::time::Duration) -> Slow<C> {
        Slow { inner, work_ns: work.as_nanos() as u64 }
    }
}

impl<C: Check> Check for Slow<C> {
    #[inline(always)]
    fn see(&mut self, h: Header, got: &mut Receiving) -> Result<()> {
        self.inner.see(h, got)?;
        let until = message::now_ns() + self.work_ns;
        while message::now_ns() < until {
            std::hint::spin_loop();
        }
        Ok(())
    }

    fn finish(self, report: &mut RoleReport) -> Result<()> {
        self.inner.finish(report)
    }
}

/// Why a message from the one sender of a stream or broadcast is not the one expected.
#[cold]
fn out_of_order(h: Header, expected: u64, gaps: &str) -> anyhow::Error {
    if h.sender != 0 {
        anyhow!("message {} names sender {}, but this channel has one sender, 0", h.seq, h.sender)
    } else if h.seq < expected {
        anyhow!("message {} arrived again or out of order: message {expected} was expected", h.seq)
    } else {
        anyhow!(
            "message {} arrived where {expected} was expected: {} messages {gaps}",
            h.seq,
            h.seq - expected
        )
    }
}

/// A work queue's consumer: marks each producer's messages it took (the driver proves that
/// every message reached exactly one consumer).
pub struct Tally {
    pub taken: Taken,
    pub file: PathBuf,
}

impl Check for Tally {
    #[inline(always)]
    fn see(&mut self, h: Header, _: &mut Receiving) -> Result<()> {
        self.taken.mark(h.sender, h.seq).map_err(|e| anyhow!(e))
    }

    fn finish(self, report: &mut RoleReport) -> Result<()> {
        self.taken.save(&self.file)?;
        report.taken_file = Some(self.file.display().to_string());
        Ok(())
    }
}

/// Stream receiver, subscriber, consumer: takes each message (into its own buffer, or where
/// the library lends it) until the channel ends.
pub fn receive_loop<R: Rx, K: Take, C: Check>(
    rx: &mut R,
    mut take: K,
    mut check: C,
    mut report: RoleReport,
) -> Result<RoleReport> {
    let mut got = Receiving::default();
    let mut meter = Meter::default();
    meter.begin_loop();
    loop {
        match take.take(rx)? {
            Loaned::Message(h) => count(h, &mut check, &mut meter, &mut got)?,
            Loaned::Empty => {}
            Loaned::Lost(n) => got.library_lost += n,
            Loaned::Closed => break,
        }
    }
    report.receiving = Some(got);
    report.cost = meter.end(None);
    check.finish(&mut report)?;
    Ok(report)
}

/// Pinger and service client: sends a request, waits for its reply, checks it answers that
/// request, and times the round trip (one clock read per call: the end of one is the start of
/// the next). `put` and `take` copy or lend, as the case's transfer says.
pub fn call_loop<E: Tx + Rx, P: Put, K: Take>(
    ep: &mut E,
    mut put: P,
    mut take: K,
    me: u32,
    w: Window,
    mut report: RoleReport,
) -> Result<RoleReport> {
    let mut hist = histogram::recording();
    let mut phase = WARMUP;
    let mut seq: u64 = 0;
    let mut counts = Sending::default();
    let mut meter = Meter::default();
    wait_until(w.start);
    let mut last = message::now_ns();
    loop {
        put.put(ep, seq, phase).with_context(|| format!("sending request {seq}"))?;
        let h = loop {
            match take.take(ep).with_context(|| format!("receiving the reply to request {seq}"))? {
                Loaned::Message(h) => break h,
                Loaned::Empty => {}
                Loaned::Lost(_) | Loaned::Closed => {
                    bail!("no reply to request {seq}: the channel ended")
                }
            }
        };
        let now = message::now_ns();
        seq += 1;
        if h.seq != seq - 1 || h.sender != me {
            bail!(
                "request {} of client {me} got the reply to request {} of client {}",
                seq - 1,
                h.seq,
                h.sender
            );
        }
        if phase == MEASURED {
            hist.saturating_record(now - last);
            counts.measured += 1;
            if now >= w.end {
                counts.window_end_ns = now;
                report.cost = meter.end(Some(now));
                break;
            }
        } else if now >= w.measure_from {
            phase = MEASURED;
            counts.window_start_ns = now;
            meter.begin(now);
        }
        last = now;
    }
    report.sending = Some(Sending { sent: seq, ..counts });
    report.latency = histogram::buckets(&hist);
    report.p50_ns = Some(hist.value_at_quantile(0.5));
    Ok(report)
}

/// Echo and service server: sends back each request (from its own buffer, or copied into the
/// reply the library lends) until the channel ends. The client checks every reply.
pub fn echo_loop<E: Tx + Rx, H: Echo>(ep: &mut E, mut echo: H, mut report: RoleReport) -> Result<RoleReport> {
    let mut got = Receiving::default();
    let mut meter = Meter::default();
    meter.begin_loop();
    loop {
        let (received, phase) =
            echo.echo(ep).with_context(|| format!("replying to its request number {}", got.received))?;
        match received {
            Received::Message(_) => {
                got.received += 1;
                // The window starts at the first measured request, after its reply is sent.
                if !meter.started() && phase == MEASURED {
                    meter.begin(message::now_ns());
                }
            }
            Received::Empty => {}
            Received::Lost(n) => bail!("a request channel lost {n} messages"),
            Received::Closed => break,
        }
    }
    report.receiving = Some(got);
    report.cost = meter.end(None);
    Ok(report)
}

#[cfg(test)]
mod tests {
    #[test]
    fn large_messages_read_the_clock_more_often() {
        let stride = super::clock_stride;
        assert_eq!(
            [stride(8), stride(1024), stride(2048), stride(3000), stride(32 << 10), stride(16 << 20)],
            [32, 32, 16, 8, 1, 1]
        );
    }
}
