//! The patterns, one file per family, each saying for its patterns what `registry::Entry` says
//! for a library: how its figures come from its roles' reports (every check of those reports
//! against each other is its own), which figure ranks it, what it shows (its table's rows, its
//! chart, its scaling chart, its floor) and what its family's section says it measures. The
//! driver, the analysis, the report and compare read a pattern's `Spec` and a family's
//! `FamilySpec`; the matches below are the only places that turn a `Pattern`, a `Family` or
//! what a case is gathered under into what it is. The types the family files fill in are in
//! spec.rs and shows.rs, below them, so that no file imports one that imports it back.

mod batch;
mod broadcast;
mod checks;
mod connect;
mod duplex;
mod fanout;
mod latency;
mod loans;
mod pairs;
mod queue;
mod service;
pub mod shows;
mod slow;
mod spec;
pub mod start;
mod stream;
mod words;

use ipcbench_api::Requests;

pub use checks::{Broken, EMPTY as EMPTY_WINDOW};
use shows::Shows;
pub use spec::{Family, FamilySpec, Floor, Spec};

use crate::matrix::{Case, Pattern};
use crate::results::{CaseResult, Figures, RoleReport};

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
        Pattern::Duplex => &duplex::SPEC,
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

impl Family {
    pub fn spec(self) -> &'static FamilySpec {
        match self {
            Family::Streams => &stream::FAMILY,
            Family::Broadcasts => &broadcast::FAMILY,
            Family::Queues => &queue::FAMILY,
            Family::Services => &service::FAMILY,
            Family::Batches => &batch::FAMILY,
            Family::Latency => &latency::FAMILY,
            Family::Connect => &connect::FAMILY,
            Family::SlowSubscriber => &slow::FAMILY,
            Family::Pairs => &pairs::FAMILY,
            Family::Duplex => &duplex::FAMILY,
            Family::FanoutLatency => &fanout::FAMILY,
            Family::Loans => &loans::FAMILY,
        }
    }

    /// The family of what a case is gathered under: its pattern's; batch and loan cases are
    /// families of their own.
    pub fn of(gathered: Gathered) -> Family {
        match gathered {
            Gathered::Batches => Family::Batches,
            Gathered::Loans => Family::Loans,
            Gathered::Pattern(p) => spec(p).family,
        }
    }

    pub fn title(self) -> &'static str {
        self.spec().title
    }

    pub fn anchor(self) -> &'static str {
        self.spec().anchor
    }

    /// What the family's cases (of those given) measure.
    pub fn method(self, cases: &[&Case]) -> String {
        (self.spec().method)(cases)
    }
}

/// What a table or chart gathers a case under: its pattern, the batch cases of every pattern
/// together, or the loan cases (shown in "Copy against loan" beside their copies, in no family
/// table or chart of their own). The family tables and the charts both group by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gathered {
    Pattern(Pattern),
    Batches,
    Loans,
}

impl Gathered {
    /// Each pattern in its order, then the batch cases.
    pub fn all() -> impl Iterator<Item = Gathered> {
        Pattern::ALL.into_iter().map(Gathered::Pattern).chain([Gathered::Batches])
    }

    /// A result's: its pattern's, the batches' for a batch case, the loans' for a loan case.
    pub fn of(r: &CaseResult) -> Gathered {
        if r.transfer == ipcbench_api::Transfer::Loan {
            Gathered::Loans
        } else if r.batch.is_some() {
            Gathered::Batches
        } else {
            Gathered::Pattern(r.pattern)
        }
    }

    pub fn shows(self) -> Shows {
        match self {
            Gathered::Pattern(p) => spec(p).shows,
            Gathered::Batches => batch::SHOWS,
            Gathered::Loans => loans::SHOWS,
        }
    }

    /// A chart's file name: `stream`, `batch`, `loan`.
    pub fn name(self) -> &'static str {
        match self {
            Gathered::Pattern(p) => p.as_str(),
            Gathered::Batches => "batch",
            Gathered::Loans => "loan",
        }
    }
}

#[cfg(test)]
mod tests;
