//! The command line: `list` shows the matrix, `run` measures it, `sweep` measures streams and
//! round trips across message sizes, `doctor` says what on the machine bends the figures,
//! `report` rebuilds the report from results files, `compare` holds two
//! results files against each other, `child` is one role process (started by the
//! driver, never by hand). Each command is a few calls down the flow; errors exit 2.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};

use crate::machine::{self, Conditions, Machine};
use crate::options::{self, Measure, Options, Resume};
use crate::report::{self, terminal};
use crate::role::ChildArgs;
use crate::run::{self, Outcome};
use crate::{compare, console, doctor, matrix, registry, results};

/// The exit code of a run that was interrupted, by SIGINT or SIGTERM (128 + SIGINT, as shells
/// report a Ctrl-C).
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser)]
#[command(name = "ipcbench", version, about = "Measures inter-process communication libraries side by side")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Every case by name, the libraries built in, and which patterns each has.
    List,
    /// Runs cases: names, globs such as 'stream/*', or sets (@page, @bends, @latency, @loans,
    /// @duplex, @all: `ipcbench list` says what each holds); none: @page, the comparison page's
    /// 30 cases. The open families take any size, count or rate: stream/4KiB, stream-rtt/24B,
    /// broadcast/lossy/64sub/16B, broadcast/lossless/8sub-2slow/1KiB, pairs/3/stream-rtt/16B,
    /// duplex/4KiB, latency/300k/16B, fanout-latency/1k/8sub/16B.
    Run {
        cases: Vec<String>,
        /// Finishes the interrupted run of this results file: the cases done are kept, the rest
        /// run with the file's settings, into the same file.
        #[arg(long, value_name = "RESULTS.json", conflicts_with_all = ["cases", "config"])]
        resume: Option<PathBuf>,
        #[command(flatten)]
        measure: Measure,
    },
    /// Runs a stream and a round trip at each of a list of message sizes, as ipc-bench does.
    Sweep {
        /// Sizes, comma-separated: 64, 4KiB, 1MiB (default: 8B to 64KiB in powers of two, then
        /// 1MiB, 4MiB and 16MiB; with --rates, 16B).
        #[arg(long)]
        sizes: Option<String>,
        /// Instead of sizes, offered rates: the latency family at each (1k,10k,100k,300k,1M,3M,10M
        /// when given no list), for the load curve and each library's sustainable rate.
        #[arg(long, num_args = 0..=1, default_missing_value = "1k,10k,100k,300k,1M,3M,10M", value_name = "RATES")]
        rates: Option<String>,
        #[command(flatten)]
        measure: Measure,
    },
    /// What on this machine will bend the figures, each with what to do: cores, load, CPU
    /// governor, hypervisor, idle-core wake-up (measured), /dev/shm, POSIX queue limits, the
    /// libraries built in.
    Doctor {
        /// Instead: the control against itself with a calibration weight on one side (0%, 5%
        /// and 10% of its round trip, a busy wait before each message its pinger sends), paired
        /// as `run --against` pairs two builds: what the pairing tells of each weight, and the
        /// rounds it took. The machine's own proof of what an A/B run here can tell.
        #[arg(long, conflicts_with = "watch")]
        calibrate: bool,
        /// Instead: the host's probe (polling and waiting floors, a system call, steal time)
        /// once a second for this long (30s, 5m), then whether the host held still.
        #[arg(long, value_name = "DURATION", value_parser = options::duration)]
        watch: Option<std::time::Duration>,
    },
    /// Rebuilds the tables, charts, CSV and HTML page from saved results files (runs nothing).
    /// Several files (several machines) merge into one report, a column per machine.
    Report {
        /// Results files written by `ipcbench run` or `sweep`.
        files: Vec<PathBuf>,
        /// Folder for the report (default: beside the one file, named after it; or
        /// `report` beside the first of several).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Two libraries the questions compare beside the subject's (aeron,zmq); may be repeated.
        #[arg(long, value_name = "A,B")]
        versus: Vec<String>,
        /// The library the questions are asked of, against each other library (default:
        /// fastipc, or when the files lack it the library on top most often).
        #[arg(long, value_name = "LIBRARY")]
        subject: Option<String>,
        /// A Markdown file (README.md, RESULTS.md; the flag may be given again) whose blocks
        /// naming the one results file (`<!-- ipcbench report results/run-<time>.json: <section>
        /// -->` ... `<!-- end of ipcbench report -->`) are written again from its report.
        #[arg(long, value_name = "FILE")]
        readme: Vec<PathBuf>,
    },
    /// Compares two results files: for each case, library, receive mode and figure both
    /// measured, the change with its interval and a verdict. Exits 1 when something is slower
    /// beyond the threshold and the noise, 0 otherwise.
    Compare {
        /// The results file before (the baseline).
        old: PathBuf,
        /// The results file after.
        new: PathBuf,
        /// Changes up to this share are no change: 5%, 10%, 0.5%.
        #[arg(long, default_value = "5%", value_parser = |t: &str| options::percent(t, "5%"))]
        threshold: f64,
        /// How to print the comparison.
        #[arg(long, default_value = "terminal", value_parser = ["terminal", "markdown", "json"])]
        format: String,
        /// Compare files measured on different machines (the output names both).
        #[arg(long)]
        across_machines: bool,
    },
    /// How far each series' runs lie apart (a library, a case and a receive mode): the spread's
    /// median, p75 and p90 and the share of series that resolve a 10% change at 3 runs, of every
    /// results file or folder of them given (scripts/bench-spread.sh).
    Spread {
        /// Results files, or folders whose results files make one group.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// One role process of a trial (the driver starts these).
    #[command(hide = true)]
    Child(ChildArgs),
    /// What this binary is, as `run --against` checks it: one JSON line (its version, its role
    /// protocol, its child flags and its libraries).
    #[command(hide = true)]
    Identify,
}

/// The whole command line: each command, its checks, and its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::List => {
            let libs = match registry::select(None) {
                Ok(l) => l,
                Err(e) => return fail(e),
            };
            console::out(&terminal::list(&matrix::matrix(), matrix::sets(), &libs, machine::cores()));
            ExitCode::SUCCESS
        }
        Command::Doctor { watch: Some(d), .. } => {
            watch_host(d);
            ExitCode::SUCCESS
        }
        Command::Doctor { calibrate: true, .. } => match crate::calibrate::calibrate() {
            Ok((text, told)) => {
                console::out(&text);
                ExitCode::from(if told { 0 } else { crate::ab::EXIT_UNTOLD })
            }
            Err(e) => fail(e),
        },
        Command::Doctor { watch: None, calibrate: false } => {
            let libs = match registry::select(None) {
                Ok(l) => l,
                Err(e) => return fail(e),
            };
            let versions: Vec<(String, String)> =
                libs.iter().map(|l| (l.id.to_string(), l.version.clone())).collect();
            let cases = matrix::matrix();
            let sizes = matrix::sizes_of(&cases);
            let mut checks = doctor::checks(
                &Conditions::now(run::dir::live_others(), &sizes),
                &Machine::this(),
                &cases,
                &versions,
            );
            checks.extend(defaults().as_ref().map(doctor::defaults));
            console::out(&doctor::render(&checks));
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
            measure_cases(measure.options(matrix::select(&matrix::matrix(), &cases)), None)
        }
        Command::Sweep { sizes: list, rates: None, measure } => {
            measure_cases(measure.options(options::sizes(list.as_deref())), None)
        }
        Command::Sweep { sizes: list, rates: Some(rates), measure } => {
            measure_cases(measure.options(options::rates(&rates, list.as_deref())), None)
        }
        Command::Report { files, out, versus, subject, readme } => {
            match report_with_readme(&files, out, &versus, subject, &readme) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            }
        }
        Command::Compare { old, new, threshold, format, across_machines } => {
            match compare_files(&old, &new, threshold, &format, across_machines) {
                Ok(slower) => ExitCode::from(u8::from(slower)),
                Err(e) => fail(e),
            }
        }
        Command::Spread { paths } => match spread_of(&paths) {
            Ok(text) => {
                console::out(&text);
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        Command::Child(args) => match registry::run_child(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(e),
        },
        Command::Identify => match serde_json::to_string(&crate::ab::binary::Identity::this()) {
            Ok(line) => {
                console::out(&line);
                ExitCode::SUCCESS
            }
            Err(e) => fail(e.into()),
        },
    }
}

/// `doctor --watch`: a line per sample as it comes, then the verdict; Ctrl-C ends it early.
fn watch_host(duration: std::time::Duration) {
    let stop = || run::INTERRUPTED.store(true, Ordering::SeqCst);
    let _ = ctrlc::set_handler(stop);
    console::say(&format!(
        "ipcbench doctor: the host's probe once a second for {}",
        humantime::format_duration(duration)
    ));
    let samples = crate::host::watch::watch(
        duration,
        machine::cores(),
        |s| console::say(&crate::host::watch::line(s)),
        || run::INTERRUPTED.load(Ordering::SeqCst),
    );
    console::out(&crate::host::watch::verdict(&samples));
}

/// Runs the cases of `run` or `sweep`.
fn measure_cases(options: Result<Options>, resume: Option<Resume>) -> ExitCode {
    let options = match options {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    if options.config.ab.is_some() {
        return match measure_ab(options) {
            Ok(code) => code,
            Err(e) => fail(e),
        };
    }
    let stop = || run::INTERRUPTED.store(true, Ordering::SeqCst);
    if let Err(e) = ctrlc::set_handler(stop) {
        return fail(anyhow!("installing the Ctrl-C handler: {e}"));
    }
    let outcome = run::run(&options, resume);
    // The report, whatever the outcome: a failed or interrupted run's cases are worth seeing.
    if let Ok((_, path)) = &outcome
        && let Err(e) = report_of(std::slice::from_ref(path), None, &[], None)
    {
        console::say(&format!("ipcbench: the report of {} could not be built: {e:#}", path.display()));
    }
    match outcome {
        Ok((Outcome::Complete { failed: 0 }, _)) => ExitCode::SUCCESS,
        Ok((Outcome::Complete { failed }, path)) => {
            console::say(&format!(
                "ipcbench: {failed} case(s) failed; the reasons are in {}",
                path.display()
            ));
            ExitCode::from(1)
        }
        Ok((Outcome::Interrupted, path)) => {
            console::say(&format!("ipcbench: interrupted; the cases done are in {}", path.display()));
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e) => fail(e),
    }
}

/// `run --against OTHER`: the other binary checked, the A/B run, its report, and the exit code
/// of its verdicts (or of its interruption).
fn measure_ab(options: Options) -> Result<ExitCode> {
    let (plan, same) = run::ab::plan(&options)?;
    if same {
        console::say(&format!(
            "ipcbench: --against {} is this very binary (the same bytes): one binary against itself, as the \
             sentinel is",
            plan.binaries[1].path.display()
        ));
    }
    let stop = || run::INTERRUPTED.store(true, Ordering::SeqCst);
    ctrlc::set_handler(stop).map_err(|e| anyhow!("installing the Ctrl-C handler: {e}"))?;
    let ended = run::ab::run(&options, plan)?;
    if let Err(e) = report_of(std::slice::from_ref(&ended.path), None, &[], None) {
        console::say(&format!("ipcbench: the report of {} could not be built: {e:#}", ended.path.display()));
    }
    if ended.interrupted {
        console::say(&format!("ipcbench: interrupted; the rounds done are in {}", ended.path.display()));
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    for why in &ended.why {
        console::say(&format!("ipcbench: {why}"));
    }
    console::say(&format!("ipcbench: exit {}; the A/B is in {}", ended.code, ended.path.display()));
    Ok(ExitCode::from(ended.code))
}

/// `ipcbench report`, and the end of every run: every artefact, from the JSON alone; the folder
/// it went into, the files read and what was built.
fn report_of(
    files: &[PathBuf],
    out: Option<PathBuf>,
    versus: &[String],
    subject: Option<String>,
) -> Result<(PathBuf, Vec<report::Source>, report::Built)> {
    let sources = report::load(files)?;
    let out = out.unwrap_or_else(|| report::default_out(files));
    let subject = match &subject {
        Some(id) => report::Subject { id, named: true },
        None => report::Subject { id: registry::DEFAULT_SUBJECT, named: false },
    };
    let built = report::build(&sources, &out, versus, &subject)?;
    console::say(&format!("ipcbench: the report ({} files) is in {}", built.written.len(), out.display()));
    Ok((out, sources, built))
}

/// `ipcbench report`, and with `--readme FILE` that file's blocks written again from the page
/// the report built.
fn report_with_readme(
    files: &[PathBuf],
    out: Option<PathBuf>,
    versus: &[String],
    subject: Option<String>,
    readmes: &[PathBuf],
) -> Result<()> {
    let file = match (readmes, files) {
        ([], _) => None,
        (_, [file]) => Some(file),
        _ => bail!("--readme takes one results file, the one its blocks name; {} were given", files.len()),
    };
    // Checked before the report is written: a README that names no block of the file is
    // refused with nothing touched.
    let targets = match file {
        Some(file) => readmes
            .iter()
            .map(|readme| Ok((readme, report::readme::target(file, readme)?)))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    let (out, sources, built) = report_of(files, out, versus, subject)?;
    // `--readme` takes one file: the one source the report was built from.
    if let (Some(file), [source]) = (file, sources.as_slice()) {
        for (readme, target) in targets {
            let n = report::readme::update(&built.page, &source.doc, &out, target)?;
            console::say(&format!(
                "ipcbench: wrote {n} blocks of {} from {}",
                readme.display(),
                file.display()
            ));
        }
    }
    Ok(())
}

/// `ipcbench compare`: prints the comparison; whether something got slower.
fn compare_files(old: &Path, new: &Path, share: f64, format: &str, across: bool) -> Result<bool> {
    let (a, b) = (results::load(old)?.base_side(), results::load(new)?.base_side());
    let c = compare::compare((old, &a), (new, &b), share, across)?;
    match format {
        "markdown" => console::out(c.markdown().trim_end_matches('\n')),
        "json" => console::out(&c.json()?),
        _ => console::out(&c.terminal()),
    }
    Ok(c.slower())
}

/// What `run` does when given no flag: the settings its own parser makes of a bare `run`.
fn defaults() -> Option<crate::results::RunConfig> {
    let Ok(Cli { command: Command::Run { measure, .. } }) = Cli::try_parse_from(["ipcbench", "run"]) else {
        return None;
    };
    measure.options(matrix::select(&matrix::matrix(), &[])).ok().map(|o| o.config)
}

/// `spread`: each path's series (a folder's files together), summarised.
fn spread_of(paths: &[PathBuf]) -> Result<String> {
    let mut groups = Vec::new();
    for path in paths {
        let files: Vec<PathBuf> = if path.is_dir() {
            let mut f: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("reading {}", path.display()))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| results::named_as_results(p))
                .collect();
            f.sort();
            if f.is_empty() {
                bail!("{} holds no results file (*.json or *.json.gz)", path.display());
            }
            f
        } else {
            vec![path.clone()]
        };
        let mut series = Vec::new();
        for f in &files {
            series.extend(crate::analysis::spread::series(&results::load(f)?.base_side().results));
        }
        groups.push((format!("{} ({} files)", path.display(), files.len()), series));
    }
    Ok(terminal::spread(&groups))
}

fn fail(e: anyhow::Error) -> ExitCode {
    console::say(&format!("ipcbench: error: {e:#}"));
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Pin;
    use clap::CommandFactory;

    /// A plain run's windows are 1 s after 0.3 s by default, an A/B run's 250 ms after 100 ms,
    /// and either takes what it is given.
    #[test]
    fn an_ab_run_takes_short_windows_unless_told() {
        let windows = |line: &str| {
            let Ok(Cli { command: Command::Run { measure, .. } }) = Cli::try_parse_from(line.split(' '))
            else {
                panic!("{line}: not a run")
            };
            let c = measure.options(matrix::select(&matrix::matrix(), &[])).unwrap().config;
            (c.duration.as_millis(), c.warmup.as_millis())
        };
        assert_eq!(windows("ipcbench run"), (1000, 300));
        assert_eq!(windows("ipcbench run --against /bin/other"), (250, 100));
        assert_eq!(windows("ipcbench run --against /bin/other --duration 1s"), (1000, 100));
        assert_eq!(windows("ipcbench run --warmup 50ms"), (1000, 50));
    }

    /// `--pin` takes its value only after `=`: the word after it stays a case.
    #[test]
    fn pin_never_takes_a_case_for_its_value() {
        let parse = |line: &str| match Cli::try_parse_from(line.split(' ')) {
            Ok(Cli { command: Command::Run { cases, measure, .. } }) => {
                (cases, measure.options(matrix::select(&matrix::matrix(), &[])).unwrap().config.pin)
            }
            Ok(_) => panic!("{line}: not a run"),
            Err(e) => panic!("{line}: {e}"),
        };
        let case = vec!["stream/16B".to_string()];
        assert_eq!(parse("ipcbench run --pin stream/16B"), (case.clone(), Some(Pin::Spread)));
        assert_eq!(parse("ipcbench run stream/16B --pin"), (case.clone(), Some(Pin::Spread)));
        assert_eq!(parse("ipcbench run --pin=same-core stream/16B"), (case, Some(Pin::SameCore)));
        assert_eq!(parse("ipcbench run --pin same-core").0, ["same-core"]);
        let e = matrix::select(&matrix::matrix(), &["same-core".into()]).unwrap_err();
        assert!(e.to_string().contains("--pin=same-core"), "{e}");
    }

    /// The help of `sweep --sizes` states the sizes a sweep takes when given none.
    #[test]
    fn sweep_help_states_its_default_sizes() {
        let cli = Cli::command();
        let sweep = cli.find_subcommand("sweep").expect("a sweep command");
        let sizes = sweep.get_arguments().find(|a| a.get_id() == "sizes").expect("--sizes");
        let help = sizes.get_help().expect("--sizes has help").to_string();
        let all = matrix::sweep_sizes();
        let (small, large): (Vec<usize>, Vec<usize>) = all.iter().partition(|&&s| s <= 64 << 10);
        let stated = format!(
            "default: {} to {} in powers of two, then {}",
            matrix::size_label(small[0]),
            matrix::size_label(small[small.len() - 1]),
            large.iter().map(|&s| matrix::size_label(s)).collect::<Vec<_>>().join(", ")
        );
        let (head, last) = stated.rsplit_once(", ").expect("more than one large size");
        assert!(help.contains(&format!("{head} and {last};")), "{help}\nstates not: {stated}");
        assert!(small.windows(2).all(|w| w[1] == 2 * w[0]), "{small:?}");
    }

    /// Every argument of `run` is either refused beside `--resume` (the cases, and every flag of
    /// the group "config": each can change a figure) or reaches the resumed run (every other
    /// flag lands in `Watch`, which the resumed run takes whole): none is accepted and dropped,
    /// as `--buffer` and `--connects` once were. The flags are listed from clap.
    #[test]
    fn every_flag_of_run_is_refused_or_honoured_beside_resume() {
        let cli = Cli::command();
        let run = cli.find_subcommand("run").expect("a run command");
        let config: Vec<&str> = run
            .get_groups()
            .find(|g| g.get_id() == "config")
            .expect("the config group")
            .get_args()
            .map(|a| a.as_str())
            .collect();
        let watch_of = |line: &[String]| match Cli::try_parse_from(line) {
            Ok(Cli { command: Command::Run { resume: Some(_), measure, .. } }) => Ok(measure.watch),
            Ok(_) => panic!("{line:?}: not a resumed run"),
            Err(e) => Err(e),
        };
        let base = vec!["ipcbench".to_string(), "run".into(), "--resume".into(), "r.json".into()];
        let plain = watch_of(&base).expect("run --resume alone");
        let (mut refused, mut honoured) = (0, 0);
        for arg in run.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "resume" || id == "help" {
                continue;
            }
            let mut line = base.clone();
            // The positional cases have no long name; a flag's value goes after `=`, which every
            // flag takes and `--pin` needs.
            match (arg.get_long(), arg.get_action().takes_values()) {
                (Some(long), true) => line.push(format!("--{long}={}", sample(id))),
                (Some(long), false) => line.push(format!("--{long}")),
                (None, _) => line.push(sample(id).into()),
            }
            if id == "cases" || config.contains(&id) {
                let e = watch_of(&line).err().unwrap_or_else(|| panic!("{line:?} was accepted"));
                assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{line:?}: {e}");
                refused += 1;
            } else {
                let watch = watch_of(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
                assert_ne!(watch, plain, "{id} is accepted beside --resume but does not reach the run");
                honoured += 1;
            }
        }
        assert!(refused > 10 && honoured >= 3, "{refused} refused, {honoured} honoured");
    }

    /// A value each flag of `run` parses (clap reads a value before it looks for conflicts).
    fn sample(id: &str) -> &'static str {
        match id {
            "cases" => "stream/16B",
            "duration" | "warmup" | "setup_timeout" | "grace" => "1s",
            "slow_work" => "20us",
            "resolve" | "threshold" => "5%",
            "budget" => "10m",
            "against" => "/bin/ipcbench-old",
            "verify" => "full",
            "order" => "interleaved",
            "pin" => "same-core",
            "lib" => "uds",
            "transfer" => "copy,loan",
            "fault" => "kill:window:receiving",
            _ => "1",
        }
    }
}
