//! The host's probe: a few milliseconds, taken outside every measured window, of what the host
//! lets two processes do right now: the polling floor (a cache line bounced between two
//! processes), the waiting floor (a futex round trip), a system call's cost, and the
//! hypervisor's steal time from /proc/stat between two readings.

use std::time::{Duration, Instant};

use crate::floors::{self, Way};
pub use crate::results::Probe;

/// Round trips per probe: a p50 that a preemption or two cannot move, nor a placement of the
/// cores that lasts only a millisecond (seen here), in a few milliseconds.
const POLLING_TRIPS: u64 = 10_000;
const WAITING_TRIPS: u64 = 100;
const SYSCALLS: u32 = 1_000;
const BATCHES: usize = 5;
/// The most each of the floors may take, however slow the host is.
const BUDGET: Duration = Duration::from_millis(25);

impl Probe {
    /// Takes a probe; the polling and waiting floors run between two CPUs: `cpus` (those a
    /// pinned trial's first two roles use), else the first two this process may use (a forked
    /// child left to the scheduler may start on its parent's CPU and spin there for a time
    /// slice). On a thread of its own, so that the pinning leaves the caller's affinity alone.
    pub fn take(cores: usize, cpus: Option<(usize, usize)>) -> Option<Probe> {
        let cpus = cpus.or_else(|| match crate::machine::allowed_cpus()[..] {
            [a, b, ..] => Some((a, b)),
            _ => None,
        });
        std::thread::Builder::new()
            .name("probe".into())
            .spawn(move || Probe {
                polling_ns: (cores >= 2)
                    .then(|| floors::bounce(Way::Spin, POLLING_TRIPS, BUDGET, cpus))
                    .flatten()
                    .map(|t| t.p50_ns),
                waiting_ns: floors::bounce(Way::Futex, WAITING_TRIPS, BUDGET, cpus).map(|t| t.p50_ns),
                syscall_ns: syscall_cost(),
            })
            .ok()?
            .join()
            .ok()
    }
}

/// Nanoseconds per system call: the fastest of a few batches of a call that does no work.
fn syscall_cost() -> f64 {
    (0..BATCHES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..SYSCALLS {
                // SAFETY: getppid takes nothing and cannot fail.
                unsafe { libc::syscall(libc::SYS_getppid) };
            }
            start.elapsed().as_nanos() as f64 / f64::from(SYSCALLS)
        })
        .fold(f64::INFINITY, f64::min)
}

/// The machine's CPU time so far, from /proc/stat's first line, in clock ticks: all of it, and
/// the share the hypervisor gave to others (steal).
#[derive(Clone, Copy, Debug)]
pub struct Ticks {
    total: u64,
    steal: u64,
}

impl Ticks {
    pub fn now() -> Option<Ticks> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        parse_ticks(stat.lines().next()?)
    }

    /// The share of the CPU time between `self` and `later` that was stolen.
    pub fn steal_share(self, later: Ticks) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        let steal = later.steal.checked_sub(self.steal)?;
        (total > 0).then(|| steal as f64 / total as f64)
    }
}

/// The first line of /proc/stat (every CPU's sum): its ticks and its steal.
fn parse_ticks(line: &str) -> Option<Ticks> {
    let (None, t) = crate::machine::cpu_line(line)? else { return None };
    Some(Ticks { total: t.total(), steal: t.steal })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steal_share_is_the_steal_over_every_tick_between_two_readings() {
        let a = parse_ticks("cpu  100 0 50 800 10 0 0 40 7 0").unwrap();
        let b = parse_ticks("cpu  130 0 60 850 10 0 0 50 9 0").unwrap();
        assert_eq!((a.total, a.steal), (1000, 40));
        assert_eq!(a.steal_share(b), Some(0.1), "10 of 100 ticks");
        assert_eq!(b.steal_share(a), None, "ticks only go up");
        assert!(parse_ticks("cpu0 1 2 3 4 5 6 7 8").is_none() && parse_ticks("cpu  1 2 3").is_none());
    }

    #[test]
    fn a_probe_measures_every_figure_it_can() {
        // A probe's floors have 25 ms each, which other tests holding both cores can use up
        // (then the floor is None, as in a run): the floors themselves are held to a bounce
        // with time to spare, the probe to what it guarantees.
        let budget = Duration::from_secs(20);
        for way in [Way::Spin, Way::Futex] {
            let trip = floors::bounce(way, 100, budget, None).expect("a round trip with time to spare");
            assert!(trip.p50_ns > 0.0 && trip.round_trips == 100, "{trip:?}");
        }
        let p = Probe::take(crate::machine::cores(), None).expect("a probe");
        let positive = |v: Option<f64>| v.is_none_or(|v| v > 0.0);
        assert!(p.syscall_ns > 0.0 && positive(p.polling_ns) && positive(p.waiting_ns), "{p:?}");
        assert!(p.text().ends_with(&format!("syscall {}", crate::format::nanos(p.syscall_ns))), "{p:?}");
        assert_eq!(Probe::take(1, None).expect("a probe").polling_ns, None, "one core bounces nothing");
        assert!(Ticks::now().is_some());
    }
}
