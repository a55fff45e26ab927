//! A run's settings as the results file records them: what `run` and `sweep` were asked, which
//! `run --resume` takes up again.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A run's settings: its configuration, and the cases and libraries it measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    #[serde(flatten)]
    pub config: RunConfig,
    pub cases: Vec<String>,
    pub libraries: Vec<String>,
}

/// Everything that can change a figure, parsed once: the command line builds it (`options`),
/// the results file stores it (as `settings`, in the names files have always had), `run
/// --resume` reads it back whole and each child's arguments are written from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub runs: u32,
    #[serde(rename = "duration_s", with = "seconds")]
    pub duration: Duration,
    #[serde(rename = "warmup_s", with = "seconds")]
    pub warmup: Duration,
    #[serde(rename = "setup_timeout_s", with = "seconds")]
    pub setup_timeout: Duration,
    pub skip_oversubscribed: bool,
    #[serde(default = "Order::default")]
    pub order: Order,
    /// `--buffer`: the bytes of messages each library's channel was asked to hold, where the
    /// library lets one set its depth; absent: every library's own defaults.
    #[serde(rename = "buffer_bytes", default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<usize>,
    /// `--connects`: the fresh senders of each run of a connect case.
    #[serde(default = "default_connects")]
    pub connects: u32,
    /// `--runs auto`: `runs` is the least; more followed until each figure resolved `--resolve`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_auto: Option<AutoRuns>,
    /// `--pin`: how each role's process was placed on the CPUs; absent: where the scheduler put it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    /// `--slow-work`: what each slow subscriber spent on each message; written when it is not
    /// the default (so a file from before reads and writes back the same).
    #[serde(
        rename = "slow_work_s",
        with = "seconds",
        default = "default_slow_work",
        skip_serializing_if = "is_default_slow_work"
    )]
    pub slow_work: Duration,
    /// `--verify`: how much of each message's body was written and checked. Absent: every byte
    /// (`full`), as every file before the sample was written.
    #[serde(default, skip_serializing_if = "Verify::is_full")]
    pub verify: Verify,
    /// `run --against`: an A/B run's pairing; absent in a plain run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<super::ab::AbSettings>,
}

/// `--verify`: how much of each copied message's body its sender writes and its receiver
/// checks (role/message.rs; docs/METHOD.md, "What every message carries").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verify {
    /// Every byte of every message.
    #[default]
    Full,
    /// The header, the last word and a window whose place rotates with the sequence number:
    /// what `run` does by default.
    Sample,
}

impl Verify {
    pub fn parse(text: &str) -> Option<Verify> {
        match text {
            "full" => Some(Verify::Full),
            "sample" => Some(Verify::Sample),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verify::Full => "full",
            Verify::Sample => "sample",
        }
    }

    fn is_full(&self) -> bool {
        *self == Verify::Full
    }
}

/// `--slow-work` by default (`options` says "10us"): at most a hundred thousand messages a
/// second, below every broadcast's rate here, so the slow subscriber is the slowest.
pub const DEFAULT_SLOW_WORK: Duration = Duration::from_micros(10);

fn default_slow_work() -> Duration {
    DEFAULT_SLOW_WORK
}

fn is_default_slow_work(d: &Duration) -> bool {
    *d == DEFAULT_SLOW_WORK
}

/// A plain run's measured window and warm-up by default (`--duration`, `--warmup`).
pub const DEFAULT_DURATION: Duration = Duration::from_secs(1);
pub const DEFAULT_WARMUP: Duration = Duration::from_millis(300);

/// `--connects` by default, and in a file written before connect cases were.
pub const DEFAULT_CONNECTS: u32 = 20;

fn default_connects() -> u32 {
    DEFAULT_CONNECTS
}

/// A duration as the file writes it: seconds, a float.
mod seconds {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(|e| D::Error::custom(format!("{secs} seconds: {e}")))
    }
}

impl RunConfig {
    /// The runs of each result: `3`, or `3 to 15 (auto: until each figure tells a change of
    /// 5%)`.
    pub fn runs_text(&self) -> String {
        if let Some(ab) = &self.ab {
            return format!(
                "{} to {} rounds of two binaries (A/B against {})",
                ab.min_rounds,
                ab.max_rounds,
                ab.against.display()
            );
        }
        match self.runs_auto {
            Some(a) => format!(
                "{} to {} (auto: until each figure tells a change of {})",
                self.runs,
                a.max_runs,
                crate::format::whole_percent(a.resolve)
            ),
            None => self.runs.to_string(),
        }
    }
}

/// `--runs auto`: a result's runs go on until each receive mode's figure resolves a change of
/// `resolve` (`noise::resolution`, a share), or `max_runs` are done.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoRuns {
    pub resolve: f64,
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
            Pin::SameCore => "every role pinned to one CPU (--pin=same-core)",
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed configuration reads every committed file's settings and writes them back as
    /// they were (a resumed run rewrites its file), and fills what older files left out.
    #[test]
    fn a_files_settings_read_back_as_they_were_written() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        for path in [
            "harness/tests/data/run-2026-12-02T01-50-18Z.json.gz",
            "harness/tests/data/run-2026-12-02T16-28-14Z.json",
        ] {
            let text = crate::results::read_text(std::path::Path::new(&format!("{root}/{path}"))).unwrap();
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            let settings: Settings = serde_json::from_value(doc["settings"].clone()).unwrap();
            assert_eq!(serde_json::to_value(&settings).unwrap(), doc["settings"], "{path}");
        }
        let old = r#"{"runs":3,"duration_s":0.3,"warmup_s":0.03,"setup_timeout_s":10.0,
            "skip_oversubscribed":true,"cases":[],"libraries":["uds"]}"#;
        let c = serde_json::from_str::<Settings>(old).unwrap().config;
        assert_eq!((c.duration, c.warmup), (Duration::from_millis(300), Duration::from_millis(30)));
        assert_eq!((c.order, c.connects, c.buffer, c.pin), (Order::Sequential, 20, None, None));
        let written =
            serde_json::to_string(&Settings { config: c, cases: vec![], libraries: vec![] }).unwrap();
        assert!(written.starts_with(r#"{"runs":3,"duration_s":0.3,"warmup_s":0.03,"#), "{written}");
        let negative = old.replace("0.3,", "-1.0,");
        let e = serde_json::from_str::<Settings>(&negative).unwrap_err().to_string();
        assert!(e.contains("-1 seconds"), "{e}");
    }
}
