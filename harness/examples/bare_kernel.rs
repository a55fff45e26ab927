//! The kernel's channels with nothing around them: two processes (this one and a fork) moving
//! 16-byte messages over a Unix socket, a seqpacket socket, TCP loopback, pipes, FIFOs or POSIX
//! message queues, with blocking reads (waiting) or non-blocking reads spun on (polling). It is
//! what `scripts/bench-kernel.sh` holds the harness's figures against: no framing checks, no
//! adapter, no harness.
//!
//! `bare_kernel <uds|uds-seqpacket|tcp|pipe|fifo|posix-mq> <stream|rtt> <waiting|polling>`
//! prints the stream's rate or the round trip's p50 and p99, over 1 s after 0.3 s of warm-up.

use std::ffi::CString;
use std::io::Error;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{IntoRawFd, RawFd};

const SIZE: usize = 16;
const WARMUP_NS: u64 = 300_000_000;
const WINDOW_NS: u64 = 1_000_000_000;

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is valid for a write.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn fail(what: &str) -> ! {
    eprintln!("bare_kernel: {what}: {}", Error::last_os_error());
    std::process::exit(1)
}

/// How one process reaches the other: what it reads and what it writes.
#[derive(Clone, Copy)]
enum End {
    /// A socket, a pipe's or FIFO's ends: read fd, write fd.
    Fd { read: RawFd, write: RawFd, socket: bool },
    /// Two POSIX queues: the one it receives on, the one it sends on.
    Mq { read: libc::mqd_t, write: libc::mqd_t },
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on an open fd.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        fail("fcntl(O_NONBLOCK)");
    }
}

impl End {
    /// One whole message into `buf`; polling spins on `EAGAIN`.
    #[inline]
    fn recv(self, buf: &mut [u8; SIZE], polling: bool) {
        match self {
            End::Fd { read, socket, .. } => {
                let mut got = 0;
                while got < SIZE {
                    let rest = &mut buf[got..];
                    // SAFETY: `rest` is valid for writes of its length.
                    let n = unsafe {
                        if socket {
                            let flags = if polling { libc::MSG_DONTWAIT } else { 0 };
                            libc::recv(read, rest.as_mut_ptr().cast(), rest.len(), flags)
                        } else {
                            libc::read(read, rest.as_mut_ptr().cast(), rest.len())
                        }
                    };
                    if n > 0 {
                        got += n as usize;
                    } else if n == 0 {
                        std::process::exit(0);
                    } else if Error::last_os_error().raw_os_error() != Some(libc::EAGAIN) {
                        fail("read");
                    }
                }
            }
            End::Mq { read, .. } => loop {
                // SAFETY: `buf` is valid for writes of SIZE bytes.
                let n =
                    unsafe { libc::mq_receive(read, buf.as_mut_ptr().cast(), SIZE, std::ptr::null_mut()) };
                if n == SIZE as isize {
                    return;
                }
                if Error::last_os_error().raw_os_error() != Some(libc::EAGAIN) {
                    fail("mq_receive");
                }
            },
        }
    }

    #[inline]
    fn send(self, buf: &[u8; SIZE]) {
        match self {
            End::Fd { write, .. } => {
                let mut done = 0;
                while done < SIZE {
                    // SAFETY: the rest of `buf` is valid for reads.
                    let n = unsafe { libc::write(write, buf[done..].as_ptr().cast(), SIZE - done) };
                    if n <= 0 {
                        // The reader is gone: this process's work is over.
                        std::process::exit(0);
                    }
                    done += n as usize;
                }
            }
            End::Mq { write, .. } => {
                // SAFETY: `buf` is valid for reads of SIZE bytes.
                if unsafe { libc::mq_send(write, buf.as_ptr().cast(), SIZE, 0) } != 0 {
                    std::process::exit(0);
                }
            }
        }
    }
}

fn socketpair(kind: libc::c_int) -> (RawFd, RawFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) } != 0 {
        fail("socketpair");
    }
    (fds[0], fds[1])
}

fn pipe() -> (RawFd, RawFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        fail("pipe");
    }
    (fds[0], fds[1])
}

/// A FIFO in the temporary directory, opened at both ends (the read end first, non-blocking,
/// so that neither open waits), then unlinked.
fn fifo(name: &str) -> (RawFd, RawFd) {
    let path = std::env::temp_dir().join(format!("bare-kernel-{}-{name}", std::process::id()));
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: NUL-terminated paths.
    unsafe {
        if libc::mkfifo(c.as_ptr(), 0o600) != 0 {
            fail("mkfifo");
        }
        let read = libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_NONBLOCK);
        let write = libc::open(c.as_ptr(), libc::O_WRONLY);
        libc::unlink(c.as_ptr());
        if read < 0 || write < 0 {
            fail("open the FIFO");
        }
        let flags = libc::fcntl(read, libc::F_GETFL);
        libc::fcntl(read, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        (read, write)
    }
}

fn queue(name: &str, polling_reader: bool) -> (libc::mqd_t, libc::mqd_t) {
    let c = CString::new(format!("/bare-kernel-{}-{name}", std::process::id())).unwrap();
    // SAFETY: mq_attr is plain old data; a NUL-terminated name.
    unsafe {
        let mut attr: libc::mq_attr = std::mem::zeroed();
        attr.mq_maxmsg = 10;
        attr.mq_msgsize = SIZE as _;
        let flags = if polling_reader { libc::O_RDONLY | libc::O_NONBLOCK } else { libc::O_RDONLY };
        let read = libc::mq_open(c.as_ptr(), flags | libc::O_CREAT | libc::O_EXCL, 0o600, &attr);
        let write = libc::mq_open(c.as_ptr(), libc::O_WRONLY);
        libc::mq_unlink(c.as_ptr());
        if read < 0 || write < 0 {
            fail("mq_open");
        }
        (read, write)
    }
}

/// Both processes' ends: (parent, child). The parent receives the stream, and pings.
fn ends(channel: &str, polling: bool) -> (End, End) {
    let fd = |read, write, socket| End::Fd { read, write, socket };
    match channel {
        "uds" | "uds-seqpacket" => {
            let kind = if channel == "uds" { libc::SOCK_STREAM } else { libc::SOCK_SEQPACKET };
            let (a, b) = socketpair(kind);
            (fd(a, a, true), fd(b, b, true))
        }
        "tcp" => {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap_or_else(|_| fail("bind"));
            let a = TcpStream::connect(listener.local_addr().unwrap()).unwrap_or_else(|_| fail("connect"));
            let (b, _) = listener.accept().unwrap_or_else(|_| fail("accept"));
            a.set_nodelay(true).unwrap();
            b.set_nodelay(true).unwrap();
            let (a, b) = (a.into_raw_fd(), b.into_raw_fd());
            (fd(a, a, true), fd(b, b, true))
        }
        "pipe" | "fifo" => {
            let make = if channel == "pipe" { |_: &str| pipe() } else { fifo };
            let (forth_r, forth_w) = make("forth");
            let (back_r, back_w) = make("back");
            if polling {
                set_nonblocking(forth_r);
                set_nonblocking(back_r);
            }
            (fd(back_r, forth_w, false), fd(forth_r, back_w, false))
        }
        "posix-mq" => {
            let (forth_r, forth_w) = queue("forth", polling);
            let (back_r, back_w) = queue("back", polling);
            (End::Mq { read: back_r, write: forth_w }, End::Mq { read: forth_r, write: back_w })
        }
        other => {
            eprintln!("bare_kernel: unknown channel {other:?}");
            std::process::exit(2)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, channel, kind, mode] = args.as_slice() else {
        eprintln!(
            "usage: bare_kernel <uds|uds-seqpacket|tcp|pipe|fifo|posix-mq> <stream|rtt> <waiting|polling>"
        );
        std::process::exit(2)
    };
    let polling = match mode.as_str() {
        "waiting" => false,
        "polling" => true,
        _ => {
            eprintln!("bare_kernel: the mode is waiting or polling, not {mode:?}");
            std::process::exit(2)
        }
    };
    let rtt = match kind.as_str() {
        "stream" => false,
        "rtt" => true,
        _ => {
            eprintln!("bare_kernel: stream or rtt, not {kind:?}");
            std::process::exit(2)
        }
    };
    let (parent, child) = ends(channel, polling);
    // SAFETY: fork in a single-threaded process.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        fail("fork");
    }
    let mut buf = [7u8; SIZE];
    if pid == 0 {
        // The child: sends for ever, or echoes; it ends when the parent is gone.
        // SAFETY: asks for SIGKILL when the parent dies.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        loop {
            if rtt {
                child.recv(&mut buf, polling);
            }
            child.send(&buf);
        }
    }
    let start = now_ns();
    let (from, until) = (start + WARMUP_NS, start + WARMUP_NS + WINDOW_NS);
    if rtt {
        let mut times: Vec<u64> = Vec::with_capacity(4 << 20);
        let mut last = now_ns();
        loop {
            parent.send(&buf);
            parent.recv(&mut buf, polling);
            let now = now_ns();
            if now >= from && times.len() < times.capacity() {
                times.push(now - last);
            }
            last = now;
            if now >= until {
                break;
            }
        }
        times.sort_unstable();
        let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize] as f64 / 1e3;
        println!(
            "bare {channel} rtt {mode}: p50 {:.2} µs p99 {:.2} µs ({} round trips)",
            at(0.5),
            at(0.99),
            times.len()
        );
    } else {
        let mut n = 0u64;
        let mut begun = None;
        loop {
            parent.recv(&mut buf, polling);
            n += 1;
            if n & 63 == 0 {
                let now = now_ns();
                match begun {
                    None if now >= from => begun = Some((now, n)),
                    Some((t0, n0)) if now >= until => {
                        let rate = (n - n0) as f64 / ((now - t0) as f64 / 1e9);
                        println!("bare {channel} stream {mode}: {:.3} M msg/s", rate / 1e6);
                        break;
                    }
                    _ => {}
                }
            }
        }
    }
    // SAFETY: the child is ours.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}
