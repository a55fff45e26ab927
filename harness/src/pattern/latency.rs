//! Latency at a fixed rate: a stream whose sender keeps a schedule and stamps each message with
//! the instant it was due; the receiver times each from that instant.

use anyhow::{Context, Result, bail};
use ipcbench_api::{Library, Opened, Requests, Rx, Setup, Side, Tx};

use super::checks::{Broken, one_way};
use super::shows::{CountPanel, Line, Over, Panel, Scale, Scaling, Shows, Title};
use super::spec::{Family, FamilySpec, Floor, Spec};
use super::words::{distinct, per_second, rate_of};
use crate::matrix::{Case, Role};
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
    calls: false,
    floor: Floor::OneWay,
    spectrum: Some("one way, from each message's due time"),
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
        place: |case| Some((1, "*", rate_of(case)? as f64)),
    }),
    figures,
    costed: true,
    names: &[],
};

/// Every message the sender sent arrived; the figures are the receiver's rate, the latency
/// spectrum from each message's due time, the sender's lateness and how far it fell behind.
fn figures(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    paced_figures(case, reports, (Role::Sender, Role::Receiver))
}

/// A fixed-rate trial's figures (a stream's or a fan-out's; `roles`: sender, receiver): one
/// way's, with the latency spectrum from each message's due time, the sender's lateness and how
/// far it fell behind.
pub fn paced_figures(case: &Case, reports: &[RoleReport], roles: (Role, Role)) -> Result<Figures, Broken> {
    let (d, mut out) = one_way(case, reports, roles)?;
    d.paced(&mut out);
    Ok(out)
}

/// The sender keeps its schedule; the receiver times each message from its due time.
pub fn start<L: Library>(args: &ChildArgs, case: &Case, setup: &Setup) -> Result<()> {
    let send = (Role::Sender, || L::stream(setup, Side::Connect));
    paced(args, case, setup, send, (Role::Receiver, || L::stream(setup, Side::Accept)))
}

/// A fixed-rate case's roles (a stream's or a fan-out's): the sending one, opened by `send`,
/// keeps its schedule; each receiving one, opened by `receive`, times each message from its due
/// time.
pub fn paced<T: Tx, R: Rx>(
    args: &ChildArgs,
    case: &Case,
    setup: &Setup,
    send: (Role, impl FnOnce() -> Result<Opened<T>>),
    receive: (Role, impl FnOnce() -> Result<Opened<R>>),
) -> Result<()> {
    let rate = rate_of(case).with_context(|| format!("{} has no fixed rate", case.name))?;
    let (size, me) = (setup.size, setup.index as u32);
    if args.role == send.0 {
        let opened = (send.1)();
        // Measured before "ready", so that the schedule's start finds it done.
        let margin = spin_margin();
        lead(opened, args, |tx, w, r| paced_send_loop(tx, size, me, rate, margin, w, r))
    } else if args.role == receive.0 {
        lead((receive.1)(), args, |rx, _, r| timed_receive_loop(rx, size, r))
    } else {
        bail!("a {} in the latency case {}", args.role.as_str(), args.case)
    }
}
