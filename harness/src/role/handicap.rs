//! `doctor --calibrate`'s weight: a busy wait of a stated time before each message the control's
//! sender or pinger sends, so that one side of a pairing is slower by a known amount. It exists
//! for the calibration alone: only the control's entry starts it (`registry::control`), and no
//! command line but a child's takes it (`run` refuses it as an unknown flag).

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::Result;
use ipcbench_api::{Library, Setup, Side, Transfer, Tx};

use super::loops::{call_loop, send_loop};
use super::transfer::{Copied, Put};
use super::{ChildArgs, lead};
use crate::matrix::{Case, Pace, Role};

/// A `Put` that spins `spins` turns of a busy loop before each message.
pub struct Handicapped<P> {
    inner: P,
    spins: u64,
}

impl<P: Put> Put for Handicapped<P> {
    fn size(&self) -> usize {
        self.inner.size()
    }

    #[inline(always)]
    fn put<T: Tx>(&mut self, tx: &mut T, seq: u64, phase: u8) -> Result<()> {
        spin(self.spins);
        self.inner.put(tx, seq, phase)
    }
}

/// `n` turns of a loop the compiler may not remove, then a fence: without it the processor runs
/// the message's own loads and stores (and the cache-line transfers they start) under the loop,
/// and a 19 ns wait added only 6 to 9 ns to a 190 ns round trip here.
#[inline(always)]
fn spin(n: u64) {
    for i in 0..n {
        black_box(i);
    }
    fence();
}

/// Later instructions start only once the earlier ones have finished (`lfence` dispatches
/// nothing after it until everything before it is done).
#[inline(always)]
fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: lfence has no operands and is part of SSE2, which every x86-64 processor has.
    unsafe {
        std::arch::x86_64::_mm_lfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// The turns of `spin` that take `weight` here: the fastest of five timings of a million turns
/// (a slower one was interrupted), scaled.
pub fn spins_for(weight: Duration) -> u64 {
    const TURNS: u64 = 1 << 20;
    let fastest = (0..5)
        .map(|_| {
            let t = Instant::now();
            spin(TURNS);
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
        .max(Duration::from_nanos(1));
    (weight.as_nanos() as f64 * TURNS as f64 / fastest.as_nanos() as f64).round() as u64
}

/// Runs one role of the control `L` with its handicap, where it has one: a sender or pinger of
/// a free-running copied stream or round trip. None for every other role, or no weight given:
/// the child runs as any library's (`pattern::start`).
pub fn run<L: Library>(args: &ChildArgs, case: &Case, setup: &Setup) -> Option<Result<()>> {
    // No weight runs the plain loops: its fence alone would cost a few nanoseconds a message.
    let weight = args.handicap.filter(|w| !w.is_zero())?;
    let plain = case.pace == Pace::Free && case.batch <= 1 && case.pairs.is_none();
    if !plain || case.transfer != Transfer::Copy || !matches!(args.role, Role::Sender | Role::Pinger) {
        return None;
    }
    let spins = spins_for(weight);
    let me = args.index as u32;
    let copied = || Copied::new(case.size, me);
    let put = || Handicapped { inner: copied(), spins };
    Some(match args.role {
        Role::Pinger => {
            lead(L::stream(setup, Side::Connect), args, |ep, w, r| call_loop(ep, put(), copied(), me, w, r))
        }
        _ => lead(L::stream(setup, Side::Connect), args, |tx, w, r| send_loop(tx, put(), w, r)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No weight, no spin; the weight a calibration reports is what its pairs measured, not
    /// this count, so the count's timing is not held to the host here.
    #[test]
    fn no_weight_spins_not_at_all() {
        assert_eq!(spins_for(Duration::ZERO), 0);
        assert!(spins_for(Duration::from_micros(10)) > 0);
    }
}
