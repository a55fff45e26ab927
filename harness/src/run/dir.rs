//! The runs on this machine: each run's directory (`$TMPDIR/ipcb<pid>`), locked for as long as
//! its driver lives. The lock tells a live run from one whose driver was killed before it could
//! clean up (whose leftovers the next run removes), and lets two runs at once see each other.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::registry;

/// The longest path a Unix socket may have (`sun_path` less its NUL).
const SUN_PATH: usize = 107;
/// The most a trial adds to the run directory's path for a socket: `/t<trial>/`, a pair's
/// `p<i>/` (`matrix::PAIRS_MOST` pairs) and the adapter's file name (`Setup::socket_path`:
/// `zmq-subscriber3`, `server.sock`, ...).
const LONGEST_SOCKET_TAIL: usize = 9 + 4 + 25;

/// This run's directory of sockets and files, and the lock that says it is alive; removed when
/// the run ends, however it ends (a SIGKILL aside: then the next run removes it).
pub struct RunDir {
    pub path: PathBuf,
    pub tag: String,
    _lock: File,
}

impl RunDir {
    /// Made new, mode 0700, by this user: never one that is there already (a stale one of a dead
    /// run with this pid is removed before, by `remove_stale`), never through a symlink.
    pub fn create() -> Result<RunDir> {
        // Short: a Unix socket's path must fit in 108 bytes.
        let tag = format!("ipcb{}", std::process::id());
        let path = std::env::temp_dir().join(&tag);
        // A trial's sockets are `<this>/t<N>/<trial name>...`: refused here, not trial by trial.
        let longest = path.as_os_str().len() + LONGEST_SOCKET_TAIL;
        if longest > SUN_PATH {
            anyhow::bail!(
                "the run's sockets would have paths of up to {longest} bytes under {}, and a Unix socket's \
                 path holds at most {SUN_PATH}: set TMPDIR to a shorter folder (such as /tmp)",
                std::env::temp_dir().display()
            );
        }
        if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&path) {
            let what = match std::fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_symlink() => "a symlink is there",
                Ok(_) => "something of that name is there, not left by an ipcbench run of this user",
                Err(_) => "",
            };
            anyhow::bail!(
                "creating this run's directory {}: {e}{}{what}; a run's directory is made new, never reused: \
                 remove it, or set TMPDIR to another folder",
                path.display(),
                if what.is_empty() { "" } else { ": " }
            );
        }
        // The mode asked for may have been narrowed by the umask, never widened; make it exact.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("setting the mode of {}", path.display()))?;
        let lock = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path.join("lock"))
            .with_context(|| format!("creating {}/lock", path.display()))?;
        // SAFETY: flock on a descriptor we own; it is released when the process ends.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            anyhow::bail!("locking {}: {}", path.display(), std::io::Error::last_os_error());
        }
        Ok(RunDir { path, tag, _lock: lock })
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Another run's directory, and whether its driver still holds the lock.
struct Found {
    pid: u32,
    path: PathBuf,
    alive: bool,
}

/// The run directories of this machine but this run's (with `with_mine`, this pid's too: one a
/// dead run of the same pid left, before this run makes its own).
fn others(with_mine: bool) -> Vec<Found> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) =
            name.to_str().and_then(|n| n.strip_prefix("ipcb")).and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        // Not followed: a symlink of that name is nobody's run directory.
        if (pid == me && !with_mine) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let lock =
            std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path.join("lock"));
        let alive = match lock {
            Ok(f) => {
                // SAFETY: flock on a descriptor we own, released when it closes.
                let taken = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
                taken != 0
            }
            // No lock yet: a run that is just starting, if its process lives (this one is not
            // making its directory yet).
            Err(_) => pid != me && Path::new(&format!("/proc/{pid}")).exists(),
        };
        found.push(Found { pid, path, alive });
    }
    found.sort_by_key(|f| f.pid);
    found
}

/// The pids of the other runs alive on this machine now.
pub fn live_others() -> Vec<u32> {
    others(false).into_iter().filter(|f| f.alive).map(|f| f.pid).collect()
}

/// What one run killed before it could clean up left, as `remove_stale` removed it.
pub struct Stale {
    pub pid: u32,
    /// Each object removed: `/dev/shm/...`, a POSIX queue's name, the run's directory.
    pub removed: Vec<String>,
}

/// Removes what runs whose driver died without cleaning up left: for each trial folder
/// (`t<N>`), exactly what its manifest names, then the run's directory.
pub fn remove_stale() -> Vec<Stale> {
    let mut stale = Vec::new();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for f in others(true).into_iter().filter(|f| !f.alive) {
        // Another user's directory is theirs to clean, and what it names is not trusted.
        if std::fs::symlink_metadata(&f.path).map_or(true, |m| m.uid() != me) {
            continue;
        }
        let mut removed = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&f.path) {
            for trial in entries.flatten() {
                let is_trial = trial
                    .file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix('t'))
                    .is_some_and(|n| n.parse::<u64>().is_ok());
                // A trial without a manifest died before it started a child: nothing of it is
                // anywhere but its folder.
                if let Some(mut m) = is_trial.then(|| Manifest::read(&trial.path())).flatten() {
                    // Only names of that run's own form: a manifest never widens what is removed.
                    let own = format!("ipcb{}t", f.pid);
                    m.names.retain(|n| n.starts_with(&own));
                    removed.extend(m.remove());
                }
            }
        }
        if std::fs::remove_dir_all(&f.path).is_ok() {
            removed.push(f.path.display().to_string());
        }
        stale.push(Stale { pid: f.pid, removed });
    }
    stale
}

/// What one trial's processes may create, written into its folder (`manifest`) before the
/// first of them starts: its library and the names everything of it is named after (the
/// trial's, and a connect case's per-attempt names). The clean-up after the trial, or after a
/// driver killed in it, removes exactly what those names name.
pub struct Manifest {
    pub library: String,
    pub names: Vec<String>,
}

const MANIFEST: &str = "manifest";

impl Manifest {
    fn read(trial_dir: &Path) -> Option<Manifest> {
        let text = std::fs::read_to_string(trial_dir.join(MANIFEST)).ok()?;
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let library = lines.next()?.strip_prefix("library ")?.to_string();
        let names = lines.filter_map(|l| l.strip_prefix("name ")).map(String::from).collect();
        Some(Manifest { library, names })
    }

    fn write(&self, trial_dir: &Path) -> std::io::Result<()> {
        let mut text = format!("library {}\n", self.library);
        for n in &self.names {
            text.push_str(&format!("name {n}\n"));
        }
        std::fs::write(trial_dir.join(MANIFEST), text)
    }

    /// Removes what its names name: their /dev/shm objects, and what only the library can find.
    fn remove(&self) -> Vec<String> {
        let mut removed = Vec::new();
        for name in &self.names {
            removed.extend(remove_shared_memory(name));
            removed.extend(registry::remove_leftovers(&self.library, name));
        }
        removed
    }
}

/// One trial's folder and what its processes may create: made, with its manifest, before any
/// child starts; everything it names is removed when this guard drops, however the trial ended
/// (a failure, an interruption, a panic of the driver's).
pub struct TrialFiles {
    dir: PathBuf,
    manifest: Manifest,
}

impl TrialFiles {
    pub fn create(dir: PathBuf, manifest: Manifest) -> Result<TrialFiles, String> {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("creating the trial's folder {}: {e}", dir.display()))?;
        let files = TrialFiles { dir, manifest };
        files
            .manifest
            .write(&files.dir)
            .map_err(|e| format!("writing {}/{MANIFEST}: {e}", files.dir.display()))?;
        Ok(files)
    }
}

impl Drop for TrialFiles {
    fn drop(&mut self) {
        self.manifest.remove();
        // The folder last: a driver killed before this point leaves the manifest to the next run.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The /dev/shm objects of this name: `<name>`, or `<name>` and one of `_.-` and more.
fn shm_objects(name: &str) -> Vec<std::fs::DirEntry> {
    let Ok(entries) = std::fs::read_dir("/dev/shm") else { return Vec::new() };
    entries
        .flatten()
        .filter(|entry| {
            let file = entry.file_name();
            let file = file.to_string_lossy();
            file.strip_prefix(name).is_some_and(|rest| rest.is_empty() || rest.starts_with(['_', '.', '-']))
        })
        .collect()
}

/// Before a trial: none of its names is taken in /dev/shm (a stale or foreign object is never
/// mapped, reused or removed: the trial fails naming it), and /dev/shm has room for what its
/// library fills there (`need` bytes, about).
pub fn check_shared_memory(names: &[String], need: u64) -> Result<(), String> {
    if let Some(taken) = names.iter().flat_map(|n| shm_objects(n)).next() {
        return Err(format!(
            "{} is there before the trial began: a stale or foreign object of this trial's name, not used; \
             remove it if it is yours",
            taken.path().display()
        ));
    }
    if let Some(free) = crate::machine::free_space(Path::new("/dev/shm"))
        && need > free
    {
        return Err(format!(
            "/dev/shm has {} free, the case needs about {}: make it larger (mount -o remount,size=... /dev/shm) \
             or leave this library's case out",
            crate::format::bytes(free),
            crate::format::bytes(need)
        ));
    }
    Ok(())
}

/// Removes the trial's objects in /dev/shm: those named `<name>` or `<name>` and one of `_.-`
/// and more (files and directories); what only its library can find, the library removes. A
/// killed child leaves its shared memory there, iceoryx2 keeps one segment on purpose, and
/// Aeron's media driver has its directory there; nothing a trial made outlives it.
pub fn remove_shared_memory(name: &str) -> Vec<String> {
    let mut removed = Vec::new();
    for entry in shm_objects(name) {
        let gone = match entry.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(entry.path()),
            _ => std::fs::remove_file(entry.path()),
        };
        if gone.is_ok() {
            removed.push(entry.path().display().to_string());
        }
    }
    removed
}
