//! What the figures are and which one counts: a trial's record (its figures are its pattern's,
//! `pattern::figures`); medians over runs; which receive mode's median is the library's figure
//! (the better one); how far its runs spread and when that is noisy; where a result stands in
//! its row. Every rule about a figure is here, and only here; nothing here formats text.

use std::cmp::Ordering;

use hdrhistogram::Histogram;
use ipcbench_api::Requests;

use crate::histogram;
use crate::matrix::{Case, Pattern};
use crate::noise::middle;
use crate::pattern::{self, Broken};
use crate::results::{CaseResult, Figure, Figures, RoleReport, RunRecord, Spread, Status};

pub mod claims;
pub mod spread;
pub mod standings;
pub mod states;

/// A trial's record: its figures, its histograms whole, and each role's report without its
/// buckets (the histograms hold them).
pub fn run_record(case: &Case, roles: Vec<RoleReport>, requests: Requests) -> Result<RunRecord, Broken> {
    let figures = pattern::figures(case, &roles, requests)?;
    let whole = |h: Histogram<u64>| (!h.is_empty()).then(|| histogram::encode(&h));
    let histogram = whole(histogram::from_buckets(roles.iter().map(|r| r.latency.as_slice())));
    let lateness = whole(histogram::from_buckets(roles.iter().map(|r| r.lateness.as_slice())));
    let roles =
        roles.into_iter().map(|r| RoleReport { latency: Vec::new(), lateness: Vec::new(), ..r }).collect();
    Ok(RunRecord { roles, histogram, lateness, ..RunRecord::of(figures) })
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
    pattern::spec(pattern).counted
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
        r.load = crate::results::LoadSummary::of(runs.iter().filter_map(|run| run.load));
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
