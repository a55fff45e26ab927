//! The runs on this machine: each run's directory (`$TMPDIR/ipcb<pid>x<token>`, a name nobody
//! can guess), locked for as long as its driver lives. The lock is the directory's marker: it
//! names the driver, tells a live run from one whose driver was killed before it could clean up
//! (whose leftovers the next run removes), and lets two runs at once see each other. A directory
//! is a run's only when its marker says so and its owner and mode are this user's and 0700: no
//! name alone, and nothing planted at any name, decides what a run uses or removes.

use std::fs::File;
use std::io::{Read, Write};
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
/// The random part of a run's name (`x` and 6 of `[a-z0-9]`, 31 bits).
const TOKEN: usize = 6;
/// The marker inside a run's directory: its lock, holding its driver's pid.
const LOCK: &str = "lock";

/// This run's directory of sockets and files, and the lock that says it is alive; removed when
/// the run ends, however it ends (a SIGKILL aside: then the next run removes it). Its name is
/// also the tag every name of its trials' objects starts with.
pub struct RunDir {
    pub path: PathBuf,
    pub tag: String,
    _lock: File,
}

impl RunDir {
    /// Made new under `$TMPDIR`, mode 0700, by this user, at a name nobody can guess: never one
    /// that is there already (a taken name, whatever is there, is passed over), never through a
    /// symlink.
    pub fn create() -> Result<RunDir> {
        let tmp = std::env::temp_dir();
        let pid = std::process::id();
        let name = |token: &str| format!("ipcb{pid}x{token}");
        // Short: a Unix socket's path must fit in 108 bytes. A trial's sockets are
        // `<this>/t<N>/<trial name>...`: refused here, not trial by trial.
        let longest = tmp.join(name(&"x".repeat(TOKEN))).as_os_str().len() + LONGEST_SOCKET_TAIL;
        if longest > SUN_PATH {
            anyhow::bail!(
                "the run's sockets would have paths of up to {longest} bytes under {}, and a Unix socket's \
                 path holds at most {SUN_PATH}: set TMPDIR to a shorter folder (such as /tmp)",
                tmp.display()
            );
        }
        let made = crate::unpredictable::make_new(
            TOKEN,
            |t| tmp.join(name(t)),
            |path| std::fs::DirBuilder::new().mode(0o700).create(path),
        )?;
        let Some((path, created)) = made else {
            anyhow::bail!(
                "{} names of the form {}/ipcb{pid}x<random> were all taken: something is planting names \
                 there; set TMPDIR to a folder of your own",
                crate::unpredictable::ATTEMPTS,
                tmp.display()
            )
        };
        created.map_err(|e| cannot_create(&tmp, &path, e))?;
        // Removed again if what follows fails.
        let made = Made(Some(path.clone()));
        // The mode asked for may have been narrowed by the umask, never widened; make it exact.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("setting the mode of {}", path.display()))?;
        let mut lock = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path.join(LOCK))
            .map_err(|e| cannot_create(&tmp, &path.join(LOCK), e))?;
        // SAFETY: flock on a descriptor we own; it is released when the process ends.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            anyhow::bail!("locking {}: {}", path.display(), std::io::Error::last_os_error());
        }
        writeln!(lock, "{pid}").and_then(|()| lock.sync_all()).map_err(|e| cannot_create(&tmp, &path, e))?;
        made.keep();
        // Its name, all ours and ASCII, is the run's tag.
        let tag = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(RunDir { path, tag, _lock: lock })
    }
}

/// A run directory being made, removed unless kept.
struct Made(Option<PathBuf>);

impl Made {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for Made {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// Why the run's directory (or its marker) could not be made under `tmp`, with what to do: the
/// error says whether `TMPDIR` is missing, not a folder, not this user's to write, or full.
fn cannot_create(tmp: &Path, what: &Path, e: std::io::Error) -> anyhow::Error {
    let set = std::env::var_os("TMPDIR").is_some_and(|t| !t.is_empty());
    let named = if set { format!("TMPDIR ({})", tmp.display()) } else { tmp.display().to_string() };
    let place = "where a run makes its directory";
    match e.raw_os_error() {
        Some(libc::ENOENT) => anyhow::anyhow!(
            "{named}, {place}, cannot be read: {e}; create it, or set TMPDIR to a folder that is there"
        ),
        Some(libc::ENOTDIR) => anyhow::anyhow!("{named}, {place}, is not a folder: set TMPDIR to one"),
        Some(libc::EACCES | libc::EPERM | libc::EROFS) => anyhow::anyhow!(
            "{named}, {place}, is not writable by this user: set TMPDIR to a folder of your own"
        ),
        Some(libc::ENOSPC | libc::EDQUOT) => anyhow::anyhow!(
            "creating this run's directory {}: {e}: {} has {} free: make room there, or set TMPDIR to another \
             folder",
            what.display(),
            tmp.display(),
            crate::machine::free_space(tmp).map_or_else(|| "an unknown amount".into(), crate::format::bytes)
        ),
        _ => anyhow::anyhow!(
            "creating this run's directory {}: {e}: set TMPDIR to another folder",
            what.display()
        ),
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A run's directory found by its marker, and whether its driver still holds the lock.
struct Found {
    pid: u32,
    path: PathBuf,
    alive: bool,
}

impl Found {
    /// `path` as a run's directory of this user (`uid`): a directory, not a symlink, this user's,
    /// mode 0700, whose marker (a regular file of this user's, never followed) names the pid its
    /// name starts with. Anything else is nobody's run directory, and is never touched.
    fn at(path: &Path, uid: u32) -> Option<Found> {
        let name = path.file_name()?.to_str()?;
        let named = name.strip_prefix("ipcb")?.split_once('x')?.0.parse::<u32>().ok()?;
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o7777 != 0o700 {
            return None;
        }
        let mut lock = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(path.join(LOCK))
            .ok()?;
        let marker = lock.metadata().ok()?;
        if !marker.is_file() || marker.uid() != uid || marker.len() > 32 {
            return None;
        }
        let mut text = String::new();
        lock.read_to_string(&mut text).ok()?;
        let pid = text.trim().parse::<u32>().ok().filter(|p| *p == named)?;
        // SAFETY: flock on a descriptor we own, released when it closes.
        let alive = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } != 0;
        Some(Found { pid, path: path.to_path_buf(), alive })
    }
}

/// The run directories of this user on this machine, this run's own among them (alive: its
/// lock is held). Another user's runs are theirs: their directories are not readable here.
fn runs() -> Vec<Found> {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return Vec::new() };
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let mut found: Vec<Found> = entries
        .flatten()
        .filter(|e| e.file_name().as_encoded_bytes().starts_with(b"ipcb"))
        .filter_map(|e| Found::at(&e.path(), uid))
        .collect();
    found.sort_by_key(|f| f.pid);
    found
}

/// The pids of this user's other runs alive on this machine now.
pub fn live_others() -> Vec<u32> {
    let me = std::process::id();
    runs().into_iter().filter(|f| f.alive && f.pid != me).map(|f| f.pid).collect()
}

/// What one run killed before it could clean up left, as `remove_stale` removed it.
pub struct Stale {
    pub pid: u32,
    /// Each object removed: `/dev/shm/...`, a POSIX queue's name, the run's directory.
    pub removed: Vec<String>,
}

/// Removes what runs of this user whose driver died without cleaning up left: for each trial
/// folder (`t<N>`), exactly what its manifest names, then the run's directory. Only directories
/// their marker shows are runs' (`Found::at`): another user's are theirs to clean.
pub fn remove_stale() -> Vec<Stale> {
    let mut stale = Vec::new();
    for f in runs().into_iter().filter(|f| !f.alive) {
        // The run's tag is its directory's name.
        let Some(tag) = f.path.file_name().and_then(|n| n.to_str()).map(String::from) else { continue };
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
                    let own = format!("{tag}t");
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
