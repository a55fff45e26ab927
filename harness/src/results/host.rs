//! What the results file keeps of the host's state: each run's probes before and after its
//! measured window, the states a run's probes fell into, and which state each result's figure
//! comes from (`host::states` finds them; `analysis` decides what is ranked).

use serde::{Deserialize, Serialize};

use super::Figures;
use crate::format::nanos;

/// One probe of the host.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The polling floor's p50: a cache line's round trip between two spinning processes
    /// (absent with one core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polling_ns: Option<f64>,
    /// The waiting floor's p50: two processes that sleep on a futex and wake each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_ns: Option<f64>,
    /// One system call that does no work (getppid): the fastest of a few batches, which an
    /// interruption inside one batch cannot move.
    pub syscall_ns: f64,
}

impl Probe {
    /// Each figure of the probe by name, for the states and the text.
    pub fn dimensions(&self) -> [(&'static str, Option<f64>); 3] {
        [("polling", self.polling_ns), ("waiting", self.waiting_ns), ("syscall", Some(self.syscall_ns))]
    }

    /// `polling 412 ns, waiting 31.2 µs, syscall 96 ns`.
    pub fn text(&self) -> String {
        self.dimensions()
            .iter()
            .filter_map(|(name, v)| Some(format!("{name} {}", nanos((*v)?))))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One run's view of the host: its probe right before and right after the trial, the steal
/// time between them, when it ran, and how often it was taken again because the probe moved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostRecord {
    pub before: Probe,
    pub after: Probe,
    /// The share of the machine's CPU time the hypervisor gave to others between the probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_share: Option<f64>,
    /// Seconds from the run's start (or its resumption) to the probe before.
    pub at_s: f64,
    /// The times this run was taken again because its probe moved between before and after.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retakes: u32,
    /// Its probe still moved after the last retake: kept, marked, and in no state.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub moved: bool,
    /// The first probe after, when it differed from the one before and a second, taken a moment
    /// later, did not: a change of the host shorter than the probes' spacing, not the window's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refuted: Option<Probe>,
}

/// What watching the host cost a run: the time of its probes, of the trials taken again because
/// a probe moved, and of the extra rounds its states asked for, beside the run's whole time
/// (summed over its resumptions; an extra round's time holds its own probes). The budget: probes
/// and retakes within 15 % of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCost {
    pub wall_s: f64,
    pub probes_s: f64,
    pub retakes: u32,
    pub retakes_s: f64,
    pub extra_runs: u32,
    pub extra_s: f64,
}

impl HostCost {
    /// Adds a later part of the run (a resumption).
    pub fn plus(self, o: HostCost) -> HostCost {
        HostCost {
            wall_s: self.wall_s + o.wall_s,
            probes_s: self.probes_s + o.probes_s,
            retakes: self.retakes + o.retakes,
            retakes_s: self.retakes_s + o.retakes_s,
            extra_runs: self.extra_runs + o.extra_runs,
            extra_s: self.extra_s + o.extra_s,
        }
    }

    /// `probes 9 s (1.2 %), 14 retakes 21 s (2.9 %), 40 extra runs 58 s (8.0 %) of 727 s`.
    pub fn text(&self) -> String {
        let share = |s: f64| if self.wall_s > 0.0 { 100.0 * s / self.wall_s } else { 0.0 };
        format!(
            "probes {:.0} s ({:.1} %), {} retakes {:.0} s ({:.1} %), {} extra runs {:.0} s ({:.1} %) of {:.0} s",
            self.probes_s,
            share(self.probes_s),
            self.retakes,
            self.retakes_s,
            share(self.retakes_s),
            self.extra_runs,
            self.extra_s,
            share(self.extra_s),
            self.wall_s
        )
    }
}

/// The load beside one run, over its measured window as the driver timed it (`host::load`): the
/// CPU time processes outside the trial took on the CPUs it could use, the trial's own, the
/// machine's runnable processes at the window's start and end, and the hypervisor's steal.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Cores' worth of the trial's CPUs other processes used (0 to `cpus`).
    pub others_cores: f64,
    /// Cores' worth the trial's processes used (every thread of every role).
    pub trial_cores: f64,
    /// The CPUs the trial could use.
    pub cpus: usize,
    /// The least share of a core /proc's clock ticks tell over this window: `others_cores` is
    /// known to within about this.
    pub resolution_cores: f64,
    /// Runnable processes on the machine at the window's start and at its end.
    pub runnable: [u32; 2],
    /// The share of the CPUs' time the hypervisor gave to others.
    pub steal_share: f64,
}

/// Others using more than this share of a core beside a run (beyond what /proc can tell) make
/// it loaded: a machine as busy as `machine::BUSY` calls busy before a run.
pub const LOADED: f64 = crate::machine::BUSY;

impl Load {
    /// Other processes took a core's share beside it, beyond what the counting can tell.
    pub fn loaded(&self) -> bool {
        self.others_cores > LOADED + self.resolution_cores
    }

    /// `others 0.85 of 2 cores (±0.05), 5 runnable, steal 1.0%`.
    pub fn text(&self) -> String {
        format!(
            "others {:.2} of {} cores (±{:.2}), {} runnable, steal {:.1}%",
            self.others_cores,
            self.cpus,
            self.resolution_cores,
            self.runnable[1],
            self.steal_share * 100.0
        )
    }
}

/// A result's load: over the runs its figure stands on, the others' cores beside them (median,
/// least, most), and how many of those runs were loaded.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadSummary {
    pub others_cores: f64,
    pub least: f64,
    pub most: f64,
    pub loaded: u32,
    pub of: u32,
}

impl LoadSummary {
    /// Over these runs' loads; None when none was read.
    pub fn of(loads: impl IntoIterator<Item = Load>) -> Option<LoadSummary> {
        let loads: Vec<Load> = loads.into_iter().collect();
        let others = || loads.iter().map(|l| l.others_cores);
        Some(LoadSummary {
            others_cores: crate::noise::middle(others().collect())?,
            least: others().fold(f64::INFINITY, f64::min),
            most: others().fold(f64::NEG_INFINITY, f64::max),
            loaded: loads.iter().filter(|l| l.loaded()).count() as u32,
            of: loads.len() as u32,
        })
    }

    /// Most of its runs were loaded: its figure was taken on a busy machine.
    pub fn loaded(&self) -> bool {
        2 * self.loaded > self.of
    }

    /// Some of its runs were loaded and some not: its runs were taken under different loads.
    pub fn mixed(&self) -> bool {
        self.loaded > 0 && self.loaded < self.of
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A state the host showed during the run: the probes that cluster together, by their medians.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostState {
    /// A, B, ...: the order of the states' polling floors (then their system calls).
    pub label: String,
    pub probe: Probe,
    /// The runs in it, and their share of the runs that were in a state.
    pub runs: u32,
    pub share: f64,
}

/// Which state a result's figure comes from, and what it did in the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultState {
    /// The state its figure comes from: its case's (the one the case's runs share most), or its
    /// own most common one when it has no run in its case's.
    pub state: String,
    /// Runs of its figure's receive mode in that state, of all its runs of that mode.
    pub runs: u32,
    pub of: u32,
    /// Whether it is ranked among its case's libraries (false: shown, not ranked; `why` says why).
    pub ranked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Its runs and their median in every other state (and in none: probes that moved).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<OtherState>,
    /// Its runs in the state fall into clusters apart (`host::states::groups` on the figure
    /// that counts): each cluster's median and share; empty when they do not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<Cluster>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OtherState {
    /// The state's label, or `moved` for runs whose probe moved under them.
    pub state: String,
    pub runs: u32,
    pub median: Figures,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    /// The median of the figure that counts over the cluster's runs.
    pub median: f64,
    pub runs: u32,
    pub share: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(others_cores: f64) -> Load {
        Load {
            others_cores,
            trial_cores: 1.0,
            cpus: 2,
            resolution_cores: 0.05,
            runnable: [2, 2],
            steal_share: 0.0,
        }
    }

    #[test]
    fn a_run_is_loaded_past_a_fifth_of_a_core_and_what_its_counting_tells() {
        assert!(!load(0.2).loaded() && !load(0.25).loaded() && load(0.26).loaded());
        assert_eq!(load(0.854).text(), "others 0.85 of 2 cores (±0.05), 2 runnable, steal 0.0%");
    }

    #[test]
    fn a_results_load_is_its_runs_median_range_and_count_loaded() {
        let s = LoadSummary::of([load(0.9), load(0.0), load(1.0)]).unwrap();
        assert_eq!((s.others_cores, s.least, s.most, s.loaded, s.of), (0.9, 0.0, 1.0, 2, 3));
        assert!(s.loaded() && s.mixed());
        let quiet = LoadSummary::of([load(0.0), load(0.1)]).unwrap();
        assert_eq!(quiet.others_cores, 0.05);
        assert!(!quiet.loaded() && !quiet.mixed());
        let all = LoadSummary::of([load(1.0), load(1.0)]).unwrap();
        assert!(all.loaded() && !all.mixed());
        assert_eq!(LoadSummary::of([]), None);
    }
}
