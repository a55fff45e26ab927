//! The results file on disk: read (only a regular file, and only so much of it), written whole
//! or not at all, its name reserved so that two runs never share one, and locked for as long as
//! the run that writes it lives. A file named `*.json.gz` is gzip's: read and written through it,
//! so a results folder may keep its files compressed.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};

use super::{Document, Names, SCHEMA_VERSION};
use crate::matrix::Pattern;

/// The most of a file `load` reads: ten times the largest results file a default run and sweep
/// write here (9 MB and 4.5 MB), and far less than would exhaust memory.
pub const LARGEST: u64 = 256 << 20;

/// Reads a results file (`.json`, or `.json.gz` compressed); what is not a regular file (a FIFO,
/// a device), a file larger than `LARGEST` (read or unpacked), a file cut short, another schema
/// version or another kind of file is refused with what it is.
pub fn load(path: &Path) -> Result<Document> {
    let text = read_text(path)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow!("{} is not JSON ({e}): a results file that was cut short or edited by hand?", path.display())
    })?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        None => bail!("{} has no schema_version: it is not an ipcbench results file", path.display()),
        Some(v) if v != u64::from(SCHEMA_VERSION) => bail!(
            "{} has schema version {v}; this ipcbench reads version {SCHEMA_VERSION} (use the ipcbench that wrote it)",
            path.display()
        ),
        Some(_) => {}
    }
    let doc: Document =
        serde_json::from_value(value).map_err(|e| anyhow!("{} is corrupt: {e}", path.display()))?;
    // A case's params must make a case: the report reads it from them.
    for r in &doc.results {
        if let Some(p) = &r.params {
            p.case(&r.case, r.size, r.batch, r.transfer)
                .map_err(|e| anyhow!("{} is corrupt: case {e}", path.display()))?;
        }
    }
    Ok(doc)
}

/// The text of a results file, unpacked when it is gzip's, checked as `load` says.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = read_capped(path)?;
    let bytes = if gzipped(path) { gunzip(path, bytes)? } else { bytes };
    String::from_utf8(bytes)
        .map_err(|_| anyhow!("{} is not text: it is not an ipcbench results file", path.display()))
}

/// Whether `path` names a compressed results file (`*.gz`).
fn gzipped(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// Whether `path` names a results file by its name: `*.json` or `*.json.gz`.
pub fn named_as_results(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// `path` without `.json` or `.json.gz`: the name of what is made from it (its report's folder).
pub fn stem(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match name.strip_suffix(".json.gz").or_else(|| name.strip_suffix(".json")) {
        Some(stem) => path.with_file_name(stem),
        None => path.with_extension(""),
    }
}

/// The bytes gzip's `packed` holds, at most `LARGEST` of them.
fn gunzip(path: &Path, packed: Vec<u8>) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(&packed[..]).take(LARGEST + 1).read_to_end(&mut bytes).map_err(|e| {
        anyhow!(
            "{} is not gzip's ({e}): name a results file .json.gz only when it is compressed",
            path.display()
        )
    })?;
    if bytes.len() as u64 > LARGEST {
        bail!(
            "{} unpacks to more than {} MiB, more than any results file: it is not one",
            path.display(),
            LARGEST >> 20
        );
    }
    Ok(bytes)
}

/// The bytes of `path`, a regular file (a symlink to one is followed) of at most `LARGEST` bytes.
fn read_capped(path: &Path) -> Result<Vec<u8>> {
    // Opened without blocking: a FIFO with no writer would otherwise hang here.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let meta = file.metadata().with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        bail!(
            "{} is not a regular file ({}): give a results file written by ipcbench run",
            path.display(),
            kind(&meta)
        );
    }
    let mut bytes = Vec::new();
    file.take(LARGEST + 1).read_to_end(&mut bytes).with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > LARGEST {
        bail!(
            "{} is larger than {} MiB, more than any results file: it is not one (or give a smaller one)",
            path.display(),
            LARGEST >> 20
        );
    }
    Ok(bytes)
}

fn kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    match () {
        _ if t.is_dir() => "a directory",
        _ if t.is_fifo() => "a FIFO",
        _ if t.is_char_device() => "a character device",
        _ if t.is_block_device() => "a block device",
        _ if t.is_socket() => "a socket",
        _ => "not a file",
    }
}

/// Writes the document to `path` so that a reader (or a crash, or a SIGKILL) only ever sees a
/// whole file: write a sibling of this process's own, flush it to disk, rename it over, flush
/// the folder. When it cannot (the folder is full), the file stays as it was, the sibling is
/// removed, and the error names the folder and its free space. A `.json.gz` is written
/// compressed (a resumed run's file stays as it was kept). Each result's figures are written
/// under the names `names` gives its pattern (`named`).
pub fn write_atomically(doc: &Document, path: &Path, names: impl Fn(Pattern) -> Names) -> Result<()> {
    // Compact: a full run's file is a third smaller than indented, and `jq .` indents it.
    let mut text = super::named::to_vec(doc, names)?;
    text.push(b'\n');
    if gzipped(path) {
        let mut packed = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        packed.write_all(&text)?;
        text = packed.finish()?;
    }
    let (tmp, file) = temporary_copy(path)?;
    let written = file.and_then(|mut f| {
        f.write_all(&text)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        let dir = folder(path);
        return Err(anyhow!(
            "writing the results to {}: {e}; {} has {} free, the file needs about {}; {} is as it was last written",
            tmp.display(),
            dir.display(),
            crate::machine::free_space(dir).map_or_else(|| "an unknown amount".into(), crate::format::bytes),
            crate::format::bytes(text.len() as u64),
            path.display()
        ));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()));
    }
    File::open(folder(path))
        .and_then(|d| d.sync_all())
        .with_context(|| format!("flushing {}", folder(path).display()))
}

/// A new file beside `path` for its next copy, at a name nobody can guess (`<name>.tmp<token>`),
/// made exclusively and never through a symlink: whatever is planted beside a results file is
/// never written through or over. Its path, and the file or why it could not be made.
fn temporary_copy(path: &Path) -> Result<(PathBuf, std::io::Result<File>)> {
    let name = path.file_name().and_then(|n| n.to_str()).context("a results file's name")?;
    let made = crate::unpredictable::make_new(
        8,
        |t| folder(path).join(format!("{name}.tmp{t}")),
        |tmp| {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(tmp)
        },
    )?;
    made.with_context(|| {
        format!(
            "{} names of the form {}.tmp<random> were all taken: something is planting names there",
            crate::unpredictable::ATTEMPTS,
            path.display()
        )
    })
}

fn folder(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// The partial copies of `path` that writers killed mid-write left beside it.
pub fn remove_partial_copies(path: &Path) {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return };
    let prefix = format!("{name}.tmp");
    if let Ok(entries) = fs::read_dir(folder(path)) {
        for e in entries.flatten() {
            if e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix)) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// A new results file's name in `dir`, `<stem>.json` or, when that is taken, `<stem>-2.json`
/// and so on, made exclusively (`O_EXCL`): two runs started in the same second into one folder
/// get two files, never one.
pub fn reserve(dir: &Path, stem: &str) -> Result<PathBuf> {
    for n in 1..10_000 {
        let path = dir.join(if n == 1 { format!("{stem}.json") } else { format!("{stem}-{n}.json") });
        match OpenOptions::new().write(true).create_new(true).mode(0o644).open(&path) {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating the results file {}", path.display())),
        }
    }
    bail!("{} holds 10000 results files named {stem}*: choose another --out", dir.display())
}

/// The lock of a results file (`.<name>.lock` beside it), held by the run that writes it for as
/// long as it lives: a second driver (`--resume` of a file still being written) is refused, and
/// a killed driver's lock is free again at once. Removed when the run ends.
pub struct Lock {
    path: PathBuf,
    _file: File,
}

impl Lock {
    pub fn take(results: &Path) -> Result<Lock> {
        let name = results.file_name().and_then(|n| n.to_str()).context("a results file's name")?;
        let path = folder(results).join(format!(".{name}.lock"));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .with_context(|| format!("opening the lock {}", path.display()))?;
        // SAFETY: flock on a descriptor we own; released when it closes or the process ends.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            bail!(
                "{} is being written by a run that is still alive (pid {}): let it finish, or stop it \
                 (Ctrl-C or SIGTERM), then resume",
                results.display(),
                holder.trim()
            );
        }
        file.set_len(0)?;
        write!(file, "{}", std::process::id())?;
        Ok(Lock { path, _file: file })
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ipcbench-file-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Two runs started in the same second into one folder get two files; a file already
    /// there is never taken.
    #[test]
    fn a_name_is_reserved_once() {
        let dir = scratch("reserve");
        fs::write(dir.join("run-x.json"), "theirs").unwrap();
        let a = reserve(&dir, "run-x").unwrap();
        let b = reserve(&dir, "run-x").unwrap();
        assert_eq!(
            (a.file_name().unwrap(), b.file_name().unwrap()),
            ("run-x-2.json".as_ref(), "run-x-3.json".as_ref())
        );
        assert_eq!(fs::read_to_string(dir.join("run-x.json")).unwrap(), "theirs");
        let _ = fs::remove_dir_all(&dir);
    }

    /// A results file is locked once: a second taker (another driver, or a resume) is refused
    /// with the holder's pid; the lock is gone when its run ends, and a symlink is never followed.
    #[test]
    fn a_results_file_is_locked_by_one_run_at_a_time() {
        let dir = scratch("lock");
        let file = dir.join("run-y.json");
        let held = Lock::take(&file).unwrap();
        let again = Lock::take(&file).err().expect("a second lock is refused").to_string();
        assert!(again.contains(&format!("still alive (pid {})", std::process::id())), "{again}");
        drop(held);
        assert!(!dir.join(".run-y.json.lock").exists(), "the lock goes with its run");
        drop(Lock::take(&file).unwrap());
        std::os::unix::fs::symlink("/nonexistent-target", dir.join(".run-z.json.lock")).unwrap();
        let through = Lock::take(&dir.join("run-z.json")).err().expect("a symlinked lock is refused");
        assert!(format!("{through:#}").contains("opening the lock"), "{through:#}");
        let _ = fs::remove_dir_all(&dir);
    }

    /// A `.json.gz` is read and written through gzip, whole like any results file; a file so
    /// named that is not gzip's is refused, and the report of one is named without both suffixes.
    #[test]
    fn a_compressed_results_file_reads_and_writes_as_a_plain_one() {
        let dir = scratch("gz");
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-2026-12-02T16-28-14Z.json");
        let doc = load(&data).unwrap();
        let packed = dir.join("run-p.json.gz");
        write_atomically(&doc, &packed, |_| &[]).unwrap();
        let bytes = fs::read(&packed).unwrap();
        assert_eq!(bytes[..2], [0x1f, 0x8b], "not gzip's magic");
        assert!(bytes.len() < fs::metadata(&data).unwrap().len() as usize / 2, "{} bytes", bytes.len());
        let back = load(&packed).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&doc).unwrap());
        assert_eq!(read_text(&packed).unwrap(), serde_json::to_string(&doc).unwrap() + "\n");
        let names: Vec<_> = fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["run-p.json.gz"], "a partial copy stayed");
        let fake = dir.join("fake.json.gz");
        fs::copy(&data, &fake).unwrap();
        let e = load(&fake).unwrap_err().to_string();
        assert!(e.contains("is not gzip's"), "{e}");
        assert!(named_as_results(&packed) && named_as_results(&data) && !named_as_results(&dir.join("a.gz")));
        assert_eq!(stem(&packed), dir.join("run-p"));
        assert_eq!(stem(Path::new("r/run-q.json")), Path::new("r/run-q"));
        let _ = fs::remove_dir_all(&dir);
    }

    /// A result whose params make no case is refused with the case named: the report would
    /// read the case from them.
    #[test]
    fn params_that_make_no_case_refuse_the_file() {
        let dir = scratch("params");
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-2026-12-02T16-28-14Z.json");
        let mut doc = load(&data).unwrap();
        let r = &mut doc.results[0];
        r.params = Some(serde_json::from_str(r#"{"shape":"broadcast","lossy":false}"#).unwrap());
        let case = r.case.clone();
        let bad = dir.join("run-bad.json");
        write_atomically(&doc, &bad, |_| &[]).unwrap();
        let e = load(&bad).unwrap_err().to_string();
        assert!(e.contains(&format!("is corrupt: case {case}: its params have no subscribers")), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }

    /// What is not a regular file is refused at once (a FIFO with no writer would hang a read),
    /// and a file larger than any results file is not read whole.
    #[test]
    fn only_a_regular_file_of_a_bounded_size_is_read() {
        let dir = scratch("read");
        let fifo = dir.join("fifo.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = load(&fifo).unwrap_err().to_string();
        assert!(e.contains("is not a regular file (a FIFO)"), "{e}");
        let e = load(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("(a character device)"), "{e}");
        let big = dir.join("big.json");
        File::create(&big).unwrap().set_len(LARGEST + 1).unwrap();
        let e = load(&big).unwrap_err().to_string();
        assert!(e.contains("is larger than 256 MiB"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }
}
