//! `ipcbench doctor`: what on this machine will bend the figures, each with what to do. `run`
//! measures the same conditions at its start, records them in the results and warns when the
//! machine is busy.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cases::Case;
use crate::results::{Machine, read};
use crate::runs;

/// The conditions a run started in (the results' `conditions`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Conditions {
    /// The 1-minute load average.
    pub load_1m: f64,
    /// The cores other processes kept busy over a short sample at the start (0.0 to `cores`).
    pub busy_cores: f64,
    /// Each core's frequency governor, when the kernel exposes one (not on most VMs).
    pub governor: Option<String>,
    /// The kernel's idle driver and its states (name, exit latency in µs).
    pub idle: Option<String>,
    /// How long a thread blocked on another core takes to run once woken, after that core idled
    /// for a millisecond: the median and the greatest of a few rounds, in µs.
    pub wake_up_us: Option<WakeUp>,
    pub dev_shm_bytes: Option<u64>,
    pub dev_shm_free_bytes: Option<u64>,
    /// fs.mqueue: msg_max, msgsize_max, queues_max; and RLIMIT_MSGQUEUE (bytes).
    pub mq_msg_max: Option<u64>,
    pub mq_msgsize_max: Option<u64>,
    pub mq_queues_max: Option<u64>,
    pub mq_rlimit_bytes: Option<u64>,
    /// Other ipcbench runs alive at the start (their driver's pid).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_runs: Vec<u32>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct WakeUp {
    pub median_us: f64,
    pub max_us: f64,
    pub rounds: usize,
}

/// Other processes keeping this share of a core busy make a machine busy.
pub const BUSY: f64 = 0.2;
/// A wake-up slower than this (µs) shows in every blocking receive that finds its process asleep.
const SLOW_WAKE_US: f64 = 20.0;
/// Less free /dev/shm than this and the shared-memory libraries may not fit.
const SHM_NEEDED: u64 = 512 << 20;

fn number(path: &str) -> Option<u64> {
    read(path)?.parse().ok()
}

impl Conditions {
    /// Measures them: about a fifth of a second.
    pub fn now() -> Conditions {
        let (dev_shm_bytes, dev_shm_free_bytes) = statvfs("/dev/shm");
        let mut rlimit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes the struct we pass.
        let mq_rlimit_bytes = (unsafe { libc::getrlimit(libc::RLIMIT_MSGQUEUE, &mut rlimit) } == 0)
            .then_some(rlimit.rlim_cur)
            .filter(|&r| r != libc::RLIM_INFINITY);
        Conditions {
            load_1m: read("/proc/loadavg")
                .and_then(|l| l.split_whitespace().next()?.parse().ok())
                .unwrap_or(0.0),
            busy_cores: busy_cores(Duration::from_millis(150)),
            governor: governor(),
            idle: idle_states(),
            wake_up_us: wake_up(8),
            dev_shm_bytes,
            dev_shm_free_bytes,
            mq_msg_max: number("/proc/sys/fs/mqueue/msg_max"),
            mq_msgsize_max: number("/proc/sys/fs/mqueue/msgsize_max"),
            mq_queues_max: number("/proc/sys/fs/mqueue/queues_max"),
            mq_rlimit_bytes,
            other_runs: runs::live_others(),
        }
    }
}

fn statvfs(path: &str) -> (Option<u64>, Option<u64>) {
    let Ok(c) = std::ffi::CString::new(path) else { return (None, None) };
    // SAFETY: statvfs is plain old data, filled by the call from a NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return (None, None);
    }
    let block = s.f_frsize as u64;
    (Some(s.f_blocks as u64 * block), Some(s.f_bavail as u64 * block))
}

/// Busy and total jiffies of all cores, from /proc/stat's first line.
fn cpu_times() -> Option<(u64, u64)> {
    let stat = read("/proc/stat")?;
    let fields: Vec<u64> =
        stat.lines().next()?.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
    let total: u64 = fields.iter().take(8).sum();
    // idle and iowait are not busy.
    let idle = fields.get(3)? + fields.get(4).unwrap_or(&0);
    Some((total - idle, total))
}

/// The cores kept busy by others while this process sleeps for `over`.
fn busy_cores(over: Duration) -> f64 {
    let Some((b0, t0)) = cpu_times() else { return 0.0 };
    std::thread::sleep(over);
    let Some((b1, t1)) = cpu_times() else { return 0.0 };
    if t1 <= t0 {
        return 0.0;
    }
    (b1 - b0) as f64 / (t1 - t0) as f64 * crate::results::cores() as f64
}

fn governor() -> Option<String> {
    let mut all: Vec<String> = (0..crate::results::cores().max(1))
        .filter_map(|i| read(&format!("/sys/devices/system/cpu/cpu{i}/cpufreq/scaling_governor")))
        .collect();
    all.sort();
    all.dedup();
    (!all.is_empty()).then(|| all.join(", "))
}

fn idle_states() -> Option<String> {
    let driver = read("/sys/devices/system/cpu/cpuidle/current_driver")?;
    let states: Vec<String> = (0..16)
        .map_while(|i| {
            let dir = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{i}");
            Some(format!("{} ({} µs)", read(&format!("{dir}/name"))?, read(&format!("{dir}/latency"))?))
        })
        .collect();
    Some(format!("{driver}: {}", states.join(", ")))
}

/// Pins the calling thread to the `nth` core it may run on, if there is one.
fn pin(nth: usize) {
    // SAFETY: cpu_set_t is plain old data; the calls take our own thread (pid 0) and a set.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return;
        }
        let Some(cpu) = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &allowed)).nth(nth)
        else {
            return;
        };
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &one);
    }
}

/// The wake-up of an idle core: a thread pinned to a second core blocks on a channel; this one,
/// after a millisecond's sleep (long enough for that core to idle), stamps the time and sends
/// it; the woken thread measures how long it took to run.
fn wake_up(rounds: usize) -> Option<WakeUp> {
    if crate::results::cores() < 2 {
        return None;
    }
    let (to_sleeper, stamps) = mpsc::channel::<Instant>();
    let (to_waker, delays) = mpsc::channel::<Duration>();
    let sleeper = std::thread::spawn(move || {
        pin(1);
        while let Ok(sent) = stamps.recv() {
            if to_waker.send(sent.elapsed()).is_err() {
                break;
            }
        }
    });
    let waker = std::thread::spawn(move || {
        pin(0);
        let mut us = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            std::thread::sleep(Duration::from_millis(1));
            to_sleeper.send(Instant::now()).ok()?;
            us.push(delays.recv().ok()?.as_secs_f64() * 1e6);
        }
        drop(to_sleeper);
        Some(us)
    });
    let mut us = waker.join().ok()??;
    let _ = sleeper.join();
    us.sort_by(f64::total_cmp);
    Some(WakeUp { median_us: us[us.len() / 2], max_us: *us.last()?, rounds })
}

/// One fact, whether it bends the figures, and what to do.
pub struct Check {
    pub name: &'static str,
    pub value: String,
    pub bends: bool,
    pub advice: String,
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

pub fn checks(
    c: &Conditions,
    machine: &Machine,
    cases: &[Case],
    libraries: &[(String, String)],
) -> Vec<Check> {
    let cores = machine.cores;
    let most = cases.iter().map(|c| c.roles().len()).max().unwrap_or(0);
    let over = cases.iter().filter(|c| c.roles().len() > cores).count();
    let mut out = vec![Check {
        name: "cores",
        value: format!(
            "{cores}; the cases need 2 to {most} processes, {over} of {} more than {cores}",
            cases.len()
        ),
        bends: over > 0,
        advice: if over > 0 {
            "cases with more busy processes than cores time-share them: they are marked oversubscribed (*) \
             and measure the scheduler as much as the library; --skip-oversubscribed leaves them out"
                .into()
        } else {
            "every case has a core per process".into()
        },
    }];
    let busy = c.busy_cores > BUSY;
    out.push(Check {
        name: "load",
        value: format!("{:.2} cores busy now, load average {:.2}", c.busy_cores, c.load_1m),
        bends: busy,
        advice: if busy {
            "other processes compete for the cores: stop them (top shows which) or expect lower, noisier figures"
                .into()
        } else {
            "the machine is quiet".into()
        },
    });
    out.push(Check {
        name: "other runs",
        value: if c.other_runs.is_empty() {
            "none".into()
        } else {
            format!(
                "ipcbench running as pid {}",
                c.other_runs.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            )
        },
        bends: !c.other_runs.is_empty(),
        advice: if c.other_runs.is_empty() {
            "no other ipcbench run".into()
        } else {
            "two runs at once disturb each other's figures: wait for it to end".into()
        },
    });
    let governor = c.governor.clone();
    out.push(Check {
        name: "CPU governor",
        value: governor.clone().unwrap_or_else(|| "not exposed".into()),
        bends: governor.as_deref().is_some_and(|g| g != "performance"),
        advice: match governor.as_deref() {
            Some("performance") => "the cores run at full speed".into(),
            Some(_) => "a core that lowers its clock when idle takes time to speed up again: sudo cpupower \
                        frequency-set -g performance"
                .into(),
            None => {
                "no frequency scaling visible here (on a VM the host decides the clock): compare only runs \
                     on the same machine type"
                    .into()
            }
        },
    });
    out.push(Check {
        name: "hypervisor",
        value: machine.hypervisor.clone().unwrap_or_else(|| "none (bare metal)".into()),
        bends: machine.hypervisor.is_some(),
        advice: if machine.hypervisor.is_some() {
            "a VM's cores are host threads: the host's other guests, and a halted core's wake-up, show in the \
             figures; compare only with runs on the same VM type"
                .into()
        } else {
            "bare metal".into()
        },
    });
    let slow = c.wake_up_us.is_some_and(|w| w.median_us > SLOW_WAKE_US);
    out.push(Check {
        name: "idle-core wake-up",
        value: match c.wake_up_us {
            Some(w) => format!(
                "{:.1} µs median, {:.1} µs at most ({} rounds){}",
                w.median_us,
                w.max_us,
                w.rounds,
                c.idle.as_ref().map_or(String::new(), |i| format!("; idle states {i}"))
            ),
            None => "not measured (one core)".into(),
        },
        bends: slow,
        advice: if slow {
            "a blocking receive that finds its process asleep pays this before it runs, a round trip twice: the \
             waiting modes' latencies include it, the polling modes' do not. On bare metal, shallower idle \
             states (cpupower idle-set -D 10) lower it; on a VM, the host's halt polling"
                .into()
        } else {
            "a woken core runs promptly".into()
        },
    });
    let shm_low = c.dev_shm_free_bytes.is_some_and(|f| f < SHM_NEEDED);
    out.push(Check {
        name: "/dev/shm",
        value: match (c.dev_shm_bytes, c.dev_shm_free_bytes) {
            (Some(size), Some(free)) => format!("{} free of {}", mib(free), mib(size)),
            _ => "not mounted".into(),
        },
        bends: shm_low || c.dev_shm_bytes.is_none(),
        advice: if shm_low || c.dev_shm_bytes.is_none() {
            format!(
                "the shared-memory libraries (Aeron's driver directory, iceoryx2, FastIPC, Boost, the control \
                 ring) live here and need about {}: sudo mount -o remount,size=2G /dev/shm",
                mib(SHM_NEEDED)
            )
        } else {
            "room for every shared-memory library".into()
        },
    });
    let small_mq = c.mq_msgsize_max.is_some_and(|m| m < 1024);
    out.push(Check {
        name: "POSIX queues",
        value: format!(
            "msg_max {}, msgsize_max {}, queues_max {}, RLIMIT_MSGQUEUE {}",
            c.mq_msg_max.map_or("?".into(), |v| v.to_string()),
            c.mq_msgsize_max.map_or("?".into(), |v| v.to_string()),
            c.mq_queues_max.map_or("?".into(), |v| v.to_string()),
            c.mq_rlimit_bytes.map_or("unlimited".into(), |v| format!("{v} bytes"))
        ),
        bends: small_mq,
        advice: format!(
            "posix-mq's queues are msg_max deep and take messages up to msgsize_max bytes (larger cases are \
             dashes){}",
            if small_mq { ": raise it, sudo sysctl fs.mqueue.msgsize_max=8192" } else { "" }
        ),
    });
    out.push(Check {
        name: "libraries",
        value: libraries
            .iter()
            .map(|(id, v)| format!("{id} {v}"))
            .collect::<Vec<_>>()
            .join(&format!("\n{:21}", "")),
        bends: false,
        advice: "built into this binary at pinned versions; every result records its library's version"
            .into(),
    });
    out
}

/// The doctor's report, for the terminal.
pub fn render(checks: &[Check]) -> String {
    let mut out = String::from("What on this machine bends the figures (! = it does), and what to do:\n");
    for c in checks {
        out.push_str(&format!(
            "\n{} {:<18} {}\n  {:<18} {}\n",
            if c.bends { "!" } else { " " },
            c.name,
            c.value,
            "",
            c.advice
        ));
    }
    out
}
