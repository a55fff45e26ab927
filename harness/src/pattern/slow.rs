//! A slow subscriber: a broadcast whose last subscribers spend a fixed time on each message.
//! The figures are the others' rate (and loss) beside the slow ones'.

use anyhow::Result;
use ipcbench_api::{Library, Requests, Setup};

use super::checks::{Broken, Delivered};
use super::shows::{Panel, Scale, Shows, Title, rate_only};
use super::spec::{Family, FamilySpec, Spec};
use crate::matrix::{Case, Role};
use crate::results::{Figures, Measure, RoleReport};
use crate::role::loops::{Lossy, Ordered, Slow, receive_loop};
use crate::role::transfer::Copied;
use crate::role::{ChildArgs, lead};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "A slow subscriber",
    anchor: "slow",
    method: |_| {
        "A broadcast to 4 subscribers, one of which spends a fixed time on each message (a busy wait, \
         --slow-work, 10 µs by default). Lossless: how far the slow one holds back the publisher and the \
         others (their rate falls to its); lossy: whether the others keep their rate and lose no more than \
         it does, the isolation a lossy broadcast promises."
            .into()
    },
};

pub const SPEC: Spec = Spec {
    // The rate, loss and spread are the other subscribers', beside the slow ones'.
    names: &[
        ("msgs_per_s", "others_msgs_per_s"),
        ("lost_share", "others_lost_share"),
        ("subscribers_spread", "others_spread"),
    ],
    ..Spec::rate(
        Family::SlowSubscriber,
        Shows {
            rows: &[
                (Measure::MsgsPerS, "the others' rate"),
                (Measure::SlowMsgsPerS, "the slow one's rate"),
                (Measure::SlowLostShare, "the slow one's loss"),
            ],
            compared: &[Measure::MsgsPerS, Measure::SlowMsgsPerS, Measure::CpuNsPerMsg],
            panels: &[
                Panel { measure: Measure::MsgsPerS, label: "the others' M msg/s", scale: Scale::Mega },
                Panel { measure: Measure::SlowMsgsPerS, label: "the slow one's M msg/s", scale: Scale::Mega },
            ],
            ..rate_only(Title::AfterFamily(
                "the other subscribers' messages per second, beside the slow one's",
            ))
        },
        figures,
    )
};

/// Every subscriber's counts agree with the publisher's; the figure is the slowest of the others'
/// rate (a lossy one's with its loss and their spread), the slowest slow one's beside it.
fn figures(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    let d = Delivered::check(case, reports, (Role::Publisher, Role::Subscriber))?;
    let (slow, others): (Vec<&RoleReport>, Vec<&RoleReport>) =
        d.receivers.iter().partition(|r| case.is_slow(r.index));
    let slowest = d.slowest_of(&others)?;
    let slow = Delivered::slowest(&slow);
    Ok(Figures {
        msgs_per_s: d.rate(slowest.received_measured),
        subscribers_spread: d.spread(&others, slowest),
        lost_share: d.lost_share(slowest),
        slow_msgs_per_s: slow.map(|s| d.rate(s.received_measured)),
        slow_lost_share: slow.and_then(|s| d.lost_share(s)),
        ..Figures::default()
    })
}

/// A slow subscriber (one the driver gave `--slow-work`) spends that on each message; the
/// publisher and the other subscribers are a broadcast's.
pub fn start<L: Library>(args: &ChildArgs, case: &Case, setup: &Setup) -> Result<()> {
    let (Role::Subscriber, Some(work)) = (args.role, args.slow_work) else {
        return super::broadcast::start::<L>(args, case, setup);
    };
    let copied = || Copied::new(setup.size, setup.index as u32);
    let sub = || L::subscriber(setup);
    if super::broadcast::lossy(setup) {
        lead(sub(), args, |rx, _, r| receive_loop(rx, copied(), Slow::new(Lossy::default(), work), r))
    } else {
        lead(sub(), args, |rx, _, r| receive_loop(rx, copied(), Slow::new(Ordered::default(), work), r))
    }
}
