//! What a trial measured (`Figures`), and the names the report and `ipcbench compare` give its
//! figures: the one a spread is about (`Figure`) and each figure a table or comparison shows
//! (`Measure`).

use serde::{Deserialize, Serialize};

/// The figures of one trial (one run of one case, one library, one receive mode), or a median.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    /// Messages per second one way; round trips (calls) per second for round trips and services;
    /// the slowest subscriber's for a broadcast; all consumers' or clients' together. Where a
    /// pattern's rate is something of its own, the results file names it so (`Names`): the other
    /// subscribers' beside a slow one, every pair's together; read back here.
    #[serde(alias = "others_msgs_per_s", alias = "total_msgs_per_s")]
    pub msgs_per_s: f64,
    /// The p50 round trip; a pairs case's worst pair's (`worst_p50_ns` in the file).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "worst_p50_ns")]
    pub p50_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<f64>,
    /// The rest of a latency result's spectrum: its least, p90, p99.9, p99.99 and greatest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p9999_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<f64>,
    /// A latency case: the share of the window's scheduled messages its sender had not sent when
    /// the window ended (it fell behind its schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind_share: Option<f64>,
    /// A latency case: the sender's own lateness (send minus due time), p50 and p99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_p50_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_p99_ns: Option<f64>,
    /// A connect case: the p50 of the senders' open calls alone (the rest of the set-up time is
    /// the first message's send and delivery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_p50_ns: Option<f64>,
    /// A lossy broadcast: the share of the measured window's messages lost by the subscriber
    /// whose rate is the figure (the slowest); each subscriber's own loss is in its report. A slow
    /// subscriber's case: the others' (`others_lost_share` in the file).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "others_lost_share")]
    pub lost_share: Option<f64>,
    /// A lossy broadcast to several subscribers: how much slower the slowest (not slow)
    /// subscriber was than the fastest, as a share of the fastest's rate (a lossless one's
    /// subscribers all receive every message). A slow subscriber's case: the others' spread
    /// (`others_spread` in the file).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "others_spread")]
    pub subscribers_spread: Option<f64>,
    /// A slow-subscriber case: the slowest slow subscriber's rate, and (lossy) its share lost;
    /// `msgs_per_s` and `lost_share` are then the other subscribers' (named so in the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_msgs_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_lost_share: Option<f64>,
    /// A pairs case: the rate of its slowest pair (`msgs_per_s` is every pair's together, and
    /// `p50_ns` this pair's round trip: `total_msgs_per_s` and `worst_p50_ns` in the file). A
    /// duplex case: its slower way's (`slower_msgs_per_s` in the file; `msgs_per_s` both ways').
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "slower_msgs_per_s")]
    pub worst_msgs_per_s: Option<f64>,
    /// Cores busy: the CPU seconds per second of every role's process, added up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_busy: Option<f64>,
    /// CPU time of all the processes per message (or call): cores busy over the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns_per_msg: Option<f64>,
    /// The peak resident memory of every role's process, added up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<f64>,
}

/// A pattern's own names for the figures whose slot in `Figures` means something of its own
/// there (a slow subscriber's case: the others' rate), as its spec lists them: (the slot's key,
/// the name the results file gives it). Each name is read back into its slot (its alias above).
pub type Names = &'static [(&'static str, &'static str)];

/// How many optional figures a `Figures` has: all but the rate.
pub const OPTIONAL: usize = 19;

impl Figures {
    /// Every optional figure with its name (its key in the results file), in the schema's
    /// order: the one walk the medians and the CSV make of a trial's figures.
    pub fn optional(&self) -> [(&'static str, Option<f64>); OPTIONAL] {
        [
            ("p50_ns", self.p50_ns),
            ("p99_ns", self.p99_ns),
            ("min_ns", self.min_ns),
            ("p90_ns", self.p90_ns),
            ("p999_ns", self.p999_ns),
            ("p9999_ns", self.p9999_ns),
            ("max_ns", self.max_ns),
            ("behind_share", self.behind_share),
            ("late_p50_ns", self.late_p50_ns),
            ("late_p99_ns", self.late_p99_ns),
            ("open_p50_ns", self.open_p50_ns),
            ("lost_share", self.lost_share),
            ("subscribers_spread", self.subscribers_spread),
            ("slow_msgs_per_s", self.slow_msgs_per_s),
            ("slow_lost_share", self.slow_lost_share),
            ("worst_msgs_per_s", self.worst_msgs_per_s),
            ("cores_busy", self.cores_busy),
            ("cpu_ns_per_msg", self.cpu_ns_per_msg),
            ("peak_rss_bytes", self.peak_rss_bytes),
        ]
    }

    /// The optional figures to fill, in `optional`'s order.
    pub fn optional_mut(&mut self) -> [&mut Option<f64>; OPTIONAL] {
        [
            &mut self.p50_ns,
            &mut self.p99_ns,
            &mut self.min_ns,
            &mut self.p90_ns,
            &mut self.p999_ns,
            &mut self.p9999_ns,
            &mut self.max_ns,
            &mut self.behind_share,
            &mut self.late_p50_ns,
            &mut self.late_p99_ns,
            &mut self.open_p50_ns,
            &mut self.lost_share,
            &mut self.subscribers_spread,
            &mut self.slow_msgs_per_s,
            &mut self.slow_lost_share,
            &mut self.worst_msgs_per_s,
            &mut self.cores_busy,
            &mut self.cpu_ns_per_msg,
            &mut self.peak_rss_bytes,
        ]
    }
}

/// Which figure a spread (and a ranking) is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Messages (or calls) per second: higher is better.
    #[serde(alias = "others_msgs_per_s", alias = "total_msgs_per_s")]
    MsgsPerS,
    /// The median round trip: lower is better.
    #[serde(alias = "worst_p50_ns")]
    P50Ns,
}

impl Figure {
    /// The same figure as the tables and `compare` name it: one reading of a value, `Measure::get`.
    pub fn measure(self) -> Measure {
        match self {
            Figure::MsgsPerS => Measure::MsgsPerS,
            Figure::P50Ns => Measure::P50Ns,
        }
    }
}

/// One figure of a set of `Figures`, as the family tables and `ipcbench compare` name it (the
/// comparison's JSON writes it in snake case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    MsgsPerS,
    P50Ns,
    P99Ns,
    P999Ns,
    P9999Ns,
    MaxNs,
    CpuNsPerMsg,
    LostShare,
    CoresBusy,
    SubscribersSpread,
    SlowMsgsPerS,
    SlowLostShare,
    WorstMsgsPerS,
}

impl Measure {
    /// A rate is better higher; a time or a cost, lower.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Measure::MsgsPerS | Measure::SlowMsgsPerS | Measure::WorstMsgsPerS)
    }

    /// A share of messages (lost, a spread), not a rate or a time.
    pub fn is_share(self) -> bool {
        matches!(self, Measure::LostShare | Measure::SubscribersSpread | Measure::SlowLostShare)
    }

    pub fn get(self, f: &Figures) -> Option<f64> {
        match self {
            Measure::MsgsPerS => Some(f.msgs_per_s),
            Measure::P50Ns => f.p50_ns,
            Measure::P99Ns => f.p99_ns,
            Measure::P999Ns => f.p999_ns,
            Measure::P9999Ns => f.p9999_ns,
            Measure::MaxNs => f.max_ns,
            Measure::CpuNsPerMsg => f.cpu_ns_per_msg,
            Measure::LostShare => f.lost_share,
            Measure::CoresBusy => f.cores_busy,
            Measure::SubscribersSpread => f.subscribers_spread,
            Measure::SlowMsgsPerS => f.slow_msgs_per_s,
            Measure::SlowLostShare => f.slow_lost_share,
            Measure::WorstMsgsPerS => f.worst_msgs_per_s,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Measure::MsgsPerS => "rate",
            Measure::P50Ns => "p50",
            Measure::P99Ns => "p99",
            Measure::P999Ns => "p99.9",
            Measure::P9999Ns => "p99.99",
            Measure::MaxNs => "max",
            Measure::CpuNsPerMsg => "CPU/msg",
            Measure::LostShare => "lost",
            Measure::CoresBusy => "cores busy",
            Measure::SubscribersSpread => "subscribers' spread",
            Measure::SlowMsgsPerS => "slow's rate",
            Measure::SlowLostShare => "slow's loss",
            Measure::WorstMsgsPerS => "worst pair's rate",
        }
    }
}

/// The spread of a case's runs: the least and the greatest of its figure and their difference
/// as a share of the median.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Spread {
    pub figure: Figure,
    pub min: f64,
    pub max: f64,
    /// (max - min) / median.
    pub relative: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk names every figure the results file holds, in its order, and fills the one it
    /// names: a figure added to the struct but not to the walk fails here.
    #[test]
    fn the_walk_is_every_figure_in_the_files_order() {
        let mut f = Figures { msgs_per_s: 1.0, ..Figures::default() };
        for (i, slot) in f.optional_mut().into_iter().enumerate() {
            *slot = Some(i as f64 + 2.0);
        }
        let json = serde_json::to_value(f).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let mut walked = vec!["msgs_per_s"];
        walked.extend(f.optional().map(|(name, _)| name));
        assert_eq!(keys.len(), walked.len());
        let mut sorted = walked.clone();
        sorted.sort_unstable();
        let mut file_keys = keys.clone();
        file_keys.sort_unstable();
        assert_eq!(file_keys, sorted);
        for (i, (name, value)) in f.optional().into_iter().enumerate() {
            assert_eq!(json[name], serde_json::json!(i as f64 + 2.0), "{name}");
            assert_eq!(value, Some(i as f64 + 2.0), "{name}");
        }
    }
}
