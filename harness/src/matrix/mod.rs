//! The case matrix: cases/matrix.toml, built into the binary, expanded into named cases.

mod file;
mod kinds;

use anyhow::{Context, Result, bail};
use ipcbench_api::{Capabilities, Shape, Support, Transfer};

pub use file::{Set, matrix, sets};
pub use kinds::{Column, Pattern, Role};

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
    /// A duplex case: two peers each sending a stream to the other at once, a channel each way
    /// (its shape is a round trip's: a channel each way, in one process each).
    pub duplex: bool,
    /// Copied through the roles' buffers (every case of the matrix), or written and read in the
    /// library's memory (`loan/...`, a stream's or round trip's loan form).
    pub transfer: Transfer,
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
        Case {
            name,
            shape,
            size,
            batch: 1,
            pace: Pace::Free,
            pairs: None,
            slow: 0,
            duplex: false,
            transfer: Transfer::Copy,
        }
    }

    /// Its loan form, `loan/<name>`: a stream or round trip whose ends write and read in the
    /// library's own memory. `None` for every other case (the loan mode is measured on streams
    /// and round trips alone).
    pub fn loaned(&self) -> Option<Case> {
        let plain = self.batch == 1 && self.pace == Pace::Free && self.pairs.is_none() && !self.duplex;
        let one_to_one = matches!(self.shape, Shape::Stream | Shape::RoundTrip);
        (plain && one_to_one && self.transfer == Transfer::Copy).then(|| Case {
            name: format!("{LOAN_PREFIX}{}", self.name),
            transfer: Transfer::Loan,
            ..self.clone()
        })
    }

    /// The pattern's family, as the results and tables group cases.
    pub fn pattern(&self) -> Pattern {
        if self.pairs.is_some() {
            return Pattern::Pairs;
        }
        if self.duplex {
            return Pattern::Duplex;
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
        if self.duplex {
            return vec![(Role::Peer, 0), (Role::Peer, 1)];
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

    /// The channels its trial holds, each under a name and a directory of its own
    /// (`role::channel`): a pairs case's one per pair, a duplex case's one each way; none where
    /// the trial's own name is its channel.
    pub fn channels(&self) -> Option<usize> {
        if self.duplex { Some(2) } else { self.pairs }
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
        if self.transfer == Transfer::Loan && !caps.loan.is_yes() {
            return caps.loan;
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

/// `duplex/1KiB`.
fn duplex(size: usize) -> Case {
    Case { duplex: true, ..Case::free(format!("duplex/{}", size_label(size)), Shape::RoundTrip, size) }
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

/// `--transfer`: each case copied where `copy` is asked, followed by its loan form where `loan`
/// is and it has one; an error when the loan mode alone is asked of cases none of which has it.
pub fn with_transfers(cases: Vec<Case>, transfers: &[Transfer]) -> Result<Vec<Case>> {
    let (copy, loan) = (transfers.contains(&Transfer::Copy), transfers.contains(&Transfer::Loan));
    let mut out = Vec::new();
    for case in cases {
        let loaned = if loan { case.loaned() } else { None };
        if copy || case.transfer == Transfer::Loan {
            out.push(case);
        }
        out.extend(loaned);
    }
    if out.is_empty() {
        bail!(
            "--transfer loan: none of these cases has a loan form; the loan mode is measured on streams and round trips (stream/64KiB, stream-rtt/1KiB)"
        );
    }
    Ok(out)
}

/// What a loan case's name starts with: `loan/stream/64KiB`.
pub const LOAN_PREFIX: &str = "loan/";

/// A size sweep's default sizes: 8 B to 64 KiB, powers of two, as ipc-bench sweeps them, then
/// 1, 4 and 16 MiB, messages larger than most libraries' rings.
pub fn sweep_sizes() -> Vec<usize> {
    (3..=16).chain([20, 22, 24]).map(|p| 1usize << p).collect()
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
/// `duplex/4KiB`, `latency/300k/16B`, `fanout-latency/1k/8sub/16B`. Only the canonical name is one (`4KiB`, not
/// `4096B`); a glob or a count out of bounds is none.
pub fn named(name: &str) -> Option<Case> {
    if name.contains(['*', '?']) {
        return None;
    }
    if let Some(copied) = name.strip_prefix(LOAN_PREFIX) {
        return named(copied)?.loaned();
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
        ["duplex", s] => duplex(size(s)?),
        ["latency", r, s] => latency(rate(r)?, timed(s)?),
        ["fanout-latency", r, n, s] => fanout_latency(rate(r)?, subscribers(n)?, timed(s)?),
        _ => return None,
    };
    (case.name == name).then_some(case)
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

/// The set a run that names no case runs: the comparison page's cases.
pub const DEFAULT_SET: &str = "page";

/// `wanted` with each named set (`@page`) replaced by its entries, in order.
fn expand_sets(wanted: &[String], sets: &[Set], depth: usize) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for w in wanted {
        let Some(name) = w.strip_prefix('@') else {
            out.push(w.clone());
            continue;
        };
        let Some(set) = sets.iter().find(|s| s.name == name) else {
            let names: Vec<String> = sets.iter().map(|s| format!("@{}", s.name)).collect();
            bail!(
                "unknown set {w:?}: the sets are {} (`ipcbench list` says what each holds)",
                names.join(", ")
            );
        };
        // The file is the binary's own; a set that names itself is a defect a test would catch.
        if depth > sets.len() {
            bail!("the set {w:?} names itself through its entries");
        }
        out.extend(expand_sets(&set.cases, sets, depth + 1)?);
    }
    Ok(out)
}

/// The cases the user named (names, globs or sets such as `@bends`); the set `@page` when none
/// is named.
pub fn select(all: &[Case], wanted: &[String]) -> Result<Vec<Case>> {
    let default = [format!("@{DEFAULT_SET}")];
    let wanted = expand_sets(if wanted.is_empty() { &default } else { wanted }, sets(), 0)?;
    let mut chosen: Vec<Case> = Vec::new();
    for w in &wanted {
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
            let hint = if w == "same-core" {
                "same-core is a value of --pin, which takes it after `=`: --pin=same-core".to_string()
            } else if near.is_empty() {
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
mod tests;
