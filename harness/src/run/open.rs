//! Everything before a run's first trial: the results folder, the clean-up of runs killed
//! before, the run's directory, and the results file written once with the banner.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::{dir, write};
use crate::console;
use crate::machine::{BUSY, Machine};
use crate::matrix;
use crate::options::{Options, Resume};
use crate::results::{self, CaseResult, Document, LibraryRecord, RunStatus, Settings, Status};

/// A run's results file and directory, ready for its cases.
pub(crate) struct Opened {
    pub path: PathBuf,
    pub doc: Document,
    /// The results a resumed run keeps.
    pub kept: Vec<CaseResult>,
    pub run_dir: dir::RunDir,
    /// Held until the run ends.
    pub _lock: results::Lock,
}

/// Everything before a run's first trial: the results folder, the clean-up of runs killed
/// before, the run's directory, and its results file (new, or the resumed one) written once,
/// with the banner that says what will run. An A/B run's record goes in the new file.
pub(crate) fn open(
    opts: &Options,
    resume: Option<Resume>,
    ab: Option<results::ab::AbRecord>,
    exec: &dyn super::Executor,
) -> Result<Opened> {
    if opts.out.exists() && !opts.out.is_dir() {
        anyhow::bail!("--out {} is a file, not a folder: name a folder for the results", opts.out.display());
    }
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("creating the results folder {}", opts.out.display()))?;
    let stale = dir::remove_stale();
    if !stale.is_empty() {
        let removed: Vec<&str> = stale.iter().flat_map(|s| s.removed.iter().map(String::as_str)).collect();
        const SHOWN: usize = 12;
        let more = match removed.len().saturating_sub(SHOWN) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        console::say(&format!(
            "ipcbench: removed what {} run(s) killed before they could clean up left (pid {}): {}{more}",
            stale.len(),
            stale.iter().map(|s| s.pid.to_string()).collect::<Vec<_>>().join(", "),
            removed[..removed.len().min(SHOWN)].join(", ")
        ));
    }
    // First: a TMPDIR the run cannot use refuses it before anything is measured.
    let run_dir = dir::RunDir::create()?;
    let conditions = exec.conditions(dir::live_others(), &matrix::sizes_of(&opts.cases));
    let machine = Machine::this();
    let cores = machine.cores;
    let (path, mut doc, kept, _lock) = match resume {
        Some(Resume { path, mut doc, lock }) => {
            // The cases done stay; an interrupted one runs again, whole.
            let kept: Vec<CaseResult> =
                doc.results.drain(..).filter(|r| r.status != Status::Interrupted).collect();
            doc.status = RunStatus::Running;
            doc.finished = None;
            doc.resumed.push(now());
            (path, doc, kept, lock)
        }
        None => {
            let started = now();
            // One file per run: a second run started in the same second gets a suffix.
            let path = results::reserve(&opts.out, &format!("run-{}", started.replace(':', "-")))?;
            let lock = results::Lock::take(&path)?;
            let doc = Document {
                schema_version: results::SCHEMA_VERSION,
                tool: format!("ipcbench {}", env!("CARGO_PKG_VERSION")),
                started,
                finished: None,
                status: RunStatus::Running,
                resumed: Vec::new(),
                settings: Settings {
                    config: opts.config.clone(),
                    cases: opts.cases.iter().map(|c| c.name.clone()).collect(),
                    libraries: opts.libraries.iter().map(|l| l.id.to_string()).collect(),
                },
                machine,
                conditions: None,
                states: Vec::new(),
                host_cost: None,
                toolchain: [("rustc".to_string(), env!("IPCBENCH_RUSTC").to_string())].into(),
                libraries: opts.libraries.iter().map(LibraryRecord::new).collect(),
                results: Vec::new(),
                ab,
            };
            (path, doc, Vec::new(), lock)
        }
    };
    if conditions.busy_cores > BUSY {
        console::say(&format!(
            "ipcbench: warning: the machine is busy: other processes kept {:.1} of its {cores} cores busy just \
             now; the figures will be lower and noisier (`ipcbench doctor` says more)",
            conditions.busy_cores
        ));
    }
    // A resumed file keeps the conditions of its start.
    doc.conditions.get_or_insert(conditions);
    if let Err(e) = write(&doc, &path) {
        // A new run's file holds nothing yet: the name it reserved goes too.
        if doc.resumed.is_empty() {
            let _ = std::fs::remove_file(&path);
        }
        return Err(e);
    }
    console::say(&format!(
        "ipcbench: {} cases x {} libraries, {} runs of {:?} after {:?} of warm-up ({} order), on {} cores; results in {}",
        opts.cases.len(),
        opts.libraries.len(),
        doc.settings.config.runs_text(),
        opts.config.duration,
        opts.config.warmup,
        opts.config.order.as_str(),
        cores,
        path.display()
    ));
    if !kept.is_empty() {
        console::say(&format!(
            "ipcbench: resuming: {} of {} done before, kept; running the rest",
            kept.len(),
            opts.cases.len() * opts.libraries.len()
        ));
    }
    Ok(Opened { path, doc, kept, run_dir, _lock })
}

/// Now, as a results file writes a time.
pub(crate) fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
