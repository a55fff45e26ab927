//! The first look: a sentence per pattern a newcomer can act on (the lowest latency, a stream, a
//! broadcast, a work queue, a service, and a receiver that sleeps), each computed from the view's
//! first file and pointing at the section its figures are in. Each names a library: the control,
//! a bare ring no one can pick, is the reference line (the lowest latency gives its figure as
//! such), never the answer. A sentence whose case needs more processes than the machine has
//! cores says so.

use std::cmp::Reverse;

use ipcbench_api::{Kind, RecvMode, Shape, Transfer};

use super::View;
use super::chart::Place;
use super::faq::name;
use crate::analysis::{level, median_goodness, standings};
use crate::format::{bandwidth, bytes, cores, nanos, rate};
use crate::matrix::{Case, Pattern, size_label};
use crate::pattern::Family;
use crate::results::CaseResult;

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

/// The results of a case in the first file that count in its row (`standings::counts`), the
/// control aside, best first.
fn ranked<'a>(view: &View<'a>, case: &str) -> Vec<&'a CaseResult> {
    let mut row: Vec<&CaseResult> = view
        .row(case, 0)
        .into_iter()
        .filter(|r| standings::counts(r))
        .filter(|r| view.kind(&r.library) != Some(Kind::Control))
        .collect();
    row.sort_by(|a, b| median_goodness(b).unwrap_or(0.0).total_cmp(&median_goodness(a).unwrap_or(0.0)));
    row
}

/// The control's result of a case in the first file, where it counts: the reference line.
fn control<'a>(view: &View<'a>, case: &str) -> Option<&'a CaseResult> {
    view.row(case, 0)
        .into_iter()
        .find(|r| standings::counts(r) && view.kind(&r.library) == Some(Kind::Control))
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

fn per_s(r: &CaseResult) -> f64 {
    r.median.as_ref().map_or(0.0, |f| f.msgs_per_s)
}

fn msgs(r: &CaseResult) -> String {
    rate(per_s(r))
}

/// A service's rate: each message a call answered.
fn calls(r: &CaseResult) -> String {
    crate::format::calls(per_s(r))
}

fn mode(r: &CaseResult) -> &'static str {
    r.best_mode.map_or("", |m| m.as_str())
}

fn size_words(size: usize) -> String {
    crate::format::size_words(size, &size_label(size))
}

/// `1 subscriber`, `4 subscribers`, `33 processes`.
fn count(n: usize, what: &str) -> String {
    let plural = if what.ends_with('s') { "es" } else { "s" };
    format!("{n} {what}{}", if n == 1 { "" } else { plural })
}

/// After the first of a row, the next: ", then B in 457 ns", or where the two can't be told
/// apart, ", B level with it in 450 ns" (`at`: "in" before a time, "at" before a rate).
fn next(view: &View, row: &[&CaseResult], at: &str, figure: fn(&CaseResult) -> String) -> String {
    let [a, b, ..] = row else { return String::new() };
    if level(a, b) {
        format!(", {} level with it {at} {}", name(view, &b.library), figure(b))
    } else {
        format!(", then {} {at} {}", name(view, &b.library), figure(b))
    }
}

/// " (oversubscribed here: …)", said right after a case, where it needed more processes than
/// the machine has cores: its figures measure the scheduler as much as the libraries.
fn crowded(view: &View, r: &CaseResult) -> String {
    let machine = view.sources.first().map(|s| s.doc.machine.cores);
    match (r.oversubscribed, machine) {
        (false, _) => String::new(),
        (true, Some(n)) => {
            format!(" (oversubscribed here: {} on {})", count(r.processes, "process"), count(n, "core"))
        }
        (true, None) => " (oversubscribed here)".into(),
    }
}

fn sentence(text: String, family: Family) -> Sentence {
    Sentence { text, section: family.anchor(), title: family.title() }
}

/// The sentences, in their order, those the file has figures for.
pub fn sentences(view: &View) -> Vec<Sentence> {
    [
        latency(view),
        stream(view),
        broadcast(view),
        simplest(view, Pattern::Queue),
        simplest(view, Pattern::Service),
        sleeping(view),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The smallest round trip's lowest p50 and the next, with the control's beside them as the
/// reference line.
fn latency(view: &View) -> Option<Sentence> {
    let case = plain(view, Pattern::StreamRtt).into_iter().next()?;
    let row = ranked(view, &case.name);
    let a = row.first()?;
    let mut text = format!(
        "For the lowest latency, {}: a {} round trip in {} (p50, its receive {}){}{}",
        name(view, &a.library),
        size_words(case.size),
        p50(a),
        mode(a),
        crowded(view, a),
        next(view, &row, "in", p50)
    );
    if let Some(c) = control(view, &case.name) {
        text.push_str(&format!(" (the control, a bare ring for reference, takes {})", p50(c)));
    }
    text.push('.');
    Some(sentence(text, Family::Streams))
}

/// The smallest stream's highest rate, and who moves the most bytes at the largest.
fn stream(view: &View) -> Option<Sentence> {
    let tops: Vec<(usize, &CaseResult)> = plain(view, Pattern::Stream)
        .iter()
        .filter_map(|c| Some((c.size, *ranked(view, &c.name).first()?)))
        .collect();
    let ((small, a), rest) = tops.split_first()?;
    let mut text = format!(
        "For the most throughput, {}: {} of {} messages one way{}",
        name(view, &a.library),
        msgs(a),
        size_words(*small),
        crowded(view, a)
    );
    if let Some((large, b)) = rest.last() {
        let moved = bandwidth(per_s(b) * *large as f64);
        if b.library == a.library {
            text.push_str(&format!(", and at {} too ({moved})", bytes(*large as u64)));
        } else {
            let at = bytes(*large as u64);
            text.push_str(&format!("; at {at} {} moves the most ({moved})", name(view, &b.library)));
        }
    }
    text.push('.');
    Some(sentence(text, Family::Streams))
}

/// The lossless broadcast to the fewest subscribers (1) and to the most, each at its smallest
/// message: the highest rate to each subscriber and the next.
fn broadcast(view: &View) -> Option<Sentence> {
    let lossless: Vec<(usize, Case)> = plain(view, Pattern::Broadcast)
        .into_iter()
        .filter_map(|c| match c.shape {
            Shape::Broadcast { lossy: false, subscribers } => Some((subscribers, c)),
            _ => None,
        })
        .collect();
    // `plain` puts the smallest message first, and the first of equals is taken.
    let (fewest, one) = lossless.iter().min_by_key(|(n, _)| *n)?;
    let (most, wide) = lossless.iter().min_by_key(|(n, _)| Reverse(*n))?;
    let row = ranked(view, &one.name);
    let a = row.first()?;
    let mut text = format!(
        "For a broadcast, {}: {} of {} messages to {}, none lost{}{}",
        name(view, &a.library),
        msgs(a),
        size_words(one.size),
        count(*fewest, "subscriber"),
        crowded(view, a),
        next(view, &row, "at", msgs)
    );
    let row = ranked(view, &wide.name);
    if most > fewest
        && let Some(w) = row.first()
    {
        text.push_str(&format!(
            "; to each of {most} subscribers{}, {} at {}{}",
            crowded(view, w),
            name(view, &w.library),
            msgs(w),
            next(view, &row, "at", msgs)
        ));
    }
    text.push('.');
    Some(sentence(text, Family::Broadcasts))
}

/// The work queue or the service of the fewest processes (queue/1x1, service/1c1s), at its
/// smallest message: the highest rate and the next.
fn simplest(view: &View, pattern: Pattern) -> Option<Sentence> {
    let (case, x, y) = plain(view, pattern)
        .into_iter()
        .filter_map(|c| match c.shape {
            Shape::Queue { producers: x, consumers: y } | Shape::Service { clients: x, servers: y } => {
                Some((c, x, y))
            }
            _ => None,
        })
        .min_by_key(|(c, x, y)| (x + y, c.size))?;
    let row = ranked(view, &case.name);
    let a = row.first()?;
    let (lib, size) = (name(view, &a.library), size_words(case.size));
    let family = crate::pattern::spec(pattern).family;
    let text = if family == Family::Queues {
        format!(
            "For a work queue, {lib}: {} of {size} messages from {} to {}{}{}.",
            msgs(a),
            count(x, "producer"),
            count(y, "consumer"),
            crowded(view, a),
            next(view, &row, "at", msgs)
        )
    } else {
        format!(
            "For a service, {lib}: {} of {size} requests answered, from {} to {}{}{}.",
            calls(a),
            count(x, "client"),
            count(y, "server"),
            crowded(view, a),
            next(view, &row, "at", calls)
        )
    };
    Some(sentence(text, family))
}

/// The smallest round trip's quickest waiting receive among those that leave half a core idle.
fn sleeping(view: &View) -> Option<Sentence> {
    let case = plain(view, Pattern::StreamRtt).into_iter().next()?;
    let waiting = |r: &CaseResult| -> Option<(f64, f64)> {
        let m = r.modes.iter().find(|m| m.mode == RecvMode::Waiting)?.median.as_ref()?;
        Some((m.p50_ns?, m.cores_busy?))
    };
    let sleeping = ranked(view, &case.name)
        .into_iter()
        .filter_map(|r| Some((r, waiting(r)?)))
        .filter(|(_, (_, busy))| *busy < SLEEPS)
        .min_by(|x, y| x.1.0.total_cmp(&y.1.0));
    let text = match sleeping {
        Some((r, (p50, busy))) => format!(
            "If the receiver must sleep while it waits, {}: a {} round trip in {} with its receive waiting, \
             {} busy of the two (the quickest waiting receive that leaves half a core idle){}.",
            name(view, &r.library),
            size_words(case.size),
            nanos(p50),
            cores(busy),
            crowded(view, r)
        ),
        None => format!(
            "No library here answers a {} round trip with a waiting receive that leaves half a core idle.",
            size_words(case.size)
        ),
    };
    Some(Sentence { text, section: "modes", title: Place::Modes.title() })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::report::Source;

    /// Over the reference run (2 cores): a sentence per pattern, in order, each linked to its
    /// section and answering with a library, never the control, which the lowest latency gives
    /// as the reference line; the widest broadcast, oversubscribed there, says so.
    #[test]
    fn the_first_look_has_a_sentence_per_pattern_and_the_control_only_as_reference() {
        let source = Source::committed(crate::report::readme::REFERENCE);
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let said = sentences(&view);
        let opens: Vec<&str> = said.iter().map(|s| s.text.split(',').next().unwrap_or_default()).collect();
        let want = [
            "For the lowest latency",
            "For the most throughput",
            "For a broadcast",
            "For a work queue",
            "For a service",
            "If the receiver must sleep while it waits",
        ];
        assert_eq!(opens, want);
        let sections: Vec<&str> = said.iter().map(|s| s.section).collect();
        assert_eq!(sections, ["streams", "streams", "broadcasts", "queues", "services", "modes"]);
        let control = view.libraries.iter().find(|l| view.kind(l) == Some(Kind::Control)).unwrap();
        let control = name(&view, control);
        for s in &said {
            // The library a sentence answers with: after its opening, up to the colon.
            let answer = s.text.split_once(", ").and_then(|(_, rest)| rest.split_once(':')).map(|x| x.0);
            assert!(answer.is_some_and(|a| !a.is_empty() && !a.contains("control")), "{}", s.text);
            assert!(!s.text.contains(control), "{}", s.text);
        }
        assert!(said[0].text.contains("(the control, a bare ring for reference, takes "), "{}", said[0].text);
        let broadcast = &said[2].text;
        assert!(broadcast.contains("; to each of 32 subscribers (oversubscribed here: "), "{broadcast}");
    }
}
