//! `ipcbench doctor`: what on this machine will bend the figures (`machine` measures them), each
//! with what to do. `run` measures the same conditions at its start, records them in the results
//! and warns when the machine is busy.

use crate::floors::Floors;
use crate::format::mib;
use crate::machine::{BUSY, Conditions, Machine};
use crate::matrix::Case;
use crate::results::RunConfig;

/// A wake-up slower than this (µs) shows in every blocking receive that finds its process asleep.
const SLOW_WAKE_US: f64 = 20.0;
/// Less free /dev/shm than this and the shared-memory libraries may not fit.
const SHM_NEEDED: u64 = 512 << 20;

/// One fact, whether it bends the figures, and what to do.
pub struct Check {
    pub name: &'static str,
    pub value: String,
    pub bends: bool,
    pub advice: String,
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
            "other processes compete for the cores: stop them (top shows which) or expect lower, noisier figures; \
             a run reads the load beside each window and marks a result taken loaded (^)"
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
    out.push(Check {
        name: "topology",
        value: machine.topology.as_ref().map_or("not exposed by /sys".into(), |t| t.summary()),
        bends: false,
        advice:
            "two processes on SMT siblings share a core's caches and its pipeline, on two cores only the \
                 shared cache: --pin places each role on a CPU of its own and records which"
                .into(),
    });
    let clock = machine.clocksource.clone();
    out.push(Check {
        name: "clock source",
        value: clock.clone().unwrap_or_else(|| "not exposed".into()),
        bends: clock.as_deref().is_some_and(|c| c != "tsc"),
        advice: match clock.as_deref() {
            Some("tsc") => "every timestamp is a TSC read, tens of nanoseconds".into(),
            Some(other) => format!(
                "every timestamp goes through {other}, slower than the TSC and part of every latency figure: \
                 echo tsc | sudo tee {} (if available_clocksource lists it)",
                crate::machine::CLOCKSOURCE
            ),
            None => "unknown: compare latencies only with runs on the same machine".into(),
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
    let driver = c.idle.as_deref().and_then(|i| i.split(':').next()).map(str::trim);
    out.push(Check {
        name: "idle driver",
        value: format!(
            "{}{}",
            c.idle.clone().unwrap_or_else(|| "not exposed".into()),
            c.idle_policy.as_ref().map_or(String::new(), |p| format!("; {p}"))
        ),
        bends: c.wake_up_us.is_some(),
        advice: match driver {
            Some("none") | None => "no cpuidle driver: a halted CPU waits in the hypervisor's HLT, and the \
                                    host's own halt polling (which a guest cannot see or set) decides whether \
                                    its wake-up costs a few µs or ~100 µs; every results file records this and \
                                    the waiting modes' figures carry it"
                .into(),
            Some("haltpoll") => "the guest polls before it halts (guest_halt_poll_ns): a wake-up within the \
                                 window is cheap, one after it pays the host's"
                .into(),
            Some(_) => "deep idle states cost a slow wake-up: cpupower idle-set -D 10 (bare metal)".into(),
        },
    });
    out.push(Check {
        name: "huge pages",
        value: c.huge_pages.clone().unwrap_or_else(|| "not exposed".into()),
        bends: false,
        advice: "where a library's shared memory lands (4 KiB or 2 MiB pages) follows these modes; ipcbench \
                 changes nothing here and records them in every results file"
            .into(),
    });
    out.push(Check {
        name: "floors",
        value: c.floors.as_ref().map_or("not measured".into(), Floors::summary),
        bends: false,
        advice:
            "what the machine allows two processes without any library: no figure of a receive mode can go \
                 below its floor (docs/METHOD.md, \"Floors\")"
                .into(),
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

/// What a run does by default, as its results file records it (`RunConfig`).
pub fn defaults(c: &RunConfig) -> Check {
    Check {
        name: "run defaults",
        value: format!(
            "{} runs of {} s after {} s of warm-up, order {}, --verify {}",
            c.runs_text(),
            c.duration.as_secs_f64(),
            c.warmup.as_secs_f64(),
            c.order.as_str(),
            c.verify.as_str()
        ),
        bends: false,
        advice:
            "every results file records its settings; --verify sample checks each message's header, last \
                 word and a window that rotates over the body (--verify full: every byte), and every figure \
                 says the smallest change it tells (docs/METHOD.md)"
                .into(),
    }
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
