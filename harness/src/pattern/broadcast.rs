//! Broadcasts: one publisher and its subscribers, every subscriber receiving every message
//! (lossless) or losing what it cannot keep up with (lossy). The figure is the slowest
//! subscriber's rate.

use anyhow::{Result, bail};
use ipcbench_api::{Library, Requests, Setup, Shape};

use super::checks::{Broken, one_way};
use super::shows::{CORES, CountPanel, Over, Panel, RATE, Scale, Scaling, Shows, Title, rate_only};
use super::spec::{Family, FamilySpec, Spec};
use super::words::{distinct, many, subscribers_of};
use crate::matrix::{Case, Role};
use crate::results::{Figures, Measure, RoleReport};
use crate::role::loops::{Lossy, Ordered, receive_loop, send_loop};
use crate::role::transfer::Copied;
use crate::role::{ChildArgs, lead};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Broadcasts",
    anchor: "broadcasts",
    method: |cases| {
        format!(
            "One publisher and {}, every subscriber receiving every message: the slowest subscriber's rate, \
             and how much slower it was than the fastest (the subscribers' spread). Lossless: a subscriber \
             behind holds the publisher back; lossy: it loses messages instead (the share lost beside the \
             rate). Where the processes outnumber the machine's cores (*) the subscribers take turns on \
             them, and the waiting mode, where a subscriber sleeps until woken, is the one that means what \
             it would on a machine with a core per process.",
            many(&distinct(cases, subscribers_of), "subscriber")
        )
    },
};

pub const SPEC: Spec = Spec {
    scaling: Some(Scaling {
        over: Over::Subscribers,
        panels: &[CountPanel::rate("the slowest subscriber's rate"), CORES],
        place: subscribers_place,
    }),
    ..Spec::rate(
        Family::Broadcasts,
        Shows {
            rows: &[(Measure::MsgsPerS, "rate"), (Measure::SubscribersSpread, "subscribers' spread")],
            panels: &[
                RATE,
                Panel { measure: Measure::LostShare, label: "lossy: share lost (%)", scale: Scale::Percent },
            ],
            ..rate_only(Title::AfterFamily("the slowest subscriber's messages per second"))
        },
        figures,
    )
};

/// A broadcast's count, its subscribers, is its name's third part: `broadcast/lossy/*sub/16B`.
pub fn subscribers_place(case: &Case) -> Option<(usize, &'static str, f64)> {
    match case.shape {
        Shape::Broadcast { subscribers, .. } => Some((2, "*sub", subscribers as f64)),
        _ => None,
    }
}

/// Every subscriber's counts agree with the publisher's; the figure is the slowest's rate, a
/// lossy one's with its share lost and the subscribers' spread.
fn figures(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    Ok(one_way(case, reports, (Role::Publisher, Role::Subscriber))?.1)
}

/// A broadcast's publisher or subscriber; a lossy subscriber counts what it lost, a lossless
/// one holds every message to its order.
pub fn start<L: Library>(args: &ChildArgs, _case: &Case, setup: &Setup) -> Result<()> {
    let copied = || Copied::new(setup.size, setup.index as u32);
    match args.role {
        Role::Publisher => lead(L::publisher(setup), args, |tx, w, r| send_loop(tx, copied(), w, r)),
        Role::Subscriber if lossy(setup) => {
            lead(L::subscriber(setup), args, |rx, _, r| receive_loop(rx, copied(), Lossy::default(), r))
        }
        Role::Subscriber => {
            lead(L::subscriber(setup), args, |rx, _, r| receive_loop(rx, copied(), Ordered::default(), r))
        }
        other => bail!("a {} in the broadcast {}", other.as_str(), args.case),
    }
}

/// Whether a broadcast loses what a subscriber cannot keep up with.
pub fn lossy(setup: &Setup) -> bool {
    matches!(setup.shape, Shape::Broadcast { lossy: true, .. })
}
