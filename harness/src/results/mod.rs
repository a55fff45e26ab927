//! The results file: its schema (self-describing JSON; statuses, modes, roles and figures are
//! typed here and written as the same strings as always), how it is read and refused, and how
//! it is rewritten atomically as each case finishes. Data only: the rules about figures are in
//! `analysis`, their presentation in `report`.

use std::collections::BTreeMap;

use ipcbench_api::{Kind, LibraryInfo, RecvMode, Support, Transfer};
use serde::{Deserialize, Serialize};

use crate::machine::{Conditions, Machine};
use crate::matrix::{Column, Pattern, Role};

pub mod ab;
mod failure;
mod figures;
mod file;
mod host;
mod named;
mod params;
mod settings;
mod text;

pub use failure::Failure;
pub use figures::{Figure, Figures, Measure, Names, Spread};
pub use file::{
    Lock, load, named_as_results, read_text, remove_partial_copies, reserve, stem, write_atomically,
};
pub use host::{
    Cluster, HostCost, HostRecord, HostState, LOADED, Load, LoadSummary, OtherState, Probe, ResultState,
};
pub use params::{CaseParams, ShapeName};
pub use settings::{
    AutoRuns, DEFAULT_CONNECTS, DEFAULT_DURATION, DEFAULT_SLOW_WORK, DEFAULT_WARMUP, Order, Pin, RunConfig,
    Settings, Verify,
};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Document {
    pub schema_version: u32,
    pub tool: String,
    pub started: String,
    #[serde(default)]
    pub finished: Option<String>,
    pub status: RunStatus,
    /// When `run --resume` took the file up again, each time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<String>,
    pub settings: Settings,
    pub machine: Machine,
    /// What the machine was like when the run started (`ipcbench doctor` says what each means).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Conditions>,
    /// The states the host showed, from every run's probes (`host::states`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<HostState>,
    /// What the probes, their retakes and the extra rounds cost the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cost: Option<HostCost>,
    pub toolchain: BTreeMap<String, String>,
    pub libraries: Vec<LibraryRecord>,
    pub results: Vec<CaseResult>,
    /// `run --against`: the two binaries and what the pairing found; absent in a plain run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<ab::AbRecord>,
}

impl Document {
    /// The results of a plain run, or of an A/B run's base binary alone (its record kept): what
    /// every table, `compare` and `spread` read of a file.
    pub fn base_side(mut self) -> Document {
        self.results.retain(|r| r.side.is_none_or(|s| s == ab::Side::Base));
        self
    }
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
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
    /// How its messages travel. A file written before kinds has none; the report takes it from
    /// the registry by id.
    #[serde(default, with = "text::kind", skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    pub version: String,
    #[serde(with = "text::mode::each")]
    pub receive_modes: Vec<RecvMode>,
    pub capabilities: BTreeMap<String, Capability>,
    pub configuration: BTreeMap<String, String>,
}

impl LibraryRecord {
    pub fn new(info: &LibraryInfo) -> Self {
        let cap = |s: Support| Capability { supported: s.is_yes(), text: s.text().into() };
        LibraryRecord {
            id: info.id.into(),
            name: info.name.into(),
            kind: Some(info.kind),
            version: info.version.clone(),
            receive_modes: info.modes.to_vec(),
            capabilities: Column::ALL
                .into_iter()
                .map(|c| (c.key().to_string(), cap(c.of(&info.capabilities))))
                .collect(),
            configuration: info.configuration.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }

    /// Its receive modes, as the report lists them: `waiting, polling`.
    pub fn modes_text(&self) -> String {
        self.receive_modes.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")
    }

    pub fn capability(&self, column: Column) -> Option<&Capability> {
        self.capabilities.get(column.key())
    }
}

/// What became of one case for one library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured: every run of every receive mode passed its checks.
    Ok,
    Failed,
    /// A dash: the library lacks the pattern, or cannot carry the size.
    Unsupported,
    /// Left out on request (`--skip-oversubscribed`).
    Skipped,
    /// The run was interrupted before every run of it was done.
    Interrupted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
            Status::Skipped => "skipped",
            Status::Interrupted => "interrupted",
        }
    }
}

/// One case for one library.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    pub case: String,
    /// What the case is (its shape, counts, pace), so that a reader needs no matrix to know it;
    /// absent in files written before, whose cases are known by their names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<CaseParams>,
    pub pattern: Pattern,
    pub size: usize,
    /// Messages per send and receive call, in a batch case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    /// How its messages travelled: `loan` for a loan case (the library's in-place calls);
    /// absent, copied through each role's own buffers.
    #[serde(default = "text::copied", skip_serializing_if = "text::is_copy", with = "text::transfer")]
    pub transfer: Transfer,
    pub library: String,
    /// `run --against`: the binary its runs came from; absent in a plain run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<ab::Side>,
    pub processes: usize,
    /// More role processes than cores: they time-share, which changes what is measured.
    pub oversubscribed: bool,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A failed result's kind of failure; `reason` has its words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The receive mode whose median is the library's figure (the better).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "text::mode::or_none")]
    pub best_mode: Option<RecvMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<Figures>,
    /// How far the runs of the figure's mode spread around its median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// What a reader must know beside the figure (servers that do not share a load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The smallest change its figure can tell, as a share (`noise::resolution` over the runs
    /// its figure is taken from), as its result settled; absent in files written before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// `--runs auto`: the runs it took (of each receive mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_taken: Option<u32>,
    /// `--pin`: the CPU of each role, and which roles shared one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// Other ipcbench runs (their driver's pid) seen alive on the machine during this case:
    /// they competed for the cores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrent_runs: Vec<u32>,
    /// The host's state its figure comes from (absent in files whose runs carry no probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_state: Option<ResultState>,
    /// The load beside the runs its figure stands on (absent in files written before it was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadSummary>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modes: Vec<ModeResult>,
}

impl CaseResult {
    /// The runs of the mode whose median is the figure.
    pub fn best(&self) -> Option<&ModeResult> {
        self.modes.iter().find(|m| Some(m.mode) == self.best_mode)
    }

    /// The host state its figure comes from, where its runs carry probes.
    pub fn state(&self) -> Option<&str> {
        self.host_state.as_ref().map(|s| s.state.as_str())
    }

    /// Its runs, every mode's.
    pub fn run_count(&self) -> usize {
        self.modes.iter().map(|m| m.runs.len()).sum()
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModeResult {
    #[serde(with = "text::mode")]
    pub mode: RecvMode,
    pub runs: Vec<RunRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<Figures>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    pub figures: Figures,
    /// Each process's own figures, as it reported them (latency buckets left out: they are in
    /// the histograms).
    pub roles: Vec<RoleReport>,
    /// A latency result's whole histogram of the measured window, in nanoseconds (every caller's
    /// round trips; a latency case's arrival minus due time): HdrHistogram's V2 compressed form,
    /// base64 (`histogram::decode`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// A latency case's sender: its own lateness (send minus due time), the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness: Option<String>,
    /// The round of its case it ran in (from 1): its rivals' runs of the same round ran seconds
    /// from it, which is what pairs them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The host around it: its probes before and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostRecord>,
    /// The state its probes fell into (a label of the file's `states`); absent when they moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The load beside it over its measured window (absent where it was not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<Load>,
}

impl RunRecord {
    /// A run's record of its figures alone: no roles' reports or histograms, not yet placed in a
    /// round, a host or a state.
    pub fn of(figures: Figures) -> RunRecord {
        RunRecord {
            figures,
            roles: Vec::new(),
            histogram: None,
            lateness: None,
            round: None,
            host: None,
            state: None,
            load: None,
        }
    }
}

/// One child's figures for one trial, as it reports them (one JSON line) and as the results
/// keep them: a driving role's counts (`sending`) or a receiving role's (`receiving`), each
/// written flat where the other is absent, then what its role and case add.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RoleReport {
    pub role: Role,
    pub index: usize,
    /// `--pin`: the CPU the process ran on when its loop began (it was pinned there before it
    /// opened its endpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// A sender's, publisher's, producer's, pinger's or client's counts.
    #[serde(flatten)]
    pub sending: Option<Sending>,
    /// A receiver's, subscriber's, consumer's, echo's or server's counts.
    #[serde(flatten)]
    pub receiving: Option<Receiving>,
    /// Round trips of the measured window (a latency case's receiver: arrival minus due time):
    /// (nanoseconds, count) of each recorded bucket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<(u64, u64)>,
    /// A latency case's sender: its lateness (send minus due time), the same way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lateness: Vec<(u64, u64)>,
    /// A latency case's sender: the messages its schedule held in the measured window (it sent
    /// `measured` of them), and how long before each due time it stopped sleeping and spun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_margin_ns: Option<u64>,
    /// A connect case's sender: how long its open took (from the clock read before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_ns: Option<u64>,
    /// A round trip's caller, a latency case's receiver: its own p50 and (a receiver) p99, kept
    /// beside the trial's whole histogram (a fan-out's subscribers, each on its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<u64>,
    /// A work queue's consumer: the file of the sequence numbers it took, per producer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_file: Option<String>,
    /// Bytes of shared mappings (shared memory, memfds, shared files) the process had at the end
    /// of its loop: what the library maps for this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_mapped_bytes: Option<u64>,
    /// What the role's measured window cost its process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    /// What the channel holds between sender and receiver, as the adapter set this endpoint up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferRecord>,
}

/// A channel's depth as an adapter reported it (`ipcbench_api::Buffer`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<usize>,
    /// What set it, and what limit cut what `--buffer` asked, if one did.
    pub how: String,
}

impl From<ipcbench_api::Buffer> for BufferRecord {
    fn from(b: ipcbench_api::Buffer) -> Self {
        BufferRecord { messages: b.messages, bytes: b.bytes, how: b.how }
    }
}

/// What one role's measured window cost its process (`getrusage(RUSAGE_SELF)` at the window's
/// start and end: every thread of the process, a library's own included). A driving role's window
/// is the measured one; a receiving role's runs from its first measured message (or, if none
/// came, the start of its loop) to the end of its channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub window_ns: u64,
    /// CPU time in user and kernel mode over the window.
    pub user_ns: u64,
    pub system_ns: u64,
    /// Context switches over the window: the process gave up its core (waited), or was made to.
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// The process's peak resident memory over its life (`ru_maxrss`), at the window's end.
    pub peak_rss_bytes: u64,
    /// The process's threads at the window's end.
    pub threads: u64,
}

impl Cost {
    /// CPU seconds per second of the window.
    pub fn cores_busy(&self) -> Option<f64> {
        (self.window_ns > 0).then(|| (self.user_ns + self.system_ns) as f64 / self.window_ns as f64)
    }
}

/// What a driving role counted, and its measured window (between the two clock reads that
/// switched its phases).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sending {
    /// Messages (or requests) sent in all, warm-up included.
    pub sent: u64,
    /// Messages sent, or round trips completed, in the measured window.
    pub measured: u64,
    pub window_start_ns: u64,
    pub window_end_ns: u64,
}

/// What a receiving role counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receiving {
    /// Messages (or requests) received in all, and those sent in the measured window.
    pub received: u64,
    pub received_measured: u64,
    /// Messages a lossy receiver missed (sequence gaps), in all and in the measured window.
    pub lost: u64,
    pub lost_measured: u64,
    /// What the library itself said was lost, beside the gaps.
    pub library_lost: u64,
}

impl RoleReport {
    /// A report with nothing counted yet.
    pub fn new(role: Role, index: usize) -> RoleReport {
        RoleReport {
            role,
            index,
            cpu: None,
            sending: None,
            receiving: None,
            latency: Vec::new(),
            lateness: Vec::new(),
            scheduled: None,
            spin_margin_ns: None,
            open_ns: None,
            p50_ns: None,
            p99_ns: None,
            taken_file: None,
            shared_mapped_bytes: None,
            cost: None,
            buffer: None,
        }
    }

    /// A driving role's counts (zero where it has none: `analysis` first checks that each
    /// role reported the counts its side keeps).
    pub fn sent(&self) -> Sending {
        self.sending.unwrap_or_default()
    }

    /// A receiving role's counts, the same way.
    pub fn got(&self) -> Receiving {
        self.receiving.unwrap_or_default()
    }

    /// "receiver 0": how reasons name the process.
    pub fn label(&self) -> String {
        self.role.label(self.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    /// Whether `whole` holds everything `part` holds, the same (it may hold more: defaults a
    /// newer schema writes).
    fn holds(whole: &serde_json::Value, part: &serde_json::Value) -> bool {
        use serde_json::Value::{Array, Object};
        match (whole, part) {
            (Object(w), Object(p)) => p.iter().all(|(k, v)| w.get(k).is_some_and(|x| holds(x, v))),
            (Array(w), Array(p)) => w.len() == p.len() && w.iter().zip(p).all(|(x, y)| holds(x, y)),
            _ => whole == part,
        }
    }

    /// Every committed results file loads, and writes back all it held, unchanged: the schema's
    /// typed fields say what the strings said (a file written before the patterns named their
    /// figures holds them under their slots' names, a newer one under the patterns' own).
    #[test]
    fn every_committed_results_file_loads_and_writes_back_the_same() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dirs = [root.join("../results"), root.join("tests/data")];
        let mut seen = 0;
        for entry in dirs.iter().flat_map(|d| fs::read_dir(d).unwrap().flatten()) {
            let path = entry.path();
            // Results files only (`compare` writes its own JSON beside them).
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !name.starts_with("run-") || !named_as_results(&path) {
                continue;
            }
            let doc = load(&path).unwrap_or_else(|e| panic!("{e:#}"));
            let before: serde_json::Value = serde_json::from_str(&read_text(&path).unwrap()).unwrap();
            let slots = serde_json::to_value(&doc).unwrap();
            let named = named::to_value(&doc, |p| crate::pattern::spec(p).names).unwrap();
            let kept = holds(&slots, &before) || holds(&named, &before);
            assert!(kept, "{} changes when read and written", path.display());
            // The bytes a run writes are the tree's, whether or not it needed one.
            let bytes = named::to_vec(&doc, |p| crate::pattern::spec(p).names).unwrap();
            assert_eq!(bytes, serde_json::to_vec(&named).unwrap(), "{}", path.display());
            seen += 1;
        }
        assert!(seen >= 4, "the committed results: {seen}");
    }

    /// The run the README's results are from has every library built in, every pattern (and
    /// loans), both receive modes and what each result cost.
    #[test]
    fn the_readmes_reference_run_is_whole() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let name = crate::report::readme::REFERENCE;
        let readme = fs::read_to_string(root.join("README.md")).unwrap();
        assert!(readme.contains(&format!("<!-- ipcbench report results/{name}.json.gz: first-look -->")));
        let doc = load(&root.join(format!("results/{name}.json.gz"))).unwrap();
        assert_eq!(doc.status, RunStatus::Complete);
        let ids: Vec<&str> = doc.libraries.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, crate::registry::ids(), "every library built in");
        let ok: Vec<&CaseResult> = doc.results.iter().filter(|r| r.status == Status::Ok).collect();
        for pattern in crate::matrix::matrix().iter().map(|c| c.pattern()) {
            assert!(ok.iter().any(|r| r.pattern == pattern), "{pattern} measured");
        }
        assert!(ok.iter().any(|r| r.transfer == ipcbench_api::Transfer::Loan), "a loan measured");
        assert!(ok.iter().any(|r| r.case == "broadcast/lossless/32sub/16B"));
        // Every case of every set: the README's times of the sets are this run's.
        let cases = crate::matrix::select(&crate::matrix::matrix(), &["@all".into()]).unwrap();
        for c in &cases {
            assert!(doc.results.iter().any(|r| r.case == c.name), "{} not in the reference run", c.name);
        }
        for r in &ok {
            let modes: Vec<RecvMode> = r.modes.iter().map(|m| m.mode).collect();
            assert_eq!(modes, [RecvMode::Waiting, RecvMode::Polling], "{} {}", r.case, r.library);
            let connect = !crate::pattern::spec(r.pattern).costed;
            assert!(
                connect || r.median.is_some_and(|f| f.cpu_ns_per_msg.is_some()),
                "{} {} cost",
                r.case,
                r.library
            );
        }
        assert!(doc.conditions.as_ref().is_some_and(|c| c.floors.is_some() && c.floors_after.is_some()));
        assert!(doc.machine.topology.is_some() && doc.machine.clocksource.is_some());
    }

    #[test]
    fn unknown_strings_are_refused() {
        let text = r#"{"mode": "spinning", "runs": []}"#;
        let e = serde_json::from_str::<ModeResult>(text).unwrap_err().to_string();
        assert!(e.contains("unknown receive mode \"spinning\""), "{e}");
        assert!(serde_json::from_str::<Status>("\"fine\"").is_err());
        assert_eq!(serde_json::to_string(&Figure::P50Ns).unwrap(), "\"p50_ns\"");
        assert_eq!(serde_json::to_string(&Status::Unsupported).unwrap(), "\"unsupported\"");
        assert_eq!(serde_json::to_string(&Pattern::StreamRtt).unwrap(), "\"stream-rtt\"");
    }

    /// A role's report holds its side's counts only; a file written when every report held
    /// both (zeros on the other side) reads back with both, and writes back the same.
    #[test]
    fn a_report_holds_its_sides_counts() {
        let sender = RoleReport {
            sending: Some(Sending { sent: 5, measured: 4, window_start_ns: 1, window_end_ns: 2 }),
            ..RoleReport::new(Role::Sender, 0)
        };
        let text = serde_json::to_string(&sender).unwrap();
        assert_eq!(
            text,
            r#"{"role":"sender","index":0,"sent":5,"measured":4,"window_start_ns":1,"window_end_ns":2}"#
        );
        let back: RoleReport = serde_json::from_str(&text).unwrap();
        assert_eq!((back.sending, back.receiving), (sender.sending, None));
        let flat = r#"{"role":"receiver","index":1,"sent":0,"measured":0,"window_start_ns":0,"window_end_ns":0,"received":7,"received_measured":6,"lost":0,"lost_measured":0,"library_lost":0}"#;
        let old: RoleReport = serde_json::from_str(flat).unwrap();
        assert_eq!((old.sent(), old.got().received), (Sending::default(), 7));
        assert_eq!(serde_json::to_string(&old).unwrap(), flat);
    }
}
