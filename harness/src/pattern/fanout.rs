//! Latency to many subscribers: a lossless broadcast at a fixed rate, every subscriber timing
//! each message from its due time.

use anyhow::Result;
use ipcbench_api::{Library, Requests, Setup};

use super::checks::Broken;
use super::shows::{CountPanel, Line, Over, Panel, Scale, Scaling, Shows, Title};
use super::spec::{Family, FamilySpec, Floor, Spec};
use super::words::{distinct, many, per_second, subscribers_of};
use crate::matrix::{Case, Role};
use crate::results::{Figure, Figures, Measure, RoleReport};
use crate::role::ChildArgs;

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Latency to many subscribers",
    anchor: "fanout-latency",
    method: |cases| {
        format!(
            "A publisher on a fixed schedule ({}) and {}, lossless: each subscriber times each message from \
             its due time; the p50 and p99 are over every subscriber's messages together (each subscriber's \
             own p50 and p99 are in the results file).",
            per_second(cases),
            many(&distinct(cases, subscribers_of), "subscriber")
        )
    },
};

pub const SPEC: Spec = Spec {
    family: Family::FanoutLatency,
    counted: Figure::P50Ns,
    calls: false,
    // Its subscribers share the cores: no one crossing to hold it against.
    floor: Floor::None,
    spectrum: Some("one way to every subscriber, from each message's due time"),
    shows: Shows {
        rows: &[(Measure::P50Ns, "p50"), (Measure::P99Ns, "p99"), (Measure::MaxNs, "max")],
        compared: &[Measure::P50Ns, Measure::P99Ns, Measure::CpuNsPerMsg],
        chart: Title::AfterFamily(
            "p50 and p99 one way to every subscriber, from each message's due time (lower is better)",
        ),
        panels: &[
            Panel { measure: Measure::P50Ns, label: "p50 one way", scale: Scale::Micros },
            Panel { measure: Measure::P99Ns, label: "p99 one way", scale: Scale::Micros },
        ],
        floors_on: Some(0),
        copy_floor: false,
        line: Line::Spectrum,
    },
    scaling: Some(Scaling {
        over: Over::Subscribers,
        panels: &[
            CountPanel::latency(Measure::P50Ns, "p50 one way, every subscriber", "p50"),
            CountPanel::latency(Measure::P99Ns, "p99 one way, every subscriber", "p99"),
        ],
        place: super::broadcast::subscribers_place,
    }),
    figures,
    costed: true,
    names: &[],
};

/// Every subscriber received every message; the figures are the slowest's rate, every
/// subscriber's latency spectrum together, the publisher's lateness and how far it fell behind.
fn figures(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    super::latency::paced_figures(case, reports, (Role::Publisher, Role::Subscriber))
}

/// The publisher keeps its schedule; each subscriber times each message from its due time.
pub fn start<L: Library>(args: &ChildArgs, case: &Case, setup: &Setup) -> Result<()> {
    let send = (Role::Publisher, || L::publisher(setup));
    super::latency::paced(args, case, setup, send, (Role::Subscriber, || L::subscriber(setup)))
}
