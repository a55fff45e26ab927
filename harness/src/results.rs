//! The results file: self-describing JSON, rewritten (atomically) as each case finishes.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use ipcbench_api::{LibraryInfo, Support};
use serde::{Deserialize, Serialize};

use crate::figures::{Figures, RoleReport};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Document {
    pub schema_version: u32,
    pub tool: String,
    pub started: String,
    #[serde(default)]
    pub finished: Option<String>,
    /// running, complete or interrupted.
    pub status: String,
    /// When `run --resume` took the file up again, each time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<String>,
    pub settings: Settings,
    pub machine: Machine,
    /// What the machine was like when the run started (`ipcbench doctor` says what each means).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<crate::doctor::Conditions>,
    pub toolchain: BTreeMap<String, String>,
    pub libraries: Vec<LibraryRecord>,
    pub results: Vec<CaseResult>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    pub runs: u32,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub setup_timeout_s: f64,
    pub skip_oversubscribed: bool,
    /// sequential, or interleaved (the libraries of a case in alternating rounds).
    #[serde(default = "sequential")]
    pub order: String,
    pub cases: Vec<String>,
    pub libraries: Vec<String>,
}

fn sequential() -> String {
    "sequential".into()
}

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
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Capability {
    pub supported: bool,
    /// How the library carries the pattern, or why it has none.
    pub text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LibraryRecord {
    pub id: String,
    pub name: String,
    pub version: String,
    pub receive_modes: Vec<String>,
    pub capabilities: BTreeMap<String, Capability>,
    pub configuration: BTreeMap<String, String>,
}

impl LibraryRecord {
    pub fn new(info: &LibraryInfo) -> Self {
        let c = &info.capabilities;
        let cap = |s: Support| Capability { supported: s.is_yes(), text: s.text().into() };
        LibraryRecord {
            id: info.id.into(),
            name: info.name.into(),
            version: info.version.clone(),
            receive_modes: info.modes.iter().map(|m| m.as_str().into()).collect(),
            capabilities: [
                ("stream", c.stream),
                ("stream-rtt", c.round_trip),
                ("broadcast/lossless", c.broadcast_lossless),
                ("broadcast/lossy", c.broadcast_lossy),
                ("queue", c.queue),
                ("service", c.service),
                ("batch", c.batch),
            ]
            .into_iter()
            .map(|(k, s)| (k.to_string(), cap(s)))
            .collect(),
            configuration: info.configuration.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }
}

/// One case for one library.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    pub case: String,
    pub pattern: String,
    pub size: usize,
    /// Messages per send and receive call, in a batch case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    pub library: String,
    pub processes: usize,
    /// More role processes than cores: they time-share, which changes what is measured.
    pub oversubscribed: bool,
    /// ok, failed, unsupported (a dash), skipped or interrupted.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The receive mode whose median is the library's figure (the faster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<Figures>,
    /// How far the runs of the figure's mode spread around its median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// What a reader must know beside the figure (servers that do not share a load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Other ipcbench runs (their driver's pid) seen alive on the machine during this case:
    /// they competed for the cores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrent_runs: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modes: Vec<ModeResult>,
}

impl CaseResult {
    /// Whether its runs spread more than `driver::NOISY` of the median.
    pub fn noisy(&self) -> bool {
        self.spread.as_ref().is_some_and(|s| s.relative > crate::driver::NOISY)
    }

    /// The marks beside its figure in every table: † a note, ~ noisy, ! another run was
    /// running, * oversubscribed.
    pub fn marks(&self) -> String {
        [
            (self.note.is_some(), " †"),
            (self.noisy(), " ~"),
            (!self.concurrent_runs.is_empty(), " !"),
            (self.oversubscribed, " *"),
        ]
        .into_iter()
        .filter_map(|(on, mark)| on.then_some(mark))
        .collect()
    }
}

/// The spread of a case's runs: the least and the greatest of its figure (the rate, or a round
/// trip's p50) and their difference as a share of the median.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Spread {
    /// msgs_per_s or p50_ns.
    pub figure: String,
    pub min: f64,
    pub max: f64,
    /// (max - min) / median.
    pub relative: f64,
}

impl Spread {
    pub fn of(round_trip: bool, runs: &[RunRecord], median: &Figures) -> Option<Spread> {
        let (figure, pick): (&'static str, fn(&Figures) -> Option<f64>) =
            if round_trip { ("p50_ns", |f| f.p50_ns) } else { ("msgs_per_s", |f| Some(f.msgs_per_s)) };
        let values: Vec<f64> = runs.iter().filter_map(|r| pick(&r.figures)).collect();
        let mid = pick(median)?;
        let min = values.iter().copied().reduce(f64::min)?;
        let max = values.iter().copied().reduce(f64::max)?;
        let relative = if mid > 0.0 { (max - min) / mid } else { 0.0 };
        Some(Spread { figure: figure.into(), min, max, relative })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModeResult {
    pub mode: String,
    pub runs: Vec<RunRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<Figures>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    pub figures: Figures,
    /// Each process's own figures, as it reported them (latency buckets left out).
    pub roles: Vec<RoleReport>,
}

/// Writes the document to `path` so that a reader (or a crash, or a SIGKILL) only ever sees a
/// whole file: write a sibling of this process's own, flush it to disk, rename it over, flush
/// the folder.
pub fn write_atomically(doc: &Document, path: &Path) -> Result<()> {
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    let text = serde_json::to_string_pretty(doc)?;
    let mut f = fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("flushing {}", dir.display()))?;
    }
    Ok(())
}

/// The partial copies of `path` that writers killed mid-write left beside it.
pub fn remove_partial_copies(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else { return };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let prefix = format!("{name}.tmp");
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix)) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// A small text file (/proc, /sys), trimmed; None if it cannot be read.
pub fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

impl Machine {
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
        }
    }
}

/// The cores this process may run on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
