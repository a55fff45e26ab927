//! The first look: five sentences a newcomer can act on (which library for the lowest latency,
//! the most throughput, a receiver that sleeps, fan-out, and work across machines), each
//! computed from the view's first file and pointing at the section its figures are in. The
//! control is left out: it is the yardstick, not a library to choose.

use ipcbench_api::{Kind, RecvMode, Shape, Transfer};

use super::View;
use super::families::Family;
use super::faq::name;
use super::plot::Place;
use crate::analysis::{claims, median_goodness};
use crate::format::{bandwidth, cores, nanos, rate};
use crate::matrix::{Case, Pattern, size_label};
use crate::results::{CaseResult, Status};

/// One sentence and the section that holds its figures (its anchor and its title).
#[derive(Clone, Debug)]
pub struct Sentence {
    pub text: String,
    pub section: &'static str,
    pub title: &'static str,
}

/// A receive that keeps fewer cores than this busy over a round trip leaves at least half a
/// core of the two idle: it sleeps, rather than spins, while it waits.
pub const SLEEPS: f64 = 1.5;

/// The passed, ranked copy results of a case in the first file, the control aside, best first.
fn ranked<'a>(view: &View<'a>, case: &str) -> Vec<&'a CaseResult> {
    let mut row: Vec<&CaseResult> = view
        .row(case, 0)
        .into_iter()
        .filter(|r| r.transfer == Transfer::Copy && r.status == Status::Ok)
        .filter(|r| r.host_state.as_ref().is_none_or(|s| s.ranked))
        .filter(|r| view.kind(&r.library) != Some(Kind::Control))
        .filter(|r| median_goodness(r).is_some())
        .collect();
    row.sort_by(|a, b| median_goodness(b).unwrap_or(0.0).total_cmp(&median_goodness(a).unwrap_or(0.0)));
    row
}

/// The view's copied cases of a pattern (batch, pairs, slow and paced cases are patterns of
/// their own, or aside), smallest message first.
fn plain(view: &View, pattern: Pattern) -> Vec<Case> {
    let mut cases: Vec<Case> = view.cases_of(pattern).filter(|c| c.transfer == Transfer::Copy).collect();
    cases.sort_by_key(|c| c.size);
    cases
}

fn p50(r: &CaseResult) -> String {
    r.median.as_ref().and_then(|f| f.p50_ns).map_or_else(|| "—".into(), nanos)
}

fn mode(r: &CaseResult) -> &'static str {
    r.best_mode.map_or("", |m| m.as_str())
}

fn size_words(size: usize) -> String {
    crate::format::size_words(size, &size_label(size))
}

/// The five sentences, those the file has figures for.
pub fn sentences(view: &View) -> Vec<Sentence> {
    let streams = (Family::Streams.anchor(), Family::Streams.title());
    let mut out = Vec::new();
    let mut say = |text: String, (section, title): (&'static str, &'static str)| {
        out.push(Sentence { text, section, title });
    };
    let rtt = plain(view, Pattern::StreamRtt).into_iter().next().map(|c| (c.name, c.size));
    if let Some((case, size)) = &rtt {
        let row = ranked(view, case);
        if let [a, b, ..] = row.as_slice() {
            say(
                format!(
                    "For the lowest latency, {}: a {} round trip in {} (p50, its receive {}), then {} in {}.",
                    name(view, &a.library),
                    size_words(*size),
                    p50(a),
                    mode(a),
                    name(view, &b.library),
                    p50(b)
                ),
                streams,
            );
        }
    }
    let tops: Vec<(usize, &CaseResult)> = plain(view, Pattern::Stream)
        .iter()
        .filter_map(|c| Some((c.size, *ranked(view, &c.name).first()?)))
        .collect();
    if let Some(((small, a), rest)) = tops.split_first() {
        let per_s = |r: &CaseResult| r.median.as_ref().map_or(0.0, |f| f.msgs_per_s);
        let mut text = format!(
            "For the most throughput, {}: {} of {} messages one way",
            name(view, &a.library),
            rate(per_s(a)),
            size_words(*small)
        );
        if let Some((large, b)) = rest.last() {
            let moved = bandwidth(per_s(b) * *large as f64);
            if b.library == a.library {
                text.push_str(&format!(", and at {} too ({moved})", crate::format::bytes(*large as u64)));
            } else {
                text.push_str(&format!(
                    "; at {} {} moves the most ({moved})",
                    crate::format::bytes(*large as u64),
                    name(view, &b.library)
                ));
            }
        }
        text.push('.');
        say(text, streams);
    }
    if let Some((case, size)) = &rtt {
        let waiting = |r: &&CaseResult| {
            let m = r.modes.iter().find(|m| m.mode == RecvMode::Waiting)?.median.as_ref()?;
            Some((m.p50_ns?, m.cores_busy?))
        };
        let sleeping = ranked(view, case)
            .into_iter()
            .filter_map(|r| Some((r, waiting(&r)?)))
            .filter(|(_, (_, busy))| *busy < SLEEPS)
            .min_by(|x, y| x.1.0.total_cmp(&y.1.0));
        let text = match sleeping {
            Some((r, (p50, busy))) => format!(
                "If the receiver must sleep while it waits, {}: a {} round trip in {} with its receive waiting, \
                 {} busy of the two (the quickest waiting receive that leaves half a core idle).",
                name(view, &r.library),
                size_words(*size),
                nanos(p50),
                cores(busy)
            ),
            None => format!(
                "No library here answers a {} round trip with a waiting receive that leaves half a core idle.",
                size_words(*size)
            ),
        };
        say(text, ("modes", Place::Modes.title()));
    }
    let widest = plain(view, Pattern::Broadcast)
        .into_iter()
        .filter_map(|c| match c.shape {
            Shape::Broadcast { lossy: false, subscribers } => Some((subscribers, c.size, c.name)),
            _ => None,
        })
        .min_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    if let Some((subscribers, size, case)) = widest {
        let row = ranked(view, &case);
        let per_s = |r: &CaseResult| rate(r.median.as_ref().map_or(0.0, |f| f.msgs_per_s));
        if let Some(a) = row.first().copied() {
            let next = row.get(1).map(|b| format!(", then {} at {}", name(view, &b.library), per_s(b)));
            say(
                format!(
                    "For fan-out, {}: {} of {} messages to each of {subscribers} subscribers, none lost{}.",
                    name(view, &a.library),
                    per_s(a),
                    size_words(size),
                    next.unwrap_or_default()
                ),
                (Family::Broadcasts.anchor(), Family::Broadcasts.title()),
            );
        }
    }
    let across = claims::page_data().map(|d| d.across_machines).unwrap_or_default();
    if let Some((case, size)) = &rtt {
        let row: Vec<&CaseResult> =
            ranked(view, case).into_iter().filter(|r| across.contains(&r.library)).collect();
        if let Some(a) = row.first().copied() {
            let names: Vec<&str> = row.iter().map(|r| name(view, &r.library)).collect();
            let next = row.get(1).map(|b| format!(", then {} in {}", name(view, &b.library), p50(b)));
            say(
                format!(
                    "To work across machines as well, {}: of those here that do ({}), the quickest {} round trip \
                     on one machine, {}{}.",
                    name(view, &a.library),
                    names.join(", "),
                    size_words(*size),
                    p50(a),
                    next.unwrap_or_default()
                ),
                streams,
            );
        }
    }
    out
}
