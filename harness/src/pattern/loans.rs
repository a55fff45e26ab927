//! Copy against loan: each stream and round trip whose ends write and read in the library's own
//! memory, beside the same case copied. Their figures are their pattern's; the report shows each
//! beside its copy, in no family table of its own.

use super::shows::{Line, RATE, Shows, Title};
use super::spec::FamilySpec;
use crate::results::Measure;

/// What the section says its cells are.
pub const METHOD: &str = "Each stream and round trip whose ends write and read in the library's own memory (a \
loan case, loan/…: the sender writes each message where the library lends it, the receiver reads it where it \
lies) beside the same case copied through each role's own buffers, the method of every other table. Both write \
every byte of every message and check every byte that arrives. Each cell is copy → loan, in the better receive \
mode of each, and in brackets what the loan bought: the loan's rate over the copy's, or the copy's p50 over the \
loan's (above 1×: the loan is faster). A library without in-place calls, or a message over what it lends, is a \
dash with the reason.";

pub const FAMILY: FamilySpec =
    FamilySpec { title: "Copy against loan", anchor: "loans", method: |_| METHOD.into() };

/// What `compare` holds of the loan cases (their table and chart are the report's, each beside
/// its copy).
pub const SHOWS: Shows = Shows {
    rows: &[(Measure::MsgsPerS, "rate"), (Measure::P50Ns, "p50")],
    compared: &[Measure::MsgsPerS, Measure::P50Ns, Measure::CpuNsPerMsg],
    chart: Title::AfterFamily("loan against copy"),
    panels: &[RATE],
    floors_on: None,
    copy_floor: false,
    line: Line::Rate,
};
