//! Services: clients send a request and wait for its reply before the next; several servers
//! share the requests. The figures are every client's calls a second together and the p50 call.

use anyhow::{Result, bail};
use ipcbench_api::{Library, Requests, Setup};

use super::checks::{Broken, calls};
use super::shows::{CALLS, Line, Panel, Scale, Shows, Title};
use super::spec::{Family, FamilySpec, Floor, Spec};
use super::words::{listed, shapes};
use crate::matrix::{Case, Role};
use crate::results::{Figure, Figures, Measure, RoleReport};
use crate::role::loops::{call_loop, echo_loop};
use crate::role::transfer::Copied;
use crate::role::{ChildArgs, lead};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Services",
    anchor: "services",
    method: |cases| {
        format!(
            "Clients send a request and wait for its reply before the next (clients × servers: {}; several \
             servers share the requests): every client's calls per second together, and the p50 of a call.",
            listed(&shapes(cases), "and")
        )
    },
};

pub const SPEC: Spec = Spec {
    family: Family::Services,
    counted: Figure::MsgsPerS,
    calls: true,
    floor: Floor::RoundTrip,
    spectrum: Some("per call"),
    shows: Shows {
        rows: &[(Measure::MsgsPerS, "rate"), (Measure::P50Ns, "p50 call")],
        compared: &[Measure::MsgsPerS, Measure::P50Ns, Measure::P99Ns, Measure::CpuNsPerMsg],
        chart: Title::AfterFamily("every client's calls per second together, and the p50 call"),
        panels: &[CALLS, Panel { measure: Measure::P50Ns, label: "p50 call", scale: Scale::Micros }],
        floors_on: Some(1),
        copy_floor: false,
        line: Line::Rate,
    },
    scaling: None,
    figures,
    costed: true,
    names: &[],
};

/// Every request answered, by one server or (a library without load sharing) by each.
fn figures(_: &Case, reports: &[RoleReport], requests: Requests) -> Result<Figures, Broken> {
    calls(reports, (Role::Client, Role::Server), requests)
}

/// A client, calling and waiting for each reply, or a server, answering each request.
pub fn start<L: Library>(args: &ChildArgs, _case: &Case, setup: &Setup) -> Result<()> {
    let me = setup.index as u32;
    let copied = || Copied::new(setup.size, me);
    match args.role {
        Role::Client => lead(L::client(setup), args, |ep, w, r| call_loop(ep, copied(), copied(), me, w, r)),
        Role::Server => lead(L::server(setup), args, |ep, _, r| echo_loop(ep, copied(), r)),
        other => bail!("a {} in the service {}", other.as_str(), args.case),
    }
}
