//! The machine a run measures on: what it is (CPU, cores, kernel, hypervisor) and the conditions
//! it was in at the start (load, the wake-up of an idle core, limits), read from /proc and /sys.
//! `ipcbench doctor` says what each means; every results file records both.

use std::fs;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::floors::Floors;

/// What the machine is (the results' `machine`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cores: usize,
    pub kernel: String,
    pub os: String,
    pub hypervisor: Option<String>,
    #[serde(default)]
    pub container: Option<String>,
    pub memory_bytes: u64,
    /// How the CPUs share cores, caches and memory (from /sys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// The kernel's clock source: every timestamp of a run is read through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
}

/// How the CPUs share cores, caches and memory, as /sys/devices/system describes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub cpus: Vec<Cpu>,
    /// Each distinct cache (level, kind, size) and the CPUs that share it.
    pub caches: Vec<Cache>,
    /// Each NUMA node and its CPUs: `node0: 0-1`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa_nodes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    pub cpu: usize,
    pub core_id: Option<u32>,
    pub package: Option<u32>,
    /// The CPUs of its core (SMT siblings), itself included: `0,8`, or `0` with no SMT.
    pub siblings: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    /// Data, Instruction or Unified.
    pub kind: String,
    pub size: String,
    pub shared_cpus: String,
}

/// The clock source this kernel reads time through.
pub const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

impl Topology {
    /// Read from /sys for the CPUs this process may run on; None where /sys says nothing.
    pub fn this() -> Option<Topology> {
        let cpu_dir = |c: usize| format!("/sys/devices/system/cpu/cpu{c}");
        let cpus: Vec<Cpu> = allowed_cpus()
            .into_iter()
            .map(|c| {
                let t = |f: &str| read(&format!("{}/topology/{f}", cpu_dir(c)));
                Cpu {
                    cpu: c,
                    core_id: t("core_id").and_then(|v| v.parse().ok()),
                    package: t("physical_package_id").and_then(|v| v.parse().ok()),
                    siblings: t("thread_siblings_list").unwrap_or_else(|| c.to_string()),
                }
            })
            .collect();
        let mut caches: Vec<Cache> = Vec::new();
        for c in &cpus {
            for i in 0..8 {
                let f = |name: &str| read(&format!("{}/cache/index{i}/{name}", cpu_dir(c.cpu)));
                let (Some(level), Some(kind), Some(size), Some(shared)) =
                    (f("level").and_then(|l| l.parse().ok()), f("type"), f("size"), f("shared_cpu_list"))
                else {
                    continue;
                };
                let cache = Cache { level, kind, size, shared_cpus: shared };
                if !caches.contains(&cache) {
                    caches.push(cache);
                }
            }
        }
        let mut numa_nodes: Vec<String> = fs::read_dir("/sys/devices/system/node")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                name.strip_prefix("node")?.parse::<u32>().ok()?;
                Some(format!("{name}: {}", read(&format!("/sys/devices/system/node/{name}/cpulist"))?))
            })
            .collect();
        numa_nodes.sort();
        (!cpus.is_empty()).then_some(Topology { cpus, caches, numa_nodes })
    }

    /// One line: `2 CPUs on 2 cores (no SMT), 1 package; L1d 48K, L1i 32K, L2 1024K per core;
    /// L3 32768K shared by CPUs 0-1; NUMA node0: 0-1`.
    pub fn summary(&self) -> String {
        let mut cores: Vec<&str> = self.cpus.iter().map(|c| c.siblings.as_str()).collect();
        cores.sort();
        cores.dedup();
        let mut packages: Vec<Option<u32>> = self.cpus.iter().map(|c| c.package).collect();
        packages.sort();
        packages.dedup();
        let smt = if cores.len() == self.cpus.len() {
            "no SMT".to_string()
        } else {
            format!(
                "SMT siblings {}",
                cores.iter().filter(|s| s.contains([',', '-'])).cloned().collect::<Vec<_>>().join(" ")
            )
        };
        let mut out = format!(
            "{} CPUs on {} cores ({smt}), {} package{}",
            self.cpus.len(),
            cores.len(),
            packages.len(),
            if packages.len() == 1 { "" } else { "s" }
        );
        let name = |c: &Cache| {
            let kind = match c.kind.as_str() {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            };
            format!("L{}{kind} {}", c.level, c.size)
        };
        // A cache each CPU has alone is "per core"; a shared one names its CPUs.
        let mut private: Vec<String> = Vec::new();
        for c in self.caches.iter().filter(|c| cores.contains(&c.shared_cpus.as_str())) {
            if !private.contains(&name(c)) {
                private.push(name(c));
            }
        }
        if !private.is_empty() {
            out.push_str(&format!("; {} per core", private.join(", ")));
        }
        for c in self.caches.iter().filter(|c| !cores.contains(&c.shared_cpus.as_str())) {
            out.push_str(&format!("; {} shared by CPUs {}", name(c), c.shared_cpus));
        }
        if !self.numa_nodes.is_empty() {
            out.push_str(&format!("; NUMA {}", self.numa_nodes.join(", ")));
        }
        out
    }
}

/// The conditions a run started in (the results' `conditions`); the default is an idle machine
/// nothing was measured on (the driver's tests).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Conditions {
    /// The 1-minute load average.
    pub load_1m: f64,
    /// The cores other processes kept busy over a short sample at the start (0.0 to `cores`).
    pub busy_cores: f64,
    /// Each core's frequency governor, when the kernel exposes one (not on most VMs).
    pub governor: Option<String>,
    /// The kernel's idle driver and its states (name, exit latency in µs).
    pub idle: Option<String>,
    /// What decides a halted CPU's wake-up beyond the idle driver: the idle governor, and the
    /// guest's halt polling where the kernel has it (`haltpoll`'s parameters). The host decides
    /// the rest (its own halt polling): recorded, not changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_policy: Option<String>,
    /// Transparent huge pages: their modes for anonymous memory, shared memory (/dev/shm) and
    /// defragmentation, as the kernel was set; where a library's ring lands depends on them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_pages: Option<String>,
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
    /// What the machine itself allows two processes: the floors no figure can go below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floors: Option<Floors>,
    /// The floors measured again when the run ended (a run that was interrupted has none): a
    /// VM's host can move its cores closer or further apart during a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floors_after: Option<Floors>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct WakeUp {
    pub median_us: f64,
    pub max_us: f64,
    pub rounds: usize,
}

/// Other processes keeping this share of a core busy make a machine busy.
pub const BUSY: f64 = 0.2;

fn number(path: &str) -> Option<u64> {
    read(path)?.parse().ok()
}

impl Conditions {
    /// Measures them (about half a second); `other_runs` are the ipcbench runs alive now, and
    /// `sizes` the message sizes whose copy floor is measured.
    pub fn now(other_runs: Vec<u32>, sizes: &[usize]) -> Conditions {
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
            idle_policy: idle_policy(),
            huge_pages: huge_pages(),
            wake_up_us: wake_up(8),
            dev_shm_bytes,
            dev_shm_free_bytes,
            mq_msg_max: number("/proc/sys/fs/mqueue/msg_max"),
            mq_msgsize_max: number("/proc/sys/fs/mqueue/msgsize_max"),
            mq_queues_max: number("/proc/sys/fs/mqueue/queues_max"),
            mq_rlimit_bytes,
            other_runs,
            floors: Some(Floors::measure(cores(), sizes)),
            floors_after: None,
        }
    }
}

impl Conditions {
    /// The floors a run's figures are held against: the lower of those measured at its start
    /// and at its end (`Floors::lower`), or the one measured.
    pub fn lowest_floors(&self) -> Option<Floors> {
        match (&self.floors, &self.floors_after) {
            (Some(start), Some(end)) => Some(start.lower(end)),
            (one, other) => one.clone().or_else(|| other.clone()),
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

/// Busy and total jiffies of all cores, from /proc/stat's first line (steal counted busy).
fn cpu_times() -> Option<(u64, u64)> {
    let (None, t) = cpu_line(read("/proc/stat")?.lines().next()?)? else { return None };
    Some((t.busy + t.steal, t.total()))
}

/// One `cpu` line of /proc/stat, in clock ticks: busy (user, nice, system, irq, softirq; guest
/// time is already in user), idle (idle, iowait) and stolen by the hypervisor.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTicks {
    pub busy: u64,
    pub idle: u64,
    pub steal: u64,
}

impl CpuTicks {
    pub fn total(&self) -> u64 {
        self.busy + self.idle + self.steal
    }
}

/// `cpu user nice system idle iowait irq softirq steal ...` (the sum of every CPU: None) or
/// `cpuN ...` (CPU N), read as `CpuTicks`.
pub fn cpu_line(line: &str) -> Option<(Option<usize>, CpuTicks)> {
    let mut fields = line.split_whitespace();
    let cpu = match fields.next()?.strip_prefix("cpu")? {
        "" => None,
        n => Some(n.parse().ok()?),
    };
    let v: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
    if v.len() < 8 {
        return None;
    }
    Some((cpu, CpuTicks { busy: v[0] + v[1] + v[2] + v[5] + v[6], idle: v[3] + v[4], steal: v[7] }))
}

/// The fields of a `/proc/<pid>/stat` after its command's name (the state first): the name may
/// hold spaces and parentheses, so they are counted from its last `)`.
pub fn process_fields(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace())
}

/// The cores kept busy by others while this process sleeps for `over`.
fn busy_cores(over: Duration) -> f64 {
    let Some((b0, t0)) = cpu_times() else { return 0.0 };
    std::thread::sleep(over);
    let Some((b1, t1)) = cpu_times() else { return 0.0 };
    if t1 <= t0 {
        return 0.0;
    }
    (b1 - b0) as f64 / (t1 - t0) as f64 * cores() as f64
}

fn governor() -> Option<String> {
    let mut all: Vec<String> = (0..cores().max(1))
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
    Some(if states.is_empty() { driver } else { format!("{driver}: {}", states.join(", ")) })
}

/// The chosen word of a /sys file of choices (`always [madvise] never`: madvise).
fn chosen(path: &str) -> Option<String> {
    let text = read(path)?;
    let pick = text.split_whitespace().find(|w| w.starts_with('['))?;
    Some(pick.trim_matches(|c| c == '[' || c == ']').to_string())
}

fn idle_policy() -> Option<String> {
    let governor = read("/sys/devices/system/cpu/cpuidle/current_governor")
        .or_else(|| read("/sys/devices/system/cpu/cpuidle/current_governor_ro"));
    let poll: Vec<String> = ["guest_halt_poll_ns", "guest_halt_poll_grow", "guest_halt_poll_shrink"]
        .iter()
        .filter_map(|p| Some(format!("{p} {}", read(&format!("/sys/module/haltpoll/parameters/{p}"))?)))
        .collect();
    let parts: Vec<String> = governor
        .map(|g| format!("governor {g}"))
        .into_iter()
        .chain((!poll.is_empty()).then(|| format!("haltpoll {}", poll.join(", "))))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn huge_pages() -> Option<String> {
    let thp = "/sys/kernel/mm/transparent_hugepage";
    let parts: Vec<String> =
        [("anonymous", "enabled"), ("shared memory", "shmem_enabled"), ("defrag", "defrag")]
            .iter()
            .filter_map(|(what, file)| Some(format!("{what} {}", chosen(&format!("{thp}/{file}"))?)))
            .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The CPUs this process may run on (its affinity mask), in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain old data, filled by the call for our own process (pid 0).
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &allowed)).collect()
    }
}

/// Pins the calling thread (and the threads it starts from now on) to `cpu`.
pub fn pin_to(cpu: usize) -> std::io::Result<()> {
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

/// Pins the calling thread to the `nth` core it may run on, if there is one.
fn pin(nth: usize) {
    if let Some(&cpu) = allowed_cpus().get(nth) {
        let _ = pin_to(cpu);
    }
}

/// The wake-up of an idle core: a thread pinned to a second core blocks on a channel; this one,
/// after a millisecond's sleep (long enough for that core to idle), stamps the time and sends
/// it; the woken thread measures how long it took to run.
fn wake_up(rounds: usize) -> Option<WakeUp> {
    if cores() < 2 {
        return None;
    }
    let (to_sleeper, stamps) = mpsc::channel::<Instant>();
    let (to_waker, delays) = mpsc::channel::<Duration>();
    // A machine out of threads measures no wake-up (None), rather than panicking.
    let sleeper = std::thread::Builder::new()
        .spawn(move || {
            pin(1);
            while let Ok(sent) = stamps.recv() {
                if to_waker.send(sent.elapsed()).is_err() {
                    break;
                }
            }
        })
        .ok()?;
    let waker = std::thread::Builder::new()
        .spawn(move || {
            pin(0);
            let mut us = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                std::thread::sleep(Duration::from_millis(1));
                to_sleeper.send(Instant::now()).ok()?;
                us.push(delays.recv().ok()?.as_secs_f64() * 1e6);
            }
            drop(to_sleeper);
            Some(us)
        })
        .ok()?;
    let mut us = waker.join().ok()??;
    let _ = sleeper.join();
    us.sort_by(f64::total_cmp);
    Some(WakeUp { median_us: us[us.len() / 2], max_us: *us.last()?, rounds })
}

/// The bytes an unprivileged writer may still use in the file system of `path`.
pub fn free_space(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the struct it is given from a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// A small text file (/proc, /sys), trimmed; None if it cannot be read.
pub fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

impl Machine {
    /// The machine as a comparison names it: `AMD EPYC 9B14, 2 cores, Linux 6.1.0-31-amd64`.
    pub fn name(&self) -> String {
        format!("{}, {} cores, Linux {}", self.cpu_model, self.cores, self.kernel)
    }

    /// Whether figures of `other` were measured on this machine: the same CPU, cores and kernel.
    pub fn same_as(&self, other: &Machine) -> bool {
        (&self.cpu_model, self.cores, &self.kernel) == (&other.cpu_model, other.cores, &other.kernel)
    }

    pub fn this() -> Machine {
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let detect = |flag: &str| {
            std::process::Command::new("systemd-detect-virt")
                .arg(flag)
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty() && s != "none")
        };
        let hypervisor = field("flags")
            .filter(|f| f.split_whitespace().any(|x| x == "hypervisor"))
            .map(|_| detect("--vm").unwrap_or_else(|| "yes (the CPU says so; which one is unknown)".into()));
        let os = read("/etc/os-release")
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string()))
            })
            .unwrap_or_else(|| "unknown".into());
        let memory_bytes = read("/proc/meminfo")
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            })
            .map_or(0, |kb| kb * 1024);
        Machine {
            cpu_model: field("model name").unwrap_or_else(|| "unknown".into()),
            cores: cores(),
            kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            os,
            hypervisor,
            container: detect("--container"),
            memory_bytes,
            topology: Topology::this(),
            clocksource: read(CLOCKSOURCE),
        }
    }
}

/// The cores this process may run on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(level: u32, kind: &str, size: &str, shared: &str) -> Cache {
        Cache { level, kind: kind.into(), size: size.into(), shared_cpus: shared.into() }
    }

    #[test]
    fn the_topology_says_which_cpus_share_a_core_and_a_cache() {
        let cpu =
            |cpu, siblings: &str| Cpu { cpu, core_id: Some(0), package: Some(0), siblings: siblings.into() };
        let smt = Topology {
            cpus: vec![cpu(0, "0,2"), cpu(1, "1,3"), cpu(2, "0,2"), cpu(3, "1,3")],
            caches: vec![
                cache(1, "Data", "32K", "0,2"),
                cache(2, "Unified", "1024K", "0,2"),
                cache(1, "Data", "32K", "1,3"),
                cache(2, "Unified", "1024K", "1,3"),
                cache(3, "Unified", "32768K", "0-3"),
            ],
            numa_nodes: vec!["node0: 0-3".into()],
        };
        assert_eq!(
            smt.summary(),
            "4 CPUs on 2 cores (SMT siblings 0,2 1,3), 1 package; L1d 32K, L2 1024K per core; L3 32768K shared \
             by CPUs 0-3; NUMA node0: 0-3"
        );
    }

    #[test]
    fn this_machine_has_a_topology_and_a_clock_source() {
        let t = Topology::this().expect("/sys describes the CPUs");
        assert_eq!(t.cpus.len(), cores());
        assert!(t.summary().starts_with(&format!("{} CPUs on ", cores())), "{}", t.summary());
        assert!(read(CLOCKSOURCE).is_some_and(|c| !c.is_empty()));
    }
}
