//! Batch calls: streams and lossless broadcasts whose every send and receive call moves a batch
//! of messages, for the libraries that have batch calls. Their figures are their pattern's; they
//! are a family, a table and a chart of their own.

use anyhow::{Result, bail};
use ipcbench_api::{Library, Setup, Side};

use super::shows::{Shows, Title, rate_only};
use super::spec::FamilySpec;
use super::words::{counts, distinct};
use crate::matrix::{Case, Role};
use crate::role::loops::{Ordered, batch_receive_loop, batch_send_loop};
use crate::role::{ChildArgs, lead};

pub const FAMILY: FamilySpec = FamilySpec {
    title: "Batch calls",
    anchor: "batches",
    method: |cases| {
        format!(
            "Streams and lossless broadcasts whose every send and receive call moves a batch of {} messages, \
             for the libraries that have batch calls.",
            counts(&distinct(cases, |c| (c.batch > 1).then_some(c.batch as u64)))
        )
    },
};

/// The batch cases: charted by rate.
pub const SHOWS: Shows = rate_only(Title::AfterFamily("messages per second"));

/// A batch case's role (a stream's or a lossless broadcast's): every call moves `setup.batch`
/// messages.
pub fn start<L: Library>(args: &ChildArgs, _case: &Case, setup: &Setup) -> Result<()> {
    let (size, n, me) = (setup.size, setup.batch, args.index as u32);
    match args.role {
        Role::Sender => {
            lead(L::stream(setup, Side::Connect), args, |tx, w, r| batch_send_loop(tx, size, n, me, w, r))
        }
        Role::Publisher => lead(L::publisher(setup), args, |tx, w, r| batch_send_loop(tx, size, n, me, w, r)),
        Role::Receiver => lead(L::stream(setup, Side::Accept), args, |rx, _, r| {
            batch_receive_loop(rx, size, n, Ordered::default(), r)
        }),
        Role::Subscriber => lead(L::subscriber(setup), args, |rx, _, r| {
            batch_receive_loop(rx, size, n, Ordered::default(), r)
        }),
        other => bail!("a {} in the batch case {}", other.as_str(), args.case),
    }
}
