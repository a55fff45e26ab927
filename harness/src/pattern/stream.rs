//! Streams and round trips: one sender and one receiver, each a process of its own. A stream's
//! figure is its messages a second one way; a round trip's, its p50 when the receiver answers
//! each message at once.

use anyhow::{Result, bail};
use ipcbench_api::{Library, Requests, Setup, Side, Transfer};

use super::checks::{Broken, calls, one_way};
use super::shows::{Line, Panel, Scale, Shows, Title, rate_only};
use super::spec::{Family, FamilySpec, Floor, Spec};
use crate::matrix::{Case, Role};
use crate::results::{Figure, Figures, Measure, RoleReport};
use crate::role::loops::{Ordered, call_loop, echo_loop, receive_loop, send_loop};
use crate::role::transfer::{Copied, Echo, Lent, Put, Take};
use crate::role::{ChildArgs, lead};

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

pub const STREAM: Spec = Spec::rate(
    Family::Streams,
    Shows { copy_floor: true, ..rate_only(Title::Own("Streams: messages per second one way")) },
    stream,
);

pub const ROUND_TRIP: Spec = Spec {
    family: Family::Streams,
    counted: Figure::P50Ns,
    calls: true,
    floor: Floor::RoundTrip,
    spectrum: Some("per call"),
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
    names: &[],
};

/// Every message the sender sent arrived; the figure is the receiver's rate over the window.
fn stream(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    Ok(one_way(case, reports, (Role::Sender, Role::Receiver))?.1)
}

/// Every ping answered; the figures are the round trips a second and their spectrum.
fn round_trip(_: &Case, reports: &[RoleReport], requests: Requests) -> Result<Figures, Broken> {
    calls(reports, (Role::Pinger, Role::Echo), requests)
}

/// A stream's or round trip's role (each pair's too), its loops moving messages copied through
/// its own buffers or, a loan case, written and read in the library's memory.
pub fn start<L: Library>(args: &ChildArgs, _case: &Case, setup: &Setup) -> Result<()> {
    let (size, me) = (setup.size, setup.index as u32);
    match setup.transfer {
        Transfer::Copy => one_to_one::<L, _>(args, setup, || Copied::new(size, me)),
        Transfer::Loan => one_to_one::<L, _>(args, setup, || Lent::new(size, me)),
    }
}

fn one_to_one<L: Library, W: Put + Take + Echo>(
    args: &ChildArgs,
    setup: &Setup,
    way: impl Fn() -> W,
) -> Result<()> {
    let me = setup.index as u32;
    match args.role {
        Role::Sender => lead(L::stream(setup, Side::Connect), args, |tx, w, r| send_loop(tx, way(), w, r)),
        Role::Receiver => lead(L::stream(setup, Side::Accept), args, |rx, _, r| {
            receive_loop(rx, way(), Ordered::default(), r)
        }),
        Role::Pinger => {
            lead(L::stream(setup, Side::Connect), args, |ep, w, r| call_loop(ep, way(), way(), me, w, r))
        }
        Role::Echo => lead(L::stream(setup, Side::Accept), args, |ep, _, r| echo_loop(ep, way(), r)),
        other => bail!("a {} in the stream or round trip {}", other.as_str(), args.case),
    }
}
