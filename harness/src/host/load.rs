//! The load beside a trial: over its measured window, the CPU time processes outside the trial
//! took on the CPUs it could use, the runnable processes, and the hypervisor's steal. A thread of
//! the driver's reads /proc once at the window's start and once at its end (two wake-ups, a few
//! tens of microseconds each, beside a window of a second), so that a figure taken on a busy
//! machine says so, and a window in which a role got nothing says why.

use std::thread::JoinHandle;
use std::time::Instant;

use crate::machine::{CpuTicks, cpu_line, process_fields};
use crate::results::Load;

/// One reading: each of the trial's CPUs' ticks, the machine's runnable processes, each child's
/// CPU ticks (by its place in the trial) and the driver's own.
#[derive(Clone, Debug)]
pub struct Reading {
    at: Instant,
    cpus: Vec<CpuTicks>,
    runnable: u32,
    children: Vec<Option<u64>>,
    own: Option<u64>,
}

impl Reading {
    /// Reads /proc now for these CPUs and these children (their pids).
    pub fn take(cpus: &[usize], pids: &[u32]) -> Option<Reading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let mut ticks = vec![None; cpus.len()];
        let mut runnable = None;
        for line in stat.lines() {
            if let Some((Some(cpu), t)) = cpu_line(line)
                && let Some(i) = cpus.iter().position(|c| *c == cpu)
            {
                ticks[i] = Some(t);
            } else if let Some(n) = line.strip_prefix("procs_running ") {
                runnable = n.trim().parse::<u32>().ok();
            }
        }
        Some(Reading {
            at: Instant::now(),
            cpus: ticks.into_iter().collect::<Option<Vec<_>>>()?,
            // The reader itself is running as it reads.
            runnable: runnable?.saturating_sub(1),
            children: pids.iter().map(|pid| process_ticks(&format!("/proc/{pid}/stat"))).collect(),
            own: process_ticks("/proc/self/stat"),
        })
    }
}

/// A trial's two readings: at its measured window's start and at its end.
#[derive(Clone, Debug)]
pub struct Window {
    pub start: Reading,
    pub end: Reading,
}

/// Seconds per clock tick of /proc's counters.
fn tick_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1.0 / if hz > 0 { hz as f64 } else { 100.0 }
}

impl Window {
    /// The window's length as the driver timed it.
    pub fn seconds(&self) -> f64 {
        self.end.at.saturating_duration_since(self.start.at).as_secs_f64()
    }

    /// CPU seconds child `i` of the trial ran in the window (its every thread), where read.
    pub fn child_cpu_s(&self, i: usize) -> Option<f64> {
        let (a, b) = (self.start.children.get(i).copied()??, self.end.children.get(i).copied()??);
        Some(b.saturating_sub(a) as f64 * tick_s())
    }

    /// The load over the window; None unless every child's time was read at both ends (a
    /// child's time unread would be taken for others').
    pub fn load(&self) -> Option<Load> {
        let window = self.seconds();
        let children = self.start.children.len();
        let every_child = (0..children).all(|i| self.child_cpu_s(i).is_some());
        if window <= 0.0 || self.start.cpus.len() != self.end.cpus.len() || !every_child {
            return None;
        }
        let (mut busy, mut all, mut steal) = (0u64, 0u64, 0u64);
        for (a, b) in self.start.cpus.iter().zip(&self.end.cpus) {
            let d = |x: u64, y: u64| y.saturating_sub(x);
            busy += d(a.busy, b.busy);
            steal += d(a.steal, b.steal);
            all += d(a.busy, b.busy) + d(a.idle, b.idle) + d(a.steal, b.steal);
        }
        let trial: f64 = (0..children).filter_map(|i| self.child_cpu_s(i)).sum();
        let own =
            self.start.own.zip(self.end.own).map_or(0.0, |(a, b)| b.saturating_sub(a) as f64 * tick_s());
        let others = (busy as f64 * tick_s() - trial - own).max(0.0);
        // Every counter read is whole ticks: each CPU's busy time, each child's and the driver's
        // may be short by up to a tick at either end.
        let counters = (self.start.cpus.len() + children + 1) as f64;
        Some(Load {
            others_cores: others / window,
            trial_cores: trial / window,
            cpus: self.start.cpus.len(),
            resolution_cores: 2.0 * counters * tick_s() / window,
            runnable: [self.start.runnable, self.end.runnable],
            steal_share: if all > 0 { steal as f64 / all as f64 } else { 0.0 },
        })
    }
}

/// Reads /proc at `start` and at `end` on a thread of its own, for the trial's CPUs and its
/// children's pids. Its handle gives both readings once the second is taken (None where /proc
/// could not be read).
pub fn sample(
    start: Instant,
    end: Instant,
    cpus: Vec<usize>,
    pids: Vec<u32>,
) -> Option<JoinHandle<Option<Window>>> {
    let sleep_until = |t: Instant| std::thread::sleep(t.saturating_duration_since(Instant::now()));
    std::thread::Builder::new()
        .name("load".into())
        .spawn(move || {
            sleep_until(start);
            let a = Reading::take(&cpus, &pids);
            sleep_until(end);
            let b = Reading::take(&cpus, &pids);
            Some(Window { start: a?, end: b? })
        })
        .ok()
}

/// A process's CPU ticks so far (user and system, every thread), from its `stat` file.
fn process_ticks(path: &str) -> Option<u64> {
    parse_process(&std::fs::read_to_string(path).ok()?)
}

/// `pid (comm) state ppid ... utime stime ...`: utime and stime are the 14th and 15th fields,
/// the 12th and 13th after the command's name.
fn parse_process(stat: &str) -> Option<u64> {
    let mut after = process_fields(stat)?.skip(11);
    Some(after.next()?.parse::<u64>().ok()? + after.next()?.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(at: Instant, cpus: &[(u64, u64, u64)], runnable: u32, children: &[u64], own: u64) -> Reading {
        Reading {
            at,
            cpus: cpus.iter().map(|&(busy, idle, steal)| CpuTicks { busy, idle, steal }).collect(),
            runnable,
            children: children.iter().map(|c| Some(*c)).collect(),
            own: Some(own),
        }
    }

    #[test]
    fn the_others_are_the_cpus_busy_time_less_the_trials_and_the_drivers() {
        let t0 = Instant::now();
        let t1 = t0 + std::time::Duration::from_secs(1);
        let tick = tick_s();
        let per_s = (1.0 / tick) as u64;
        // Two CPUs a second apart: both busy all along; the trial's two children took 0.6 of a
        // second each, the driver nothing: 0.8 cores were others'. A tenth of the time stolen.
        let w = Window {
            start: reading(t0, &[(0, 0, 0), (0, 0, 0)], 3, &[0, 0], 0),
            end: reading(
                t1,
                &[(per_s * 9 / 10, 0, per_s / 10), (per_s * 9 / 10, 0, per_s / 10)],
                5,
                &[per_s * 6 / 10, per_s * 6 / 10],
                0,
            ),
        };
        let load = w.load().unwrap();
        assert!((load.others_cores - 0.6).abs() < 1e-9, "{load:?}");
        assert!((load.trial_cores - 1.2).abs() < 1e-9, "{load:?}");
        assert_eq!((load.cpus, load.runnable), (2, [3, 5]));
        assert!((load.steal_share - 0.1).abs() < 1e-9, "{load:?}");
        assert!((load.resolution_cores - 2.0 * 5.0 * tick).abs() < 1e-9, "{load:?}");
        assert!((w.child_cpu_s(1).unwrap() - 0.6).abs() < 1e-9);
        // The trial's own time is never taken for more than the CPUs were busy.
        let quiet = Window {
            start: reading(t0, &[(0, 0, 0)], 0, &[0], 0),
            end: reading(t1, &[(10, 90, 0)], 0, &[50], 0),
        };
        assert_eq!(quiet.load().unwrap().others_cores, 0.0);
        // A child whose time could not be read at an end: no load, rather than its time taken
        // for others'.
        let mut unread = w.clone();
        unread.end.children[1] = None;
        assert!(unread.load().is_none() && unread.child_cpu_s(0).is_some());
    }

    #[test]
    fn proc_files_are_read_past_a_name_with_spaces_and_parentheses() {
        assert_eq!(parse_process("42 (a (b) c) S 1 42 42 0 -1 4194304 10 0 0 0 7 5 0 0 20 0 1 0"), Some(12));
        assert_eq!(parse_process("42 (x) S 1"), None);
        let (cpu, t) = cpu_line("cpu1 10 1 5 100 3 2 4 6 0 0").unwrap();
        assert_eq!((cpu, t), (Some(1), CpuTicks { busy: 22, idle: 103, steal: 6 }));
        assert!(cpu_line("cpu  10 1 5 100 3 2 4 6 0 0").unwrap().0.is_none(), "the sum's line is no CPU");
        let me = std::process::id();
        let r = Reading::take(&crate::machine::allowed_cpus(), &[me]).expect("/proc is readable");
        assert!(r.children[0].is_some() && r.own.is_some(), "{r:?}");
    }
}
