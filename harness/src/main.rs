//! ipcbench: measures inter-process communication libraries side by side, each in processes of
//! its own. `list` shows the matrix, `run` measures it, `sweep` measures streams and round trips
//! across message sizes, `child` is one role process (started by the driver, never by hand).

mod cases;
mod child;
mod doctor;
mod driver;
mod fault;
mod figures;
mod message;
mod registry;
mod report;
mod results;
mod runs;
mod table;
mod taken;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand};
use ipcbench_api::RecvMode;

#[derive(Parser)]
#[command(name = "ipcbench", version, about = "Measures inter-process communication libraries side by side")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every case by name, the libraries built in, and which patterns each has.
    List,
    /// Runs cases (names or globs such as 'stream/*'; none: the whole matrix). A stream or
    /// round trip takes any size: stream/4KiB, stream-rtt/24B.
    Run {
        cases: Vec<String>,
        /// Finishes the interrupted run of this results file: the cases done are kept, the rest
        /// run with the file's settings, into the same file.
        #[arg(long, value_name = "RESULTS.json", conflicts_with_all = [
            "cases", "lib", "runs", "duration", "warmup", "setup_timeout", "out", "skip_oversubscribed", "order", "fault"
        ])]
        resume: Option<PathBuf>,
        #[command(flatten)]
        measure: Measure,
    },
    /// Runs a stream and a round trip at each of a list of message sizes, as ipc-bench does.
    Sweep {
        /// Sizes, comma-separated: 64, 4KiB, 1MiB (default: 8 B to 64 KiB, powers of two).
        #[arg(long)]
        sizes: Option<String>,
        #[command(flatten)]
        measure: Measure,
    },
    /// What on this machine will bend the figures, each with what to do: cores, load, CPU
    /// governor, hypervisor, idle-core wake-up (measured), /dev/shm, POSIX queue limits, the
    /// libraries built in.
    Doctor,
    /// Rebuilds the tables, charts, CSV and HTML page from saved results files (runs nothing).
    /// Several files (several machines) merge into one report, a column per machine.
    Report {
        /// Results files written by `ipcbench run` or `sweep`.
        files: Vec<PathBuf>,
        /// Folder for the report (default: beside the one file, named after it; or
        /// `report` beside the first of several).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// One role process of a trial (the driver starts these).
    #[command(hide = true)]
    Child {
        #[arg(long)]
        lib: String,
        #[arg(long)]
        case: String,
        #[arg(long)]
        role: String,
        #[arg(long)]
        index: usize,
        #[arg(long)]
        mode: String,
        #[arg(long)]
        name: String,
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        warmup_ns: u64,
        #[arg(long)]
        duration_ns: u64,
        #[arg(long)]
        setup_timeout_ns: u64,
    },
}

/// How cases are measured: the options `run` and `sweep` share.
#[derive(Args)]
struct Measure {
    /// Libraries by id, comma-separated (default: every one built in).
    #[arg(long)]
    lib: Option<String>,
    /// Runs per case and receive mode; the median is the figure.
    #[arg(long, default_value = "3")]
    runs: String,
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
    /// Show each trial and each child's pid.
    #[arg(long, short)]
    verbose: bool,
    /// How long after the measured window a trial may take to end and report before it fails.
    #[arg(long, default_value = "10s")]
    grace: String,
    /// sequential: each library's runs in turn; interleaved: run 1 of every library of a case,
    /// then run 2, ... (A B A B), so that a drift of the machine reaches every library alike.
    #[arg(long, default_value = "sequential")]
    order: String,
    /// Sends a signal to one role on purpose, to watch the harness handle it (docs/FAULTS.md).
    #[arg(long, hide = true)]
    fault: Option<String>,
}

impl Measure {
    fn options(self, cases: Result<Vec<cases::Case>>) -> Result<driver::Options> {
        let Measure {
            lib,
            runs,
            duration: d,
            warmup,
            setup_timeout,
            out,
            skip_oversubscribed,
            verbose,
            grace,
            fault,
            order,
        } = self;
        let runs: u32 = runs.parse().map_err(|_| anyhow!("--runs {runs:?} is not a whole number"))?;
        if runs == 0 {
            bail!("--runs 0: at least one run is needed for a figure");
        }
        let dur = duration("duration", &d)?;
        if dur.is_zero() {
            bail!("--duration {d:?}: the measured window must be longer than zero");
        }
        Ok(driver::Options {
            cases: cases?,
            libraries: driver::libraries(lib.as_deref())?,
            runs,
            duration: dur,
            warmup: duration("warmup", &warmup)?,
            setup_timeout: duration("setup-timeout", &setup_timeout)?,
            out,
            skip_oversubscribed,
            verbose,
            grace: duration("grace", &grace)?,
            fault: fault.as_deref().map(fault::Fault::parse).transpose()?,
            order: driver::Order::parse(&order)
                .ok_or_else(|| anyhow!("--order {order:?}: sequential or interleaved"))?,
        })
    }

    /// `run --resume FILE`: the file's own settings, cases and libraries, checked against this
    /// binary and this machine; from the command line only what does not change a figure.
    fn resume(self, path: PathBuf) -> Result<(driver::Options, driver::Resume)> {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("--resume: reading {}", path.display()))?;
        let doc: results::Document = serde_json::from_str(&text)
            .with_context(|| format!("--resume: {} is not an ipcbench results file", path.display()))?;
        if doc.schema_version != results::SCHEMA_VERSION {
            bail!(
                "--resume: {} has schema version {}, this ipcbench writes {}",
                path.display(),
                doc.schema_version,
                results::SCHEMA_VERSION
            );
        }
        if doc.status == "complete" {
            bail!("--resume: {} is complete: every case is done, nothing to resume", path.display());
        }
        let here = results::Machine::this();
        let m = &doc.machine;
        if (&m.cpu_model, m.cores, &m.kernel) != (&here.cpu_model, here.cores, &here.kernel) {
            bail!(
                "--resume: {} was measured on another machine ({}, {} cores, Linux {}; this one: {}, {} \
                 cores, Linux {}): one file holds one machine's figures; start a new run",
                path.display(),
                m.cpu_model,
                m.cores,
                m.kernel,
                here.cpu_model,
                here.cores,
                here.kernel
            );
        }
        let libraries = driver::libraries(Some(&doc.settings.libraries.join(","))).with_context(|| {
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
        let cases = cases::select(&cases::matrix(), &doc.settings.cases).with_context(|| {
            format!("--resume: a case of {} is not in this binary's matrix", path.display())
        })?;
        let s = &doc.settings;
        let secs = |x: f64| {
            Duration::try_from_secs_f64(x).map_err(|e| anyhow!("--resume: a duration in the file: {e}"))
        };
        let options = driver::Options {
            cases,
            libraries,
            runs: s.runs,
            duration: secs(s.duration_s)?,
            warmup: secs(s.warmup_s)?,
            setup_timeout: secs(s.setup_timeout_s)?,
            out: path.parent().map_or_else(|| PathBuf::from("."), PathBuf::from),
            skip_oversubscribed: s.skip_oversubscribed,
            verbose: self.verbose,
            grace: duration("grace", &self.grace)?,
            fault: None,
            order: driver::Order::parse(&s.order)
                .ok_or_else(|| anyhow!("--resume: unknown order {:?}", s.order))?,
        };
        results::remove_partial_copies(&path);
        Ok((options, driver::Resume { path, doc }))
    }
}

/// `--sizes 64,4KiB`: the sweep's sizes, in the order given.
fn sizes(text: Option<&str>) -> Result<Vec<cases::Case>> {
    let sizes = match text {
        None => cases::sweep_sizes(),
        Some(t) => t
            .split(',')
            .map(|s| cases::parse_size(s).map_err(|e| anyhow!("--sizes: {e}")))
            .collect::<Result<Vec<_>>>()?,
    };
    if sizes.is_empty() {
        bail!("--sizes lists no size");
    }
    cases::sweep(&sizes)
}

fn duration(flag: &str, text: &str) -> Result<Duration> {
    let d = humantime::parse_duration(text)
        .map_err(|e| anyhow!("--{flag} {text:?} is not a duration ({e}); write it as 1s, 300ms or 2m"))?;
    Ok(d)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::List => {
            let libs = match driver::libraries(None) {
                Ok(l) => l,
                Err(e) => return fail(e),
            };
            println!("{}", table::list(&cases::matrix(), &libs, results::cores()));
            ExitCode::SUCCESS
        }
        Command::Doctor => {
            let libs = match driver::libraries(None) {
                Ok(l) => l,
                Err(e) => return fail(e),
            };
            let versions: Vec<(String, String)> =
                libs.iter().map(|l| (l.id.to_string(), l.version.clone())).collect();
            let checks = doctor::checks(
                &doctor::Conditions::now(),
                &results::Machine::this(),
                &cases::matrix(),
                &versions,
            );
            println!("{}", doctor::render(&checks));
            ExitCode::SUCCESS
        }
        Command::Run { cases, resume: Some(path), measure } => {
            debug_assert!(cases.is_empty(), "clap refuses cases with --resume");
            match measure.resume(path) {
                Ok((options, resume)) => measure_cases(Ok(options), Some(resume)),
                Err(e) => fail(e),
            }
        }
        Command::Run { cases, resume: None, measure } => {
            measure_cases(measure.options(cases::select(&cases::matrix(), &cases)), None)
        }
        Command::Sweep { sizes: list, measure } => {
            measure_cases(measure.options(sizes(list.as_deref())), None)
        }
        Command::Report { files, out } => match report_of(&files, out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(e),
        },

        Command::Child {
            lib,
            case,
            role,
            index,
            mode,
            name,
            dir,
            warmup_ns,
            duration_ns,
            setup_timeout_ns,
        } => {
            let args = (|| -> Result<child::ChildArgs> {
                Ok(child::ChildArgs {
                    library: lib,
                    case,
                    role: cases::Role::parse(&role).ok_or_else(|| anyhow!("unknown role {role:?}"))?,
                    index,
                    mode: RecvMode::parse(&mode).ok_or_else(|| anyhow!("unknown receive mode {mode:?}"))?,
                    name,
                    dir,
                    warmup: Duration::from_nanos(warmup_ns),
                    duration: Duration::from_nanos(duration_ns),
                    setup_timeout: Duration::from_nanos(setup_timeout_ns),
                })
            })();
            match args.and_then(|a| registry::run_child(&a)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            }
        }
    }
}

/// Runs the cases of `run` or `sweep`.
fn measure_cases(options: Result<driver::Options>, resume: Option<driver::Resume>) -> ExitCode {
    let options = match options {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    let stop = || driver::INTERRUPTED.store(true, Ordering::SeqCst);
    if let Err(e) = ctrlc::set_handler(stop) {
        return fail(anyhow!("installing the Ctrl-C handler: {e}"));
    }
    let outcome = driver::run(&options, resume);
    // The report, whatever the outcome: a failed or interrupted run's cases are worth seeing.
    if let Ok((_, path)) = &outcome
        && let Err(e) = report_of(std::slice::from_ref(path), None)
    {
        eprintln!("ipcbench: the report of {} could not be built: {e:#}", path.display());
    }
    match outcome {
        Ok((driver::Outcome::Complete { failed: 0 }, _)) => ExitCode::SUCCESS,
        Ok((driver::Outcome::Complete { failed }, path)) => {
            eprintln!("ipcbench: {failed} case(s) failed; the reasons are in {}", path.display());
            ExitCode::from(1)
        }
        Ok((driver::Outcome::Interrupted, path)) => {
            eprintln!("ipcbench: interrupted; the cases done are in {}", path.display());
            ExitCode::from(driver::EXIT_INTERRUPTED as u8)
        }
        Err(e) => fail(e),
    }
}

/// `ipcbench report`, and the end of every run: every artefact, from the JSON alone.
fn report_of(files: &[PathBuf], out: Option<PathBuf>) -> Result<()> {
    let sources = report::load(files)?;
    let out = out.unwrap_or_else(|| report::default_out(files));
    let written = report::build(&sources, &out)?;
    eprintln!("ipcbench: the report ({} files) is in {}", written.len(), out.display());
    Ok(())
}

fn fail(e: anyhow::Error) -> ExitCode {
    eprintln!("ipcbench: error: {e:#}");
    ExitCode::from(2)
}
