//! ipcbench adapters for pipes and FIFOs, two of ipc-bench's primitives, sharing their framing:
//! messages are the case's fixed size, so the byte stream is framed by size alone (a send writes
//! the whole message, a receive reads exactly that many bytes) and the writer's close is the
//! reader's end of file.
//!
//! `Fifo` (named pipes, `mkfifo`): a pipe that two unrelated processes open by name.
//!
//! The accepting side (receiver, echo) makes `<dir>/<name>.forth` (and `<name>.back` for a round
//! trip) with `mkfifo`. Each side starts opening what it reads (a blocking open, on a thread of
//! its own, which returns once a writer opens the other end), then opens what it writes
//! (`O_WRONLY | O_NONBLOCK`, retried while no reader is there, `ENXIO`, then made blocking), then
//! waits for its read end: neither side can block the other for ever, and set-up gives up after
//! the set-up timeout.
//!
//! Two receive modes: waiting, a blocking `read`; polling, the read end made `O_NONBLOCK` (its
//! own open file description: the writer's stays blocking) and `read` called again until a
//! message is there.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Opened, Pair, Received, RecvMode, Requests, Rx, Setup, Side,
    Support, Tx, Unsupported, retry_until,
};

/// Both: a blocking `read`, and a non-blocking one called again.
const MODES: &[RecvMode] = &RecvMode::ALL;

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
        info(
            "fifo",
            "FIFOs (named pipes)",
            Support::Yes("one FIFO; fixed-size messages written whole and read whole"),
            Support::Yes("two FIFOs, one each way"),
            None,
        )
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Channel>> {
        let round_trip = check(setup)?;
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
        let reading = reads.map(|path| open_reader(path, deadline)).transpose()?;
        let tx = match writes {
            Some(path) => Some(Writer { file: open_writer(&path, deadline)?, path }),
            None => None,
        };
        let rx = match reading {
            Some(reading) => Some(reading.finish()?.polling(setup.mode)?),
            None => None,
        };
        sized(Pair { tx, rx, keep: () }, setup)
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

fn open_reader(path: PathBuf, deadline: Instant) -> Result<Reading> {
    let (tx, done) = mpsc::channel();
    let p = path.clone();
    std::thread::Builder::new()
        .spawn(move || {
            // The accepting side may not have made it yet.
            while !p.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = tx.send(File::open(&p));
        })
        .with_context(|| format!("starting a thread to open {}", path.display()))?;
    Ok(Reading { path, deadline, done })
}

impl Reading {
    fn finish(self) -> Result<Reader> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        match self.done.recv_timeout(left) {
            Ok(Ok(file)) => Ok(Reader { file, path: self.path, polling: false }),
            Ok(Err(e)) => bail!("opening {} to read: {e}", self.path.display()),
            Err(_) => bail!("no writer opened {} in time", self.path.display()),
        }
    }
}

/// Opens the write end once a reader is there, then makes it blocking.
fn open_writer(path: &Path, deadline: Instant) -> Result<File> {
    let c =
        CString::new(path.as_os_str().as_bytes()).map_err(|_| anyhow!("{} holds a NUL", path.display()))?;
    let attempt = || {
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
            return Ok(Ok(file));
        }
        let e = io::Error::last_os_error();
        let waiting = matches!(e.raw_os_error(), Some(libc::ENXIO) | Some(libc::ENOENT) | Some(libc::EINTR));
        if !waiting {
            bail!("opening {} to write: {e}", path.display());
        }
        Ok(Err(e))
    };
    retry_until(deadline, Duration::from_millis(1), attempt, |e| {
        anyhow!("no reader opened {} in time (last attempt: {e})", path.display())
    })
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

/// The read end of a pipe or FIFO.
pub struct Reader {
    file: File,
    path: PathBuf,
    /// `O_NONBLOCK`: a read with nothing there is `Empty`.
    polling: bool,
}

impl Reader {
    /// In polling mode, makes the read end `O_NONBLOCK`.
    fn polling(mut self, mode: RecvMode) -> Result<Reader> {
        if mode == RecvMode::Polling {
            let fd = self.file.as_raw_fd();
            // SAFETY: fcntl on an fd this process owns.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
                bail!("making {} non-blocking: {}", self.path.display(), io::Error::last_os_error());
            }
            self.polling = true;
        }
        Ok(self)
    }
}

impl Rx for Reader {
    /// Reads exactly one message; polling, `Empty` when no byte of one was there (once one has
    /// begun, its rest is read again until it is whole).
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
                Err(e) if self.polling && e.kind() == io::ErrorKind::WouldBlock => {
                    if got == 0 {
                        return Ok(Received::Empty);
                    }
                }
                Err(e) => bail!("read from {}: {e}", self.path.display()),
            }
        }
        Ok(Received::Message(got))
    }
}

/// Anonymous pipes (`pipe2`). The harness's processes are not parent and child, so the
/// accepting side makes the pipe(s) and names its own descriptors in `<dir>/<name>.pipe` ("pid
/// fd fd"); the connecting side opens the ends it needs through `/proc/<pid>/fd/<fd>` (the same
/// pipe, a new open file description) and says so by making `<dir>/<name>.pipe-open`; then the
/// accepting side closes its copies of those ends, so that the writer's close is the reader's end
/// of file.
pub struct Pipe;

impl Library for Pipe {
    type Stream = Channel;
    type Publisher = Unsupported;
    type Subscriber = Unsupported;
    type Producer = Unsupported;
    type Consumer = Unsupported;
    type Client = Unsupported;
    type Server = Unsupported;

    fn info() -> LibraryInfo {
        info(
            "pipe",
            "pipes",
            Support::Yes("one pipe; fixed-size messages written whole and read whole"),
            Support::Yes("two pipes, one each way"),
            Some(("rendezvous", "the other side opens /proc/<pid>/fd/<fd> of the pipe's maker".into())),
        )
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Channel>> {
        let round_trip = check(setup)?;
        let names = setup.dir.join(format!("{}.pipe", setup.name));
        let opened = setup.dir.join(format!("{}.pipe-open", setup.name));
        let deadline = Instant::now() + setup.timeout;
        match side {
            Side::Accept => {
                // forth: the connecting side writes, this side reads; back: the other way.
                let (forth_r, forth_w) = pipe()?;
                let back = if round_trip { Some(pipe()?) } else { None };
                let theirs = [Some(forth_w.as_raw_fd()), back.as_ref().map(|(r, _)| r.as_raw_fd())];
                let line: Vec<String> = std::iter::once(std::process::id() as i32)
                    .chain(theirs.into_iter().flatten())
                    .map(|n| n.to_string())
                    .collect();
                let partial = names.with_extension("partial");
                std::fs::write(&partial, line.join(" "))?;
                std::fs::rename(&partial, &names)?;
                let came = || Ok(if opened.exists() { Ok(()) } else { Err(()) });
                retry_until(deadline, Duration::from_millis(1), came, |()| {
                    anyhow!("nobody opened the pipes named in {} within {:?}", names.display(), setup.timeout)
                })?;
                // Their ends are theirs now: drop this side's copies.
                drop(forth_w);
                let tx = back.map(|(r, w)| {
                    drop(r);
                    Writer { file: w, path: names.clone() }
                });
                let rx = Reader { file: forth_r, path: names, polling: false }.polling(setup.mode)?;
                sized(Pair { tx, rx: Some(rx), keep: () }, setup)
            }
            Side::Connect => {
                let line = retry_until(
                    deadline,
                    Duration::from_millis(1),
                    || Ok(std::fs::read_to_string(&names)),
                    |e| anyhow!("no pipes named in {} within {:?}: {e}", names.display(), setup.timeout),
                )?;
                let numbers: Vec<i32> =
                    line.split(' ').map(str::parse).collect::<Result<_, _>>().map_err(|_| {
                        anyhow!("{} holds {line:?}, not a pid and descriptors", names.display())
                    })?;
                let (pid, fds) =
                    numbers.split_first().ok_or_else(|| anyhow!("{} is empty", names.display()))?;
                let end = |fd: i32, write: bool| -> Result<File> {
                    let path = format!("/proc/{pid}/fd/{fd}");
                    let file =
                        if write { File::options().write(true).open(&path) } else { File::open(&path) };
                    file.map_err(|e| anyhow!("opening {path} (a pipe of the other side): {e}"))
                };
                let tx = Writer { file: end(fds[0], true)?, path: names.clone() };
                let rx = match fds.get(1) {
                    Some(&fd) if round_trip => Some(
                        Reader { file: end(fd, false)?, path: names.clone(), polling: false }
                            .polling(setup.mode)?,
                    ),
                    _ => None,
                };
                File::create(&opened).map_err(|e| anyhow!("making {}: {e}", opened.display()))?;
                sized(Pair { tx: Some(tx), rx, keep: () }, setup)
            }
        }
    }
}

/// Where the system caps an unprivileged pipe's buffer.
const PIPE_MAX: &str = "/proc/sys/fs/pipe-max-size";

/// A stream side, its pipes sized to `--buffer` (`F_SETPIPE_SZ` on every end it holds, so that
/// whichever side reads it back sees the same) and what it holds read back (`F_GETPIPE_SZ`).
fn sized(pair: Channel, setup: &Setup) -> Result<Opened<Channel>> {
    let mut fds = Vec::new();
    fds.extend(pair.tx.as_ref().map(|w| (w.file.as_raw_fd(), &w.path)));
    fds.extend(pair.rx.as_ref().map(|r| (r.file.as_raw_fd(), &r.path)));
    if let Some(bytes) = setup.buffer {
        let asked = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        for (fd, path) in &fds {
            // SAFETY: fcntl on an fd this process owns.
            if unsafe { libc::fcntl(*fd, libc::F_SETPIPE_SZ, asked) } < 0 {
                let cap = std::fs::read_to_string(PIPE_MAX).unwrap_or_default();
                bail!(
                    "F_SETPIPE_SZ {bytes} on {}: {} (the system's cap, {PIPE_MAX}, is {})",
                    path.display(),
                    io::Error::last_os_error(),
                    cap.trim()
                );
            }
        }
    }
    let Some((fd, _)) = fds.first() else { bail!("a pipe end that neither reads nor writes") };
    // SAFETY: fcntl on an fd this process owns.
    let bytes = unsafe { libc::fcntl(*fd, libc::F_GETPIPE_SZ) }.max(0) as usize;
    let why = match setup.buffer {
        None => "the kernel's default".to_string(),
        Some(b) => format!("--buffer {b}, rounded up by the kernel to a power of two of pages"),
    };
    let buffer =
        Buffer::bytes(bytes, setup.size, format!("a pipe buffer of {bytes} bytes ({why}, read back)"));
    Ok(Opened::new(pair).buffered(buffer))
}

/// What pipes and FIFOs have, and lack, alike (a FIFO is a named pipe).
fn info(
    id: &'static str,
    name: &'static str,
    stream: Support,
    round_trip: Support,
    more: Option<(&'static str, String)>,
) -> LibraryInfo {
    let mut configuration = vec![
        ("pipe buffer (bytes)", default_pipe_size()),
        ("framing", "fixed-size messages of the case's size, no length prefix".into()),
        (
            "receive",
            "waiting: a blocking read; polling: the read end O_NONBLOCK, read again until a message is there"
                .into(),
        ),
    ];
    configuration.extend(more);
    LibraryInfo {
        id,
        name,
        kind: ipcbench_api::Kind::Pipe,
        version: ipcbench_api::linux_version(),
        modes: MODES,
        capabilities: Capabilities {
            stream,
            round_trip,
            broadcast_lossless: Support::No("a pipe's bytes go to one reader; nothing sends to many"),
            broadcast_lossy: Support::No("a pipe's bytes go to one reader; nothing sends to many"),
            queue: Support::No(
                "readers sharing a pipe split its bytes, not its messages: no message goes whole to one",
            ),
            service: Support::No("a pipe has no clients: it is one byte stream, with no way to reply"),
            batch: Support::No("no call moves several messages as separate messages on a byte stream"),
            loan: Support::No("the kernel copies every byte in and out of the pipe"),
            most_subscribers: None,
        },
        requests: Requests::ToOneServer,
        largest_message: None,
        configuration,
    }
}

/// A pipe: its read end and its write end, close-on-exec.
fn pipe() -> Result<(File, File)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        bail!("pipe2: {}", io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just made; each File owns one.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

/// A stream or a round trip: whether it is a round trip.
fn check(setup: &Setup) -> Result<bool> {
    setup.stream_or_round_trip()
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
    use ipcbench_api::Shape;
    use ipcbench_api::testing::{self, Scratch};

    /// A stream and a round trip over library `L` in each mode, both sides in this process. A
    /// write takes any length (the framing is the case's size): the contract's checks only.
    fn carries_whole_messages_and_ends<L: Library>(what: &str) {
        // A place each: a FIFO's or pipe's files are made once per name.
        testing::in_each_mode::<L>(&format!("{what}-stream"), Shape::Stream, |setup| {
            testing::stream_delivers::<L>(setup, 1000, || {});
        });
        testing::in_each_mode::<L>(&format!("{what}-rtt"), Shape::RoundTrip, |setup| {
            testing::round_trips::<L>(&Setup { size: 1024, ..*setup }, 200);
        });
        // Nobody comes: set-up gives up, naming the file.
        let place = Scratch::new(&format!("{what}-lonely"));
        let lonely = Setup { timeout: Duration::from_millis(100), ..place.setup(Shape::Stream) };
        let e = L::stream(&lonely, Side::Accept).err().unwrap().to_string();
        let name = &place.name;
        assert!(e.contains(&format!("{name}.forth")) || e.contains(&format!("{name}.pipe")), "{e}");
        assert_eq!(L::info().modes, &RecvMode::ALL);
    }

    /// Without `--buffer` a pipe holds the kernel's 64 KiB; with it, what was asked (a power of
    /// two of pages), both ends reading back the same.
    fn the_buffer_sizes_the_pipe<L: Library>(what: &str) {
        for (buffer, bytes) in [(None, 65536), (Some(256 << 10), 256 << 10), (Some(5000), 8192)] {
            let place = Scratch::new(&format!("{what}-buf-{bytes}"));
            let setup = Setup { buffer, ..place.setup(Shape::RoundTrip) };
            for b in testing::stream_buffers::<L>(&setup) {
                let b = b.unwrap();
                assert_eq!((b.bytes, b.messages), (Some(bytes), Some(bytes / 16)), "{}", b.how);
            }
        }
    }

    #[test]
    fn the_buffer_sizes_fifos_and_pipes() {
        the_buffer_sizes_the_pipe::<Fifo>("fifo");
        the_buffer_sizes_the_pipe::<Pipe>("pipe");
    }

    #[test]
    fn a_fifo_carries_whole_messages_and_ends() {
        carries_whole_messages_and_ends::<Fifo>("fifo");
    }

    #[test]
    fn a_pipe_carries_whole_messages_and_ends() {
        carries_whole_messages_and_ends::<Pipe>("pipe");
    }
}
