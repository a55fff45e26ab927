//! An A/B run as its results file records it (`run --against OTHER`): the two binaries, the
//! settings of the pairing, and each figure's paired ratio with its verdict. Both sides' results
//! are ordinary results, each marked with its `side`; the sentinel is the base binary run once
//! more as a third side of one library per case.

use std::path::PathBuf;
use std::time::Duration;

use ipcbench_api::RecvMode;
use serde::{Deserialize, Serialize};

use super::{Figure, text};

/// The rounds every A/B run takes before it looks at any interval.
pub const MIN_ROUNDS: u32 = 8;
/// The defaults of `--max-rounds`, `--resolve` and `--threshold` with `--against`.
pub const MAX_ROUNDS: u32 = 30;
pub const RESOLVE: f64 = 0.025;
pub const THRESHOLD: f64 = 0.05;

/// An A/B run's window and warm-up by default, shorter than a plain run's: a paired ratio's
/// spread is the host's from round to round, not a window's own (the first A/B here: its
/// rounds' ratios of one figure spread 2 to 10 %, while a 1 s window of a stream counts tens
/// of millions of messages), so rounds of short runs tell more in the same time, and the two
/// runs of a round lie closer together.
pub const AB_DURATION: Duration = Duration::from_millis(250);
pub const AB_WARMUP: Duration = Duration::from_millis(100);

/// Which binary a result's runs came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// This binary: the baseline.
    Base,
    /// `--against`'s binary, held against the base.
    Candidate,
    /// The base binary again, held against the base: what the pairing calls a change where
    /// there is none.
    Sentinel,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Candidate => "candidate",
            Side::Sentinel => "sentinel",
        }
    }
}

/// `run --against`: what an A/B run was asked, stored with the file's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AbSettings {
    /// The candidate's binary, as given.
    pub against: PathBuf,
    /// Changes within this share are no change (`--threshold`).
    pub threshold: f64,
    /// More rounds while a figure's interval is wider than this half-width (`--resolve`).
    pub resolve: f64,
    pub min_rounds: u32,
    pub max_rounds: u32,
    /// `--budget`: no extra round starts past this much of the run's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// `--allow-unresolved`: an unresolved figure does not fail the run.
    #[serde(default)]
    pub allow_unresolved: bool,
    /// `doctor --calibrate`: the busy wait each of the candidate's sending messages takes, in
    /// nanoseconds; absent in every A/B run of two binaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handicap_ns: Option<f64>,
    /// The figure paired, where not each pattern's counted one: `doctor --calibrate` pairs the
    /// round trips' rate (their mean), which every nanosecond of its weight moves, where the
    /// p50 moves in steps of the clock's (about 10 ns here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<Figure>,
}

/// One binary of an A/B run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Binary {
    pub side: Side,
    pub path: PathBuf,
    /// Its `ipcbench --version`.
    pub version: String,
    /// What tells two builds apart: a hash of its bytes and their length.
    pub build: String,
    /// The library versions built into it.
    pub libraries: Vec<(String, String)>,
}

/// What the pairing found of one figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbVerdict {
    /// Worse beyond the threshold, and its test survived the correction.
    Slower,
    Faster,
    /// Its whole interval lies within the threshold.
    NoChange,
    /// Neither: the interval reaches past the threshold without the test holding.
    Unresolved,
}

impl AbVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            AbVerdict::Slower => "slower",
            AbVerdict::Faster => "faster",
            AbVerdict::NoChange => "no change",
            AbVerdict::Unresolved => "unresolved",
        }
    }
}

/// One figure (a case, library and receive mode's counted figure) of one side against the base,
/// over the rounds both ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AbFigure {
    pub case: String,
    pub library: String,
    #[serde(with = "text::mode")]
    pub mode: RecvMode,
    pub figure: Figure,
    /// Candidate, or sentinel.
    pub side: Side,
    /// The medians of the two sides' runs.
    pub base: f64,
    pub other: f64,
    /// The geometric mean of the rounds' ratios (other over base), and its 95 % interval.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The rounds whose two runs both gave the figure in one placement of the host: the
    /// ratio's rounds.
    pub rounds: u32,
    /// The rounds left out because the host's probe moved within or between their two runs.
    #[serde(default)]
    pub unheld: u32,
    /// The interval's half-width as a share: the smallest change these rounds tell; absent
    /// below two rounds (the interval is then the ratio alone, and tells nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// The one-sided test's p value against the threshold (doubled: its direction is the
    /// estimate's); 1 with fewer than two rounds.
    pub p: f64,
    pub verdict: AbVerdict,
}

/// An A/B run: its binaries, how its order was drawn, and what it found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AbRecord {
    pub binaries: Vec<Binary>,
    /// The seed of each round's order: the same seed draws the same orders.
    pub seed: u64,
    pub figures: Vec<AbFigure>,
    /// Trials run, and the run's wall time.
    pub trials: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
}
