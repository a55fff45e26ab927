//! Latency to many subscribers: a lossless broadcast at a fixed rate, every subscriber timing
//! each message from its due time.

use anyhow::{Context, Result, bail};
use ipcbench_api::{Library, Requests, Setup};

use super::checks::{Broken, Delivered};
use super::shows::{CountPanel, Line, Over, Panel, Scale, Scaling, Shows, Title};
use super::spec::{Family, FamilySpec, Floor, Spec};
use super::words::{distinct, many, per_second, rate_of, subscribers_of};
use crate::matrix::{Case, Role};
use crate::results::{Figure, Figures, Measure, RoleReport};
use crate::role::paced::{paced_send_loop, spin_margin, timed_receive_loop};
use crate::role::{ChildArgs, lead};

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
    timed: true,
    calls: false,
    // Its subscribers share the cores: no one crossing to hold it against.
    floor: Floor::None,
    spectrum: "one way to every subscriber, from each message's due time",
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
};

/// Every subscriber received every message; the figures are the slowest's rate, every
/// subscriber's latency spectrum together, the publisher's lateness and how far it fell behind.
fn figures(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    let d = Delivered::check(case, reports, (Role::Publisher, Role::Subscriber))?;
    let slowest = d.slowest_of(&d.receivers)?;
    let mut out = Figures { msgs_per_s: d.rate(slowest.received_measured), ..Figures::default() };
    d.paced(&mut out);
    Ok(out)
}

/// The publisher keeps its schedule; each subscriber times each message from its due time.
pub fn start<L: Library>(args: &ChildArgs, case: &Case, setup: &Setup) -> Result<()> {
    let rate = rate_of(case).with_context(|| format!("{} has no fixed rate", case.name))?;
    let (size, me) = (setup.size, setup.index as u32);
    match args.role {
        Role::Publisher => {
            let opened = L::publisher(setup);
            let margin = spin_margin();
            lead(opened, args, |tx, w, r| paced_send_loop(tx, size, me, rate, margin, w, r))
        }
        Role::Subscriber => lead(L::subscriber(setup), args, |rx, _, r| timed_receive_loop(rx, size, r)),
        other => bail!("a {} in the latency case {}", other.as_str(), args.case),
    }
}
