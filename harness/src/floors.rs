//! What the machine itself allows two processes, measured without any library: the polling
//! floor (one cache line bounced between two processes, each spinning on the other's store), the
//! waiting floor (two processes that sleep on a futex and wake each other) and the copy floor
//! (memory copy bandwidth at each message size). No IPC figure of a receive mode can beat its
//! floor on the same machine; a figure's multiple of it says how much is left to win. Each takes
//! a small share of a second.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ipcbench_api::RecvMode;
use serde::{Deserialize, Serialize};

use crate::format::{bytes, nanos};
use crate::histogram::{self, Spectrum};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Floors {
    /// One cache line bounced between two processes, each spinning until the other's store
    /// shows: a round trip. None with fewer than two cores (two spinners would time-share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polling: Option<RoundTrip>,
    /// Two processes that block on a futex and wake each other: a round trip (two wake-ups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<RoundTrip>,
    /// Memory copy bandwidth at each message size: one buffer into another, again and again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copy: Vec<CopyFloor>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundTrip {
    pub p50_ns: f64,
    pub p99_ns: f64,
    /// The round trips timed (after a warm-up of a tenth as many).
    pub round_trips: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyFloor {
    pub size: usize,
    pub bytes_per_s: f64,
}

/// Two measurements of a floor (or of an idle core's wake-up) further apart than this factor say
/// the host changed between them.
pub const MOVED: f64 = 1.25;

/// Whether two measurements of one floor differ by more than `MOVED`.
pub fn moved(a: f64, b: f64) -> bool {
    a.max(b) > MOVED * a.min(b)
}

/// Round trips timed per floor, and the time each may take at most.
const POLLING_TRIPS: u64 = 20_000;
const WAITING_TRIPS: u64 = 2_000;
const BUDGET: Duration = Duration::from_millis(300);

impl Floors {
    /// Measures all three; `cores` decides whether a polling floor can be measured.
    pub fn measure(cores: usize, sizes: &[usize]) -> Floors {
        Floors {
            polling: (cores >= 2).then(|| bounce(Way::Spin, POLLING_TRIPS, BUDGET, None)).flatten(),
            waiting: bounce(Way::Futex, WAITING_TRIPS, BUDGET, None),
            copy: sizes.iter().map(|&size| CopyFloor { size, bytes_per_s: copy_bandwidth(size) }).collect(),
        }
    }

    /// The round-trip floor a receive mode's figures are held against.
    pub fn of(&self, mode: RecvMode) -> Option<RoundTrip> {
        match mode {
            RecvMode::Polling => self.polling,
            RecvMode::Waiting => self.waiting,
        }
    }

    /// The copy floor as a rate of messages of `size` (bytes per second over the size), where
    /// the run measured that size.
    pub fn copy_rate(&self, size: usize) -> Option<f64> {
        let c = self.copy.iter().find(|c| c.size == size && size > 0)?;
        Some(c.bytes_per_s / size as f64)
    }

    /// The lower of two measurements of each floor (the run's start and end): a figure is held
    /// against the least the machine allowed during the run.
    pub fn lower(&self, other: &Floors) -> Floors {
        let trip = |a: Option<RoundTrip>, b: Option<RoundTrip>| match (a, b) {
            (Some(a), Some(b)) => Some(if b.p50_ns < a.p50_ns { b } else { a }),
            (a, b) => a.or(b),
        };
        let copy = self
            .copy
            .iter()
            .map(|c| {
                let theirs = other.copy.iter().find(|o| o.size == c.size);
                // The higher bandwidth is the lower floor of time per message.
                theirs.filter(|o| o.bytes_per_s > c.bytes_per_s).copied().unwrap_or(*c)
            })
            .collect();
        Floors {
            polling: trip(self.polling, other.polling),
            waiting: trip(self.waiting, other.waiting),
            copy,
        }
    }

    /// The floors as one line: each round trip's p50 and p99, and the copy bandwidth per size.
    pub fn summary(&self) -> String {
        let trip = |t: Option<RoundTrip>, what: &str| match t {
            Some(t) => format!("{what} round trip p50 {} (p99 {})", nanos(t.p50_ns), nanos(t.p99_ns)),
            None => format!("{what} round trip not measured (it needs two cores)"),
        };
        let copies: Vec<String> = self
            .copy
            .iter()
            .map(|c| format!("{} {:.1} GB/s", bytes(c.size as u64), c.bytes_per_s / 1e9))
            .collect();
        format!(
            "{}; {}; copy {}",
            trip(self.polling, "polling"),
            trip(self.waiting, "waiting"),
            copies.join(", ")
        )
    }
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Way {
    Spin,
    Futex,
}

/// The page the two processes share: the turn word, alone on its cache line.
#[repr(C, align(64))]
struct Shared {
    turn: AtomicU32,
}

/// Whose turn: the child answers odd values with the next even one.
const STOP: u32 = u32::MAX;

fn futex(word: &AtomicU32, op: libc::c_int, value: u32) {
    // SAFETY: the word lives in a shared mapping both processes keep until the end; FUTEX_WAIT
    // returns at once if the word is not `value`, FUTEX_WAKE wakes at most one waiter. The
    // operations are not private: the word is shared between processes.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), op, value, std::ptr::null::<libc::timespec>());
    }
}

/// Waits until `word` is no longer `seen`.
#[inline(always)]
fn wait_change(word: &AtomicU32, seen: u32, way: Way) -> u32 {
    loop {
        let now = word.load(Ordering::Acquire);
        if now != seen {
            return now;
        }
        match way {
            Way::Spin => std::hint::spin_loop(),
            Way::Futex => futex(word, libc::FUTEX_WAIT, seen),
        }
    }
}

fn store(word: &AtomicU32, value: u32, way: Way) {
    word.store(value, Ordering::Release);
    if way == Way::Futex {
        futex(word, libc::FUTEX_WAKE, 1);
    }
}

/// Round trips of one word between this process and a forked child: the parent writes an odd
/// value, the child answers with the next even one, for `trips` round trips or `budget`,
/// whichever ends first; with `cpus`, the parent runs on the first and the child on the second
/// (the calling thread's affinity is changed: call it from a thread of its own). None if the
/// child cannot be made.
pub(crate) fn bounce(
    way: Way,
    trips: u64,
    budget: Duration,
    cpus: Option<(usize, usize)>,
) -> Option<RoundTrip> {
    if let Some((mine, _)) = cpus {
        pin_self(mine).ok()?;
    }
    // SAFETY: a fresh anonymous shared mapping of one page, unmapped below; the child only
    // touches the mapping and calls async-signal-safe functions before `_exit`.
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if page == libc::MAP_FAILED {
        return None;
    }
    let shared = unsafe { &*(page as *const Shared) };
    shared.turn.store(0, Ordering::Relaxed);
    let parent = unsafe { libc::getpid() };
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // The child: it dies with the driver, as the role children do (a killed driver would
        // otherwise leave it spinning), answers until told to stop, and leaves without running
        // anything of the parent's (no destructors, no atexit).
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(0);
            }
            if let Some((_, theirs)) = cpus {
                let _ = pin_self(theirs);
            }
        }
        let mut seen = 0;
        loop {
            seen = wait_change(&shared.turn, seen, way);
            if seen == STOP {
                unsafe { libc::_exit(0) };
            }
            seen += 1;
            store(&shared.turn, seen, way);
        }
    }
    let result = (pid > 0).then(|| {
        let warmup = trips / 10;
        let mut h = histogram::recording();
        let mut last = Instant::now();
        let deadline = last + budget;
        let mut timed = 0;
        for i in 0..warmup + trips {
            let ask = (2 * i + 1) as u32;
            store(&shared.turn, ask, way);
            wait_change(&shared.turn, ask, way);
            // One clock read per round trip, as the harness's own round trips: the end of one
            // is the start of the next.
            let now = Instant::now();
            if i >= warmup {
                h.saturating_record(now.duration_since(last).as_nanos() as u64);
                timed += 1;
            }
            last = now;
            if now > deadline {
                break;
            }
        }
        store(&shared.turn, STOP, way);
        let mut status = 0;
        // SAFETY: our own child, waited for once.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        Spectrum::of(&h).map(|s| RoundTrip { p50_ns: s.p50, p99_ns: s.p99, round_trips: timed })
    });
    // SAFETY: the mapping made above; the child is gone.
    unsafe { libc::munmap(page, 4096) };
    result.flatten()
}

/// Pins the calling thread to `cpu` (async-signal-safe: one system call, for the forked child).
fn pin_self(cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain old data; the call takes our own thread (pid 0) and a set.
    unsafe {
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        if libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &one) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Bytes per second one buffer copies into another at this size, over about 20 ms.
fn copy_bandwidth(size: usize) -> f64 {
    let src = vec![0x5Au8; size];
    let mut dst = vec![0u8; size];
    let start = Instant::now();
    let mut copies = 0u64;
    while start.elapsed() < Duration::from_millis(20) {
        for _ in 0..64 {
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&mut dst);
        }
        copies += 64;
    }
    (copies * size as u64) as f64 / start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each floor of two measurements is the lower: the shorter round trip, the higher copy
    /// bandwidth; a floor only one of them has is kept.
    #[test]
    fn two_measurements_keep_the_lower_floor() {
        let trip = |p50_ns| Some(RoundTrip { p50_ns, p99_ns: p50_ns, round_trips: 1 });
        let copy = |size, bytes_per_s| CopyFloor { size, bytes_per_s };
        let start = Floors {
            polling: trip(400.0),
            waiting: trip(1500.0),
            copy: vec![copy(16, 8e9), copy(1024, 1e11)],
        };
        let end =
            Floors { polling: trip(100.0), waiting: None, copy: vec![copy(16, 5e9), copy(1024, 1.2e11)] };
        let low = start.lower(&end);
        assert_eq!(low.polling.unwrap().p50_ns, 100.0);
        assert_eq!(low.waiting.unwrap().p50_ns, 1500.0);
        assert_eq!(low.copy, vec![copy(16, 8e9), copy(1024, 1.2e11)]);
    }

    #[test]
    fn the_floors_are_measured_and_ordered() {
        let f = Floors::measure(crate::machine::cores(), &[16, 1024]);
        let waiting = f.waiting.expect("a futex round trip");
        assert!(
            waiting.round_trips > 10 && waiting.p50_ns > 0.0 && waiting.p99_ns >= waiting.p50_ns,
            "{f:?}"
        );
        if let Some(polling) = f.polling {
            // (Not compared with the waiting floor: the unit tests run side by side, and a spinning
            // neighbour can share a core with either spinner.)
            assert!(
                polling.round_trips > 100 && polling.p50_ns > 0.0 && polling.p99_ns >= polling.p50_ns,
                "{f:?}"
            );
        }
        assert_eq!(f.copy.iter().map(|c| c.size).collect::<Vec<_>>(), [16, 1024]);
        assert!(f.copy.iter().all(|c| c.bytes_per_s > 1e6), "{f:?}");
        let text = f.summary();
        assert!(
            text.contains("waiting round trip p50 ")
                && text.contains("copy 16 B ")
                && text.contains("1 KiB "),
            "{text}"
        );
    }
}
