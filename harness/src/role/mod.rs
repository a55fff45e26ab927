//! One role process, as the driver starts it (`ipcbench child ...`): opens its endpoint through
//! the adapter, says "ready", waits for "go", runs its loop (`loops`), reports one JSON line, and
//! keeps an owner's channel alive until "drain". A child counts and checks; it never decides
//! what a figure means.

pub mod connect;
pub mod cost;
pub mod handicap;
pub mod loops;
pub mod message;
pub mod paced;
pub mod taken;
pub mod transfer;

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::{Library, Opened, RecvMode, Setup, Shape, Side, Transfer};

use crate::machine;
use crate::matrix::{self, Pace, Role};
use crate::results::{RoleReport, Verify};
use loops::{
    Lossy, Ordered, Slow, Tally, Window, batch_receive_loop, batch_send_loop, call_loop, echo_loop,
    receive_loop, send_loop,
};
use taken::Taken;
use transfer::{Copied, Echo, Lent, Put, Take};

/// What the driver tells a child on its command line: the one definition of that command line,
/// which clap parses and `to_args` writes.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct ChildArgs {
    #[arg(long = "lib")]
    pub library: String,
    #[arg(long)]
    pub case: String,
    #[arg(long, value_parser = role)]
    pub role: Role,
    #[arg(long)]
    pub index: usize,
    #[arg(long, value_parser = mode)]
    pub mode: RecvMode,
    #[arg(long)]
    pub name: String,
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(long = "warmup-ns", value_parser = nanos)]
    pub warmup: Duration,
    #[arg(long = "duration-ns", value_parser = nanos)]
    pub duration: Duration,
    #[arg(long = "setup-timeout-ns", value_parser = nanos)]
    pub setup_timeout: Duration,
    #[arg(long = "buffer-bytes")]
    pub buffer: Option<usize>,
    /// A connect case: the receiver's number of fresh senders, or which of them this sender is.
    #[arg(long)]
    pub connects: Option<usize>,
    #[arg(long)]
    pub attempt: Option<usize>,
    /// `--pin`: the CPU to run on, set before the endpoint opens.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// A slow subscriber: what it spends on each message, a busy wait.
    #[arg(long = "slow-work-ns", value_parser = nanos)]
    pub slow_work: Option<Duration>,
    /// How much of each copied message's body is written and checked.
    #[arg(long, value_parser = verify)]
    pub verify: Verify,
    /// `doctor --calibrate` only: a busy wait of this long before each message a sender or
    /// pinger of the control sends (`handicap`).
    #[arg(long = "handicap-ns", value_parser = nanos)]
    pub handicap: Option<Duration>,
}

fn verify(text: &str) -> Result<Verify, String> {
    Verify::parse(text).ok_or_else(|| format!("unknown --verify {text:?}"))
}

fn role(text: &str) -> Result<Role, String> {
    Role::parse(text).ok_or_else(|| format!("unknown role {text:?}"))
}

fn mode(text: &str) -> Result<RecvMode, String> {
    RecvMode::parse(text).ok_or_else(|| format!("unknown receive mode {text:?}"))
}

fn nanos(text: &str) -> Result<Duration, String> {
    text.parse().map(Duration::from_nanos).map_err(|e| format!("{text:?} nanoseconds: {e}"))
}

impl ChildArgs {
    /// The child's command line (after the binary's own `child`), as clap reads it back.
    pub fn to_args(&self) -> Vec<String> {
        let ns = |d: Duration| d.as_nanos().to_string();
        [
            ("--lib", self.library.clone()),
            ("--case", self.case.clone()),
            ("--role", self.role.as_str().into()),
            ("--index", self.index.to_string()),
            ("--mode", self.mode.as_str().into()),
            ("--name", self.name.clone()),
            ("--dir", self.dir.display().to_string()),
            ("--warmup-ns", ns(self.warmup)),
            ("--duration-ns", ns(self.duration)),
            ("--setup-timeout-ns", ns(self.setup_timeout)),
            ("--verify", self.verify.as_str().into()),
        ]
        .into_iter()
        .chain(self.buffer.map(|b| ("--buffer-bytes", b.to_string())))
        .chain(self.connects.map(|n| ("--connects", n.to_string())))
        .chain(self.attempt.map(|k| ("--attempt", k.to_string())))
        .chain(self.cpu.map(|c| ("--cpu", c.to_string())))
        .chain(self.slow_work.map(|d| ("--slow-work-ns", ns(d))))
        .chain(self.handicap.map(|d| ("--handicap-ns", ns(d))))
        .flat_map(|(flag, value)| [flag.to_string(), value])
        .collect()
    }
}

/// Runs one role of library `L`.
pub fn run<L: Library>(args: &ChildArgs) -> Result<()> {
    if args.handicap.is_some() {
        bail!("{}: a handicap is the calibration's weight on the control (shm-ring) alone", L::info().id);
    }
    run_role::<L>(args)
}

/// Runs one role of library `L`, as its arguments say.
fn run_role<L: Library>(args: &ChildArgs) -> Result<()> {
    let case = matrix::find(&args.case)?;
    message::set_verify(args.verify);
    if let Some(cpu) = args.cpu {
        // Before the library starts any thread of its own: those inherit the CPU.
        machine::pin_to(cpu).with_context(|| {
            format!(
                "{} {} {} of {}: pinning to CPU {cpu}",
                L::info().id,
                args.role.as_str(),
                args.index,
                case.name
            )
        })?;
    }
    // A pair is a stream of its own: to its library, every pair is the only one (its own name
    // and directory, from the driver).
    let index = if case.pairs.is_some() { 0 } else { args.index };
    let setup = Setup {
        name: &args.name,
        dir: &args.dir,
        size: case.size,
        shape: case.shape,
        index,
        mode: args.mode,
        transfer: case.transfer,
        timeout: args.setup_timeout,
        batch: case.batch,
        buffer: args.buffer,
    };
    let context = || format!("{} {} {} of {}", L::info().id, args.role.as_str(), args.index, case.name);
    if case.batch > 1 {
        return run_batch::<L>(args, &setup, &case.name).with_context(context);
    }
    match case.pace {
        Pace::Rate(rate) => return run_paced::<L>(args, &setup, rate).with_context(context),
        Pace::Connect => return connect::run::<L>(args, &setup).with_context(context),
        Pace::Free => {}
    }
    let size = case.size;
    let me = index as u32;
    let copied = || Copied::new(size, me);
    let report = match (args.role, setup.transfer) {
        (Role::Sender | Role::Receiver | Role::Pinger | Role::Echo, Transfer::Copy) => {
            one_to_one::<L, _>(args, &setup, me, copied)
        }
        (_, Transfer::Loan) => one_to_one::<L, _>(args, &setup, me, || Lent::new(size, me)),
        (Role::Publisher, _) => lead(L::publisher(&setup), args, |tx, w, r| send_loop(tx, copied(), w, r)),
        (Role::Subscriber, _) => {
            let lossy = matches!(case.shape, Shape::Broadcast { lossy: true, .. });
            let sub = || L::subscriber(&setup);
            match (lossy, args.slow_work) {
                (true, None) => lead(sub(), args, |rx, _, r| receive_loop(rx, copied(), Lossy::default(), r)),
                (false, None) => {
                    lead(sub(), args, |rx, _, r| receive_loop(rx, copied(), Ordered::default(), r))
                }
                (true, Some(work)) => lead(sub(), args, |rx, _, r| {
                    receive_loop(rx, copied(), Slow::new(Lossy::default(), work), r)
                }),
                (false, Some(work)) => lead(sub(), args, |rx, _, r| {
                    receive_loop(rx, copied(), Slow::new(Ordered::default(), work), r)
                }),
            }
        }
        (Role::Producer, _) => lead(L::producer(&setup), args, |tx, w, r| send_loop(tx, copied(), w, r)),
        (Role::Consumer, _) => {
            let producers = match case.shape {
                Shape::Queue { producers, .. } => producers,
                _ => bail!("a consumer in {}", case.name),
            };
            lead(L::consumer(&setup), args, |rx, _, r| {
                let file = args.dir.join(format!("taken-consumer-{}", args.index));
                receive_loop(rx, copied(), Tally { taken: Taken::new(producers), file }, r)
            })
        }
        (Role::Client, _) => {
            lead(L::client(&setup), args, |ep, w, r| call_loop(ep, copied(), copied(), me, w, r))
        }
        (Role::Server, _) => lead(L::server(&setup), args, |ep, _, r| echo_loop(ep, copied(), r)),
    };
    report.with_context(context)
}

/// A stream's or round trip's role, each of its loops moving messages the way `way` makes
/// (copied, or in the library's memory for a loan case).
fn one_to_one<L: Library, W: Put + Take + Echo>(
    args: &ChildArgs,
    setup: &Setup,
    me: u32,
    way: impl Fn() -> W,
) -> Result<()> {
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

/// A batch case (a stream or a lossless broadcast): every call moves `setup.batch` messages.
fn run_batch<L: Library>(args: &ChildArgs, setup: &Setup, case: &str) -> Result<()> {
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
        other => bail!("a {} in the batch case {case}", other.as_str()),
    }
}

/// A latency case (a stream or a lossless broadcast at a fixed rate): the sender keeps its
/// schedule, each receiver times each message from its due time.
fn run_paced<L: Library>(args: &ChildArgs, setup: &Setup, rate: u64) -> Result<()> {
    let (size, me) = (setup.size, args.index as u32);
    match args.role {
        Role::Sender => {
            let opened = L::stream(setup, Side::Connect);
            // Measured before "ready", so that the schedule's start finds it done.
            let margin = paced::spin_margin();
            lead(opened, args, |tx, w, r| paced::paced_send_loop(tx, size, me, rate, margin, w, r))
        }
        Role::Receiver => {
            lead(L::stream(setup, Side::Accept), args, |rx, _, r| paced::timed_receive_loop(rx, size, r))
        }
        Role::Publisher => {
            let opened = L::publisher(setup);
            let margin = paced::spin_margin();
            lead(opened, args, |tx, w, r| paced::paced_send_loop(tx, size, me, rate, margin, w, r))
        }
        Role::Subscriber => {
            lead(L::subscriber(setup), args, |rx, _, r| paced::timed_receive_loop(rx, size, r))
        }
        other => bail!("a {} in the latency case {}", other.as_str(), args.case),
    }
}

/// A report with nothing counted yet, for this child; a pinned one says the CPU it runs on
/// (read, not assumed: a pin that did not take shows).
fn report_of(args: &ChildArgs) -> RoleReport {
    // SAFETY: sched_getcpu takes nothing and returns a CPU number or -1.
    let on = args.cpu.and_then(|_| usize::try_from(unsafe { libc::sched_getcpu() }).ok());
    RoleReport { cpu: on, ..RoleReport::new(args.role, args.index) }
}

/// One line to the driver, on its way at once.
fn say(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush().context("telling the driver")
}

/// A role's report to the driver: `result <json>`.
fn say_result(report: &RoleReport) -> Result<()> {
    say(&format!("result {}", serde_json::to_string(report)?))
}

/// The protocol around every loop: ready, go, the loop, the report, and the drain.
fn lead<E>(
    opened: Result<Opened<E>>,
    args: &ChildArgs,
    body: impl FnOnce(&mut E, Window, RoleReport) -> Result<RoleReport>,
) -> Result<()> {
    let Opened { mut endpoint, owner, buffer } = opened.context("set-up")?;
    say("ready")?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let start: u64 = line
        .trim()
        .strip_prefix("go ")
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| anyhow!("expected `go <instant>` from the driver, got {line:?}"))?;
    // The owner's handle ends the channel for everybody when dropped: keep it until every
    // driving role is done ("drain"), or the driver is gone (end of input).
    let control = std::thread::Builder::new()
        .name("control".into())
        .spawn(move || {
            let mut line = String::new();
            while std::io::stdin().lock().read_line(&mut line).is_ok_and(|n| n > 0) && line.trim() != "drain"
            {
                line.clear();
            }
            drop(owner);
        })
        .map_err(|e| anyhow!("starting the thread that waits for the driver's drain: {e}"))?;
    let window = Window {
        start,
        measure_from: start + args.warmup.as_nanos() as u64,
        end: start + (args.warmup + args.duration).as_nanos() as u64,
    };
    let mut report = body(&mut endpoint, window, report_of(args))?;
    report.buffer = buffer.map(Into::into);
    // Read once the loop is done, while the endpoint is open: a library may map lazily.
    report.shared_mapped_bytes = shared_mapped_bytes();
    // A sender's end is how its receivers learn it is done.
    drop(endpoint);
    say_result(&report)?;
    control.join().map_err(|_| anyhow!("the control thread panicked"))?;
    Ok(())
}

/// The bytes of this process's shared mappings, from /proc/self/maps (`s` in the permissions):
/// POSIX shared memory, memfds and shared file mappings. Libraries and heaps are private.
fn shared_mapped_bytes() -> Option<u64> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut total = 0;
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
        if perms.as_bytes().get(3) != Some(&b's') {
            continue;
        }
        let (start, end) = range.split_once('-')?;
        total += u64::from_str_radix(end, 16).ok()? - u64::from_str_radix(start, 16).ok()?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Line {
        #[command(flatten)]
        args: ChildArgs,
    }

    /// What the driver writes is what the child reads.
    #[test]
    fn a_child_reads_back_the_command_line_it_was_given() {
        let args = ChildArgs {
            library: "uds".into(),
            case: "service/4c1s/16B".into(),
            role: Role::Server,
            index: 3,
            mode: RecvMode::Polling,
            name: "ipcb1t2".into(),
            dir: "/tmp/ipcb1/t2".into(),
            warmup: Duration::from_millis(300),
            duration: Duration::from_secs(1),
            setup_timeout: Duration::from_secs(10),
            buffer: Some(65536),
            connects: Some(20),
            attempt: Some(3),
            cpu: Some(1),
            slow_work: Some(Duration::from_micros(10)),
            verify: Verify::Sample,
            handicap: Some(Duration::from_nanos(40)),
        };
        let line = std::iter::once("child".to_string()).chain(args.to_args());
        assert_eq!(Line::try_parse_from(line).unwrap().args, args);
        let bad = ["child", "--lib", "uds", "--role", "sailor"];
        assert!(Line::try_parse_from(bad).unwrap_err().to_string().contains("unknown role \"sailor\""));
    }
}
