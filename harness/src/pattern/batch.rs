//! Batch calls: streams and lossless broadcasts whose every send and receive call moves a batch
//! of messages, for the libraries that have batch calls. Their figures are their pattern's; they
//! are a family, a table and a chart of their own.

use super::shows::{Shows, Title, rate_only};
use super::spec::FamilySpec;
use super::words::{counts, distinct};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Batch calls",
    anchor: "batches",
    method: |cases| {
        format!(
            "Streams and lossless broadcasts whose every send and receive call moves a batch of {} messages, \
             for the libraries that have batch calls.",
            counts(&distinct(cases, |c| (c.batch > 1).then_some(c.batch as u64)))
        )
    },
};

/// The batch cases: charted by rate.
pub const SHOWS: Shows = rate_only(Title::AfterFamily("messages per second"));
