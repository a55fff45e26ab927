//! The latency cases' loops. The sender keeps a fixed-rate schedule (message `i` is due at
//! start + i / rate), never skips a message, and stamps each with the instant it was due; the
//! receiver times each message from that instant. A stall anywhere is thus charged to every
//! message it delays, not to one (no coordinated omission). The sender sleeps only until a
//! margin before each due time and spins the rest, and records its own lateness beside, so that
//! its lateness never passes for the library's.

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use ipcbench_api::{Received, Rx, Tx};

use super::cost::Meter;
use super::loops::{Ordered, Window, count};
use super::message::{self, MEASURED, WARMUP};
use super::transfer::arrived;
use crate::histogram;
use crate::results::{Receiving, RoleReport, Sending};

/// The schedule: when each message is due.
#[derive(Clone, Copy)]
struct Schedule {
    start: u64,
    rate: u64,
}

impl Schedule {
    /// Per message: one 64-bit multiply and divide (a 128-bit divide is a library call), wide
    /// only past 18 billion messages.
    #[inline(always)]
    fn due(&self, seq: u64) -> u64 {
        let since = match seq.checked_mul(1_000_000_000) {
            Some(ns) => ns / self.rate,
            None => (u128::from(seq) * 1_000_000_000 / u128::from(self.rate)) as u64,
        };
        self.start + since
    }

    /// The first message due at or after `instant`.
    fn first_due_at(&self, instant: u64) -> u64 {
        let since = u128::from(instant.saturating_sub(self.start));
        let mut seq = (since * u128::from(self.rate)).div_ceil(1_000_000_000) as u64;
        while seq > 0 && self.due(seq - 1) >= instant {
            seq -= 1;
        }
        while self.due(seq) < instant {
            seq += 1;
        }
        seq
    }
}

/// The least and the most a sender spins before each due time.
const MARGIN_LEAST: Duration = Duration::from_micros(20);
const MARGIN_MOST: Duration = Duration::from_millis(2);

/// How long before a due time the sender stops sleeping: what a sleep overshot here at worst
/// (measured now, in this process, with the timer slack at its least), and half again. A sleep
/// ends late by the kernel's timer slack (50 µs unless set) and a core's wake-up, which a VM
/// makes tens of microseconds (docs/METHOD.md).
pub fn spin_margin() -> Duration {
    // SAFETY: PR_SET_TIMERSLACK takes a value and changes only this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let asked = Duration::from_micros(200);
    let worst = (0..16)
        .map(|_| {
            let t = std::time::Instant::now();
            std::thread::sleep(asked);
            t.elapsed().saturating_sub(asked)
        })
        .max()
        .unwrap_or_default();
    margin_of(worst)
}

/// The margin for sleeps that overshot by `worst` at most: half again, within its bounds.
fn margin_of(worst: Duration) -> Duration {
    (worst + worst / 2).clamp(MARGIN_LEAST, MARGIN_MOST)
}

/// The latency sender: message `seq` goes at or after its due time, stamped with it. Behind its
/// schedule it sends at once, skipping nothing; it stops at the window's end, and what its
/// schedule held that it had not sent by then is the share it fell behind.
pub fn paced_send_loop<T: Tx>(
    tx: &mut T,
    size: usize,
    me: u32,
    rate: u64,
    margin: Duration,
    w: Window,
    mut report: RoleReport,
) -> Result<RoleReport> {
    let mut buf = vec![0u8; size];
    message::init_timed(&mut buf, me);
    let schedule = Schedule { start: w.start, rate };
    let margin = margin.as_nanos() as u64;
    let mut lateness = histogram::recording();
    let mut meter = Meter::default();
    let mut seq = 0u64;
    let mut phase = WARMUP;
    let mut measured_from = None;
    let mut window_start_ns = 0;
    let (last, end) = loop {
        let due = schedule.due(seq);
        let mut now = message::now_ns();
        // The end: the schedule's (the first message due at or after it), or, behind it, the
        // clock's.
        if due >= w.end {
            break (seq, due);
        }
        if now >= w.end {
            break (seq, now);
        }
        // The window opens at the first message due in it, or, for a sender so far behind that
        // its warm-up's messages are still going out, when the clock reaches it.
        if phase == WARMUP && (due >= w.measure_from || now >= w.measure_from) {
            phase = MEASURED;
            measured_from = Some(seq);
            window_start_ns = due.max(now);
            meter.begin(now);
        }
        if due > now + margin {
            std::thread::sleep(Duration::from_nanos(due - margin - now));
            now = message::now_ns();
        }
        while now < due {
            std::hint::spin_loop();
            now = message::now_ns();
        }
        message::stamp_timed(&mut buf, seq, phase, due);
        tx.send(&buf).with_context(|| format!("sending message {seq}"))?;
        if phase == MEASURED {
            lateness.saturating_record(now - due);
        }
        seq += 1;
    };
    report.cost = meter.end(Some(message::now_ns()));
    // What the schedule held from the first measured message to the window's end, of which the
    // sender sent `measured`: the rest is how far it fell behind. A sender whose send blocked
    // from the warm-up to past the window's end (a library far slower than the schedule, its
    // queue full) sent none of it: its window is still the schedule's, and it is all behind.
    let measured_from = measured_from.unwrap_or_else(|| {
        window_start_ns = w.measure_from;
        last
    });
    report.sending =
        Some(Sending { sent: last, measured: last - measured_from, window_start_ns, window_end_ns: end });
    report.scheduled = Some(schedule.first_due_at(w.end).saturating_sub(measured_from));
    report.spin_margin_ns = Some(margin);
    report.lateness = histogram::buckets(&lateness);
    Ok(report)
}

/// The latency receiver: every message in order, each measured one timed from its due time.
pub fn timed_receive_loop<R: Rx>(rx: &mut R, size: usize, mut report: RoleReport) -> Result<RoleReport> {
    let mut buf = vec![0u8; size];
    let mut hist = histogram::recording();
    let mut check = Ordered::default();
    let mut got = Receiving::default();
    let mut meter = Meter::default();
    meter.begin_loop();
    loop {
        match rx.recv(&mut buf)? {
            Received::Message(n) => {
                let now = message::now_ns();
                let (h, due) = message::read_timed(arrived(&buf, n)?, size).map_err(|e| anyhow!(e))?;
                count(h, &mut check, &mut meter, &mut got)?;
                if h.phase == MEASURED {
                    hist.saturating_record(now.saturating_sub(due));
                }
            }
            Received::Empty => {}
            Received::Lost(n) => got.library_lost += n,
            Received::Closed => break,
        }
    }
    report.receiving = Some(got);
    report.cost = meter.end(None);
    report.latency = histogram::buckets(&hist);
    if !hist.is_empty() {
        report.p50_ns = Some(hist.value_at_quantile(0.5));
        report.p99_ns = Some(hist.value_at_quantile(0.99));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_spaces_messages_evenly_from_the_start() {
        let s = Schedule { start: 1_000, rate: 3 };
        assert_eq!(
            [s.due(0), s.due(1), s.due(2), s.due(3)],
            [1_000, 333_334_333, 666_667_666, 1_000_001_000]
        );
        let fast = Schedule { start: 0, rate: 1_000_000 };
        assert_eq!(fast.due(1_000_000_000), 1_000_000_000_000);
        // Past the 64-bit product, the wide one gives the same schedule.
        let slow = Schedule { start: 0, rate: 7 };
        assert_eq!(slow.due(20_000_000_000), (20_000_000_000u128 * 1_000_000_000 / 7) as u64);
        for instant in [0, 1_000, 1_001, 333_334_333, 333_334_334, 1_000_001_000] {
            let first = s.first_due_at(instant);
            assert!(s.due(first) >= instant && (first == 0 || s.due(first - 1) < instant), "{instant}");
        }
        assert_eq!(fast.first_due_at(2_000), 2);
    }

    /// The margin is the worst overshoot and half again, so the sender wakes before its due
    /// time; a machine that never overshoots still gets the least, a stalled one the most.
    #[test]
    fn the_margin_is_the_worst_overshoot_and_half_again_within_its_bounds() {
        let us = Duration::from_micros;
        assert_eq!(margin_of(us(100)), us(150));
        assert_eq!(margin_of(us(60)), us(90));
        assert_eq!(margin_of(Duration::ZERO), MARGIN_LEAST);
        assert_eq!(margin_of(us(10)), MARGIN_LEAST);
        assert_eq!(margin_of(Duration::from_millis(50)), MARGIN_MOST);
        // And what this machine's sleeps give goes through the same rule.
        let m = spin_margin();
        assert!((MARGIN_LEAST..=MARGIN_MOST).contains(&m), "{m:?}");
    }
}
