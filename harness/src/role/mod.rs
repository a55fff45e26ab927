//! One role process, as the driver starts it (`ipcbench child ...`; each pattern's file says how
//! its roles start, `pattern::start`): its case and setup, and the protocol around its loop: it
//! says "ready" once its endpoint is open, waits for "go", runs its loop (`loops`), reports one
//! JSON line, and keeps an owner's channel alive until "drain". A child counts and checks; it
//! never decides what a figure means.

pub mod connect;
pub mod cost;
pub mod handicap;
pub mod loops;
pub mod message;
pub mod paced;
pub mod taken;
pub mod transfer;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use ipcbench_api::{Library, Opened, RecvMode, Setup};

use crate::machine;
use crate::matrix::{self, Case, Role};
use crate::results::{RoleReport, Verify};
use loops::Window;

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

/// A child's case, as its arguments name it; the check of each message's body set, and the
/// child pinned to its CPU where `--pin` asked (before the library starts any thread of its own:
/// those inherit the CPU).
pub fn prepare<L: Library>(args: &ChildArgs) -> Result<Case> {
    let case = matrix::find(&args.case)?;
    message::set_verify(args.verify);
    if let Some(cpu) = args.cpu {
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
    Ok(case)
}

/// What the child's endpoint is opened with.
pub fn setup<'a>(args: &'a ChildArgs, case: &Case) -> Setup<'a> {
    // A pair is a stream of its own: to its library, every pair is the only one (its own name
    // and directory, from the driver).
    let index = if case.pairs.is_some() { 0 } else { args.index };
    Setup {
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
    }
}

/// A report with nothing counted yet, for this child; a pinned one says the CPU it runs on
/// (read, not assumed: a pin that did not take shows).
pub fn report_of(args: &ChildArgs) -> RoleReport {
    // SAFETY: sched_getcpu takes nothing and returns a CPU number or -1.
    let on = args.cpu.and_then(|_| usize::try_from(unsafe { libc::sched_getcpu() }).ok());
    RoleReport { cpu: on, ..RoleReport::new(args.role, args.index) }
}

/// One line to the driver, on its way at once.
pub fn say(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush().context("telling the driver")
}

/// A role's report to the driver: `result <json>`.
pub fn say_result(report: &RoleReport) -> Result<()> {
    say(&format!("result {}", serde_json::to_string(report)?))
}

/// The protocol around every loop: ready, go, the loop, the report, and the drain.
pub fn lead<E>(
    opened: Result<Opened<E>>,
    args: &ChildArgs,
    body: impl FnOnce(&mut E, Window, RoleReport) -> Result<RoleReport>,
) -> Result<()> {
    let Opened { mut endpoint, owner, buffer } = opened.context("set-up")?;
    let window = ready(args)?;
    // The owner's handle ends the channel for everybody when dropped: keep it until every
    // driving role is done ("drain"), or the driver is gone (end of input).
    let control = std::thread::Builder::new()
        .name("control".into())
        .spawn(move || {
            until_drain();
            drop(owner);
        })
        .map_err(|e| anyhow!("starting the thread that waits for the driver's drain: {e}"))?;
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

/// Says the role is ready and reads the driver's start: the window every role measures.
pub fn ready(args: &ChildArgs) -> Result<Window> {
    say("ready")?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let start: u64 = line
        .trim()
        .strip_prefix("go ")
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| anyhow!("expected `go <instant>` from the driver, got {line:?}"))?;
    Ok(Window {
        start,
        measure_from: start + args.warmup.as_nanos() as u64,
        end: start + (args.warmup + args.duration).as_nanos() as u64,
    })
}

/// Reads the driver's input until it says "drain" (every driving role is done) or ends.
pub fn until_drain() {
    let mut line = String::new();
    while std::io::stdin().lock().read_line(&mut line).is_ok_and(|n| n > 0) && line.trim() != "drain" {
        line.clear();
    }
}

/// Channel `i` of a trial that holds several (a pairs case's pair, a duplex case's way): its
/// name and its directory, within the trial's (`name`, `dir`), so that what the driver removes
/// of the trial's removes them too.
pub fn channel(name: &str, dir: &Path, i: usize) -> (String, PathBuf) {
    (format!("{name}-p{i}"), dir.join(format!("p{i}")))
}

/// The bytes of this process's shared mappings, from /proc/self/maps (`s` in the permissions):
/// POSIX shared memory, memfds and shared file mappings. Libraries and heaps are private.
pub fn shared_mapped_bytes() -> Option<u64> {
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
