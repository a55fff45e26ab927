//! What a pattern is and what a family is, as each family's file fills them in.

use super::shows::{Scaling, Shows};
use crate::matrix::Case;
use crate::results::{Figure, Figures, Names, RoleReport};
use ipcbench_api::Requests;

use super::checks::Broken;

/// What a pattern is, to everything that reads its results.
pub struct Spec {
    /// The report's section its cases are in.
    pub family: Family,
    /// The figure that ranks its results: a rate (higher is better) or a p50 (lower is).
    pub counted: Figure,
    /// Whether its rate counts calls (a request and its reply) rather than messages.
    pub calls: bool,
    /// The machine's round-trip floor its p50 is held against, where one is.
    pub floor: Floor,
    /// Where its results time each call or message into a latency histogram (round trips,
    /// services, fixed-rate latency), what that times, in its spectrum chart's title: what the
    /// spectra draw and the floors hold. None for a pattern whose runs have no histogram.
    pub spectrum: Option<&'static str>,
    pub shows: Shows,
    /// Its chart against a count, where its cases differ in one.
    pub scaling: Option<Scaling>,
    /// Its figures from its roles' reports, once each report has its side's counts; `requests`
    /// says whether a service's request reaches one server or every server.
    pub figures: fn(&Case, &[RoleReport], Requests) -> Result<Figures, Broken>,
    /// Whether its figures include what the trial cost (cores busy, CPU per message, memory).
    pub costed: bool,
    /// The names its results file gives the figures whose slot means something of its own here
    /// (the others' rate beside a slow subscriber's): none for most.
    pub names: Names,
}

impl Spec {
    /// A pattern ranked by its rate of messages, with no histogram, no floor, and its cost: what
    /// `family`'s file shows and how it makes its figures.
    pub const fn rate(
        family: Family,
        shows: Shows,
        figures: fn(&Case, &[RoleReport], Requests) -> Result<Figures, Broken>,
    ) -> Spec {
        Spec {
            family,
            counted: Figure::MsgsPerS,
            calls: false,
            floor: Floor::None,
            spectrum: None,
            shows,
            scaling: None,
            figures,
            costed: true,
            names: &[],
        }
    }

    /// Whether its results hold a latency histogram.
    pub fn timed(&self) -> bool {
        self.spectrum.is_some()
    }
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

/// A family of cases: a section of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Streams,
    Broadcasts,
    Queues,
    Services,
    Batches,
    Latency,
    Connect,
    SlowSubscriber,
    Pairs,
    Duplex,
    FanoutLatency,
    /// The loan cases: not a family table of their own (not in `ALL`), but "Copy against
    /// loan", each beside its copy.
    Loans,
}

/// What a family is, as its file says.
pub struct FamilySpec {
    pub title: &'static str,
    /// The section's anchor in the HTML page.
    pub anchor: &'static str,
    /// What the family's cases measure, in a sentence or two (docs/METHOD.md says it whole), with
    /// the rates, counts and batches of the cases given (those of the family a report shows): a
    /// text that named the matrix's would misstate a file that ran others.
    pub method: fn(&[&Case]) -> String,
}

impl Family {
    /// The report's sections, in order.
    pub const ALL: [Family; 11] = [
        Family::Streams,
        Family::Broadcasts,
        Family::SlowSubscriber,
        Family::FanoutLatency,
        Family::Queues,
        Family::Services,
        Family::Pairs,
        Family::Duplex,
        Family::Batches,
        Family::Latency,
        Family::Connect,
    ];
}
