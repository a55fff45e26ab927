//! The runs on this machine: each run's directory (`$TMPDIR/ipcb<pid>`), locked for as long as
//! its driver lives. The lock tells a live run from one whose driver was killed before it could
//! clean up (whose leftovers the next run removes), and lets two runs at once see each other.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::registry;

/// This run's directory of sockets and files, and the lock that says it is alive; removed when
/// the run ends, however it ends (a SIGKILL aside: then the next run removes it).
pub struct RunDir {
    pub path: PathBuf,
    pub tag: String,
    _lock: File,
}

impl RunDir {
    pub fn create() -> Result<RunDir> {
        // Short: a Unix socket's path must fit in 108 bytes.
        let tag = format!("ipcb{}", std::process::id());
        let path = std::env::temp_dir().join(&tag);
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        let lock =
            File::create(path.join("lock")).with_context(|| format!("creating {}/lock", path.display()))?;
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

fn others() -> Vec<Found> {
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
        if pid == me || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let alive = match File::open(path.join("lock")) {
            Ok(f) => {
                // SAFETY: flock on a descriptor we own, released when it closes.
                let taken = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
                taken != 0
            }
            // No lock yet: a run that is just starting, if its process lives.
            Err(_) => Path::new(&format!("/proc/{pid}")).exists(),
        };
        found.push(Found { pid, path, alive });
    }
    found.sort_by_key(|f| f.pid);
    found
}

/// The pids of the other runs alive on this machine now.
pub fn live_others() -> Vec<u32> {
    others().into_iter().filter(|f| f.alive).map(|f| f.pid).collect()
}

/// Removes what runs whose driver died without cleaning up left: for each trial directory
/// (`t<N>`) its /dev/shm objects and what each library alone can find, then the directory.
/// Returns the pids of those runs.
pub fn remove_stale() -> Vec<u32> {
    let mut removed = Vec::new();
    for f in others().into_iter().filter(|f| !f.alive) {
        if let Ok(entries) = std::fs::read_dir(&f.path) {
            for trial in entries.flatten() {
                let name = trial.file_name();
                let Some(n) =
                    name.to_str().and_then(|n| n.strip_prefix('t')).filter(|n| n.parse::<u64>().is_ok())
                else {
                    continue;
                };
                let trial = format!("ipcb{}t{n}", f.pid);
                remove_shared_memory(&trial);
                registry::remove_all_leftovers(&trial);
            }
        }
        let _ = std::fs::remove_dir_all(&f.path);
        removed.push(f.pid);
    }
    removed
}

/// Removes the trial's objects in /dev/shm: those named `<name>` or `<name>` and one of `_.-`
/// and more (files and directories); what only its library can find, the library removes. A
/// killed child leaves its shared memory there, iceoryx2 keeps one segment on purpose, and
/// Aeron's media driver has its directory there; nothing a trial made outlives it.
pub fn remove_shared_memory(name: &str) {
    let Ok(entries) = std::fs::read_dir("/dev/shm") else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        let ours =
            file.strip_prefix(name).is_some_and(|rest| rest.is_empty() || rest.starts_with(['_', '.', '-']));
        if ours {
            let _ = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(entry.path()),
                _ => std::fs::remove_file(entry.path()),
            };
        }
    }
}
