//! How a child (`ipcbench child ...`) starts its role: the registry's `run_child` for a library.
//! The case's pattern picks its file's `start`, which opens the role's endpoint through the
//! adapter and runs its loop; role/ holds the protocol around the loop, the loops and checks.

use anyhow::{Context, Result, bail};
use ipcbench_api::Library;

use super::{batch, broadcast, connect, duplex, fanout, latency, queue, service, slow, stream};
use crate::matrix::Pattern;
use crate::role::{self, ChildArgs};

/// Runs one role of library `L`, as its arguments say.
pub fn run_child<L: Library>(args: &ChildArgs) -> Result<()> {
    if args.handicap.is_some() {
        bail!("{}: a handicap is the calibration's weight on the control (shm-ring) alone", L::info().id);
    }
    start::<L>(args, false)
}

/// Runs one role of the control `L`: with its handicap where the calibration gives one
/// (`role::handicap`), else as any library's.
pub fn run_control<L: Library>(args: &ChildArgs) -> Result<()> {
    start::<L>(args, true)
}

fn start<L: Library>(args: &ChildArgs, control: bool) -> Result<()> {
    let case = role::prepare::<L>(args)?;
    let setup = role::setup(args, &case);
    let context = || format!("{} {} {} of {}", L::info().id, args.role.as_str(), args.index, case.name);
    if control && let Some(ran) = role::handicap::run::<L>(args, &case, &setup) {
        return ran.with_context(context);
    }
    // A batch case is a stream's or a broadcast's, its every call moving a batch.
    if case.batch > 1 {
        return batch::start::<L>(args, &case, &setup).with_context(context);
    }
    let started = match case.pattern() {
        Pattern::Stream | Pattern::StreamRtt | Pattern::Pairs => stream::start::<L>(args, &case, &setup),
        Pattern::Broadcast => broadcast::start::<L>(args, &case, &setup),
        Pattern::SlowSubscriber => slow::start::<L>(args, &case, &setup),
        Pattern::Queue => queue::start::<L>(args, &case, &setup),
        Pattern::Service => service::start::<L>(args, &case, &setup),
        Pattern::Latency => latency::start::<L>(args, &case, &setup),
        Pattern::FanoutLatency => fanout::start::<L>(args, &case, &setup),
        Pattern::Connect => connect::start::<L>(args, &case, &setup),
        Pattern::Duplex => duplex::start::<L>(args, &case, &setup),
    };
    started.with_context(context)
}
