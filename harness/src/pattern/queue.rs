//! Work queues: producers and consumers, each message to exactly one consumer. The figure is
//! every consumer's rate together.

use std::path::Path;

use anyhow::bail;
use ipcbench_api::{Library, Requests, Setup, Shape};

use super::checks::{Broken, broken, of, window};
use super::shows::{Shows, Title, rate_only};
use super::spec::{Family, FamilySpec, Spec};
use super::words::{listed, shapes};
use crate::matrix::{Case, Role};
use crate::results::{Figures, RoleReport};
use crate::role::loops::{Tally, receive_loop, send_loop};
use crate::role::taken::{self, Taken};
use crate::role::transfer::Copied;
use crate::role::{ChildArgs, lead};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Work queues",
    anchor: "queues",
    method: |cases| {
        format!(
            "Producers and consumers, each message to exactly one consumer ({}): every consumer's messages \
             per second together.",
            listed(&shapes(cases), "and")
        )
    },
};

pub const SPEC: Spec = Spec::rate(
    Family::Queues,
    Shows { ..rate_only(Title::AfterFamily("every consumer's messages per second together")) },
    figures,
);

/// Every message reached exactly one consumer (each consumer's record of what it took, proved
/// against what each producer sent), and the window's counts agree.
fn figures(_: &Case, reports: &[RoleReport], _: Requests) -> Result<Figures, Broken> {
    let seconds = window(reports)?;
    let producers = of(reports, Role::Producer);
    let consumers = of(reports, Role::Consumer);
    let mut sent = vec![0; producers.len()];
    for p in &producers {
        match sent.get_mut(p.index) {
            Some(n) => *n = p.sent().sent,
            None => return Err(broken(p, format!("producer {} of {}", p.index, producers.len()))),
        }
    }
    let mut taken = Vec::new();
    for c in &consumers {
        let file =
            c.taken_file.as_deref().ok_or_else(|| broken(c, "no record of the messages taken".into()))?;
        taken.push(Taken::load(Path::new(file)).map_err(|e| broken(c, format!("{e:#}")))?);
    }
    taken::prove(&taken, &sent)
        .map_err(|e| broken(consumers[0], format!("not every message reached exactly one consumer: {e}")))?;
    let measured_sent: u64 = producers.iter().map(|p| p.sent().measured).sum();
    let measured_got: u64 = consumers.iter().map(|c| c.got().received_measured).sum();
    if measured_got != measured_sent {
        return Err(broken(
            consumers[0],
            format!("{measured_got} measured messages consumed of {measured_sent}"),
        ));
    }
    Ok(Figures { msgs_per_s: measured_got as f64 / seconds, ..Figures::default() })
}

/// A producer, or a consumer that records each message it took for the driver's proof.
pub fn start<L: Library>(args: &ChildArgs, _case: &Case, setup: &Setup) -> anyhow::Result<()> {
    let copied = || Copied::new(setup.size, setup.index as u32);
    let Shape::Queue { producers, .. } = setup.shape else { bail!("{} is not a work queue", args.case) };
    match args.role {
        Role::Producer => lead(L::producer(setup), args, |tx, w, r| send_loop(tx, copied(), w, r)),
        Role::Consumer => lead(L::consumer(setup), args, |rx, _, r| {
            let file = args.dir.join(format!("taken-consumer-{}", args.index));
            receive_loop(rx, copied(), Tally { taken: Taken::new(producers), file }, r)
        }),
        other => bail!("a {} in the work queue {}", other.as_str(), args.case),
    }
}
