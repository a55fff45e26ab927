//! Connection set-up: a receiver is running; a fresh sender process, again and again, reads the
//! clock, opens its endpoint and sends one message stamped with that instant.

use ipcbench_api::{Library, Requests, Setup};

use super::checks::{Broken, broken, latency, of, spectrum};
use super::shows::{Line, Panel, Scale, Shows, Title};
use super::spec::{Family, FamilySpec, Floor, Spec};
use crate::matrix::{Case, Role};
use crate::noise::middle;
use crate::results::{Figure, Figures, Measure, RoleReport};
use crate::role::ChildArgs;

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Connection set-up",
    anchor: "connect",
    method: |_| {
        "A fresh sender process opens its endpoint and sends one message to a receiver already there: the \
         time from its first call to the message's arrival (p50 and greatest), a new process each time."
            .into()
    },
};

pub const SPEC: Spec = Spec {
    family: Family::Connect,
    counted: Figure::P50Ns,
    calls: false,
    floor: Floor::None,
    spectrum: None,
    shows: Shows {
        rows: &[(Measure::P50Ns, "p50"), (Measure::MaxNs, "max")],
        compared: &[Measure::P50Ns, Measure::CpuNsPerMsg],
        chart: Title::AfterFamily(
            "a fresh sender's open and first message, p50 and greatest (lower is better)",
        ),
        panels: &[
            Panel { measure: Measure::P50Ns, label: "p50 set-up", scale: Scale::Micros },
            Panel { measure: Measure::MaxNs, label: "greatest set-up", scale: Scale::Micros },
        ],
        floors_on: None,
        copy_floor: false,
        line: Line::Connect,
    },
    scaling: None,
    figures,
    // The senders follow one another, with the driver's waits between them: no rate to cost.
    costed: false,
    names: &[],
};

/// Every sender's one message arrived, and the set-up times (from each sender's clock read
/// before its open to its message's arrival) are the figures. No rate.
fn figures(_: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    let senders = of(reports, Role::Sender);
    let Some(receiver) = of(reports, Role::Receiver).into_iter().next() else {
        return Err(Broken { role: "driver".into(), reason: "no receiver reported".into() });
    };
    let received = receiver.got().received;
    if received != senders.len() as u64 || senders.iter().any(|s| s.sent().sent != 1) {
        return Err(broken(
            receiver,
            format!("received {received} messages from {} senders of one message each", senders.len()),
        ));
    }
    let mut out = Figures::default();
    spectrum(&latency(&[receiver]), &mut out);
    out.open_p50_ns = middle(senders.iter().filter_map(|s| s.open_ns).map(|ns| ns as f64).collect());
    Ok(out)
}

/// The receiver, taking each fresh sender in turn, or one fresh sender.
pub fn start<L: Library>(args: &ChildArgs, _case: &Case, setup: &Setup) -> anyhow::Result<()> {
    crate::role::connect::run::<L>(args, setup)
}
