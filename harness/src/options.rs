//! What a run is asked to do: the flags `run` and `sweep` share, checked and turned into
//! `Options` (a clear error for each bad one), and `run --resume`'s checks that a results file
//! may be finished by this binary on this machine.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use ipcbench_api::{LibraryInfo, Transfer};

use crate::fault::Fault;
use crate::machine::Machine;
use crate::matrix::{self, Case};
use crate::registry;
use crate::results::ab::{self, AbSettings};
use crate::results::{self, AutoRuns, Document, Order, Pin, RunConfig, RunStatus, Verify};

/// What a run measures, and how.
pub struct Options {
    pub cases: Vec<Case>,
    pub libraries: Vec<LibraryInfo>,
    /// Everything that can change a figure, as the results file stores it.
    pub config: RunConfig,
    pub out: PathBuf,
    pub watch: Watch,
    /// A signal to send one role on purpose (the fault suite; docs/FAULTS.md).
    pub fault: Option<Fault>,
}

/// `--runs auto`: the runs every result takes first, and the defaults of its two flags.
const AUTO_FIRST: u32 = 3;
const DEFAULT_RESOLVE: f64 = 0.05;
const DEFAULT_MAX_RUNS: u32 = 15;

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

/// The most `--slow-work` may be: a thousand of its messages in a second's window.
const SLOWEST_WORK: Duration = Duration::from_millis(1);

/// The checks of every value, whether it came from the command line or a results file
/// (`--resume`): each refusal names the flag and what it takes. Clap's parsers read each
/// value's form; these hold what a run needs of the values together.
fn check(c: &RunConfig) -> Result<()> {
    if c.runs == 0 {
        bail!("--runs 0: at least one run is needed for a figure");
    }
    if c.duration < SHORTEST_WINDOW {
        bail!(
            "--duration {}: too short a window to measure; give at least {}",
            humantime::format_duration(c.duration),
            humantime::format_duration(SHORTEST_WINDOW)
        );
    }
    if c.setup_timeout.is_zero() {
        bail!("--setup-timeout 0s: set-up needs some time to connect every role; give 1s or more");
    }
    if !(1..=10_000).contains(&c.connects) {
        bail!("--connects {}: a whole number from 1 to 10000", c.connects);
    }
    let within = |v: f64| v > 0.0 && v < 1.0;
    if let Some(ab) = &c.ab {
        if !within(ab.resolve) {
            bail!("--resolve {}%: give more than 0% and less than 100%", ab.resolve * 100.0);
        }
        if !within(ab.threshold) {
            bail!("--threshold {}%: give more than 0% and less than 100%", ab.threshold * 100.0);
        }
        if !(ab::MIN_ROUNDS..=100).contains(&ab.max_rounds) {
            bail!("--max-rounds {}: a whole number from {} to 100", ab.max_rounds, ab::MIN_ROUNDS);
        }
        if ab.budget_s.is_some_and(|b| b <= 0.0) {
            bail!("--budget 0s: give the time the extra rounds may take, such as 10m");
        }
    }
    if let Some(auto) = c.runs_auto {
        if !within(auto.resolve) {
            bail!("--resolve {}%: give more than 0% and less than 100%", auto.resolve * 100.0);
        }
        if !(AUTO_FIRST..=100).contains(&auto.max_runs) {
            bail!("--max-runs {}: a whole number from 3 to 100", auto.max_runs);
        }
    }
    if c.slow_work > SLOWEST_WORK {
        bail!(
            "--slow-work {}: at most {} a message, or a slow subscriber's window holds too few to count",
            humantime::format_duration(c.slow_work),
            humantime::format_duration(SLOWEST_WORK)
        );
    }
    if c.buffer == Some(0) {
        bail!("--buffer 0: no queue holds no message; give 64KiB, 1MiB or the like, or leave it out");
    }
    Ok(())
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

/// The flags that can change a figure, each parsed by clap into its type.
#[derive(Args)]
#[group(id = "config", multiple = true)]
struct Config {
    /// Libraries by id, comma-separated (default: every one built in).
    #[arg(long)]
    lib: Option<String>,
    /// Runs per case and receive mode; the median is the figure. `auto`: 3, then more until each
    /// figure tells a change of --resolve, at most --max-runs.
    #[arg(long, default_value = "3", value_name = "N|auto", value_parser = runs)]
    runs: Runs,
    /// `--runs auto`: the smallest change each figure must tell (the half-width of the 95%
    /// interval of the difference of two such figures; default 5%). With --against: the
    /// half-width of each figure's paired ratio past which it takes more rounds (default 2.5%).
    #[arg(long, value_name = "SHARE", value_parser = |t: &str| percent(t, "5%"))]
    resolve: Option<f64>,
    /// Another ipcbench binary (an older build, a build against another version of a library):
    /// each library runs from both in the same rounds, at least 8, more until each figure's
    /// paired ratio tells --resolve (at most --max-rounds); each figure gets its ratio, its
    /// interval and a verdict. Exits 0 when nothing is slower and every figure is resolved, 1
    /// when something is slower, 3 when something is unresolved or the sentinel (this binary
    /// against itself) moved.
    #[arg(long, value_name = "BINARY", conflicts_with_all = ["runs", "order", "max_runs"])]
    against: Option<PathBuf>,
    /// With --against: a change up to this share is no change (default 5%).
    #[arg(long, value_name = "SHARE", requires = "against", value_parser = |t: &str| percent(t, "5%"))]
    threshold: Option<f64>,
    /// With --against: the most rounds a figure may take (default 30).
    #[arg(long, value_name = "N", requires = "against")]
    max_rounds: Option<u32>,
    /// With --against: no round past the first 8 starts once the run has taken this long (30m).
    /// Without it, a case's extra rounds stop short of 6 times what a plain default run of the
    /// case takes.
    #[arg(long, value_name = "DURATION", requires = "against", value_parser = duration)]
    budget: Option<Duration>,
    /// With --against: an unresolved figure does not make the exit code 3.
    #[arg(long, requires = "against")]
    allow_unresolved: bool,
    /// `--runs auto`: the most runs a result may take (default 15).
    #[arg(long, value_name = "N")]
    max_runs: Option<u32>,
    /// The measured window of each run (1s, 250ms, ...): 1s by default, 250ms with --against.
    #[arg(long, value_parser = duration)]
    duration: Option<Duration>,
    /// The warm-up before each measured window: 300ms by default, 100ms with --against.
    #[arg(long, value_parser = duration)]
    warmup: Option<Duration>,
    /// How long set-up may wait for every role to connect.
    #[arg(long, default_value = "10s", value_parser = duration)]
    setup_timeout: Duration,
    /// Folder for the results file.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Leave out the cases that need more processes than this machine has cores.
    #[arg(long)]
    skip_oversubscribed: bool,
    /// rounds: run 1 of every library of a case, then run 2, ..., each round's order rotated,
    /// then extra rounds for results short of runs in the case's host state (or split in two);
    /// interleaved: rounds in one order, no extra rounds; sequential: each library's runs in turn.
    #[arg(long, default_value = "rounds", value_name = "rounds|interleaved|sequential", value_parser = order)]
    order: Order,
    /// Gives every library a queue of this many bytes of messages (64KiB, 1MiB, ...) where it
    /// lets one set its depth; without it each library runs its own defaults.
    #[arg(long, value_name = "BYTES", value_parser = matrix::parse_bytes)]
    buffer: Option<usize>,
    /// How many fresh sender processes each run of a connect case starts, one after another.
    #[arg(long, default_value_t = results::DEFAULT_CONNECTS)]
    connects: u32,
    /// Pins each role's process to a CPU of its own before it opens its endpoint (more roles
    /// than CPUs take them round again); `--pin=same-core` puts every role on one CPU (its value
    /// only after `=`, so `--pin stream/16B` pins that case's roles). The results record each
    /// role's CPU.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "spread", value_name = "same-core", value_parser = pin)]
    pin: Option<Pin>,
    /// What a slow subscriber spends on each message, a busy wait (the broadcast/*sub-*slow cases).
    #[arg(long, default_value = "10us", value_parser = duration)]
    slow_work: Duration,
    /// How messages travel: copy (through each role's own buffers, the tables' figure), loan
    /// (the library's in-place calls on both ends: loan/stream/64KiB, streams and round trips
    /// only), or copy,loan for both side by side.
    #[arg(long, default_value = "copy", value_name = "copy,loan", value_parser = transfers)]
    transfer: Transfers,
    /// How much of each copied message's body is written and checked: sample (the header, the
    /// last word and a window that rotates, so every byte position is checked over a run) or
    /// full (every byte of every message). A loan's are always checked whole. Default: sample,
    /// or what the environment's IPCBENCH_VERIFY says (the tests say full).
    #[arg(long, value_name = "sample|full", value_parser = verify)]
    verify: Option<Verify>,
    /// Sends a signal to one role on purpose, to watch the harness handle it (docs/FAULTS.md).
    #[arg(long, hide = true, value_parser = Fault::parse)]
    fault: Option<Fault>,
}

/// `--runs`: a number, or `auto`.
#[derive(Clone, Copy, Debug)]
enum Runs {
    Fixed(u32),
    Auto,
}

fn runs(text: &str) -> Result<Runs, String> {
    match text {
        "auto" => Ok(Runs::Auto),
        t => t.parse().map(Runs::Fixed).map_err(|_| "a whole number, or auto".into()),
    }
}

/// `--transfer`: copy, loan, or both.
#[derive(Clone, Debug)]
struct Transfers(Vec<Transfer>);

fn transfers(text: &str) -> Result<Transfers, String> {
    let all: Option<Vec<Transfer>> = text.split(',').map(|t| Transfer::parse(t.trim())).collect();
    match all {
        Some(all) if !all.is_empty() => Ok(Transfers(all)),
        _ => Err("copy, loan, or copy,loan".into()),
    }
}

fn order(text: &str) -> Result<Order, String> {
    Order::parse(text).ok_or_else(|| "rounds, interleaved or sequential".into())
}

fn verify(text: &str) -> Result<Verify, String> {
    Verify::parse(text).ok_or_else(|| "sample or full".into())
}

/// `--verify` when the command line does not say: the environment's IPCBENCH_VERIFY, else
/// sample.
fn default_verify() -> Result<Verify> {
    match std::env::var("IPCBENCH_VERIFY") {
        Ok(v) => Verify::parse(&v)
            .ok_or_else(|| anyhow!("IPCBENCH_VERIFY={v:?}: sample or full, or leave it unset")),
        Err(_) => Ok(Verify::Sample),
    }
}

fn pin(text: &str) -> Result<Pin, String> {
    Pin::parse(text).ok_or_else(|| "give no value (a CPU per role) or =same-core".into())
}

/// The flags that change how a run is watched, or how long a trial may take to report, never a
/// figure: `--resume` honours them.
#[derive(Args, Clone, Debug, PartialEq)]
pub struct Watch {
    /// Show each trial and each child's pid.
    #[arg(long, short)]
    pub verbose: bool,
    /// Close with one table of every case (a column per library) instead of a table per case
    /// family fitted to the terminal's width.
    #[arg(long)]
    pub wide: bool,
    /// How long after the measured window a trial may take to end and report before it fails.
    #[arg(long, default_value = "10s", value_parser = duration)]
    pub grace: Duration,
}

impl Measure {
    pub fn options(self, cases: Result<Vec<Case>>) -> Result<Options> {
        let Config {
            lib,
            runs,
            resolve,
            max_runs,
            duration,
            warmup,
            setup_timeout,
            out,
            skip_oversubscribed,
            fault,
            order,
            buffer,
            connects,
            pin,
            slow_work,
            transfer,
            verify,
            against,
            threshold,
            max_rounds: ab_rounds,
            budget,
            allow_unresolved,
        } = self.config;
        let ab = against.map(|against| AbSettings {
            against,
            threshold: threshold.unwrap_or(ab::THRESHOLD),
            resolve: resolve.unwrap_or(ab::RESOLVE),
            min_rounds: ab::MIN_ROUNDS,
            max_rounds: ab_rounds.unwrap_or(ab::MAX_ROUNDS),
            budget_s: budget.map(|b| b.as_secs_f64()),
            allow_unresolved,
            handicap_ns: None,
            figure: None,
        });
        let (runs, runs_auto) = match runs {
            Runs::Auto => (
                AUTO_FIRST,
                Some(AutoRuns {
                    resolve: resolve.unwrap_or(DEFAULT_RESOLVE),
                    max_runs: max_runs.unwrap_or(DEFAULT_MAX_RUNS),
                }),
            ),
            Runs::Fixed(n) if ab.is_some() => (n, None),
            Runs::Fixed(n) if resolve.is_some() || max_runs.is_some() => {
                bail!("--resolve and --max-runs go with --runs auto, not --runs {n}")
            }
            Runs::Fixed(n) => (n, None),
        };
        let (duration, warmup) = match &ab {
            Some(_) => (duration.unwrap_or(ab::AB_DURATION), warmup.unwrap_or(ab::AB_WARMUP)),
            None => {
                (duration.unwrap_or(results::DEFAULT_DURATION), warmup.unwrap_or(results::DEFAULT_WARMUP))
            }
        };
        let config = RunConfig {
            runs,
            duration,
            warmup,
            setup_timeout,
            skip_oversubscribed,
            order,
            buffer,
            connects,
            runs_auto,
            pin,
            slow_work,
            verify: match verify {
                Some(v) => v,
                None => default_verify()?,
            },
            ab,
        };
        check(&config)?;
        Ok(Options {
            cases: matrix::with_transfers(cases?, &transfer.0)?,
            libraries: registry::select(lib.as_deref())?,
            config,
            out,
            watch: self.watch,
            fault,
        })
    }

    /// `run --resume FILE`: the file's own settings, cases and libraries, checked against this
    /// binary and this machine; from the command line only what does not change a figure.
    pub fn resume(self, path: PathBuf) -> Result<(Options, Resume)> {
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
        let config = doc.settings.config.clone();
        if config.ab.is_some() {
            bail!(
                "--resume: {} is an A/B run (--against): its pairs are measured in one sitting, not resumed; run it \
                 again",
                path.display()
            );
        }
        check(&config).with_context(|| {
            format!("--resume: {} holds settings this binary refuses on its command line", path.display())
        })?;
        // Every flag of `config` is refused beside --resume; `watch` is taken whole.
        let options = Options {
            cases,
            libraries,
            config,
            out: path.parent().map_or_else(|| PathBuf::from("."), PathBuf::from),
            watch: self.watch,
            fault: None,
        };
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

/// `sweep --rates 1k,100k,1M [--sizes 16,1KiB]`: the latency case at each rate and size (16 B
/// unless --sizes says).
pub fn rates(text: &str, sizes: Option<&str>) -> Result<Vec<Case>> {
    let rates = text
        .split(',')
        .map(|r| matrix::parse_rate(r).map_err(|e| anyhow!("--rates: {e}")))
        .collect::<Result<Vec<_>>>()?;
    let sizes = match sizes {
        None => vec![matrix::TIMED_SMALLEST],
        Some(t) => t
            .split(',')
            .map(|s| matrix::parse_size(s).map_err(|e| anyhow!("--sizes: {e}")))
            .collect::<Result<Vec<_>>>()?,
    };
    matrix::rate_sweep(&rates, &sizes).map_err(|e| anyhow!("sweep --rates: {e}"))
}

/// `10%`: a percentage from 0% to 100% as a share (0.10); `example` shows the form.
pub fn percent(text: &str, example: &str) -> Result<f64, String> {
    text.strip_suffix('%')
        .and_then(|t| t.trim().parse::<f64>().ok())
        .filter(|t| (0.0..=100.0).contains(t))
        .map(|t| t / 100.0)
        .ok_or_else(|| format!("a percentage from 0% to 100%, such as {example}"))
}

/// `1s`, `300ms`, `2m`: a duration.
pub fn duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("not a duration ({e}); write it as 1s, 300ms or 2m"))
}
