//! ipcbench adapters for the operating system's connected sockets: Unix domain sockets
//! (`AF_UNIX`, `SOCK_STREAM`), the baseline every other library is compared with, the same as
//! `SOCK_SEQPACKET`, and TCP over loopback (`127.0.0.1`, `TCP_NODELAY`). All three share
//! everything but how a connection is made and how a message is framed.
//!
//! Every message of a case is exactly `setup.size` bytes, so a byte stream is framed by size
//! alone: `send` writes the whole message (looping on partial writes), `recv` reads exactly that
//! many bytes (looping on partial reads). A seqpacket socket keeps the boundaries itself: one
//! `write` is one packet, one `recv` takes one. The kernel's default buffer sizes are part of what
//! is measured, unless `--buffer` sets `SO_SNDBUF` and `SO_RCVBUF` on every connection.
//!
//! Two receive modes: waiting, a blocking `recv` (and a blocking `epoll_wait` for a server);
//! polling, `recv(MSG_DONTWAIT)` called again until a message is there (and `epoll_wait` with a
//! timeout of 0). Sends block when the socket's buffer is full, in both modes.
//!
//! * Stream and round trip: one connection. The accepting side binds and listens on
//!   `<dir>/<name>.sock` (TCP: on `127.0.0.1`, a port of the kernel's choice, written to
//!   `<dir>/<name>.port`), accepts one client (waiting at most `setup.timeout`), then unlinks
//!   the file and closes the listener; the connecting side retries `connect` every millisecond.
//! * Service: server `i` listens on `<dir>/<name>-s<i>.sock` (or `.port`); client `j` connects to server
//!   `j % servers`. Each server accepts exactly its clients and serves them all from one
//!   level-triggered epoll loop: one request from each ready connection in turn, the reply going
//!   back on the connection the request came from.

use std::io;
use std::mem;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Opened, Received, RecvMode, Requests, Rx, Setup, Side,
    Support, Tx, Unsupported, retry_until,
};

/// One library per transport; everything but the transport is shared.
macro_rules! socket_library {
    ($(#[$doc:meta])* $name:ident, $t:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl Library for $name {
            type Stream = Connection;
            type Publisher = Unsupported;
            type Subscriber = Unsupported;
            type Producer = Unsupported;
            type Consumer = Unsupported;
            type Client = Connection;
            type Server = Server;

            fn info() -> LibraryInfo {
                info($t)
            }

            fn stream(setup: &Setup, side: Side) -> Result<Opened<Connection>> {
                open_stream($t, setup, side)
            }

            fn client(setup: &Setup) -> Result<Opened<Connection>> {
                open_client($t, setup)
            }

            fn server(setup: &Setup) -> Result<Opened<Server>> {
                open_server($t, setup)
            }
        }
    };
}

socket_library!(
    /// Unix domain sockets, `SOCK_STREAM`.
    Uds,
    Transport::Unix
);
socket_library!(
    /// Unix domain sockets, `SOCK_SEQPACKET`: connected, and each message one packet.
    Seqpacket,
    Transport::Seqpacket
);
socket_library!(
    /// TCP over loopback, `TCP_NODELAY` on every connection.
    Tcp,
    Transport::Tcp
);

const FRAMING: &str = "fixed-size messages of the case's size, no length prefix";
/// Both: blocking reads, and non-blocking reads called again (see the README).
const MODES: &[RecvMode] = &RecvMode::ALL;

/// What the socket libraries have and lack; they differ in how a connection is made and framed.
fn info(t: Transport) -> LibraryInfo {
    let buffers = default_buffer_sizes(t);
    let (sndbuf, rcvbuf) = match &buffers {
        Ok((snd, rcv)) => (format!("{snd} bytes"), format!("{rcv} bytes")),
        Err(e) => (format!("unknown ({e})"), format!("unknown ({e})")),
    };
    // A seqpacket packet must fit the sender's buffer, less 32 bytes the kernel keeps for itself.
    let largest_message = match (t, &buffers) {
        (Transport::Seqpacket, Ok((snd, _))) => Some((
            snd.saturating_sub(32),
            "a packet must fit the sending socket's SO_SNDBUF, less 32 bytes".to_string(),
        )),
        (Transport::Seqpacket, Err(e)) => Some((0, format!("the socket's SO_SNDBUF is unknown ({e})"))),
        _ => None,
    };
    let (id, name, stream, mut configuration) = match t {
        Transport::Unix => (
            "uds",
            "Unix domain sockets (SOCK_STREAM)",
            "one connection; fixed-size messages written with write and read whole",
            vec![("framing", FRAMING.to_string())],
        ),
        Transport::Seqpacket => (
            "uds-seqpacket",
            "Unix domain sockets (SOCK_SEQPACKET)",
            "one connection; each message one packet, written with write and taken with recv",
            vec![("framing", "one packet per message; the kernel keeps the boundaries".to_string())],
        ),
        Transport::Tcp => (
            "tcp",
            "TCP loopback (TCP_NODELAY)",
            "one connection on 127.0.0.1; fixed-size messages written and read whole",
            vec![
                ("address", "127.0.0.1, a port of the kernel's choice per listener".to_string()),
                ("TCP_NODELAY", "on (Nagle off), both ends".into()),
                ("framing", FRAMING.to_string()),
            ],
        ),
    };
    configuration.splice(0..0, [("SO_SNDBUF", sndbuf), ("SO_RCVBUF", rcvbuf)]);
    configuration.push((
        "receive",
        "waiting: a blocking recv (a server: epoll_wait); polling: recv(MSG_DONTWAIT) again until a \
         message is there (a server: epoll_wait with timeout 0)"
            .into(),
    ));
    let no_broadcast = "a socket connects two ends; broadcast would be the harness writing to N sockets";
    LibraryInfo {
        id,
        name,
        kind: if t == Transport::Tcp { ipcbench_api::Kind::Tcp } else { ipcbench_api::Kind::UnixSocket },
        version: ipcbench_api::linux_version(),
        modes: MODES,
        capabilities: Capabilities {
            stream: Support::Yes(stream),
            round_trip: Support::Yes("the same connection both ways"),
            broadcast_lossless: Support::No(no_broadcast),
            broadcast_lossy: Support::No(no_broadcast),
            queue: Support::No(
                "no socket shares one queue of messages among several readers; connections are point to point",
            ),
            service: Support::Yes(
                "clients spread over the servers; each server multiplexes its connections with epoll",
            ),
            batch: Support::No(match t {
                Transport::Seqpacket => {
                    "sendmmsg is for datagram sockets; on a connected seqpacket socket the harness would loop over write"
                }
                _ => "no call moves several messages as separate messages on a stream socket",
            }),
            loan: Support::No("the kernel copies every message in and out of the socket"),
            most_subscribers: None,
        },
        requests: Requests::ToOneServer,
        largest_message,
        configuration,
    }
}

/// How a connection is made and framed: the only differences between the three libraries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Unix,
    Seqpacket,
    Tcp,
}

impl Transport {
    fn id(self) -> &'static str {
        match self {
            Transport::Unix => "uds",
            Transport::Seqpacket => "uds-seqpacket",
            Transport::Tcp => "tcp",
        }
    }

    /// Where listener `what` meets its clients: the socket file, or the file naming the port.
    fn rendezvous(self, setup: &Setup, what: &str) -> Result<PathBuf> {
        match self {
            Transport::Unix | Transport::Seqpacket => setup.socket_path(&format!("{what}.sock")),
            Transport::Tcp => Ok(setup.dir.join(format!("{what}.port"))),
        }
    }

    fn listen(self, path: &Path) -> Result<Listening> {
        match self {
            Transport::Unix => Listening::bind(path.to_path_buf()),
            Transport::Seqpacket => Listening::bind_seqpacket(path.to_path_buf()),
            Transport::Tcp => {
                let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                    .map_err(|e| anyhow!("bind and listen on 127.0.0.1: {e}"))?;
                let port = listener.local_addr()?.port();
                // Written whole, then renamed: a client never reads half a number.
                let partial = path.with_extension("partial");
                std::fs::write(&partial, port.to_string())?;
                std::fs::rename(&partial, path)?;
                Ok(Listening { listener: Listener::Tcp(listener), path: path.to_path_buf() })
            }
        }
    }

    fn connect(self, path: &Path, timeout: Duration) -> Result<OwnedFd> {
        match self {
            Transport::Unix => Ok(connect(path, timeout)?.into()),
            Transport::Seqpacket => connect_seqpacket(path, timeout),
            Transport::Tcp => connect_tcp(path, timeout),
        }
    }
}

fn open_stream(t: Transport, setup: &Setup, side: Side) -> Result<Opened<Connection>> {
    check_common(t, setup)?;
    setup.stream_or_round_trip().map_err(|e| anyhow!("{}: {e}", t.id()))?;
    let path = t.rendezvous(setup, setup.name)?;
    let stream = match side {
        Side::Accept => {
            let listening = t.listen(&path)?;
            let deadline = Instant::now() + setup.timeout;
            match listening.accept_before(deadline)? {
                Some(stream) => stream,
                None => bail!("no client connected to {} within {:?}", path.display(), setup.timeout),
            }
            // `listening` drops here: the file is unlinked and the listener closed.
        }
        Side::Connect => t.connect(&path, setup.timeout)?,
    };
    let buffer = socket_buffers(stream.as_raw_fd(), setup, &path)?;
    Ok(Opened::new(Connection::new(t, setup, stream, path)).buffered(buffer))
}

fn open_client(t: Transport, setup: &Setup) -> Result<Opened<Connection>> {
    check_common(t, setup)?;
    let (clients, servers) = setup.service("client")?;
    if servers == 0 || setup.index >= clients {
        bail!("{}: client {} of a service with {clients} clients and {servers} servers", t.id(), setup.index);
    }
    let server = setup.index % servers;
    let path = t.rendezvous(setup, &format!("{}-s{server}", setup.name))?;
    let stream = t.connect(&path, setup.timeout)?;
    let buffer = socket_buffers(stream.as_raw_fd(), setup, &path)?;
    Ok(Opened::new(Connection::new(t, setup, stream, path)).buffered(buffer))
}

fn open_server(t: Transport, setup: &Setup) -> Result<Opened<Server>> {
    check_common(t, setup)?;
    let (clients, servers) = setup.service("server")?;
    let index = setup.index;
    if index >= servers {
        bail!("{}: server {index} of a service with {servers} servers", t.id());
    }
    // Clients j with j % servers == index.
    let expected = if index < clients { (clients - index).div_ceil(servers) } else { 0 };
    let path = t.rendezvous(setup, &format!("{}-s{index}", setup.name))?;

    let mut conns = Vec::with_capacity(expected);
    if expected > 0 {
        let listening = t.listen(&path)?;
        let deadline = Instant::now() + setup.timeout;
        while conns.len() < expected {
            match listening.accept_before(deadline)? {
                Some(stream) => conns.push(Some(stream)),
                None => bail!(
                    "only {} of the {expected} clients of server {index} connected to {} within {:?}",
                    conns.len(),
                    path.display(),
                    setup.timeout
                ),
            }
        }
        // `listening` drops here: the file is unlinked and the listener closed.
    }

    // SAFETY: plain system call; the fd it returns is owned by `epoll` from here on.
    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epfd < 0 {
        bail!("epoll_create1 for the server of {}: {}", path.display(), io::Error::last_os_error());
    }
    // SAFETY: `epfd` is a fresh fd nothing else owns.
    let epoll = unsafe { OwnedFd::from_raw_fd(epfd) };
    for (k, conn) in conns.iter().enumerate() {
        let fd = conn.as_ref().map(AsRawFd::as_raw_fd).unwrap_or(-1);
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: k as u64 };
        // SAFETY: both fds are open; `ev` is a valid event for the call's duration.
        if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            bail!(
                "epoll_ctl(EPOLL_CTL_ADD) of a connection to {}: {}",
                path.display(),
                io::Error::last_os_error()
            );
        }
    }

    let mut buffer = None;
    for conn in conns.iter().flatten() {
        buffer = Some(socket_buffers(conn.as_raw_fd(), setup, &path)?);
    }
    let events = vec![libc::epoll_event { events: 0, u64: 0 }; expected.max(1)];
    let opened = Opened::new(Server {
        epoll,
        live: conns.len(),
        conns,
        events,
        packets: t == Transport::Seqpacket,
        flags: recv_flags(setup),
        ready: 0,
        next: 0,
        current: None,
        size: setup.size,
        path,
    });
    Ok(match buffer {
        Some(b) => opened.buffered(b),
        None => opened,
    })
}

fn check_common(t: Transport, setup: &Setup) -> Result<()> {
    if setup.size == 0 {
        bail!("{}: messages of 0 bytes can't be framed by size", t.id());
    }
    Ok(())
}

enum Listener {
    Unix(UnixListener),
    Seqpacket(OwnedFd),
    Tcp(TcpListener),
}

/// A bound, listening socket whose file (the socket, or the one naming the port) is unlinked
/// when it is dropped.
struct Listening {
    listener: Listener,
    path: PathBuf,
}

/// A bound socket's file, 0600: bind gives it 0777 less the umask. (It lies in the trial's own
/// 0700 folder as well.)
fn owner_only(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("chmod 0600 {}", path.display()))
}

impl Listening {
    fn bind(path: PathBuf) -> Result<Listening> {
        // std's bind calls socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC), bind and listen.
        match UnixListener::bind(&path) {
            Ok(listener) => {
                owner_only(&path)?;
                Ok(Listening { listener: Listener::Unix(listener), path })
            }
            // A socket file of that name already there (stale or foreign) is EADDRINUSE: never reused.
            Err(e) => bail!("bind and listen on {}: {e}", path.display()),
        }
    }

    /// As `bind`, for `SOCK_SEQPACKET`, which std does not make.
    fn bind_seqpacket(path: PathBuf) -> Result<Listening> {
        let fd = seqpacket_socket().map_err(|e| anyhow!("socket(AF_UNIX, SOCK_SEQPACKET): {e}"))?;
        let (addr, len) = sockaddr(&path)?;
        // SAFETY: `addr` is a valid sockaddr_un of `len` bytes; `fd` is open.
        let r = unsafe { libc::bind(fd.as_raw_fd(), (&addr as *const libc::sockaddr_un).cast(), len) };
        // SAFETY: `fd` is a bound socket (or the call fails with an error read below).
        if r < 0 || unsafe { libc::listen(fd.as_raw_fd(), 128) } < 0 {
            bail!("bind and listen on {}: {}", path.display(), io::Error::last_os_error());
        }
        owner_only(&path)?;
        Ok(Listening { listener: Listener::Seqpacket(fd), path })
    }

    fn fd(&self) -> RawFd {
        match &self.listener {
            Listener::Unix(l) => l.as_raw_fd(),
            Listener::Seqpacket(l) => l.as_raw_fd(),
            Listener::Tcp(l) => l.as_raw_fd(),
        }
    }

    fn accept(&self) -> io::Result<OwnedFd> {
        match &self.listener {
            Listener::Unix(l) => l.accept().map(|(s, _)| s.into()),
            Listener::Seqpacket(l) => {
                // SAFETY: `l` is a listening socket; the peer's address is not asked for.
                let fd = unsafe {
                    libc::accept4(
                        l.as_raw_fd(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        libc::SOCK_CLOEXEC,
                    )
                };
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: `fd` is a fresh connected socket nothing else owns.
                Ok(unsafe { OwnedFd::from_raw_fd(fd) })
            }
            Listener::Tcp(l) => l.accept().and_then(|(s, _)| {
                s.set_nodelay(true)?;
                Ok(s.into())
            }),
        }
    }

    /// Accepts one connection, or `None` if none came before `deadline`.
    fn accept_before(&self, deadline: Instant) -> Result<Option<OwnedFd>> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ms = left.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
            let mut pfd = libc::pollfd { fd: self.fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: `pfd` is one valid pollfd for the call's duration.
            let r = unsafe { libc::poll(&mut pfd, 1, ms) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                bail!("poll on the listener {}: {e}", self.path.display());
            }
            if r == 0 {
                if Instant::now() >= deadline {
                    return Ok(None);
                }
                continue;
            }
            // std's accept calls accept4(SOCK_CLOEXEC); the new socket is blocking.
            match self.accept() {
                Ok(stream) => return Ok(Some(stream)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => bail!("accept on {}: {e}", self.path.display()),
            }
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Connects to `path`, retrying every millisecond while nothing listens there yet.
fn connect(path: &Path, timeout: Duration) -> Result<UnixStream> {
    // std's connect calls socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC) and connect.
    let attempt = || match UnixStream::connect(path) {
        Ok(stream) => Ok(Ok(stream)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound
                    | io::ErrorKind::ConnectionRefused
                    | io::ErrorKind::WouldBlock
                    | io::ErrorKind::Interrupted
            ) =>
        {
            Ok(Err(e))
        }
        Err(e) => bail!("connect to {}: {e}", path.display()),
    };
    retry_until(Instant::now() + timeout, Duration::from_millis(1), attempt, |e| {
        anyhow!("could not connect to {} within {timeout:?} (last attempt: {e})", path.display())
    })
}

fn seqpacket_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain system call; the fd it returns is owned from here on.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh socket nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `path` as a sockaddr_un and its length.
fn sockaddr(path: &Path) -> Result<(libc::sockaddr_un, libc::socklen_t)> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: sockaddr_un is plain old data; all zeros is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= addr.sun_path.len() {
        bail!("socket path {} is too long for a Unix socket (108 bytes at most)", path.display());
    }
    for (d, &b) in addr.sun_path.iter_mut().zip(bytes) {
        *d = b as libc::c_char;
    }
    let len = mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    Ok((addr, len as libc::socklen_t))
}

/// As `connect`, for `SOCK_SEQPACKET`.
fn connect_seqpacket(path: &Path, timeout: Duration) -> Result<OwnedFd> {
    let (addr, len) = sockaddr(path)?;
    let attempt = || {
        let fd = seqpacket_socket().map_err(|e| anyhow!("socket(AF_UNIX, SOCK_SEQPACKET): {e}"))?;
        // SAFETY: `addr` is a valid sockaddr_un of `len` bytes; `fd` is open.
        let r = unsafe { libc::connect(fd.as_raw_fd(), (&addr as *const libc::sockaddr_un).cast(), len) };
        if r == 0 {
            return Ok(Ok(fd));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENOENT | libc::ECONNREFUSED | libc::EAGAIN | libc::EINTR) => Ok(Err(e)),
            _ => bail!("connect to {}: {e}", path.display()),
        }
    };
    retry_until(Instant::now() + timeout, Duration::from_millis(1), attempt, |e| {
        anyhow!("could not connect to {} within {timeout:?} (last attempt: {e})", path.display())
    })
}

/// Connects to the port named in `path` on 127.0.0.1, waiting for the file and the listener.
fn connect_tcp(path: &Path, timeout: Duration) -> Result<OwnedFd> {
    let attempt = || {
        Ok(std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|p| p.trim().parse::<u16>().map_err(|e| e.to_string()))
            .and_then(|port| TcpStream::connect((Ipv4Addr::LOCALHOST, port)).map_err(|e| e.to_string())))
    };
    let stream = retry_until(Instant::now() + timeout, Duration::from_millis(1), attempt, |e| {
        anyhow!("could not connect to the port in {} within {timeout:?} (last attempt: {e})", path.display())
    })?;
    stream.set_nodelay(true).map_err(|e| anyhow!("TCP_NODELAY on {}: {e}", path.display()))?;
    Ok(stream.into())
}

/// Writes all of `msg` to `fd`.
#[inline]
fn write_message(fd: RawFd, msg: &[u8], path: &Path) -> Result<()> {
    let mut done = 0;
    while done < msg.len() {
        let rest = &msg[done..];
        // SAFETY: `rest` is valid for reads of `rest.len()` bytes.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(write_error(path, done, msg.len(), e));
        }
        if n == 0 {
            return Err(write_error(path, done, msg.len(), io::ErrorKind::WriteZero.into()));
        }
        done += n as usize;
    }
    Ok(())
}

#[cold]
fn write_error(path: &Path, done: usize, size: usize, e: io::Error) -> anyhow::Error {
    anyhow!("write to {} after {done} of the {size} bytes of a message: {e}", path.display())
}

/// What one framed read found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// A whole message is in the buffer.
    Message,
    /// `MSG_DONTWAIT` only: no byte of a message was there yet.
    Nothing,
    /// The peer closed, at a message boundary.
    End,
}

/// The flags of every receive: `MSG_DONTWAIT` when polling.
fn recv_flags(setup: &Setup) -> libc::c_int {
    match setup.mode {
        RecvMode::Waiting => 0,
        RecvMode::Polling => libc::MSG_DONTWAIT,
    }
}

/// Reads exactly `buf.len()` bytes from `fd` with `recv(flags)`: `End` at an end of stream
/// before the first byte, an error at one in the middle. With `MSG_DONTWAIT`, `Nothing` when no
/// byte was there; once a message has begun, its rest is read again until it is whole.
#[inline]
fn read_message(fd: RawFd, buf: &mut [u8], path: &Path, flags: libc::c_int) -> Result<Read> {
    let mut got = 0;
    while got < buf.len() {
        let rest = &mut buf[got..];
        // SAFETY: `rest` is valid for writes of `rest.len()` bytes.
        let n = unsafe { libc::recv(fd, rest.as_mut_ptr().cast(), rest.len(), flags) };
        if n > 0 {
            got += n as usize;
        } else if n == 0 {
            if got == 0 {
                return Ok(Read::End);
            }
            return Err(truncated(path, got, buf.len()));
        } else {
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock if got == 0 => return Ok(Read::Nothing),
                io::ErrorKind::WouldBlock => continue,
                _ => {}
            }
            return Err(anyhow!(
                "read from {} after {got} of the {} bytes of a message: {e}",
                path.display(),
                buf.len()
            ));
        }
    }
    Ok(Read::Message)
}

#[cold]
fn truncated(path: &Path, got: usize, size: usize) -> anyhow::Error {
    anyhow!(
        "the peer on {} closed in the middle of a message: {got} of its {size} bytes arrived",
        path.display()
    )
}

#[cold]
fn wrong_length(what: &str, len: usize, size: usize, path: &Path) -> anyhow::Error {
    anyhow!("{what} of {len} bytes on {}, where every message of the case is {size} bytes", path.display())
}

/// Takes one packet into `buf` (exactly `buf.len()` bytes long) with `recv(flags)`: `End` at
/// the end of the connection, `Nothing` when `MSG_DONTWAIT` found none, an error for a packet of
/// another length.
#[inline]
fn read_packet(fd: RawFd, buf: &mut [u8], path: &Path, flags: libc::c_int) -> Result<Read> {
    loop {
        // MSG_TRUNC: the packet's real length comes back even when it is longer than `buf`.
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags | libc::MSG_TRUNC) };
        if n as usize == buf.len() {
            return Ok(Read::Message);
        }
        if n == 0 && flags & libc::MSG_DONTWAIT != 0 {
            // Linux says "end" to a non-blocking seqpacket receive that found the queue empty
            // and then the peer gone, even when the peer's last packet landed in between
            // (unix_dgram_recvmsg): a blocking receive, which cannot block once the peer is
            // gone, tells that packet from the end.
            return read_packet(fd, buf, path, flags & !libc::MSG_DONTWAIT);
        }
        if n == 0 {
            // Zero-length packets are never sent: this is the end.
            return Ok(Read::End);
        }
        if n > 0 {
            return Err(anyhow!(
                "a packet of {n} bytes on {}, where every message of the case is {} bytes",
                path.display(),
                buf.len()
            ));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => return Ok(Read::Nothing),
            _ => return Err(anyhow!("recv on {}: {e}", path.display())),
        }
    }
}

/// Reads one message of the connection's framing.
#[inline]
fn read_framed(packets: bool, fd: RawFd, buf: &mut [u8], path: &Path, flags: libc::c_int) -> Result<Read> {
    if packets { read_packet(fd, buf, path, flags) } else { read_message(fd, buf, path, flags) }
}

/// One connected socket: the stream and round-trip endpoint, and a service's client.
pub struct Connection {
    stream: OwnedFd,
    /// Seqpacket: one `recv` per message. (A seqpacket `write` is one packet, whole or failed.)
    packets: bool,
    /// Every receive's flags: `MSG_DONTWAIT` when polling.
    flags: libc::c_int,
    size: usize,
    path: PathBuf,
}

impl Connection {
    fn new(t: Transport, setup: &Setup, stream: OwnedFd, path: PathBuf) -> Connection {
        Connection {
            stream,
            packets: t == Transport::Seqpacket,
            flags: recv_flags(setup),
            size: setup.size,
            path,
        }
    }
}

impl Tx for Connection {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        if message.len() != self.size {
            return Err(wrong_length("a message", message.len(), self.size, &self.path));
        }
        write_message(self.stream.as_raw_fd(), message, &self.path)
    }
}

impl Rx for Connection {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        let Some(buf) = buf.get_mut(..self.size) else {
            return Err(wrong_length("a buffer", buf.len(), self.size, &self.path));
        };
        Ok(match read_framed(self.packets, self.stream.as_raw_fd(), buf, &self.path, self.flags)? {
            Read::Message => Received::Message(self.size),
            Read::Nothing => Received::Empty,
            Read::End => Received::Closed,
        })
    }
}

/// A service's server: every connection of its clients, multiplexed with epoll.
pub struct Server {
    epoll: OwnedFd,
    /// The accepted connections; `None` once one has ended. Epoll's data is the index here.
    conns: Vec<Option<OwnedFd>>,
    live: usize,
    events: Vec<libc::epoll_event>,
    packets: bool,
    /// `MSG_DONTWAIT` when polling: then `epoll_wait` does not wait either.
    flags: libc::c_int,
    /// `events[next..ready]` are still to be served from the last `epoll_wait`.
    ready: usize,
    next: usize,
    /// The connection the last request came from, where the reply goes.
    current: Option<usize>,
    size: usize,
    path: PathBuf,
}

impl Server {
    #[cold]
    fn remove(&mut self, k: usize) -> Result<()> {
        if let Some(stream) = self.conns[k].take() {
            self.live -= 1;
            if self.current == Some(k) {
                self.current = None;
            }
            let mut ev = libc::epoll_event { events: 0, u64: 0 };
            // SAFETY: both fds are open; `ev` is valid (and ignored) for the call's duration.
            let r = unsafe {
                libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, stream.as_raw_fd(), &mut ev)
            };
            if r < 0 {
                bail!(
                    "epoll_ctl(EPOLL_CTL_DEL) of a connection to {}: {}",
                    self.path.display(),
                    io::Error::last_os_error()
                );
            }
            // `stream` drops here: the connection is closed.
        }
        Ok(())
    }

    /// Takes the ready connections, waiting for one unless polling: false when none was ready.
    fn wait(&mut self) -> Result<bool> {
        let timeout = if self.flags == 0 { -1 } else { 0 };
        loop {
            // SAFETY: `events` is valid for writes of its length in epoll_event.
            let n = unsafe {
                libc::epoll_wait(
                    self.epoll.as_raw_fd(),
                    self.events.as_mut_ptr(),
                    self.events.len() as i32,
                    timeout,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                bail!("epoll_wait in the server of {}: {e}", self.path.display());
            }
            self.ready = n as usize;
            self.next = 0;
            return Ok(n > 0);
        }
    }
}

impl Rx for Server {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        let size = self.size;
        let Some(buf) = buf.get_mut(..size) else {
            return Err(wrong_length("a buffer", buf.len(), size, &self.path));
        };
        loop {
            if self.live == 0 {
                return Ok(Received::Closed);
            }
            if self.next == self.ready {
                if !self.wait()? {
                    return Ok(Received::Empty);
                }
                continue;
            }
            // Copy the field out: epoll_event is packed on x86-64.
            let k = self.events[self.next].u64 as usize;
            self.next += 1;
            let Some(stream) = self.conns.get(k).and_then(Option::as_ref) else {
                continue;
            };
            match read_framed(self.packets, stream.as_raw_fd(), buf, &self.path, self.flags)? {
                Read::Message => {
                    self.current = Some(k);
                    return Ok(Received::Message(size));
                }
                // Ready, yet taken by nothing: the next ready connection.
                Read::Nothing => {}
                Read::End => self.remove(k)?,
            }
        }
    }
}

impl Tx for Server {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        if message.len() != self.size {
            return Err(wrong_length("a reply", message.len(), self.size, &self.path));
        }
        let Some(stream) = self.current.and_then(|k| self.conns[k].as_ref()) else {
            bail!("a reply on the server of {} with no request to answer", self.path.display());
        };
        write_message(stream.as_raw_fd(), message, &self.path)
    }
}

/// Sets `SO_SNDBUF` and `SO_RCVBUF` of a connection to `--buffer`'s bytes (if given), then reads
/// them back: the kernel doubles what is asked (for its own bookkeeping) and caps it at
/// `net.core.wmem_max` / `rmem_max`.
fn socket_buffers(fd: RawFd, setup: &Setup, path: &Path) -> Result<Buffer> {
    if let Some(bytes) = setup.buffer {
        let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        for (opt, name) in [(libc::SO_SNDBUF, "SO_SNDBUF"), (libc::SO_RCVBUF, "SO_RCVBUF")] {
            // SAFETY: `value` is a valid int for the call's duration; `fd` is open.
            let r = unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    (&value as *const libc::c_int).cast(),
                    mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            if r < 0 {
                bail!("setsockopt {name} {bytes} on {}: {}", path.display(), io::Error::last_os_error());
            }
        }
    }
    let (snd, rcv) = (sockopt(fd, libc::SO_SNDBUF)?, sockopt(fd, libc::SO_RCVBUF)?);
    let why = match setup.buffer {
        None => "the kernel's defaults".to_string(),
        Some(b) if snd < 2 * b || rcv < 2 * b => {
            format!("--buffer {b}, doubled by the kernel and cut by net.core.wmem_max and rmem_max")
        }
        Some(b) => format!("--buffer {b}, doubled by the kernel"),
    };
    Ok(Buffer::kernel_bytes(
        snd,
        format!(
            "SO_SNDBUF {snd} and SO_RCVBUF {rcv} bytes ({why}, read back); the kernel charges each write \
             its overhead, so fewer than bytes / size messages fit"
        ),
    ))
}

/// An integer socket option of `fd`.
fn sockopt(fd: RawFd, opt: libc::c_int) -> Result<usize> {
    let mut value: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are valid for the call's duration and sized as it says.
    let r = unsafe {
        libc::getsockopt(fd, libc::SOL_SOCKET, opt, (&mut value as *mut libc::c_int).cast(), &mut len)
    };
    if r < 0 {
        bail!("getsockopt: {}", io::Error::last_os_error());
    }
    Ok(value as usize)
}

/// The kernel's default SO_SNDBUF and SO_RCVBUF of the transport's socket, as a fresh one
/// reports them, or why they are unknown.
fn default_buffer_sizes(t: Transport) -> Result<(usize, usize), String> {
    let made: io::Result<OwnedFd> = match t {
        Transport::Unix => UnixStream::pair().map(|(a, _)| a.into()),
        Transport::Seqpacket => seqpacket_socket(),
        Transport::Tcp => TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map(OwnedFd::from),
    };
    let a = made.map_err(|e| format!("a fresh socket: {e}"))?;
    let get = |opt, name: &str| sockopt(a.as_raw_fd(), opt).map_err(|e| format!("{name}: {e}"));
    Ok((get(libc::SO_SNDBUF, "SO_SNDBUF")?, get(libc::SO_RCVBUF, "SO_RCVBUF")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::Shape;
    use ipcbench_api::testing::{self, Scratch};
    use std::io::Write;
    use std::thread;

    const TIMEOUT: Duration = Duration::from_secs(5);

    #[test]
    fn info_is_filled() {
        let info = Uds::info();
        assert_eq!(info.id, "uds");
        assert!(info.version.starts_with("Linux "), "{}", info.version);
        assert_eq!(info.modes, &RecvMode::ALL);
        assert!(info.configuration[0].1.ends_with(" bytes"), "{:?}", info.configuration);
        assert!(info.configuration[1].1.ends_with(" bytes"), "{:?}", info.configuration);
        assert!(info.capabilities.stream.is_yes());
        assert!(info.capabilities.service.is_yes());
        assert!(!info.capabilities.queue.is_yes());
    }

    /// 1000 messages in order, then the end, in each mode; the rendezvous file is gone after
    /// set-up.
    fn stream_of_1000<L: Library>(what: &str) {
        testing::in_each_mode::<L>(what, Shape::Stream, |setup| {
            testing::stream_in_order::<L>(setup, 1000, || {});
            assert_eq!(std::fs::read_dir(setup.dir).unwrap().count(), 0, "a rendezvous file was left");
        });
    }

    #[test]
    fn stream_of_1000_messages() {
        stream_of_1000::<Uds>("uds-stream");
    }

    #[test]
    fn seqpacket_stream_of_1000_messages() {
        stream_of_1000::<Seqpacket>("seqp-stream");
    }

    #[test]
    fn tcp_stream_of_1000_messages() {
        stream_of_1000::<Tcp>("tcp-stream");
    }

    #[test]
    fn round_trip() {
        testing::in_each_mode::<Uds>("uds-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<Uds>(&Setup { size: 1000, ..*setup }, 200);
        });
        testing::in_each_mode::<Tcp>("tcp-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<Tcp>(setup, 200);
        });
        testing::in_each_mode::<Seqpacket>("seqp-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<Seqpacket>(setup, 200);
        });
    }

    /// Client `j` goes to server `j % servers`: each server answers exactly its clients'
    /// requests, in each mode.
    fn service<L: Library>(what: &str, clients: usize, servers: usize) {
        let per_client = 300u64;
        testing::in_each_mode::<L>(what, Shape::Service { clients, servers }, |setup| {
            let answered = testing::service_replies::<L>(&Setup { size: 64, ..*setup }, per_client);
            for (i, n) in answered.into_iter().enumerate() {
                let mine = (0..clients).filter(|j| j % servers == i).count() as u64;
                assert_eq!(n, mine * per_client, "server {i} {:?}", setup.mode);
            }
            // Every socket file was unlinked.
            assert_eq!(std::fs::read_dir(setup.dir).unwrap().count(), 0);
        });
    }

    #[test]
    fn service_4_clients_1_server() {
        service::<Uds>("uds-4c1s", 4, 1);
    }

    #[test]
    fn service_4_clients_2_servers() {
        service::<Uds>("uds-4c2s", 4, 2);
    }

    #[test]
    fn tcp_service_4_clients_2_servers() {
        service::<Tcp>("tcp-4c2s", 4, 2);
    }

    #[test]
    fn seqpacket_service_4_clients_2_servers() {
        service::<Seqpacket>("seqp-4c2s", 4, 2);
    }

    #[test]
    fn a_packet_of_another_length_is_an_error() {
        let place = Scratch::new("seqp-packet");
        let st = Setup { size: 32, ..place.setup(Shape::Stream) };
        thread::scope(|s| {
            let rx = s.spawn(|| {
                let mut rx = Seqpacket::stream(&st, Side::Accept).unwrap().endpoint;
                let mut buf = [0u8; 64];
                rx.recv(&mut buf).err().unwrap().to_string()
            });
            let raw = connect_seqpacket(&place.dir.join(format!("{}.sock", place.name)), TIMEOUT).unwrap();
            // One packet of 16 bytes, where a message is 32: a byte stream's reader would wait for
            // 16 more; a seqpacket receive returns the packet, and its length is the error. (One
            // packet only: the receiver closes after the error, so a second write could fail.)
            // SAFETY: the buffer is valid for reads of 16 bytes.
            assert_eq!(unsafe { libc::write(raw.as_raw_fd(), [7u8; 16].as_ptr().cast(), 16) }, 16);
            drop(raw);
            let err = rx.join().unwrap();
            assert!(err.contains("a packet of 16 bytes"), "{err}");
        });
    }

    #[test]
    fn connect_times_out_naming_the_path() {
        let place = Scratch::new("uds-timeout");
        let st = Setup { timeout: Duration::from_millis(30), ..place.setup(Shape::Stream) };
        let err = Uds::stream(&st, Side::Connect).err().unwrap().to_string();
        let path = place.dir.join(format!("{}.sock", place.name));
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("could not connect"), "{err}");
    }

    #[test]
    fn accept_times_out_naming_the_path() {
        let place = Scratch::new("uds-accept-timeout");
        let st = Setup { timeout: Duration::from_millis(30), ..place.setup(Shape::Stream) };
        let err = Uds::stream(&st, Side::Accept).err().unwrap().to_string();
        let path = place.dir.join(format!("{}.sock", place.name));
        assert!(err.contains(&format!("no client connected to {}", path.display())), "{err}");
        assert!(!path.exists(), "the socket file was left behind");
    }

    #[test]
    fn path_too_long() {
        let place = Scratch::new("uds-long");
        let long = place.dir.join("x".repeat(120));
        let st = Setup { dir: &long, ..place.setup(Shape::Stream) };
        for side in [Side::Accept, Side::Connect] {
            let err = Uds::stream(&st, side).err().unwrap().to_string();
            assert!(err.contains("too long for a Unix socket"), "{err}");
            assert!(err.contains("108"), "{err}");
        }
        let st = Setup { shape: Shape::Service { clients: 1, servers: 1 }, ..st };
        assert!(Uds::server(&st).is_err());
        assert!(Uds::client(&st).is_err());
    }

    #[test]
    fn eof_inside_a_message_is_an_error() {
        let place = Scratch::new("uds-partial");
        let st = Setup { size: 32, ..place.setup(Shape::Stream) };
        thread::scope(|s| {
            let rx = s.spawn(|| {
                let mut rx = Uds::stream(&st, Side::Accept).unwrap().endpoint;
                let mut buf = [0u8; 32];
                rx.recv(&mut buf).err().unwrap().to_string()
            });
            let mut raw = connect(&place.dir.join(format!("{}.sock", place.name)), TIMEOUT).unwrap();
            raw.write_all(&[1u8; 10]).unwrap();
            drop(raw);
            let err = rx.join().unwrap();
            assert!(err.contains("10 of its 32 bytes"), "{err}");
        });
    }

    /// `--buffer` reaches both ends of every transport: the kernel reports twice what was asked
    /// (within its caps), and the defaults without it.
    #[test]
    fn the_buffer_sets_both_socket_buffers() {
        fn check<L: Library>(label: &str) {
            let place = Scratch::new(label);
            let asked = 64 << 10;
            for b in
                testing::stream_buffers::<L>(&Setup { buffer: Some(asked), ..place.setup(Shape::Stream) })
            {
                let b = b.unwrap();
                assert_eq!(b.messages, None, "{}", b.how);
                assert!(b.bytes.unwrap() >= asked, "{}", b.how);
                assert!(b.how.contains("--buffer 65536"), "{}", b.how);
            }
            for b in testing::stream_buffers::<L>(&place.setup(Shape::Stream)) {
                assert!(b.unwrap().how.contains("the kernel's defaults"));
            }
        }
        check::<Uds>("uds-buf");
        check::<Seqpacket>("seqp-buf");
        check::<Tcp>("tcp-buf");
    }

    /// A polling receive with nothing there says so at once, and the socket stays usable.
    #[test]
    fn a_polling_receive_with_nothing_there_is_empty() {
        let place = Scratch::new("uds-empty");
        let st = Setup { mode: RecvMode::Polling, ..place.setup(Shape::Stream) };
        thread::scope(|s| {
            let rx = s.spawn(|| Uds::stream(&st, Side::Accept).unwrap().endpoint);
            let mut tx = Uds::stream(&st, Side::Connect).unwrap().endpoint;
            let mut rx = rx.join().unwrap();
            let mut buf = [0u8; 16];
            assert_eq!(rx.recv(&mut buf).unwrap(), Received::Empty);
            tx.send(&[9u8; 16]).unwrap();
            let got = loop {
                match rx.recv(&mut buf).unwrap() {
                    Received::Empty => std::hint::spin_loop(),
                    other => break other,
                }
            };
            assert_eq!((got, buf), (Received::Message(16), [9u8; 16]));
            drop(tx);
            let end = loop {
                match rx.recv(&mut buf).unwrap() {
                    Received::Empty => std::hint::spin_loop(),
                    other => break other,
                }
            };
            assert_eq!(end, Received::Closed);
        });
    }

    #[test]
    fn other_shapes_are_refused() {
        let place = Scratch::new("uds-refused");
        let st = place.setup(Shape::Queue { producers: 1, consumers: 1 });
        let err = Tcp::stream(&st, Side::Connect).err().unwrap().to_string();
        assert_eq!(err, "tcp: a stream endpoint was asked for Queue { producers: 1, consumers: 1 }");
    }
}
