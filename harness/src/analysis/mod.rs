//! What the figures are and which one counts: a trial's reports checked against each other and
//! turned into figures; medians over runs; which receive mode's median is the library's figure
//! (the better one); how far its runs spread and when that is noisy; where a result stands in
//! its row. Every rule about a figure is here, and only here; nothing here formats text.

use std::cmp::Ordering;
use std::path::Path;

use hdrhistogram::Histogram;
use ipcbench_api::{Requests, Shape};

use crate::histogram::{self, Spectrum};
use crate::matrix::{Case, Pace, Pattern, Role};
use crate::noise::middle;
use crate::results::{CaseResult, Figure, Figures, Receiving, RoleReport, RunRecord, Spread, Status};
use crate::role::taken::{self, Taken};

pub mod claims;
pub mod spread;
pub mod standings;
pub mod states;

/// A trial that can't give figures: which role, and why.
#[derive(Clone, Debug)]
pub struct Broken {
    pub role: String,
    pub reason: String,
}

fn broken(report: &RoleReport, reason: String) -> Broken {
    Broken { role: report.label(), reason }
}

fn of(reports: &[RoleReport], role: Role) -> Vec<&RoleReport> {
    reports.iter().filter(|r| r.role == role).collect()
}

/// The latency histogram of these reports together.
fn latency(reports: &[&RoleReport]) -> Histogram<u64> {
    histogram::from_buckets(reports.iter().map(|r| r.latency.as_slice()))
}

/// The latency senders' own lateness together.
fn lateness(reports: &[&RoleReport]) -> Histogram<u64> {
    histogram::from_buckets(reports.iter().map(|r| r.lateness.as_slice()))
}

/// A trial's record: its figures, its histograms whole, and each role's report without its
/// buckets (the histograms hold them).
pub fn run_record(case: &Case, roles: Vec<RoleReport>, requests: Requests) -> Result<RunRecord, Broken> {
    let figures = figures(case, &roles, requests)?;
    let whole = |h: Histogram<u64>| (!h.is_empty()).then(|| histogram::encode(&h));
    let all: Vec<&RoleReport> = roles.iter().collect();
    let (histogram, lateness) = (whole(latency(&all)), whole(lateness(&all)));
    let roles =
        roles.into_iter().map(|r| RoleReport { latency: Vec::new(), lateness: Vec::new(), ..r }).collect();
    Ok(RunRecord { figures, roles, histogram, lateness, round: None, host: None, state: None })
}

/// A latency result's spectrum into its figures.
fn spectrum(h: &Histogram<u64>, out: &mut Figures) {
    if let Some(s) = Spectrum::of(h) {
        out.min_ns = Some(s.min);
        out.p50_ns = Some(s.p50);
        out.p90_ns = Some(s.p90);
        out.p99_ns = Some(s.p99);
        out.p999_ns = Some(s.p999);
        out.p9999_ns = Some(s.p9999);
        out.max_ns = Some(s.max);
    }
}

/// Checks the trial's reports against each other and computes its figures. `requests` says
/// whether a service's request reaches one server or every server.
pub fn figures(case: &Case, reports: &[RoleReport], requests: Requests) -> Result<Figures, Broken> {
    // Each role's counts are its side's; from here, a side's counts are read without a check.
    for r in reports {
        match (r.role.is_driving(), r.sending.is_some(), r.receiving.is_some()) {
            (true, true, _) | (false, _, true) => {}
            (true, false, _) => return Err(broken(r, "reported no counts of what it sent".into())),
            (false, ..) => return Err(broken(r, "reported no counts of what it received".into())),
        }
    }
    if case.pace == Pace::Connect {
        return connect_figures(reports);
    }
    if case.pairs.is_some() {
        let mut out = pairs_figures(case, reports)?;
        cost(reports, &mut out);
        return Ok(out);
    }
    let driving: Vec<&RoleReport> = reports.iter().filter(|r| r.role.is_driving()).collect();
    let start = driving.iter().map(|r| r.sent().window_start_ns).min().unwrap_or(0);
    let end = driving.iter().map(|r| r.sent().window_end_ns).max().unwrap_or(0);
    let Some(first) = driving.first() else {
        return Err(Broken { role: "driver".into(), reason: "no sending role reported".into() });
    };
    if end <= start {
        return Err(broken(first, "the measured window is empty".into()));
    }
    let seconds = (end - start) as f64 / 1e9;
    let rate = |n: u64| n as f64 / seconds;
    let mut out = Figures::default();
    match case.shape {
        Shape::Stream | Shape::Broadcast { .. } => {
            let (sender, receivers) = match case.shape {
                Shape::Stream => (of(reports, Role::Sender), of(reports, Role::Receiver)),
                _ => (of(reports, Role::Publisher), of(reports, Role::Subscriber)),
            };
            let publisher = sender[0];
            let sent = publisher.sent();
            let lossy = matches!(case.shape, Shape::Broadcast { lossy: true, .. });
            for r in &receivers {
                let got = r.got();
                if !lossy && (got.received != sent.sent || got.received_measured != sent.measured) {
                    return Err(broken(
                        r,
                        format!(
                            "received {} messages ({} measured) of the {} sent ({} measured)",
                            got.received, got.received_measured, sent.sent, sent.measured
                        ),
                    ));
                }
                if got.library_lost > 0 && got.library_lost != got.lost {
                    return Err(broken(
                        r,
                        format!(
                            "the library says {} messages were lost; the sequence numbers say {}",
                            got.library_lost, got.lost
                        ),
                    ));
                }
                if lossy && got.received + got.lost > sent.sent {
                    return Err(broken(
                        r,
                        format!("{} received and {} lost of {} sent", got.received, got.lost, sent.sent),
                    ));
                }
            }
            // The figure is the slowest subscriber's (a slow-subscriber case: the slowest of the
            // others, the slow ones' beside it); so is the loss beside it.
            let (slow, fast): (Vec<&RoleReport>, Vec<&RoleReport>) =
                receivers.iter().partition(|r| case.is_slow(r.index));
            let slowest_of =
                |rs: &[&RoleReport]| rs.iter().map(|r| r.got()).min_by_key(|g| g.received_measured);
            let Some(slowest) = slowest_of(&fast) else {
                return Err(broken(publisher, "no receiving role reported".into()));
            };
            out.msgs_per_s = rate(slowest.received_measured);
            if lossy && fast.len() > 1 {
                let fastest = fast.iter().map(|r| r.got().received_measured).max().unwrap_or(0);
                out.subscribers_spread = Some(if fastest == 0 {
                    0.0
                } else {
                    1.0 - slowest.received_measured as f64 / fastest as f64
                });
            }
            let lost_share = |g: Receiving| {
                let (lost, got) = (g.lost_measured, g.received_measured);
                if lost + got == 0 { 0.0 } else { lost as f64 / (lost + got) as f64 }
            };
            if let Some(s) = slowest_of(&slow) {
                out.slow_msgs_per_s = Some(rate(s.received_measured));
                out.slow_lost_share = lossy.then(|| lost_share(s));
            }
            if matches!(case.pace, Pace::Rate(_)) {
                spectrum(&latency(&receivers), &mut out);
                let late = Spectrum::of(&lateness(&[publisher]));
                out.late_p50_ns = late.map(|s| s.p50);
                out.late_p99_ns = late.map(|s| s.p99);
                let scheduled = publisher.scheduled.unwrap_or(0);
                if scheduled > 0 {
                    out.behind_share = Some(1.0 - sent.measured.min(scheduled) as f64 / scheduled as f64);
                }
            }
            if lossy {
                out.lost_share = Some(lost_share(slowest));
            }
        }
        Shape::RoundTrip | Shape::Service { .. } => {
            let (callers, answerers) = match case.shape {
                Shape::RoundTrip => (of(reports, Role::Pinger), of(reports, Role::Echo)),
                _ => (of(reports, Role::Client), of(reports, Role::Server)),
            };
            let asked: u64 = callers.iter().map(|r| r.sent().sent).sum();
            let answered: u64 = answerers.iter().map(|r| r.got().received).sum();
            // Each request reaches one server, or (a library without load sharing) every one.
            let copies = match requests {
                Requests::ToEveryServer => answerers.len() as u64,
                Requests::ToOneServer => 1,
            };
            if answered != asked * copies {
                let each = if copies > 1 { format!(", each to all {copies} servers") } else { String::new() };
                return Err(broken(
                    answerers[0],
                    format!("servers took {answered} requests; clients sent {asked}{each}"),
                ));
            }
            out.msgs_per_s = rate(callers.iter().map(|r| r.sent().measured).sum());
            spectrum(&latency(&callers), &mut out);
        }
        Shape::Queue { .. } => {
            let producers = of(reports, Role::Producer);
            let consumers = of(reports, Role::Consumer);
            let mut sent = vec![0; producers.len()];
            for p in &producers {
                match sent.get_mut(p.index) {
                    Some(n) => *n = p.sent().sent,
                    None => {
                        return Err(broken(p, format!("producer {} of {}", p.index, producers.len())));
                    }
                }
            }
            let mut taken = Vec::new();
            for c in &consumers {
                let file = c
                    .taken_file
                    .as_deref()
                    .ok_or_else(|| broken(c, "no record of the messages taken".into()))?;
                taken.push(Taken::load(Path::new(file)).map_err(|e| broken(c, format!("{e:#}")))?);
            }
            taken::prove(&taken, &sent).map_err(|e| {
                broken(consumers[0], format!("not every message reached exactly one consumer: {e}"))
            })?;
            let measured_sent: u64 = producers.iter().map(|p| p.sent().measured).sum();
            let measured_got: u64 = consumers.iter().map(|c| c.got().received_measured).sum();
            if measured_got != measured_sent {
                return Err(broken(
                    consumers[0],
                    format!("{measured_got} measured messages consumed of {measured_sent}"),
                ));
            }
            out.msgs_per_s = rate(measured_got);
        }
    }
    cost(reports, &mut out);
    Ok(out)
}

/// A connect case: every sender's one message arrived, and the set-up times (from each sender's
/// clock read before its open to its message's arrival) are the figures. No rate: the senders
/// follow one another, with the driver's waits between them.
fn connect_figures(reports: &[RoleReport]) -> Result<Figures, Broken> {
    let senders = of(reports, Role::Sender);
    let Some(receiver) = of(reports, Role::Receiver).into_iter().next() else {
        return Err(Broken { role: "driver".into(), reason: "no receiver reported".into() });
    };
    let received = receiver.got().received;
    if received != senders.len() as u64 || senders.iter().any(|s| s.sent().sent != 1) {
        return Err(broken(
            receiver,
            format!("received {received} messages from {} senders of one message each", senders.len()),
        ));
    }
    let mut out = Figures::default();
    spectrum(&latency(&[receiver]), &mut out);
    out.open_p50_ns = middle(senders.iter().filter_map(|s| s.open_ns).map(|ns| ns as f64).collect());
    Ok(out)
}

/// A pairs case: each pair checked on its own (every message its sender sent arrived, every
/// request answered) and timed over its own sender's window; the figures are the pairs' rates
/// together, the worst pair's, and the worst pair's p50 round trip.
fn pairs_figures(case: &Case, reports: &[RoleReport]) -> Result<Figures, Broken> {
    let round_trip = case.shape == Shape::RoundTrip;
    let (driving, answering) =
        if round_trip { (Role::Pinger, Role::Echo) } else { (Role::Sender, Role::Receiver) };
    let n = case.pairs.unwrap_or(1);
    let one = |role: Role, i: usize| {
        reports
            .iter()
            .find(|r| r.role == role && r.index == i)
            .ok_or_else(|| Broken { role: role.label(i), reason: format!("pair {i} of {n} did not report") })
    };
    // (the pair's rate, its p50 round trip)
    let mut pairs: Vec<(f64, Option<f64>)> = Vec::new();
    for i in 0..n {
        let (sender, receiver) = (one(driving, i)?, one(answering, i)?);
        let (sent, got) = (sender.sent(), receiver.got());
        let whole = if round_trip {
            got.received == sent.sent
        } else {
            got.received == sent.sent && got.received_measured == sent.measured
        };
        if !whole {
            return Err(broken(
                receiver,
                format!(
                    "pair {i}: received {} messages ({} measured) of the {} sent ({} measured)",
                    got.received, got.received_measured, sent.sent, sent.measured
                ),
            ));
        }
        if sent.window_end_ns <= sent.window_start_ns {
            return Err(broken(sender, "the measured window is empty".into()));
        }
        let seconds = (sent.window_end_ns - sent.window_start_ns) as f64 / 1e9;
        let measured = if round_trip { sent.measured } else { got.received_measured };
        pairs.push((measured as f64 / seconds, sender.p50_ns.map(|ns| ns as f64)));
    }
    let worst = pairs.iter().copied().min_by(|a, b| a.0.total_cmp(&b.0)).unwrap_or((0.0, None));
    Ok(Figures {
        msgs_per_s: pairs.iter().map(|p| p.0).sum(),
        worst_msgs_per_s: Some(worst.0),
        p50_ns: worst.1,
        ..Figures::default()
    })
}

/// What the trial cost, from every role's own window: cores busy added up over the processes,
/// that over the rate as CPU time per message, and the processes' peak memory added up. Left
/// out unless every role measured its window.
fn cost(reports: &[RoleReport], out: &mut Figures) {
    let costs: Option<Vec<_>> = reports.iter().map(|r| r.cost).collect();
    let Some(costs) = costs.filter(|c| !c.is_empty()) else { return };
    let busy: Option<f64> = costs.iter().map(|c| c.cores_busy()).sum();
    out.cores_busy = busy;
    out.cpu_ns_per_msg = busy.filter(|_| out.msgs_per_s > 0.0).map(|b| b / out.msgs_per_s * 1e9);
    out.peak_rss_bytes = Some(costs.iter().map(|c| c.peak_rss_bytes as f64).sum());
}

/// The median of each figure over runs (each figure on its own, over the runs that have it).
pub fn median(runs: &[Figures]) -> Option<Figures> {
    let mut out =
        Figures { msgs_per_s: middle(runs.iter().map(|f| f.msgs_per_s).collect())?, ..Figures::default() };
    let each: Vec<_> = runs.iter().map(Figures::optional).collect();
    for (i, slot) in out.optional_mut().into_iter().enumerate() {
        *slot = middle(each.iter().filter_map(|f| f[i].1).collect());
    }
    Some(out)
}

/// A result whose runs spread more than this share of its median is noisy.
pub const NOISY: f64 = 0.10;

/// The figure that ranks a pattern's results: a round trip's is its latency (p50), every other
/// pattern's its rate.
pub fn counted(pattern: Pattern) -> Figure {
    match pattern {
        Pattern::StreamRtt | Pattern::Latency | Pattern::Connect | Pattern::FanoutLatency => Figure::P50Ns,
        _ => Figure::MsgsPerS,
    }
}

/// The value of a figure in a set of figures (read as `Measure::get` reads it).
pub fn value(figure: Figure, f: &Figures) -> Option<f64> {
    figure.measure().get(f)
}

/// How good figures are, higher better: a rate as it is, a latency as round trips a second at
/// it. None when the figure that counts is missing.
pub fn goodness(pattern: Pattern, f: &Figures) -> Option<f64> {
    let figure = counted(pattern);
    match (figure, value(figure, f)?) {
        (Figure::P50Ns, p50) if p50 > 0.0 => Some(1e9 / p50),
        (Figure::P50Ns, _) => None,
        (Figure::MsgsPerS, rate) => Some(rate),
    }
}

/// Which of two sets of figures is better (Greater: `a`).
pub fn better(pattern: Pattern, a: &Figures, b: &Figures) -> Ordering {
    let g = |f| goodness(pattern, f).unwrap_or(f64::MIN);
    g(a).total_cmp(&g(b))
}

/// The runs of a mode that its result's figure counts: those in the result's host state
/// (`state`, where the file's runs carry probes and the mode has a run in it), else every run.
pub fn counted_runs<'a>(state: Option<&str>, runs: &'a [RunRecord]) -> impl Iterator<Item = &'a RunRecord> {
    let state = state.filter(|s| runs.iter().any(|r| r.state.as_deref() == Some(*s)));
    runs.iter().filter(move |r| state.is_none_or(|s| r.state.as_deref() == Some(s)))
}

/// How far the runs behind a median spread, on the figure that counts.
pub fn spread<'a>(
    pattern: Pattern,
    runs: impl IntoIterator<Item = &'a RunRecord>,
    median: &Figures,
) -> Option<Spread> {
    let figure = counted(pattern);
    let values: Vec<f64> = runs.into_iter().filter_map(|r| value(figure, &r.figures)).collect();
    let mid = value(figure, median)?;
    let min = values.iter().copied().reduce(f64::min)?;
    let max = values.iter().copied().reduce(f64::max)?;
    let relative = if mid > 0.0 { (max - min) / mid } else { 0.0 };
    Some(Spread { figure, min, max, relative })
}

/// A latency result whose sender left more than this share of its schedule unsent fell behind.
pub const BEHIND: f64 = 0.01;

/// A rate stays sustainable while its p99 is at most this multiple of the p99 at the lowest rate
/// offered.
pub const SUSTAINABLE_P99: f64 = 10.0;

/// The sustainable rate of one library in one receive mode across latency cases at several
/// rates (`points`: each rate offered and that mode's median figures there): the highest rate up
/// to which, at every rate offered, the sender kept its schedule (behind at most `BEHIND`) and
/// the p99 stayed within `SUSTAINABLE_P99` times the lowest rate's. None when the lowest rate
/// already fails, or it has no p99.
pub fn sustainable(points: &[(u64, Figures)]) -> Option<u64> {
    let mut points = points.to_vec();
    points.sort_by_key(|p| p.0);
    let base = points.first()?.1.p99_ns?;
    let held = |f: &Figures| {
        f.behind_share.is_some_and(|b| b <= BEHIND)
            && f.p99_ns.is_some_and(|p99| p99 <= SUSTAINABLE_P99 * base)
    };
    points.iter().take_while(|p| held(&p.1)).last().map(|p| p.0)
}

/// Whether a latency result's sender fell behind its schedule (`BEHIND`).
pub fn behind(r: &CaseResult) -> bool {
    r.median.and_then(|f| f.behind_share).is_some_and(|b| b > BEHIND)
}

/// Whether a latency result's sender was later, at its p50, than the latency's p50: the figure
/// then shows the sender's sleep (docs/METHOD.md).
pub fn late_sender(r: &CaseResult) -> bool {
    r.median.is_some_and(|f| matches!((f.late_p50_ns, f.p50_ns), (Some(late), Some(p50)) if late > p50))
}

/// Whether a result's runs spread more than `NOISY` of its median.
pub fn noisy(r: &CaseResult) -> bool {
    r.spread.as_ref().is_some_and(|s| s.relative > NOISY)
}

/// The runs a figure is taken from, of those given (a mode's counted runs): all of them, or when
/// their figure splits into clusters apart (`states::split_values`), the larger cluster's (of
/// two alike, the worse one's), so that a figure is never a median between two clusters and
/// its spread and resolution are its cluster's.
pub fn figure_runs<'a>(
    pattern: Pattern,
    runs: impl IntoIterator<Item = &'a RunRecord>,
) -> Vec<&'a RunRecord> {
    let figure = counted(pattern);
    let runs: Vec<&RunRecord> = runs.into_iter().collect();
    let with: Vec<&RunRecord> =
        runs.iter().copied().filter(|r| value(figure, &r.figures).is_some()).collect();
    let values = counted_values(pattern, with.iter().copied());
    if states::split_values(&values).is_empty() {
        return runs;
    }
    let group = crate::host::states::groups(&values, states::SPLIT_GAP);
    let count = |g: usize| group.iter().filter(|&&x| x == g).count();
    let groups = group.iter().copied().max().unwrap_or(0) + 1;
    // Groups are low first: of two alike, the worse is the lower rate or the higher latency.
    let worse_first: Vec<usize> =
        if figure == Figure::P50Ns { (0..groups).rev().collect() } else { (0..groups).collect() };
    let mut larger = worse_first[0];
    for &g in &worse_first {
        if count(g) > count(larger) {
            larger = g;
        }
    }
    with.into_iter().zip(&group).filter(|(_, g)| **g == larger).map(|(r, _)| r).collect()
}

/// The smallest change the figure of these runs can tell (`noise::resolution`), on the figure
/// that counts.
pub fn resolution<'a>(pattern: Pattern, runs: impl IntoIterator<Item = &'a RunRecord>) -> Option<f64> {
    crate::noise::resolution(&counted_values(pattern, runs))
}

/// The figure that counts of each of these runs that has it, in their order.
pub fn counted_values<'a>(pattern: Pattern, runs: impl IntoIterator<Item = &'a RunRecord>) -> Vec<f64> {
    runs.into_iter().filter_map(|r| value(counted(pattern), &r.figures)).collect()
}

/// A result once its runs are in: each mode's median (of its figure's runs: `figure_runs`), and
/// when it passed, the better mode's median as the library's figure with the spread and the
/// resolution of that mode's runs.
pub fn settle(r: &mut CaseResult) {
    let state = r.host_state.as_ref().map(|s| s.state.clone());
    let pattern = r.pattern;
    for m in &mut r.modes {
        let runs = figure_runs(pattern, counted_runs(state.as_deref(), &m.runs));
        m.median = median(&runs.iter().map(|run| run.figures).collect::<Vec<_>>());
    }
    if r.status != Status::Ok {
        return;
    }
    let best =
        r.modes.iter().filter_map(|m| m.median.map(|f| (m, f))).max_by(|a, b| better(pattern, &a.1, &b.1));
    if let Some((mode, f)) = best {
        let runs = figure_runs(pattern, counted_runs(state.as_deref(), &mode.runs));
        r.spread = spread(pattern, runs.iter().copied(), &f);
        r.resolution = resolution(pattern, runs);
        r.best_mode = Some(mode.mode);
        r.median = Some(f);
    }
}

/// How a result stands in its row (its case, on its machine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    Fastest,
    /// Its median's interval overlaps the fastest's: they can't be told apart.
    Level,
    Behind,
}

/// A passed result's median by goodness (none for a result that did not pass).
pub fn median_goodness(r: &CaseResult) -> Option<f64> {
    if r.status != Status::Ok {
        return None;
    }
    goodness(r.pattern, r.median.as_ref()?)
}

/// A passed result's median by goodness, inside its interval (`noise::median_interval` of the
/// runs its figure is from, `figure_runs`; with up to 7 runs, their whole range): (low, median,
/// high). A split result's interval is its figure's cluster's: the other cluster's runs would
/// stretch it to reach rivals its figure is far from.
pub fn interval(r: &CaseResult) -> Option<(f64, f64, f64)> {
    let median = median_goodness(r)?;
    let mode = r.best()?;
    let runs: Vec<f64> = figure_runs(r.pattern, counted_runs(r.state(), &mode.runs))
        .into_iter()
        .filter_map(|run| goodness(r.pattern, &run.figures))
        .collect();
    let (lo, hi) = crate::noise::median_interval(&runs).unwrap_or((median, median));
    Some((lo.min(median), median, hi.max(median)))
}

/// Whether two passed results can't be told apart: by their paired ratios where their runs carry
/// probes and share rounds, else by their intervals.
pub fn level(a: &CaseResult, b: &CaseResult) -> bool {
    states::level_paired(a, b).unwrap_or_else(|| level_by_intervals(a, b))
}

/// Whether the intervals of two passed results overlap.
pub fn level_by_intervals(a: &CaseResult, b: &CaseResult) -> bool {
    match (interval(a), interval(b)) {
        (Some(x), Some(y)) => x.0 <= y.2 && y.0 <= x.2,
        _ => false,
    }
}

/// Where `r` stands among `row`, the results of its case on its machine (itself included): the
/// best median is the fastest; a result whose interval reaches the fastest's is level.
pub fn rank<'a>(r: &CaseResult, row: impl IntoIterator<Item = &'a CaseResult>) -> Option<Rank> {
    if r.host_state.is_some() {
        return states::rank(r, row);
    }
    let mine = interval(r)?;
    // The fastest by its median alone (the first of equals): only its interval is needed, not
    // every rival's.
    let fastest = row
        .into_iter()
        .filter(|x| x.best().is_some())
        .filter_map(|x| Some((x, median_goodness(x)?)))
        .reduce(|a, b| if b.1 > a.1 { b } else { a });
    let best_range = interval(fastest?.0)?;
    Some(if mine.1 == best_range.1 {
        Rank::Fastest
    } else if mine.2 >= best_range.0 {
        Rank::Level
    } else {
        Rank::Behind
    })
}

#[cfg(test)]
mod tests;
