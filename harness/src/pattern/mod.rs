//! The patterns, one file per family, each saying for its patterns what `registry::Entry` says
//! for a library: how its figures come from its roles' reports (every check of those reports
//! against each other is its own), which figure ranks it, what it shows (its table's rows, its
//! chart, its scaling chart, its floor) and what its family's section says it measures. The
//! driver, the analysis, the report and compare read a pattern's `Spec` and a family's
//! `FamilySpec`; the two matches below are the only places that turn a `Pattern` or a `Family`
//! into what it is.

mod batch;
mod broadcast;
mod checks;
mod connect;
mod family;
mod fanout;
mod latency;
mod loans;
mod pairs;
mod queue;
mod service;
pub mod shows;
mod slow;
mod stream;
mod words;

use ipcbench_api::Requests;

pub use checks::Broken;
pub use family::{Family, FamilySpec};
use shows::{Scaling, Shows};

use crate::matrix::{Case, Pattern};
use crate::results::{Figure, Figures, RoleReport};

/// What a pattern is, to everything that reads its results.
pub struct Spec {
    /// The report's section its cases are in.
    pub family: Family,
    /// The figure that ranks its results: a rate (higher is better) or a p50 (lower is).
    pub counted: Figure,
    /// Whether its results time each call or message into a latency histogram (round trips,
    /// services, fixed-rate latency): what the spectra draw and the floors hold.
    pub timed: bool,
    /// Whether its rate counts calls (a request and its reply) rather than messages.
    pub calls: bool,
    /// The machine's round-trip floor its p50 is held against, where one is.
    pub floor: Floor,
    /// What its latency spectrum times, in the spectrum chart's title.
    pub spectrum: &'static str,
    pub shows: Shows,
    /// Its chart against a count, where its cases differ in one.
    pub scaling: Option<Scaling>,
    /// Its figures from its roles' reports, once each report has its side's counts; `requests`
    /// says whether a service's request reaches one server or every server.
    pub figures: fn(&Case, &[RoleReport], Requests) -> Result<Figures, Broken>,
    /// Whether its figures include what the trial cost (cores busy, CPU per message, memory).
    pub costed: bool,
}

/// Which of the machine's floors a pattern's p50 is held against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Floor {
    /// None: a rate, a fan-out (whose subscribers share the cores), a pair, a set-up.
    None,
    /// The round trip: a round trip's or a call's p50.
    RoundTrip,
    /// Half of it: one way crosses the line once.
    OneWay,
}

/// A pattern's spec.
pub fn spec(pattern: Pattern) -> &'static Spec {
    match pattern {
        Pattern::Stream => &stream::STREAM,
        Pattern::StreamRtt => &stream::ROUND_TRIP,
        Pattern::Broadcast => &broadcast::SPEC,
        Pattern::Queue => &queue::SPEC,
        Pattern::Service => &service::SPEC,
        Pattern::Latency => &latency::SPEC,
        Pattern::Connect => &connect::SPEC,
        Pattern::SlowSubscriber => &slow::SPEC,
        Pattern::Pairs => &pairs::SPEC,
        Pattern::FanoutLatency => &fanout::SPEC,
    }
}

/// Checks a trial's reports against each other and computes its figures, as its pattern says.
pub fn figures(case: &Case, reports: &[RoleReport], requests: Requests) -> Result<Figures, Broken> {
    checks::sides(reports)?;
    let spec = spec(case.pattern());
    let mut out = (spec.figures)(case, reports, requests)?;
    if spec.costed {
        checks::cost(reports, &mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
