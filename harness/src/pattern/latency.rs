//! Latency at a fixed rate: a stream whose sender keeps a schedule and stamps each message with
//! the instant it was due; the receiver times each from that instant.

use anyhow::{Context, Result, bail};
use ipcbench_api::{Library, Requests, Setup, Side};

use super::checks::{Broken, Delivered};
use super::shows::{CountPanel, Line, Over, Panel, Scale, Scaling, Shows, Title};
use super::spec::{Family, FamilySpec, Floor, Spec};
use super::words::{distinct, per_second, rate_of};
use crate::matrix::{Case, Pace, Role};
use crate::results::{Figure, Figures, Measure, RoleReport};
use crate::role::paced::{paced_send_loop, spin_margin, timed_receive_loop};
use crate::role::{ChildArgs, lead};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Latency at a fixed rate",
    anchor: "latency",
    method: |cases| {
        format!(
            "A sender on a fixed schedule ({}), as applications send: each message's one-way latency from \
             its due time, as a whole spectrum.{}",
            per_second(cases),
            if distinct(cases, rate_of).contains(&1_000) {
                " At 1 k/s the waiting mode is a sleeping receiver."
            } else {
                ""
            }
        )
    },
};

pub const SPEC: Spec = Spec {
    family: Family::Latency,
    counted: Figure::P50Ns,
    timed: true,
    calls: false,
    floor: Floor::OneWay,
    spectrum: "one way, from each message's due time",
    shows: Shows {
        rows: &[
            (Measure::P50Ns, "p50"),
            (Measure::P99Ns, "p99"),
            (Measure::P9999Ns, "p99.99"),
            (Measure::MaxNs, "max"),
        ],
        compared: &[Measure::P50Ns, Measure::P99Ns, Measure::CpuNsPerMsg],
        chart: Title::AfterFamily("p50 and p99.99 one way, from each message's due time (lower is better)"),
        panels: &[
            Panel { measure: Measure::P50Ns, label: "p50 one way", scale: Scale::Micros },
            Panel { measure: Measure::P9999Ns, label: "p99.99 one way", scale: Scale::Micros },
        ],
        floors_on: Some(0),
        copy_floor: false,
        line: Line::Spectrum,
    },
    scaling: Some(Scaling {
        over: Over::Rate,
        panels: &[
            CountPanel::latency(Measure::P50Ns, "p50 one way", "p50"),
            CountPanel::latency(Measure::P99Ns, "p99 one way", "p99"),
            CountPanel::latency(Measure::P999Ns, "p99.9 one way", "p99.9"),
        ],
        place: |case| match case.pace {
            Pace::Rate(rate) => Some((1, "*", rate as f64)),
            _ => None,
        },
    }),
    figures,
    costed: true,
};

/// Every message the sender sent arrived; the figures are the receiver's rate, the latency
/// spectrum from each message's due time, the sender's lateness and how far it fell behind.
fn figures(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    let d = Delivered::check(case, reports, (Role::Sender, Role::Receiver))?;
    let slowest = d.slowest_of(&d.receivers)?;
    let mut out = Figures { msgs_per_s: d.rate(slowest.received_measured), ..Figures::default() };
    d.paced(&mut out);
    Ok(out)
}

/// The sender keeps its schedule; the receiver times each message from its due time.
pub fn start<L: Library>(args: &ChildArgs, case: &Case, setup: &Setup) -> Result<()> {
    let rate = rate_of(case).with_context(|| format!("{} has no fixed rate", case.name))?;
    let (size, me) = (setup.size, setup.index as u32);
    match args.role {
        Role::Sender => {
            let opened = L::stream(setup, Side::Connect);
            // Measured before "ready", so that the schedule's start finds it done.
            let margin = spin_margin();
            lead(opened, args, |tx, w, r| paced_send_loop(tx, size, me, rate, margin, w, r))
        }
        Role::Receiver => {
            lead(L::stream(setup, Side::Accept), args, |rx, _, r| timed_receive_loop(rx, size, r))
        }
        other => bail!("a {} in the latency case {}", other.as_str(), args.case),
    }
}
