//! What a role's measured window cost its process: CPU time of all its threads, context
//! switches, and its peak memory. Read twice per trial (at the window's start and end), never per
//! message.

use super::message;
use crate::results::Cost;

/// `getrusage(RUSAGE_SELF)` and the clock at one instant.
#[derive(Clone, Copy)]
struct Sample {
    at_ns: u64,
    usage: libc::rusage,
}

fn sample(at_ns: u64, who: libc::c_int) -> Sample {
    // SAFETY: rusage is plain old data; getrusage fills it (RUSAGE_SELF cannot fail).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut usage) };
    Sample { at_ns, usage }
}

fn nanos(t: libc::timeval) -> u64 {
    t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000
}

/// A role's meter: started when its measured window begins, read when it ends.
pub struct Meter {
    start: Option<Sample>,
    /// Started at the first measured message (a receiver's meter starts earlier, at its loop's
    /// start, in case none comes: then the window is the whole loop).
    measured: bool,
    /// Whose usage: the whole process (`RUSAGE_SELF`), or one thread in the unit tests, which
    /// share their process with other tests.
    who: libc::c_int,
}

impl Default for Meter {
    fn default() -> Meter {
        Meter { start: None, measured: false, who: libc::RUSAGE_SELF }
    }
}

impl Meter {
    /// The window begins at `now_ns` (a clock read the loop already made).
    #[cold]
    pub fn begin(&mut self, now_ns: u64) {
        self.start = Some(sample(now_ns, self.who));
        self.measured = true;
    }

    /// A receiving role's loop starts: the window if no measured message ever comes (a
    /// consumer or subscriber that got none), replaced by `begin` at the first that does.
    pub fn begin_loop(&mut self) {
        self.start = Some(sample(message::now_ns(), self.who));
    }

    /// Whether the measured window has begun.
    #[inline(always)]
    pub fn started(&self) -> bool {
        self.measured
    }

    /// The window ends at `now_ns`, or now if `None`: what it cost, or `None` if it never began.
    #[cold]
    pub fn end(&self, now_ns: Option<u64>) -> Option<Cost> {
        let start = self.start?;
        let end = sample(now_ns.unwrap_or_else(message::now_ns), self.who);
        let (a, b) = (&start.usage, &end.usage);
        let delta = |x: i64, y: i64| (y - x).max(0) as u64;
        Some(Cost {
            window_ns: end.at_ns.saturating_sub(start.at_ns),
            user_ns: nanos(b.ru_utime).saturating_sub(nanos(a.ru_utime)),
            system_ns: nanos(b.ru_stime).saturating_sub(nanos(a.ru_stime)),
            voluntary_switches: delta(a.ru_nvcsw, b.ru_nvcsw),
            involuntary_switches: delta(a.ru_nivcsw, b.ru_nivcsw),
            // ru_maxrss is in KiB on Linux.
            peak_rss_bytes: b.ru_maxrss.max(0) as u64 * 1024,
            threads: threads(),
        })
    }
}

/// The process's threads now, from /proc/self/status (0 if it can't be read).
fn threads() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spinning thread costs about its window in CPU time; a sleeping one almost nothing.
    /// (This thread's usage: the other tests share the process.)
    #[test]
    fn spinning_costs_cpu_and_sleeping_does_not() {
        let mut meter = Meter { start: None, measured: false, who: libc::RUSAGE_THREAD };
        assert!(meter.end(None).is_none(), "never begun");
        meter.begin(message::now_ns());
        let until = message::now_ns() + 50_000_000;
        while message::now_ns() < until {
            std::hint::spin_loop();
        }
        let spun = meter.end(None).unwrap();
        let cpu = spun.user_ns + spun.system_ns;
        assert!(spun.window_ns >= 50_000_000, "{}", spun.window_ns);
        assert!(cpu <= spun.window_ns + 10_000_000, "{cpu} of {}", spun.window_ns);
        assert!(cpu >= spun.window_ns / 4, "a spinning thread was mostly on a core: {cpu}");
        assert!(spun.peak_rss_bytes > 0 && spun.threads >= 1);
        meter.begin(message::now_ns());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let slept = meter.end(None).unwrap();
        assert!(slept.user_ns + slept.system_ns < slept.window_ns / 4, "{slept:?}");
        assert!(slept.voluntary_switches >= 1, "{slept:?}");
    }
}
