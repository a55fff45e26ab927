//! cases/matrix.toml as the binary holds it, read into the cases it lists, in its order.

use anyhow::{Context, Result, bail};
use ipcbench_api::Shape;
use serde::Deserialize;

use super::{
    Case, PAIRS_MOST, Pace, SUBSCRIBERS_MOST, check_count, check_rates, check_sizes, check_slow,
    check_timed_sizes, fanout_latency, latency, lossy, pairs, size_label, slow_broadcast,
};

const MATRIX: &str = include_str!("../../../cases/matrix.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    sizes: Vec<usize>,
    case: Vec<CaseEntry>,
    /// The batch cases: the same entries, with their own sizes and the batches.
    #[serde(default)]
    batch: Vec<CaseEntry>,
    /// The fixed-rate latency cases.
    #[serde(default)]
    latency: Vec<LatencyEntry>,
    /// The connection set-up cases.
    #[serde(default)]
    connect: Vec<ConnectEntry>,
    /// The slow-subscriber cases.
    #[serde(default)]
    slow: Vec<SlowEntry>,
    /// The pairs cases.
    #[serde(default)]
    pairs: Vec<PairsEntry>,
    /// The fixed-rate broadcasts.
    #[serde(default, rename = "fanout-latency")]
    fanout_latency: Vec<FanoutLatencyEntry>,
    /// The named sets of cases (`@page`).
    #[serde(default)]
    set: Vec<Set>,
}

/// A named set of cases: `ipcbench run @page`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Set {
    pub name: String,
    /// What it holds, for `ipcbench list` and the help.
    pub about: String,
    /// Case names, globs over the matrix, open-family names or other sets (`@page`).
    pub cases: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConnectEntry {
    sizes: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LatencyEntry {
    /// Messages per second.
    rates: Vec<u64>,
    sizes: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlowEntry {
    delivery: Vec<String>,
    subscribers: Vec<usize>,
    /// How many of the subscribers are slow.
    slow: Vec<usize>,
    sizes: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairsEntry {
    /// `stream`, `stream-rtt`.
    patterns: Vec<String>,
    pairs: Vec<usize>,
    sizes: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FanoutLatencyEntry {
    rates: Vec<u64>,
    subscribers: Vec<usize>,
    sizes: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    pattern: String,
    #[serde(default)]
    delivery: Vec<String>,
    #[serde(default)]
    subscribers: Vec<usize>,
    #[serde(default)]
    shapes: Vec<[usize; 2]>,
    /// A batch entry's sizes (else the file's).
    #[serde(default)]
    sizes: Vec<usize>,
    #[serde(default)]
    batches: Vec<usize>,
}

/// The whole matrix, in the file's order.
pub fn matrix() -> Vec<Case> {
    // Parsed once; the file is part of the binary and a test parses it: a failure here is a
    // build defect.
    static CASES: std::sync::LazyLock<Vec<Case>> =
        std::sync::LazyLock::new(|| parse(MATRIX).expect("cases/matrix.toml is valid"));
    CASES.clone()
}

/// The matrix's named sets, in the file's order: read once, as every selection of cases reads
/// them.
pub fn sets() -> &'static [Set] {
    static SETS: std::sync::LazyLock<Vec<Set>> = std::sync::LazyLock::new(|| {
        // As `matrix`: a test parses the file and expands every set.
        toml::from_str::<MatrixFile>(MATRIX).expect("cases/matrix.toml is valid").set
    });
    &SETS
}

pub(super) fn parse(text: &str) -> Result<Vec<Case>> {
    let file: MatrixFile = toml::from_str(text).context("cases/matrix.toml")?;
    check_sizes(&file.sizes)?;
    let mut cases = Vec::new();
    for entry in &file.case {
        if !entry.sizes.is_empty() || !entry.batches.is_empty() {
            bail!("a [[case]] of pattern {} has sizes or batches: those belong to [[batch]]", entry.pattern);
        }
        for (prefix, shape) in shapes_of(entry)? {
            for &size in &file.sizes {
                cases.push(Case::free(format!("{prefix}/{}", size_label(size)), shape, size));
            }
        }
    }
    for entry in &file.batch {
        if entry.batches.is_empty() || entry.batches.iter().any(|&b| b < 2) {
            bail!("a [[batch]] of pattern {} needs batches of 2 or more messages", entry.pattern);
        }
        check_sizes(&entry.sizes)?;
        let sizes = if entry.sizes.is_empty() { &file.sizes } else { &entry.sizes };
        for (prefix, shape) in shapes_of(entry)? {
            if !matches!(shape, Shape::Stream | Shape::Broadcast { lossy: false, .. }) {
                bail!("batch cases are streams and lossless broadcasts, not {prefix}");
            }
            for &size in sizes {
                for &batch in &entry.batches {
                    let name = format!("batch/{prefix}/{}/x{batch}", size_label(size));
                    cases.push(Case { batch, ..Case::free(name, shape, size) });
                }
            }
        }
    }
    for entry in &file.latency {
        check_timed_sizes("latency", &entry.sizes)?;
        check_rates("latency", &entry.rates)?;
        for &rate in &entry.rates {
            cases.extend(entry.sizes.iter().map(|&size| latency(rate, size)));
        }
    }
    for entry in &file.connect {
        check_timed_sizes("connect", &entry.sizes)?;
        for &size in &entry.sizes {
            let name = format!("connect/{}", size_label(size));
            cases.push(Case { pace: Pace::Connect, ..Case::free(name, Shape::Stream, size) });
        }
    }
    for entry in &file.slow {
        check_sizes(&entry.sizes)?;
        for delivery in &entry.delivery {
            let lossy = lossy(delivery)?;
            for (&subscribers, &slow) in
                entry.subscribers.iter().flat_map(|n| entry.slow.iter().map(move |k| (n, k)))
            {
                check_slow(subscribers, slow)?;
                cases.extend(entry.sizes.iter().map(|&size| slow_broadcast(lossy, subscribers, slow, size)));
            }
        }
    }
    for entry in &file.pairs {
        check_sizes(&entry.sizes)?;
        for pattern in &entry.patterns {
            let round_trip = match pattern.as_str() {
                "stream" => false,
                "stream-rtt" => true,
                other => bail!("pairs of {other:?}: pairs are of stream or stream-rtt"),
            };
            for &n in &entry.pairs {
                check_count("pairs", n, PAIRS_MOST)?;
                cases.extend(entry.sizes.iter().map(|&size| pairs(n, round_trip, size)));
            }
        }
    }
    for entry in &file.fanout_latency {
        check_timed_sizes("fanout-latency", &entry.sizes)?;
        check_rates("fanout-latency", &entry.rates)?;
        for &rate in &entry.rates {
            for &subscribers in &entry.subscribers {
                check_count("subscribers", subscribers, SUBSCRIBERS_MOST)?;
                cases.extend(entry.sizes.iter().map(|&size| fanout_latency(rate, subscribers, size)));
            }
        }
    }
    Ok(cases)
}

/// An entry's variants: (name prefix, shape).
fn shapes_of(entry: &CaseEntry) -> Result<Vec<(String, Shape)>> {
    let mut shapes = Vec::new();
    match entry.pattern.as_str() {
        "stream" => shapes.push(("stream".to_string(), Shape::Stream)),
        "stream-rtt" => shapes.push(("stream-rtt".to_string(), Shape::RoundTrip)),
        "broadcast" => {
            for delivery in &entry.delivery {
                let lossy = lossy(delivery)?;
                for &subscribers in &entry.subscribers {
                    check_count("subscribers", subscribers, SUBSCRIBERS_MOST)?;
                    shapes.push((
                        format!("broadcast/{delivery}/{subscribers}sub"),
                        Shape::Broadcast { lossy, subscribers },
                    ));
                }
            }
        }
        "queue" => {
            for &[producers, consumers] in &entry.shapes {
                shapes
                    .push((format!("queue/{producers}x{consumers}"), Shape::Queue { producers, consumers }));
            }
        }
        "service" => {
            for &[clients, servers] in &entry.shapes {
                shapes.push((format!("service/{clients}c{servers}s"), Shape::Service { clients, servers }));
            }
        }
        other => {
            bail!("unknown pattern {other:?}: stream, stream-rtt, broadcast, queue or service")
        }
    }
    if shapes.is_empty() {
        bail!("pattern {} lists no variants", entry.pattern);
    }
    Ok(shapes)
}
