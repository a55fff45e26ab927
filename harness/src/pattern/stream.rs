//! Streams and round trips: one sender and one receiver, each a process of its own. A stream's
//! figure is its messages a second one way; a round trip's, its p50 when the receiver answers
//! each message at once.

use ipcbench_api::Requests;

use super::checks::{Broken, Delivered, calls};
use super::shows::{Line, Panel, Scale, Shows, Title, rate_only};
use super::spec::{Family, FamilySpec, Floor, Spec};
use crate::matrix::{Case, Role};
use crate::results::{Figure, Figures, Measure, RoleReport};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Streams and round trips",
    anchor: "streams",
    method: |_| {
        "One sender and one receiver, each a process of its own: messages per second one way, and the round \
         trip (p50, p99) when the receiver answers each message at once. The sender writes each message from \
         its own buffer and the receiver ends with it in its own."
            .into()
    },
};

pub const STREAM: Spec = Spec {
    family: Family::Streams,
    counted: Figure::MsgsPerS,
    timed: false,
    calls: false,
    floor: Floor::None,
    spectrum: "per call",
    shows: Shows { copy_floor: true, ..rate_only(Title::Own("Streams: messages per second one way")) },
    scaling: None,
    figures: stream,
    costed: true,
};

pub const ROUND_TRIP: Spec = Spec {
    family: Family::Streams,
    counted: Figure::P50Ns,
    timed: true,
    calls: true,
    floor: Floor::RoundTrip,
    spectrum: "per call",
    shows: Shows {
        rows: &[(Measure::P50Ns, "p50"), (Measure::P99Ns, "p99")],
        compared: &[Measure::P50Ns, Measure::P99Ns, Measure::CpuNsPerMsg],
        chart: Title::Own("Round trips: p50 (lower is better)"),
        panels: &[Panel { measure: Measure::P50Ns, label: "p50 round trip", scale: Scale::Micros }],
        floors_on: Some(0),
        copy_floor: false,
        line: Line::RoundTrip,
    },
    scaling: None,
    figures: round_trip,
    costed: true,
};

/// Every message the sender sent arrived; the figure is the receiver's rate over the window.
fn stream(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    let d = Delivered::check(case, reports, (Role::Sender, Role::Receiver))?;
    let slowest = d.slowest_of(&d.receivers)?;
    Ok(Figures { msgs_per_s: d.rate(slowest.received_measured), ..Figures::default() })
}

/// Every ping answered; the figures are the round trips a second and their spectrum.
fn round_trip(_: &Case, reports: &[RoleReport], requests: Requests) -> Result<Figures, Broken> {
    calls(reports, (Role::Pinger, Role::Echo), requests)
}
