//! ipcbench adapter for FIFOs (named pipes, `mkfifo`), one of ipc-bench's primitives: a pipe
//! that two unrelated processes open by name. Messages are the case's fixed size, so the byte
//! stream is framed by size alone: a send writes the whole message, a receive reads exactly that
//! many bytes; the writer's close is the reader's end of file.
//!
//! The accepting side (receiver, echo) makes `<dir>/<name>.forth` (and `<name>.back` for a round
//! trip) with `mkfifo`. Each side starts opening what it reads (a blocking open, on a thread of
//! its own, which returns once a writer opens the other end), then opens what it writes
//! (`O_WRONLY | O_NONBLOCK`, retried while no reader is there, `ENXIO`, then made blocking), then
//! waits for its read end: neither side can block the other for ever, and set-up gives up after
//! the set-up timeout.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use ipcbench_api::{
    Capabilities, Library, LibraryInfo, Opened, Pair, Received, RecvMode, Requests, Rx, Setup, Shape, Side,
    Support, Tx, Unsupported,
};

/// FIFOs.
pub struct Fifo;

/// A stream side: the FIFO it writes, the FIFO it reads.
pub type Channel = Pair<Writer, Reader, ()>;

impl Library for Fifo {
    type Stream = Channel;
    type Publisher = Unsupported;
    type Subscriber = Unsupported;
    type Producer = Unsupported;
    type Consumer = Unsupported;
    type Client = Unsupported;
    type Server = Unsupported;

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "fifo",
            name: "FIFOs (named pipes)",
            version: format!("Linux {}", kernel_release()),
            modes: &[RecvMode::Waiting],
            capabilities: Capabilities {
                stream: Support::Yes("one FIFO; fixed-size messages written whole and read whole"),
                round_trip: Support::Yes("two FIFOs, one each way"),
                broadcast_lossless: Support::No("a FIFO's bytes go to one reader; nothing sends to many"),
                broadcast_lossy: Support::No("a FIFO's bytes go to one reader; nothing sends to many"),
                queue: Support::No(
                    "readers sharing a FIFO split its bytes, not its messages: no message goes whole to one",
                ),
                service: Support::No("a FIFO has no clients: it is one byte stream, with no way to reply"),
                batch: Support::No("no call moves several messages as separate messages on a byte stream"),
            },
            requests: Requests::ToOneServer,
            configuration: vec![
                ("pipe buffer (bytes)", default_pipe_size()),
                ("framing", "fixed-size messages of the case's size, no length prefix".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Channel>> {
        if setup.mode != RecvMode::Waiting {
            bail!("FIFOs are measured only with blocking reads (waiting), not {}", setup.mode);
        }
        let round_trip = match setup.shape {
            Shape::Stream => false,
            Shape::RoundTrip => true,
            other => bail!("a stream endpoint was asked for {other:?}"),
        };
        let forth = setup.dir.join(format!("{}.forth", setup.name));
        let back = setup.dir.join(format!("{}.back", setup.name));
        if side == Side::Accept {
            make_fifo(&forth)?;
            if round_trip {
                make_fifo(&back)?;
            }
        }
        let (reads, writes) = match (side, round_trip) {
            (Side::Accept, false) => (Some(forth), None),
            (Side::Connect, false) => (None, Some(forth)),
            (Side::Accept, true) => (Some(forth), Some(back)),
            (Side::Connect, true) => (Some(back), Some(forth)),
        };
        let deadline = Instant::now() + setup.timeout;
        let reading = reads.map(|path| open_reader(path, deadline));
        let tx = match writes {
            Some(path) => Some(Writer { file: open_writer(&path, deadline)?, path }),
            None => None,
        };
        let rx = match reading {
            Some(reading) => Some(reading.finish()?),
            None => None,
        };
        Ok(Opened::new(Pair { tx, rx, keep: () }))
    }
}

fn make_fifo(path: &Path) -> Result<()> {
    let c =
        CString::new(path.as_os_str().as_bytes()).map_err(|_| anyhow!("{} holds a NUL", path.display()))?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        bail!("mkfifo {}: {}", path.display(), io::Error::last_os_error());
    }
    Ok(())
}

/// A read end being opened on a thread of its own (a blocking open waits for a writer).
struct Reading {
    path: PathBuf,
    deadline: Instant,
    done: mpsc::Receiver<io::Result<File>>,
}

fn open_reader(path: PathBuf, deadline: Instant) -> Reading {
    let (tx, done) = mpsc::channel();
    let p = path.clone();
    std::thread::spawn(move || {
        // The accepting side may not have made it yet.
        while !p.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = tx.send(File::open(&p));
    });
    Reading { path, deadline, done }
}

impl Reading {
    fn finish(self) -> Result<Reader> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        match self.done.recv_timeout(left) {
            Ok(Ok(file)) => Ok(Reader { file, path: self.path }),
            Ok(Err(e)) => bail!("opening {} to read: {e}", self.path.display()),
            Err(_) => bail!("no writer opened {} in time", self.path.display()),
        }
    }
}

/// Opens the write end once a reader is there, then makes it blocking.
fn open_writer(path: &Path, deadline: Instant) -> Result<File> {
    let c =
        CString::new(path.as_os_str().as_bytes()).map_err(|_| anyhow!("{} holds a NUL", path.display()))?;
    loop {
        // SAFETY: a NUL-terminated path; the fd, if any, is owned by the File below.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC) };
        if fd >= 0 {
            // SAFETY: `fd` was just opened and is owned by nobody else.
            let file = unsafe { File::from_raw_fd(fd) };
            // SAFETY: fcntl on an fd this process owns.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
                bail!("making {} blocking: {}", path.display(), io::Error::last_os_error());
            }
            return Ok(file);
        }
        let e = io::Error::last_os_error();
        let waiting = matches!(e.raw_os_error(), Some(libc::ENXIO) | Some(libc::ENOENT) | Some(libc::EINTR));
        if !waiting {
            bail!("opening {} to write: {e}", path.display());
        }
        if Instant::now() >= deadline {
            bail!("no reader opened {} in time (last attempt: {e})", path.display());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The write end of a FIFO.
pub struct Writer {
    file: File,
    path: PathBuf,
}

impl Tx for Writer {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        // write_all retries partial writes and EINTR.
        self.file.write_all(message).map_err(|e| anyhow!("write to {}: {e}", self.path.display()))
    }
}

/// The read end of a FIFO.
pub struct Reader {
    file: File,
    path: PathBuf,
}

impl Rx for Reader {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        let mut got = 0;
        while got < buf.len() {
            match self.file.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return Ok(Received::Closed),
                Ok(0) => bail!(
                    "{} ended inside a message: {got} of its {} bytes arrived",
                    self.path.display(),
                    buf.len()
                ),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => bail!("read from {}: {e}", self.path.display()),
            }
        }
        Ok(Received::Message(got))
    }
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// The kernel's default pipe buffer, read from a fresh pipe.
fn default_pipe_size() -> String {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return "unknown".into();
    }
    // SAFETY: the descriptors were just made and are closed once, here.
    let size = unsafe { libc::fcntl(fds[0], libc::F_GETPIPE_SZ) };
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    if size > 0 { size.to_string() } else { "unknown".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_carries_whole_messages_and_ends() {
        let dir = std::env::temp_dir().join(format!("ipcbench-fifo-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let setup = Setup {
            name: "t",
            dir: &dir,
            size: 16,
            shape: Shape::Stream,
            index: 0,
            mode: RecvMode::Waiting,
            timeout: Duration::from_secs(5),
            batch: 1,
        };
        let receiver = std::thread::scope(|s| {
            let r = s.spawn(|| Fifo::stream(&setup, Side::Accept).map(|o| o.endpoint));
            let mut tx = Fifo::stream(&setup, Side::Connect).unwrap().endpoint;
            let mut rx = r.join().unwrap().unwrap();
            for i in 0..100u64 {
                tx.send(&i.to_le_bytes().repeat(2)).unwrap();
            }
            drop(tx);
            let mut buf = [0u8; 16];
            for i in 0..100u64 {
                assert_eq!(rx.recv(&mut buf).unwrap(), Received::Message(16));
                assert_eq!(buf[..8], i.to_le_bytes());
            }
            assert_eq!(rx.recv(&mut buf).unwrap(), Received::Closed);
            rx
        });
        drop(receiver);
        // No writer comes: set-up gives up with the path.
        let lonely = Setup { name: "u", timeout: Duration::from_millis(100), ..setup };
        let e = Fifo::stream(&lonely, Side::Accept).err().unwrap().to_string();
        assert!(e.contains("u.forth") && e.contains("no writer"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
