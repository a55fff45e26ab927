//! A run's settings as the results file records them: what `run` and `sweep` were asked, which
//! `run --resume` takes up again.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    pub runs: u32,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub setup_timeout_s: f64,
    pub skip_oversubscribed: bool,
    #[serde(default = "Order::default")]
    pub order: Order,
    /// `--buffer`: the bytes of messages each library's channel was asked to hold, where the
    /// library lets one set its depth; absent: every library's own defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<usize>,
    /// `--connects`: the fresh senders of each run of a connect case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connects: Option<u32>,
    /// `--runs auto`: `runs` is the least; more followed until each median's interval was narrow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_auto: Option<AutoRuns>,
    /// `--pin`: how each role's process was placed on the CPUs; absent: where the scheduler put it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    pub cases: Vec<String>,
    pub libraries: Vec<String>,
}

impl Settings {
    /// The runs of each result: `3`, or `3 to 15 (auto: until each median's interval is within
    /// 10% of it)`.
    pub fn runs_text(&self) -> String {
        match self.runs_auto {
            Some(a) => format!(
                "{} to {} (auto: until each median's interval is within {} of it)",
                self.runs,
                a.max_runs,
                crate::format::whole_percent(a.width)
            ),
            None => self.runs.to_string(),
        }
    }
}

/// `--runs auto`: a result's runs go on until the interval of each receive mode's median
/// (`noise::median_interval`) is at most `width` of the median, or `max_runs` are done.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoRuns {
    pub width: f64,
    pub max_runs: u32,
}

/// `--pin`: where each role's process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pin {
    /// Each role on a CPU of its own, in the order of the case's roles; more roles than CPUs
    /// take them round again.
    Spread,
    /// Every role on one CPU: they time-share it.
    SameCore,
}

impl Pin {
    pub fn parse(text: &str) -> Option<Pin> {
        match text {
            "spread" => Some(Pin::Spread),
            "same-core" => Some(Pin::SameCore),
            _ => None,
        }
    }

    /// What the pinning did, for the reports.
    pub fn meaning(self) -> &'static str {
        match self {
            Pin::Spread => "each role pinned to a CPU of its own (--pin)",
            Pin::SameCore => "every role pinned to one CPU (--pin same-core)",
        }
    }

    /// The CPU of the `i`th role, from the CPUs the driver may use.
    pub fn cpu(self, cpus: &[usize], i: usize) -> Option<usize> {
        match self {
            _ if cpus.is_empty() => None,
            Pin::Spread => Some(cpus[i % cpus.len()]),
            Pin::SameCore => Some(cpus[0]),
        }
    }
}

/// How the trials of a case are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Each library's runs one after another (its receive modes alternating). The default of
    /// files written before rounds were.
    #[default]
    Sequential,
    /// Rounds: run 1 of every library, then run 2 of every library, ... (A B A B): a drift of
    /// the machine (heat, another process) reaches every library alike.
    Interleaved,
    /// Rounds as `Interleaved`, each round's order rotated by one (A B C, B C A, C A B), so that
    /// no library always runs first after a case's set-up; then extra rounds for the results
    /// short of runs in the case's host state, or split in two. What `run` does by default.
    Rounds,
}
impl Order {
    pub fn parse(text: &str) -> Option<Order> {
        match text {
            "sequential" => Some(Order::Sequential),
            "interleaved" => Some(Order::Interleaved),
            "rounds" => Some(Order::Rounds),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Sequential => "sequential",
            Order::Interleaved => "interleaved",
            Order::Rounds => "rounds",
        }
    }
}
