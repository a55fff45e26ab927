//! Pairs side by side: n independent streams or round trips of one library at once, each on
//! channels of its own. The figures are every pair's rate together, the worst pair's, and (round
//! trips) the worst pair's p50.

use ipcbench_api::{Requests, Shape};

use super::checks::{Broken, broken, window};
use super::shows::{CORES, CountPanel, Over, Panel, RATE, Scale, Scaling, Shows, Title, rate_only};
use super::spec::{Family, FamilySpec, Spec};
use super::words::{counts, distinct};
use crate::matrix::{Case, Role};
use crate::results::{Figures, Measure, RoleReport};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Pairs side by side",
    anchor: "pairs",
    method: |cases| {
        format!(
            "{} independent sender-receiver pairs of one library at once, each on channels of its own: every \
             pair's rate together, the worst pair's, and (round trips) the worst pair's p50. With more \
             processes than cores (*) the pairs share them; on a machine with a core per process the total \
             would grow with the pairs unless the library shares something between them.",
            counts(&distinct(cases, |c| c.pairs.map(|n| n as u64)))
        )
    },
};

pub const SPEC: Spec = Spec {
    // The rate is every pair's together; the p50 the worst pair's.
    names: &[("msgs_per_s", "total_msgs_per_s"), ("p50_ns", "worst_p50_ns")],
    scaling: Some(Scaling {
        over: Over::Pairs,
        panels: &[CountPanel::rate("every pair's rate together"), CORES],
        place: |case| Some((1, "*", case.pairs? as f64)),
    }),
    ..Spec::rate(
        Family::Pairs,
        Shows {
            rows: &[
                (Measure::MsgsPerS, "total rate"),
                (Measure::WorstMsgsPerS, "worst pair's rate"),
                (Measure::P50Ns, "worst pair's p50"),
            ],
            compared: &[Measure::MsgsPerS, Measure::WorstMsgsPerS, Measure::CpuNsPerMsg],
            panels: &[
                RATE,
                Panel { measure: Measure::WorstMsgsPerS, label: "worst pair's M msg/s", scale: Scale::Mega },
            ],
            ..rate_only(Title::AfterFamily("every pair's messages per second together"))
        },
        figures,
    )
};

/// Each pair checked on its own (every message its sender sent arrived, every request answered)
/// and timed over its own sender's window.
fn figures(case: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    let round_trip = case.shape == Shape::RoundTrip;
    let (driving, answering) =
        if round_trip { (Role::Pinger, Role::Echo) } else { (Role::Sender, Role::Receiver) };
    let n = case.pairs.unwrap_or(1);
    let one = |role: Role, i: usize| {
        reports
            .iter()
            .find(|r| r.role == role && r.index == i)
            .ok_or_else(|| Broken { role: role.label(i), reason: format!("pair {i} of {n} did not report") })
    };
    // (the pair's rate, its p50 round trip)
    let mut pairs: Vec<(f64, Option<f64>)> = Vec::new();
    for i in 0..n {
        let (sender, receiver) = (one(driving, i)?, one(answering, i)?);
        let (sent, got) = (sender.sent(), receiver.got());
        let whole = if round_trip {
            got.received == sent.sent
        } else {
            got.received == sent.sent && got.received_measured == sent.measured
        };
        if !whole {
            return Err(broken(
                receiver,
                format!(
                    "pair {i}: received {} messages ({} measured) of the {} sent ({} measured)",
                    got.received, got.received_measured, sent.sent, sent.measured
                ),
            ));
        }
        let seconds = window(std::slice::from_ref(sender))?;
        let measured = if round_trip { sent.measured } else { got.received_measured };
        pairs.push((measured as f64 / seconds, sender.p50_ns.map(|ns| ns as f64)));
    }
    let worst = pairs.iter().copied().min_by(|a, b| a.0.total_cmp(&b.0)).unwrap_or((0.0, None));
    Ok(Figures {
        msgs_per_s: pairs.iter().map(|p| p.0).sum(),
        worst_msgs_per_s: Some(worst.0),
        p50_ns: worst.1,
        ..Figures::default()
    })
}
