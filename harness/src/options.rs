//! What a run is asked to do: the flags `run` and `sweep` share, checked and turned into
//! `Options` (a clear error for each bad one), and `run --resume`'s checks that a results file
//! may be finished by this binary on this machine.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use ipcbench_api::LibraryInfo;

use crate::fault::Fault;
use crate::machine::Machine;
use crate::matrix::{self, Case};
use crate::registry;
use crate::results::{self, AutoRuns, Document, Order, Pin, RunStatus};

/// What a run measures, and how.
pub struct Options {
    pub cases: Vec<Case>,
    pub libraries: Vec<LibraryInfo>,
    pub runs: u32,
    /// `--runs auto`: more runs than `runs` until each median is this sure.
    pub runs_auto: Option<AutoRuns>,
    pub duration: Duration,
    pub warmup: Duration,
    pub setup_timeout: Duration,
    pub out: PathBuf,
    pub skip_oversubscribed: bool,
    pub verbose: bool,
    /// `--wide`: the closing table as one table of every case.
    pub wide: bool,
    /// How long after the measured window a trial may take to drain and report.
    pub grace: Duration,
    /// A signal to send one role on purpose (the fault suite; docs/FAULTS.md).
    pub fault: Option<Fault>,
    pub order: Order,
    /// `--buffer`, in bytes.
    pub buffer: Option<usize>,
    /// A connect case's fresh senders per run.
    pub connects: u32,
    /// `--pin`: where each role's process runs.
    pub pin: Option<Pin>,
}

/// `--runs auto`: the runs every result takes first, and the defaults of its two flags.
const AUTO_FIRST: u32 = 3;
const DEFAULT_WIDTH: &str = "10%";
const DEFAULT_MAX_RUNS: &str = "15";

/// `--connects` when a results file does not say (one written before connect cases).
const DEFAULT_CONNECTS: u32 = 20;

/// A results file to finish (`run --resume`): where it is, what it holds, and its lock, held
/// until the run ends.
pub struct Resume {
    pub path: PathBuf,
    pub doc: Document,
    pub lock: results::Lock,
}

/// The shortest measured window: in less, a stream at a million messages a second moves ten
/// thousand and a latency case at 1 k/s ten, and below that a window measures its own edges.
pub const SHORTEST_WINDOW: Duration = Duration::from_millis(10);

const CONNECTS_RANGE: &str = "a whole number from 1 to 10000";
const MAX_RUNS_RANGE: &str = "a whole number from 3 to 100";

impl Options {
    /// The checks of every value, whether it came from the command line or a results file
    /// (`--resume`): each refusal names the flag and what it takes.
    fn check(&self) -> Result<()> {
        if self.runs == 0 {
            bail!("--runs 0: at least one run is needed for a figure");
        }
        if self.duration < SHORTEST_WINDOW {
            bail!(
                "--duration {}: too short a window to measure; give at least {}",
                humantime::format_duration(self.duration),
                humantime::format_duration(SHORTEST_WINDOW)
            );
        }
        if self.setup_timeout.is_zero() {
            bail!("--setup-timeout 0s: set-up needs some time to connect every role; give 1s or more");
        }
        if !(1..=10_000).contains(&self.connects) {
            bail!("--connects {}: {CONNECTS_RANGE}", self.connects);
        }
        if let Some(auto) = self.runs_auto {
            if auto.width <= 0.0 || auto.width > 1.0 || auto.width.is_nan() {
                bail!("--interval-width {}%: give more than 0% and at most 100%", auto.width * 100.0);
            }
            if !(AUTO_FIRST..=100).contains(&auto.max_runs) {
                bail!("--max-runs {}: {MAX_RUNS_RANGE}", auto.max_runs);
            }
        }
        if self.buffer == Some(0) {
            bail!("--buffer 0: no queue holds no message; give 64KiB, 1MiB or the like, or leave it out");
        }
        Ok(())
    }
}

/// How cases are measured: the options `run` and `sweep` share. `config` is every flag that can
/// change a figure: a resumed run takes them all from its file, so clap refuses any of them
/// beside `--resume` (by their group, "config"); `watch` only changes how a run is watched, and
/// a resumed run takes it whole. A new flag goes in one or the other: there is no third place.
#[derive(Args)]
pub struct Measure {
    #[command(flatten)]
    config: Config,
    #[command(flatten)]
    pub(crate) watch: Watch,
}

/// The flags that can change a figure.
#[derive(Args)]
#[group(id = "config", multiple = true)]
struct Config {
    /// Libraries by id, comma-separated (default: every one built in).
    #[arg(long)]
    lib: Option<String>,
    /// Runs per case and receive mode; the median is the figure. `auto`: 3, then more until each
    /// median's interval is within --interval-width, at most --max-runs.
    #[arg(long, default_value = "3")]
    runs: String,
    /// `--runs auto`: the widest a median's 95% interval may be, as a share of the median.
    #[arg(long, value_name = "SHARE")]
    interval_width: Option<String>,
    /// `--runs auto`: the most runs a result may take.
    #[arg(long, value_name = "N")]
    max_runs: Option<String>,
    /// The measured window of each run (1s, 250ms, ...).
    #[arg(long, default_value = "1s")]
    duration: String,
    /// The warm-up before each measured window.
    #[arg(long, default_value = "300ms")]
    warmup: String,
    /// How long set-up may wait for every role to connect.
    #[arg(long, default_value = "10s")]
    setup_timeout: String,
    /// Folder for the results file.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Leave out the cases that need more processes than this machine has cores.
    #[arg(long)]
    skip_oversubscribed: bool,
    /// rounds: run 1 of every library of a case, then run 2, ..., each round's order rotated,
    /// then extra rounds for results short of runs in the case's host state (or split in two);
    /// interleaved: rounds in one order, no extra rounds; sequential: each library's runs in turn.
    #[arg(long, default_value = "rounds")]
    order: String,
    /// Gives every library a queue of this many bytes of messages (64KiB, 1MiB, ...) where it
    /// lets one set its depth; without it each library runs its own defaults.
    #[arg(long, value_name = "BYTES")]
    buffer: Option<String>,
    /// How many fresh sender processes each run of a connect case starts, one after another.
    #[arg(long, default_value = "20")]
    connects: String,
    /// Pins each role's process to a CPU of its own before it opens its endpoint (more roles
    /// than CPUs take them round again); `--pin same-core` puts every role on one CPU. The
    /// results record each role's CPU.
    #[arg(long, num_args = 0..=1, default_missing_value = "spread", value_name = "same-core")]
    pin: Option<String>,
    /// Sends a signal to one role on purpose, to watch the harness handle it (docs/FAULTS.md).
    #[arg(long, hide = true)]
    fault: Option<String>,
}

/// The flags that change how a run is watched, or how long a trial may take to report, never a
/// figure: `--resume` honours them.
#[derive(Args, Clone, Debug, PartialEq)]
pub struct Watch {
    /// Show each trial and each child's pid.
    #[arg(long, short)]
    verbose: bool,
    /// Close with one table of every case (a column per library) instead of a table per case
    /// family fitted to the terminal's width.
    #[arg(long)]
    wide: bool,
    /// How long after the measured window a trial may take to end and report before it fails.
    #[arg(long, default_value = "10s")]
    grace: String,
}

impl Measure {
    pub fn options(self, cases: Result<Vec<Case>>) -> Result<Options> {
        let Watch { verbose, wide, grace } = self.watch;
        let Config {
            lib,
            runs,
            interval_width,
            max_runs,
            duration: d,
            warmup,
            setup_timeout,
            out,
            skip_oversubscribed,
            fault,
            order,
            buffer,
            connects,
            pin,
        } = self.config;
        let runs_auto = if runs == "auto" {
            let text = interval_width.as_deref().unwrap_or(DEFAULT_WIDTH);
            let width = percent("interval-width", text, DEFAULT_WIDTH)?;
            let cap = max_runs.as_deref().unwrap_or(DEFAULT_MAX_RUNS);
            let max_runs = cap.parse::<u32>().map_err(|_| anyhow!("--max-runs {cap:?}: {MAX_RUNS_RANGE}"))?;
            Some(AutoRuns { width, max_runs })
        } else {
            if interval_width.is_some() || max_runs.is_some() {
                bail!("--interval-width and --max-runs go with --runs auto");
            }
            None
        };
        let runs: u32 = match runs_auto {
            Some(_) => AUTO_FIRST,
            None => runs.parse().map_err(|_| anyhow!("--runs {runs:?}: a whole number, or auto"))?,
        };
        let connects: u32 =
            connects.parse().map_err(|_| anyhow!("--connects {connects:?}: {CONNECTS_RANGE}"))?;
        let options = Options {
            cases: cases?,
            libraries: registry::select(lib.as_deref())?,
            runs,
            runs_auto,
            duration: duration("duration", &d)?,
            warmup: duration("warmup", &warmup)?,
            setup_timeout: duration("setup-timeout", &setup_timeout)?,
            out,
            skip_oversubscribed,
            verbose,
            wide,
            grace: duration("grace", &grace)?,
            fault: fault.as_deref().map(Fault::parse).transpose()?,
            order: Order::parse(&order)
                .ok_or_else(|| anyhow!("--order {order:?}: rounds, interleaved or sequential"))?,
            buffer: buffer
                .map(|b| matrix::parse_bytes(&b).map_err(|e| anyhow!("--buffer: {e}")))
                .transpose()?,
            connects,
            pin: pin
                .map(|p| {
                    Pin::parse(&p)
                        .ok_or_else(|| anyhow!("--pin {p:?}: give no value (a CPU per role) or same-core"))
                })
                .transpose()?,
        };
        options.check()?;
        Ok(options)
    }

    /// `run --resume FILE`: the file's own settings, cases and libraries, checked against this
    /// binary and this machine; from the command line only what does not change a figure.
    pub fn resume(self, path: PathBuf) -> Result<(Options, Resume)> {
        // Every flag of `config` is refused beside --resume; `watch` is taken whole.
        let Watch { verbose, wide, grace } = self.watch;
        std::fs::symlink_metadata(&path).with_context(|| format!("--resume: reading {}", path.display()))?;
        // Taken first: a file a live run is still writing is not read, let alone rewritten.
        let lock = results::Lock::take(&path).context("--resume")?;
        let doc = results::load(&path).context("--resume")?;
        if doc.status == RunStatus::Complete {
            bail!("--resume: {} is complete: every case is done, nothing to resume", path.display());
        }
        let here = Machine::this();
        let m = &doc.machine;
        if !m.same_as(&here) {
            bail!(
                "--resume: {} was measured on another machine ({}; this one: {}): one file holds one machine's \
                 figures; start a new run",
                path.display(),
                m.name(),
                here.name()
            );
        }
        let libraries = registry::select(Some(&doc.settings.libraries.join(","))).with_context(|| {
            format!("--resume: a library of {} is not built into this binary", path.display())
        })?;
        for lib in &libraries {
            if let Some(then) = doc.libraries.iter().find(|l| l.id == lib.id)
                && then.version != lib.version
            {
                bail!(
                    "--resume: {} measured {} {}, this binary has {}: start a new run",
                    path.display(),
                    lib.id,
                    then.version,
                    lib.version
                );
            }
        }
        let cases = matrix::select(&matrix::matrix(), &doc.settings.cases).with_context(|| {
            format!("--resume: a case of {} is not in this binary's matrix", path.display())
        })?;
        let s = &doc.settings;
        let secs = |x: f64| {
            Duration::try_from_secs_f64(x).map_err(|e| anyhow!("--resume: a duration in the file: {e}"))
        };
        let options = Options {
            cases,
            libraries,
            runs: s.runs,
            runs_auto: s.runs_auto,
            duration: secs(s.duration_s)?,
            warmup: secs(s.warmup_s)?,
            setup_timeout: secs(s.setup_timeout_s)?,
            out: path.parent().map_or_else(|| PathBuf::from("."), PathBuf::from),
            skip_oversubscribed: s.skip_oversubscribed,
            verbose,
            wide,
            grace: duration("grace", &grace)?,
            fault: None,
            order: s.order,
            buffer: s.buffer_bytes,
            connects: s.connects.unwrap_or(DEFAULT_CONNECTS),
            pin: s.pin,
        };
        options.check().with_context(|| {
            format!("--resume: {} holds settings this binary refuses on its command line", path.display())
        })?;
        results::remove_partial_copies(&path);
        Ok((options, Resume { path, doc, lock }))
    }
}

/// `--sizes 64,4KiB`: the sweep's sizes, in the order given.
pub fn sizes(text: Option<&str>) -> Result<Vec<Case>> {
    let sizes = match text {
        None => matrix::sweep_sizes(),
        Some(t) => t
            .split(',')
            .map(|s| matrix::parse_size(s).map_err(|e| anyhow!("--sizes: {e}")))
            .collect::<Result<Vec<_>>>()?,
    };
    if sizes.is_empty() {
        bail!("--sizes lists no size");
    }
    matrix::sweep(&sizes)
}

/// `--<flag> 10%`: a percentage from 0% to 100% as a share (0.10); `example` shows the form.
pub fn percent(flag: &str, text: &str, example: &str) -> Result<f64> {
    text.strip_suffix('%')
        .and_then(|t| t.trim().parse::<f64>().ok())
        .filter(|t| (0.0..=100.0).contains(t))
        .map(|t| t / 100.0)
        .ok_or_else(|| anyhow!("--{flag} {text:?}: a percentage from 0% to 100%, such as {example}"))
}

pub(crate) fn duration(flag: &str, text: &str) -> Result<Duration> {
    let d = humantime::parse_duration(text)
        .map_err(|e| anyhow!("--{flag} {text:?} is not a duration ({e}); write it as 1s, 300ms or 2m"))?;
    Ok(d)
}
