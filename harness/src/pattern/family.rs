//! The families: a section of the report each, holding one or more patterns (streams and round
//! trips together) or the batch or loan cases of several.

use super::shows::Gathered;
use crate::matrix::Case;

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
    pub const ALL: [Family; 10] = [
        Family::Streams,
        Family::Broadcasts,
        Family::SlowSubscriber,
        Family::FanoutLatency,
        Family::Queues,
        Family::Services,
        Family::Pairs,
        Family::Batches,
        Family::Latency,
        Family::Connect,
    ];

    pub fn spec(self) -> &'static FamilySpec {
        match self {
            Family::Streams => &super::stream::FAMILY,
            Family::Broadcasts => &super::broadcast::FAMILY,
            Family::Queues => &super::queue::FAMILY,
            Family::Services => &super::service::FAMILY,
            Family::Batches => &super::batch::FAMILY,
            Family::Latency => &super::latency::FAMILY,
            Family::Connect => &super::connect::FAMILY,
            Family::SlowSubscriber => &super::slow::FAMILY,
            Family::Pairs => &super::pairs::FAMILY,
            Family::FanoutLatency => &super::fanout::FAMILY,
            Family::Loans => &super::loans::FAMILY,
        }
    }

    /// The family of what a case is gathered under: its pattern's; batch and loan cases are
    /// families of their own.
    pub fn of(gathered: Gathered) -> Family {
        match gathered {
            Gathered::Batches => Family::Batches,
            Gathered::Loans => Family::Loans,
            Gathered::Pattern(p) => super::spec(p).family,
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
