//! The case matrix: cases/matrix.toml, built into the binary, expanded into named cases.

mod kinds;

use anyhow::{Context, Result, bail};
use ipcbench_api::{Capabilities, Shape, Support};
use serde::Deserialize;

pub use kinds::{Column, Pattern, Role};

const MATRIX: &str = include_str!("../../../cases/matrix.toml");

/// One case of the matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub name: String,
    pub shape: Shape,
    pub size: usize,
    /// Messages per send and receive call: 1, or a batch case's batch.
    pub batch: usize,
    /// How the sender sends: as fast as it can, or a latency case's way.
    pub pace: Pace,
    /// A pairs case: this many independent copies of its stream or round trip at once, each on
    /// channels of its own.
    pub pairs: Option<usize>,
    /// A slow-subscriber case: how many of its subscribers (the last ones) spend `--slow-work`
    /// on each message.
    pub slow: usize,
}

/// How a case's sender sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// As fast as it can (or, a round trip, as soon as the reply lands).
    Free,
    /// A latency case: this many messages per second, on a schedule.
    Rate(u64),
    /// A connect case: a fresh sender process per message, each timed from before its open.
    Connect,
}

impl Case {
    /// A case of one shape and size, sent freely, one message a call.
    fn free(name: String, shape: Shape, size: usize) -> Case {
        Case { name, shape, size, batch: 1, pace: Pace::Free, pairs: None, slow: 0 }
    }

    /// The pattern's family, as the results and tables group cases.
    pub fn pattern(&self) -> Pattern {
        if self.pairs.is_some() {
            return Pattern::Pairs;
        }
        if self.slow > 0 {
            return Pattern::SlowSubscriber;
        }
        match (self.pace, self.shape) {
            (Pace::Rate(_), Shape::Broadcast { .. }) => return Pattern::FanoutLatency,
            (Pace::Rate(_), _) => return Pattern::Latency,
            (Pace::Connect, _) => return Pattern::Connect,
            (Pace::Free, _) => {}
        }
        match self.shape {
            Shape::Stream => Pattern::Stream,
            Shape::RoundTrip => Pattern::StreamRtt,
            Shape::Broadcast { .. } => Pattern::Broadcast,
            Shape::Queue { .. } => Pattern::Queue,
            Shape::Service { .. } => Pattern::Service,
        }
    }

    /// Every process of the case: the accepting or owning side first (each pair's, in turn).
    pub fn roles(&self) -> Vec<(Role, usize)> {
        let many = |role, n: usize| (0..n).map(move |i| (role, i));
        let pair = match self.shape {
            Shape::RoundTrip => [Role::Echo, Role::Pinger],
            _ => [Role::Receiver, Role::Sender],
        };
        if let Some(n) = self.pairs {
            return (0..n).flat_map(|i| pair.map(|role| (role, i))).collect();
        }
        match self.shape {
            Shape::Stream | Shape::RoundTrip => pair.map(|role| (role, 0)).to_vec(),
            Shape::Broadcast { subscribers, .. } => {
                std::iter::once((Role::Publisher, 0)).chain(many(Role::Subscriber, subscribers)).collect()
            }
            Shape::Queue { producers, consumers } => {
                many(Role::Producer, producers).chain(many(Role::Consumer, consumers)).collect()
            }
            Shape::Service { clients, servers } => {
                many(Role::Server, servers).chain(many(Role::Client, clients)).collect()
            }
        }
    }

    /// Whether subscriber `index` of this case is one of its slow ones (the last `slow`).
    pub fn is_slow(&self, index: usize) -> bool {
        match self.shape {
            Shape::Broadcast { subscribers, .. } => self.slow > 0 && index + self.slow >= subscribers,
            _ => false,
        }
    }

    /// Whether a library has what this case needs: the capability that decides it.
    pub fn support(&self, caps: &Capabilities) -> Support {
        if self.batch > 1 && !caps.batch.is_yes() {
            return caps.batch;
        }
        let support = self.column().of(caps);
        if let (Shape::Broadcast { subscribers, .. }, Some((most, why))) = (self.shape, caps.most_subscribers)
            && support.is_yes()
            && subscribers > most
        {
            return Support::No(why);
        }
        support
    }

    /// The capability its pattern needs.
    pub fn column(&self) -> Column {
        match self.shape {
            Shape::Stream => Column::Stream,
            Shape::RoundTrip => Column::RoundTrip,
            Shape::Broadcast { lossy: false, .. } => Column::BroadcastLossless,
            Shape::Broadcast { lossy: true, .. } => Column::BroadcastLossy,
            Shape::Queue { .. } => Column::Queue,
            Shape::Service { .. } => Column::Service,
        }
    }
}

/// `16B`, `1KiB`, `64KiB`: how sizes appear in case names.
pub fn size_label(size: usize) -> String {
    const UNITS: [(usize, &str); 2] = [(1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if size >= unit && size.is_multiple_of(unit) {
            return format!("{}{name}", size / unit);
        }
    }
    format!("{size}B")
}

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
    // The file is part of the binary and a test parses it: a failure here is a build defect.
    parse(MATRIX).expect("cases/matrix.toml is valid")
}

fn parse(text: &str) -> Result<Vec<Case>> {
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

/// The most subscribers a broadcast may have: each is a process, and a run opens every one.
pub const SUBSCRIBERS_MOST: usize = 256;
/// The most pairs a pairs case may have.
pub const PAIRS_MOST: usize = 64;

fn check_count(what: &str, n: usize, most: usize) -> Result<()> {
    if !(1..=most).contains(&n) {
        bail!("{n} {what}: from 1 to {most}");
    }
    Ok(())
}

fn check_slow(subscribers: usize, slow: usize) -> Result<()> {
    check_count("subscribers", subscribers, SUBSCRIBERS_MOST)?;
    if slow == 0 || slow >= subscribers {
        bail!("{slow} slow of {subscribers} subscribers: at least one slow, and at least one not");
    }
    Ok(())
}

fn check_rates(kind: &str, rates: &[u64]) -> Result<()> {
    if rates.is_empty() || rates.iter().any(|&r| !(1..=RATE_MOST).contains(&r)) {
        bail!("a [[{kind}]] entry needs rates from 1 to {RATE_MOST} messages per second");
    }
    Ok(())
}

fn lossy(delivery: &str) -> Result<bool> {
    match delivery {
        "lossless" => Ok(false),
        "lossy" => Ok(true),
        other => bail!("broadcast delivery {other:?}: lossless or lossy"),
    }
}

fn delivery_label(lossy: bool) -> &'static str {
    if lossy { "lossy" } else { "lossless" }
}

/// `broadcast/lossless/8sub/16B`.
fn broadcast(lossy: bool, subscribers: usize, size: usize) -> Case {
    let name = format!("broadcast/{}/{subscribers}sub/{}", delivery_label(lossy), size_label(size));
    Case::free(name, Shape::Broadcast { lossy, subscribers }, size)
}

/// `broadcast/lossy/4sub-1slow/16B`.
fn slow_broadcast(lossy: bool, subscribers: usize, slow: usize, size: usize) -> Case {
    let name =
        format!("broadcast/{}/{subscribers}sub-{slow}slow/{}", delivery_label(lossy), size_label(size));
    Case { slow, ..Case::free(name, Shape::Broadcast { lossy, subscribers }, size) }
}

/// `pairs/2/stream/16B`, `pairs/4/stream-rtt/16B`.
fn pairs(n: usize, round_trip: bool, size: usize) -> Case {
    let (what, shape) = if round_trip { ("stream-rtt", Shape::RoundTrip) } else { ("stream", Shape::Stream) };
    Case { pairs: Some(n), ..Case::free(format!("pairs/{n}/{what}/{}", size_label(size)), shape, size) }
}

/// `latency/100k/16B`.
fn latency(rate: u64, size: usize) -> Case {
    let name = format!("latency/{}/{}", rate_label(rate), size_label(size));
    Case { pace: Pace::Rate(rate), ..Case::free(name, Shape::Stream, size) }
}

/// `fanout-latency/10k/8sub/16B`: lossless, every subscriber timed.
fn fanout_latency(rate: u64, subscribers: usize, size: usize) -> Case {
    let name = format!("fanout-latency/{}/{subscribers}sub/{}", rate_label(rate), size_label(size));
    Case { pace: Pace::Rate(rate), ..Case::free(name, Shape::Broadcast { lossy: false, subscribers }, size) }
}

/// The smallest message of a latency or connect case: a header and the instant it carries.
pub const TIMED_SMALLEST: usize = 16;

/// A latency or connect entry's sizes: each a size at all, and big enough for a timed message.
fn check_timed_sizes(kind: &str, sizes: &[usize]) -> Result<()> {
    check_sizes(sizes)?;
    if let Some(small) = sizes.iter().find(|&&s| s < TIMED_SMALLEST) {
        bail!("{kind} size {small}: a timed message carries an instant, {TIMED_SMALLEST} bytes or more");
    }
    Ok(())
}

/// The highest rate a latency case may ask for: one message a nanosecond is the clock's limit,
/// long before any library's; ten million a second is far beyond every library here.
const RATE_MOST: u64 = 10_000_000;

/// `1k`, `100k`, `1M`, `2500`: how rates appear in case names.
pub fn rate_label(rate: u64) -> String {
    match rate {
        r if r >= 1_000_000 && r.is_multiple_of(1_000_000) => format!("{}M", r / 1_000_000),
        r if r >= 1_000 && r.is_multiple_of(1_000) => format!("{}k", r / 1_000),
        r => r.to_string(),
    }
}

/// The message sizes of these cases, each once, smallest first.
pub fn sizes_of(cases: &[Case]) -> Vec<usize> {
    let mut sizes: Vec<usize> = cases.iter().map(|c| c.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The largest message a case may ask for: the harness holds a few buffers of it per process.
pub const LARGEST: usize = 64 << 20;

fn check_sizes(sizes: &[usize]) -> Result<()> {
    use ipcbench_api::SMALLEST_MESSAGE as SMALLEST;
    if let Some(bad) = sizes.iter().find(|&&s| !(SMALLEST..=LARGEST).contains(&s)) {
        bail!(
            "message size {bad}: sizes go from {SMALLEST} bytes (a message carries its sender, sequence \
             number and a check) to {}",
            size_label(LARGEST)
        );
    }
    Ok(())
}

/// A size as a user writes it: `4096`, `4096B`, `4KiB`, `1MiB`.
pub fn parse_size(text: &str) -> Result<usize> {
    let size = parse_bytes(text)?;
    check_sizes(&[size])?;
    Ok(size)
}

/// A count of bytes as written on the command line (4096, 4096B, 4KiB, 1MiB), any size.
pub fn parse_bytes(text: &str) -> Result<usize> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let scale = match unit {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        _ => bail!("size {text:?}: write bytes as 4096, 4096B, 4KiB or 1MiB"),
    };
    let n: usize = digits
        .parse()
        .map_err(|_| anyhow::anyhow!("size {text:?}: write bytes as 4096, 4096B, 4KiB or 1MiB"))?;
    n.checked_mul(scale).ok_or_else(|| anyhow::anyhow!("size {text:?} is too large"))
}

/// A size sweep's default sizes, as ipc-bench sweeps them: 8 B to 64 KiB, powers of two.
pub fn sweep_sizes() -> Vec<usize> {
    (3..=16).map(|p| 1usize << p).collect()
}

/// A size sweep: every stream, then every round trip, at each size.
pub fn sweep(sizes: &[usize]) -> Result<Vec<Case>> {
    check_sizes(sizes)?;
    let mut cases = Vec::new();
    for (prefix, shape) in [("stream", Shape::Stream), ("stream-rtt", Shape::RoundTrip)] {
        for &size in sizes {
            let case = Case::free(format!("{prefix}/{}", size_label(size)), shape, size);
            if !cases.contains(&case) {
                cases.push(case);
            }
        }
    }
    Ok(cases)
}

/// A rate sweep's default rates (`sweep --rates`): from a thousand to ten million a second.
pub const SWEEP_RATES: [u64; 7] = [1_000, 10_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000];

/// A rate sweep: the latency case at each rate, at each size, each once.
pub fn rate_sweep(rates: &[u64], sizes: &[usize]) -> Result<Vec<Case>> {
    check_rates("latency", rates)?;
    check_timed_sizes("latency", sizes)?;
    let mut cases: Vec<Case> = Vec::new();
    for &rate in rates {
        for &size in sizes {
            let case = latency(rate, size);
            if !cases.contains(&case) {
                cases.push(case);
            }
        }
    }
    Ok(cases)
}

/// A rate as a user writes it: `1000`, `1k`, `300k`, `1M`.
pub fn parse_rate(text: &str) -> Result<u64> {
    let t = text.trim();
    let (digits, scale) = match t.strip_suffix('k') {
        Some(d) => (d, 1_000),
        None => t.strip_suffix('M').map_or((t, 1), |d| (d, 1_000_000)),
    };
    let rate =
        digits.parse::<u64>().ok().and_then(|n| n.checked_mul(scale)).ok_or_else(|| {
            anyhow::anyhow!("rate {text:?}: write messages per second as 1000, 1k, 300k or 1M")
        })?;
    check_rates("latency", &[rate]).map_err(|_| {
        anyhow::anyhow!("rate {text:?}: rates go from 1 to {} messages per second", rate_label(RATE_MOST))
    })?;
    Ok(rate)
}

/// A case of the open families by its name, at any size, count or rate: `stream/4KiB`,
/// `broadcast/lossy/64sub/16B`, `broadcast/lossless/8sub-2slow/1KiB`, `pairs/3/stream-rtt/16B`,
/// `latency/300k/16B`, `fanout-latency/1k/8sub/16B`. Only the canonical name is one (`4KiB`, not
/// `4096B`); a glob or a count out of bounds is none.
pub fn named(name: &str) -> Option<Case> {
    if name.contains(['*', '?']) {
        return None;
    }
    let size = |label: &str| parse_size(label).ok();
    let timed = |label: &str| size(label).filter(|&s| s >= TIMED_SMALLEST);
    let rate = |label: &str| parse_rate(label).ok();
    let count = |text: &str, most: usize| text.parse().ok().filter(|n| (1..=most).contains(n));
    let subscribers = |text: &str| count(text.strip_suffix("sub")?, SUBSCRIBERS_MOST);
    let parts: Vec<&str> = name.split('/').collect();
    let case = match parts[..] {
        ["stream", s] => sweep(&[size(s)?]).ok()?.swap_remove(0),
        ["stream-rtt", s] => sweep(&[size(s)?]).ok()?.swap_remove(1),
        ["broadcast", d, n, s] => {
            let lossy = lossy(d).ok()?;
            match n.split_once('-') {
                None => broadcast(lossy, subscribers(n)?, size(s)?),
                Some((n, k)) => {
                    let (n, k) = (subscribers(n)?, count(k.strip_suffix("slow")?, SUBSCRIBERS_MOST)?);
                    check_slow(n, k).ok()?;
                    slow_broadcast(lossy, n, k, size(s)?)
                }
            }
        }
        ["pairs", n, "stream", s] => pairs(count(n, PAIRS_MOST)?, false, size(s)?),
        ["pairs", n, "stream-rtt", s] => pairs(count(n, PAIRS_MOST)?, true, size(s)?),
        ["latency", r, s] => latency(rate(r)?, timed(s)?),
        ["fanout-latency", r, n, s] => fanout_latency(rate(r)?, subscribers(n)?, timed(s)?),
        _ => return None,
    };
    (case.name == name).then_some(case)
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

/// `*` matches any run of characters, `?` one character.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some((b'*', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some((b'?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

/// The names closest to `wanted`, for an error message.
pub fn near_matches<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut scored: Vec<(f64, &str)> =
        names.into_iter().map(|n| (strsim::jaro_winkler(wanted, n), n)).filter(|(s, _)| *s > 0.75).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(4).map(|(_, n)| n).collect()
}

/// The cases the user named (names or globs); all of them when none is named.
pub fn select(all: &[Case], wanted: &[String]) -> Result<Vec<Case>> {
    if wanted.is_empty() {
        return Ok(all.to_vec());
    }
    let mut chosen: Vec<Case> = Vec::new();
    for w in wanted {
        let hits: Vec<&Case> = all.iter().filter(|c| glob_match(w, &c.name)).collect();
        if hits.is_empty()
            && let Some(case) = named(w)
        {
            if !chosen.contains(&case) {
                chosen.push(case);
            }
            continue;
        }
        if hits.is_empty() {
            let near = near_matches(w, all.iter().map(|c| c.name.as_str()));
            let hint = if near.is_empty() {
                "`ipcbench list` shows every case; a stream, round trip, broadcast, pair or latency \
                 case takes any size, count or rate, as stream/4KiB or broadcast/lossy/64sub/16B"
                    .to_string()
            } else {
                format!("did you mean {}? (`ipcbench list` shows every case)", near.join(", "))
            };
            bail!("unknown case {w:?}: {hint}");
        }
        for hit in hits {
            if !chosen.contains(hit) {
                chosen.push(hit.clone());
            }
        }
    }
    Ok(chosen)
}

pub fn find(name: &str) -> Result<Case> {
    select(&matrix(), &[name.to_string()])?
        .into_iter()
        .find(|c| c.name == name)
        .with_context(|| format!("{name:?} is a pattern, not one case"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_holds_every_case_of_the_seed() {
        let names: Vec<String> = matrix().into_iter().map(|c| c.name).collect();
        for expected in [
            "stream/16B",
            "stream/1KiB",
            "stream-rtt/16B",
            "stream-rtt/1KiB",
            "broadcast/lossless/1sub/16B",
            "broadcast/lossless/4sub/1KiB",
            "broadcast/lossy/1sub/1KiB",
            "broadcast/lossy/4sub/16B",
            "queue/1x1/16B",
            "queue/4x4/1KiB",
            "service/1c1s/16B",
            "service/4c1s/16B",
            "service/4c4s/1KiB",
        ] {
            assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
        }
        let batches: Vec<&String> = names.iter().filter(|n| n.starts_with("batch/")).collect();
        assert_eq!(
            batches,
            [
                "batch/stream/16B/x16",
                "batch/stream/16B/x64",
                "batch/stream/1KiB/x16",
                "batch/stream/1KiB/x64",
                "batch/broadcast/lossless/1sub/16B/x16",
                "batch/broadcast/lossless/1sub/16B/x64",
                "batch/broadcast/lossless/4sub/16B/x16",
                "batch/broadcast/lossless/4sub/16B/x64",
            ]
        );
        let latency: Vec<&String> = names.iter().filter(|n| n.starts_with("latency/")).collect();
        assert_eq!(latency, ["latency/1k/16B", "latency/100k/16B", "latency/1M/16B"]);
        assert!(names.iter().any(|n| n == "connect/16B"));
        assert!(names.iter().any(|n| n == "broadcast/lossy/32sub/1KiB"));
        assert_eq!(names.last().unwrap(), "fanout-latency/10k/32sub/16B");
        assert_eq!(find("connect/16B").unwrap().pattern(), Pattern::Connect);
        assert_eq!(names.len(), 38 + 8 + 3 + 1 + 2 + 6 + 6);
        let l = find("latency/100k/16B").unwrap();
        assert_eq!(
            (l.shape, l.pace, l.pattern(), l.column()),
            (Shape::Stream, Pace::Rate(100_000), Pattern::Latency, Column::Stream)
        );
        assert_eq!(
            [rate_label(1000), rate_label(2500), rate_label(3_000_000), rate_label(7)],
            ["1k", "2500", "3M", "7"]
        );
        let b = find("batch/stream/1KiB/x64").unwrap();
        assert_eq!((b.size, b.batch, b.shape), (1024, 64, Shape::Stream));
        assert_eq!(find("stream/16B").unwrap().batch, 1);
    }

    #[test]
    fn globs_and_near_matches() {
        let all = matrix();
        assert_eq!(select(&all, &["stream/*".into()]).unwrap().len(), 2);
        assert_eq!(select(&all, &["broadcast/*/4sub/16B".into()]).unwrap().len(), 2);
        let err = select(&all, &["stream/16".into()]).unwrap_err().to_string();
        assert!(err.contains("stream/16B"), "{err}");
    }

    #[test]
    fn a_sweep_names_streams_and_round_trips_of_any_size() {
        let sizes = sweep_sizes();
        assert_eq!((sizes[0], *sizes.last().unwrap(), sizes.len()), (8, 65536, 14));
        let cases = sweep(&[8, 65536, 8]).unwrap();
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["stream/8B", "stream/64KiB", "stream-rtt/8B", "stream-rtt/64KiB"]);
        assert_eq!(
            named("stream-rtt/24B").unwrap(),
            Case {
                name: "stream-rtt/24B".into(),
                shape: Shape::RoundTrip,
                size: 24,
                batch: 1,
                pace: Pace::Free,
                pairs: None,
                slow: 0,
            }
        );
        assert_eq!(find("stream/4KiB").unwrap().size, 4096);
        assert_eq!(find("stream/16B").unwrap(), matrix()[0]);
        for bad in ["stream/4096B", "stream/4B", "queue/1x1/4KiB", "stream/128MiB", "stream/4kb"] {
            assert!(named(bad).is_none(), "{bad}");
        }
        assert!(select(&matrix(), &["stream/4B".into()]).is_err());
        assert_eq!(parse_size(" 4KiB").unwrap(), 4096);
        assert_eq!(parse_size("24").unwrap(), 24);
        assert!(parse_size("7").unwrap_err().to_string().contains("from 8 bytes"));
        assert!(parse_size("4kb").unwrap_err().to_string().contains("4KiB"));
        assert!(parse_size("1GiB").is_err());
    }

    /// The open families take any count, size or rate by name, each name built as the matrix
    /// builds its own; a count out of bounds, a name not canonical, a mistyped one are refused,
    /// the last with a near match.
    #[test]
    fn the_open_families_take_any_count_by_name() {
        let c = find("broadcast/lossy/64sub/4KiB").unwrap();
        assert_eq!(
            (c.shape, c.size, c.pattern()),
            (Shape::Broadcast { lossy: true, subscribers: 64 }, 4096, Pattern::Broadcast)
        );
        let slow = find("broadcast/lossless/8sub-2slow/16B").unwrap();
        assert_eq!(
            (slow.slow, slow.pattern(), slow.column()),
            (2, Pattern::SlowSubscriber, Column::BroadcastLossless)
        );
        assert_eq!((0..8).filter(|&i| slow.is_slow(i)).collect::<Vec<_>>(), [6, 7]);
        let p = find("pairs/3/stream-rtt/1KiB").unwrap();
        assert_eq!((p.pairs, p.shape, p.pattern()), (Some(3), Shape::RoundTrip, Pattern::Pairs));
        assert_eq!(
            p.roles(),
            [
                (Role::Echo, 0),
                (Role::Pinger, 0),
                (Role::Echo, 1),
                (Role::Pinger, 1),
                (Role::Echo, 2),
                (Role::Pinger, 2)
            ]
        );
        let l = find("latency/300k/16B").unwrap();
        assert_eq!((l.pace, l.pattern()), (Pace::Rate(300_000), Pattern::Latency));
        let f = find("fanout-latency/1k/8sub/16B").unwrap();
        assert_eq!(
            (f.pace, f.shape, f.pattern(), f.column()),
            (
                Pace::Rate(1000),
                Shape::Broadcast { lossy: false, subscribers: 8 },
                Pattern::FanoutLatency,
                Column::BroadcastLossless
            )
        );
        // Each family's matrix cases read back by name as the same case.
        for case in matrix().into_iter().filter(|c| c.batch == 1 && c.pace != Pace::Connect) {
            assert!(
                case.name.starts_with("queue/")
                    || case.name.starts_with("service/")
                    || named(&case.name) == Some(case.clone()),
                "{}",
                case.name
            );
        }
        for bad in [
            "broadcast/lossy/0sub/16B",
            "broadcast/lossy/257sub/16B",
            "broadcast/lossy/08sub/16B",
            "broadcast/lossless/4sub-4slow/16B",
            "broadcast/lossless/4sub-0slow/16B",
            "broadcast/sometimes/4sub/16B",
            "pairs/0/stream/16B",
            "pairs/65/stream/16B",
            "pairs/2/queue/16B",
            "latency/1000/16B",
            "latency/1k/8B",
            "latency/20M/16B",
            "fanout-latency/1k/8sub/8B",
        ] {
            assert!(named(bad).is_none(), "{bad}");
        }
        for (typo, near) in [
            ("broadcast/lossless/4sub-1slw/16B", "broadcast/lossless/4sub-1slow/16B"),
            ("pairs/2/streem/16B", "pairs/2/stream/16B"),
            ("fanout-latncy/10k/8sub/16B", "fanout-latency/10k/8sub/16B"),
            ("broadcast/losless/32sub/16B", "broadcast/lossless/32sub/16B"),
        ] {
            let e = select(&matrix(), &[typo.into()]).unwrap_err().to_string();
            assert!(
                e.contains(&format!("did you mean {near}")) || e.contains(&format!(", {near}")),
                "{typo}: {e}"
            );
        }
        assert_eq!(parse_rate("300k").unwrap(), 300_000);
        assert_eq!(parse_rate("3M").unwrap(), 3_000_000);
        assert!(parse_rate("20M").unwrap_err().to_string().contains("from 1 to 10M"));
        assert!(parse_rate("fast").unwrap_err().to_string().contains("1k, 300k or 1M"));
        let sweep: Vec<String> =
            rate_sweep(&SWEEP_RATES, &[16]).unwrap().into_iter().map(|c| c.name).collect();
        assert_eq!(sweep.first().unwrap(), "latency/1k/16B");
        assert_eq!(sweep.last().unwrap(), "latency/10M/16B");
    }

    #[test]
    fn sizes_are_labelled_in_binary_units() {
        assert_eq!(size_label(16), "16B");
        assert_eq!(size_label(1024), "1KiB");
        assert_eq!(size_label(1536), "1536B");
        assert_eq!(size_label(1 << 20), "1MiB");
    }

    #[test]
    fn a_bad_matrix_is_refused() {
        assert!(parse("sizes = [7]\n[[case]]\npattern = \"stream\"\n").is_err());
        assert!(parse("sizes = [16]\n[[case]]\npattern = \"gossip\"\n").is_err());
        let batch =
            |body: &str| parse(&format!("sizes = [16]\n[[case]]\npattern = \"stream\"\n[[batch]]\n{body}"));
        assert!(batch("pattern = \"stream\"\nbatches = [16]\n").is_ok());
        let e = batch("pattern = \"stream\"\nbatches = [1]\n").unwrap_err().to_string();
        assert!(e.contains("batches of 2 or more"), "{e}");
        let e = batch("pattern = \"stream-rtt\"\nbatches = [16]\n").unwrap_err().to_string();
        assert!(e.contains("not stream-rtt"), "{e}");
        let e =
            parse("sizes = [16]\n[[case]]\npattern = \"stream\"\nbatches = [16]\n").unwrap_err().to_string();
        assert!(e.contains("belong to [[batch]]"), "{e}");
        let latency =
            |body: &str| parse(&format!("sizes = [16]\n[[case]]\npattern = \"stream\"\n[[latency]]\n{body}"));
        assert!(latency("rates = [1000]\nsizes = [16]\n").is_ok());
        let e = latency("rates = [1000]\nsizes = [8]\n").unwrap_err().to_string();
        assert!(e.contains("16 bytes or more"), "{e}");
        let e = latency("rates = [0]\nsizes = [16]\n").unwrap_err().to_string();
        assert!(e.contains("rates from 1"), "{e}");
    }
}
