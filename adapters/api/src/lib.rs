//! The contract between the ipcbench harness and one library's adapter.
//!
//! An adapter is a type implementing [`Library`]: it opens the endpoints of each pattern it has,
//! and each endpoint sends ([`Tx`]) and/or receives ([`Rx`]) whole messages from and into the
//! caller's buffers. The harness's hot loops are generic over these traits, so every call is
//! monomorphized: no virtual call, allocation or lock per message is added by the harness.
//!
//! An adapter never decides what a figure means and never reads a clock for one: it moves bytes
//! (only its set-up, which waits for peers, has a deadline).

use std::any::Any;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use anyhow::{Context, Error, Result, anyhow, bail};

/// How a receiver waits for its next message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecvMode {
    /// A blocking receive: the call waits in the library (which may spin, then sleep).
    Waiting,
    /// A non-blocking receive in a loop: the harness calls again on [`Received::Empty`].
    Polling,
}

impl RecvMode {
    pub const ALL: [RecvMode; 2] = [RecvMode::Waiting, RecvMode::Polling];

    pub fn as_str(self) -> &'static str {
        match self {
            RecvMode::Waiting => "waiting",
            RecvMode::Polling => "polling",
        }
    }

    pub fn parse(s: &str) -> Option<RecvMode> {
        RecvMode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl fmt::Display for RecvMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one receive call brought.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// A whole message of this many bytes is now at the start of the caller's buffer.
    Message(usize),
    /// Polling only: nothing was there yet.
    Empty,
    /// A lossy receiver fell behind and the library says it lost this many messages (the harness
    /// counts losses from sequence numbers; this figure is kept beside them as a cross-check).
    Lost(u64),
    /// The peer (or the whole channel) ended, after every message it completed was received.
    /// An endpoint serving several peers (a server with many clients) returns it once all of
    /// them have ended.
    Closed,
}

/// What one batch receive brought.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batch {
    /// This many whole messages, message `i` at `i * size` in the caller's buffer.
    Messages(usize),
    /// Polling only: nothing was there yet.
    Empty,
    /// The sender ended, after every message it completed was received.
    Closed,
}

/// How a message travels between the caller and the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transfer {
    /// The comparison's method: the sender's own buffer is copied in (`Tx::send`), and the
    /// receiver ends with the message in its own (`Rx::recv`).
    Copy,
    /// The library's in-place calls on both ends: the sender writes into memory the library
    /// lends (`Tx::send_loaned`), the receiver reads the message where it lies
    /// (`Rx::recv_loaned`).
    Loan,
}

impl Transfer {
    pub const ALL: [Transfer; 2] = [Transfer::Copy, Transfer::Loan];

    pub fn as_str(self) -> &'static str {
        match self {
            Transfer::Copy => "copy",
            Transfer::Loan => "loan",
        }
    }

    pub fn parse(s: &str) -> Option<Transfer> {
        Transfer::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl fmt::Display for Transfer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one in-place receive brought: as [`Received`], with what the caller's reader made of
/// the message while the library held it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loaned<T> {
    /// A whole message was there; the reader saw all of it, in place, and returned this.
    Message(T),
    Empty,
    Lost(u64),
    Closed,
}

impl<T> Loaned<T> {
    /// What the reader returned, turned by `f`; anything else as it was.
    #[inline]
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Loaned<U> {
        match self {
            Loaned::Message(t) => Loaned::Message(f(t)),
            Loaned::Empty => Loaned::Empty,
            Loaned::Lost(n) => Loaned::Lost(n),
            Loaned::Closed => Loaned::Closed,
        }
    }
}

impl<T, E> Loaned<Result<T, E>> {
    /// A reader that failed, as the error; else what it read.
    #[inline]
    pub fn transpose(self) -> Result<Loaned<T>, E> {
        match self {
            Loaned::Message(read) => read.map(Loaned::Message),
            Loaned::Empty => Ok(Loaned::Empty),
            Loaned::Lost(n) => Ok(Loaned::Lost(n)),
            Loaned::Closed => Ok(Loaned::Closed),
        }
    }
}

/// A copying receive as an in-place one whose reader returned the message's length.
impl From<Received> for Loaned<usize> {
    #[inline]
    fn from(r: Received) -> Loaned<usize> {
        match r {
            Received::Message(n) => Loaned::Message(n),
            Received::Empty => Loaned::Empty,
            Received::Lost(n) => Loaned::Lost(n),
            Received::Closed => Loaned::Closed,
        }
    }
}

impl From<Loaned<usize>> for Received {
    #[inline]
    fn from(l: Loaned<usize>) -> Received {
        match l {
            Loaned::Message(n) => Received::Message(n),
            Loaned::Empty => Received::Empty,
            Loaned::Lost(n) => Received::Lost(n),
            Loaned::Closed => Received::Closed,
        }
    }
}

/// Sends one whole message from the caller's buffer, waiting for room if the channel is full.
/// Every message of a case is `Setup::size` bytes long.
pub trait Tx {
    fn send(&mut self, message: &[u8]) -> Result<()>;

    /// The loan mode (`Transfer::Loan`): waits for room, lends `len` bytes of the library's own
    /// memory to `write`, which writes the whole message there, then sends it. Only asked of a
    /// library whose capability table says it lends memory, and never of a message over its
    /// `Library::largest_loan`; a library never falls back to copying here.
    fn send_loaned<W: FnOnce(&mut [u8])>(&mut self, len: usize, write: W) -> Result<()> {
        let _ = (len, write);
        bail!("this library lends no memory to write a message in")
    }

    /// The batch cases (`Setup::batch` > 1): sends the `messages.len() / size` messages of `size`
    /// bytes that lie back to back in `messages`, with one of the library's batch calls. Only
    /// asked of a library whose capability table says it has batch calls.
    fn send_batch(&mut self, messages: &[u8], size: usize) -> Result<()> {
        let _ = (messages, size);
        bail!("this library has no batch send")
    }
}

/// The error of an endpoint asked, in the loan mode, for a message longer than the library lends.
pub fn over_loan(len: usize, most: usize, what: &str) -> Error {
    anyhow!("a loan of {len} bytes, where {what} lends at most {most}: a loan is never copied in pieces")
}

/// Receives one whole message into the caller's buffer, in the mode the endpoint was opened with.
pub trait Rx {
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received>;

    /// The batch cases: receives up to `buf.len() / size` messages of `size` bytes with one of
    /// the library's batch calls, message `i` at `i * size` in `buf`.
    fn recv_batch(&mut self, buf: &mut [u8], size: usize) -> Result<Batch> {
        let _ = (buf, size);
        bail!("this library has no batch receive")
    }

    /// The loan mode: receives one message where the library keeps it, in the endpoint's mode;
    /// `read` sees the whole message in place before the library has its memory back.
    fn recv_loaned<T, F: FnOnce(&[u8]) -> T>(&mut self, read: F) -> Result<Loaned<T>> {
        let _ = read;
        bail!("this library lends no memory to read a message in")
    }

    /// The loan mode's echo (a round trip's, on an endpoint that also sends): receives a request
    /// in place, lends a reply of the same length, lets `answer` write the reply from the
    /// request, sends it, and frees the request.
    fn echo_loaned<F: FnOnce(&[u8], &mut [u8])>(&mut self, answer: F) -> Result<Received> {
        let _ = answer;
        bail!("this library lends no memory to echo a message in")
    }
}

/// Which end of a stream an endpoint is. The accepting end is set up first (it listens or
/// creates the channel); the connecting end finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Accept,
    Connect,
}

/// The smallest message of any case: its sender, sequence number, phase and check byte fit.
pub const SMALLEST_MESSAGE: usize = 8;

/// The case an endpoint is opened for, as the adapter needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One sender, one receiver, one way.
    Stream,
    /// One client, one echoing server, over one stream.
    RoundTrip,
    /// One publisher; every subscriber receives every message (or loses some, if `lossy`).
    Broadcast { lossy: bool, subscribers: usize },
    /// Producers and consumers; each message reaches exactly one consumer.
    Queue { producers: usize, consumers: usize },
    /// Clients and servers; each request is answered by one server, its reply to its client.
    Service { clients: usize, servers: usize },
}

/// Everything an adapter is told when it opens an endpoint.
#[derive(Clone, Copy, Debug)]
pub struct Setup<'a> {
    /// A name unique to this run and trial: `[A-Za-z0-9_.-]`, at most 64 characters. Use it for
    /// every channel, service or shared-memory object the trial creates.
    pub name: &'a str,
    /// A directory of this trial's own, for files such as socket paths. The driver removes it.
    pub dir: &'a Path,
    /// The size of every message in this case, in bytes (at least [`SMALLEST_MESSAGE`]).
    pub size: usize,
    pub shape: Shape,
    /// This role's index among the processes of the same role (subscriber 2, server 0, ...).
    pub index: usize,
    pub mode: RecvMode,
    /// Copied through the caller's buffers, or written and read in the library's memory.
    pub transfer: Transfer,
    /// How long set-up may wait for peers before it fails.
    pub timeout: Duration,
    /// Messages per send and receive call: 1, or the batch of a batch case (`Tx::send_batch`).
    pub batch: usize,
    /// `--buffer`: the bytes of messages the channel should hold between a sender and its
    /// receiver, where the library lets one set its depth; `None`: the library's defaults.
    pub buffer: Option<usize>,
}

impl Setup<'_> {
    /// `--buffer` as messages of the case's size (at least one), or `None` for the defaults.
    pub fn buffer_messages(&self) -> Option<usize> {
        self.buffer.map(|bytes| (bytes / self.size.max(1)).max(1))
    }

    /// A broadcast's `(lossy, subscribers)`; an error if the `role` endpoint was asked for
    /// another shape.
    pub fn broadcast(&self, role: &str) -> Result<(bool, usize)> {
        match self.shape {
            Shape::Broadcast { lossy, subscribers } => Ok((lossy, subscribers)),
            other => bail!("a {role} endpoint was asked for {other:?}"),
        }
    }

    /// A work queue's `(producers, consumers)`, as [`Setup::broadcast`].
    pub fn queue(&self, role: &str) -> Result<(usize, usize)> {
        match self.shape {
            Shape::Queue { producers, consumers } => Ok((producers, consumers)),
            other => bail!("a {role} endpoint was asked for {other:?}"),
        }
    }

    /// A service's `(clients, servers)`, as [`Setup::broadcast`].
    pub fn service(&self, role: &str) -> Result<(usize, usize)> {
        match self.shape {
            Shape::Service { clients, servers } => Ok((clients, servers)),
            other => bail!("a {role} endpoint was asked for {other:?}"),
        }
    }

    /// Whether a stream endpoint is for a round trip (`true`) or a one-way stream (`false`); an
    /// error for any other shape, as [`Setup::broadcast`].
    pub fn stream_or_round_trip(&self) -> Result<bool> {
        match self.shape {
            Shape::Stream => Ok(false),
            Shape::RoundTrip => Ok(true),
            other => bail!("a stream endpoint was asked for {other:?}"),
        }
    }

    /// Where member `member` of a work queue or service is wired when, as in brokerless socket
    /// libraries (ZeroMQ, NNG), every receiving member (consumer, server) binds a socket file of
    /// its own and every sending member (producer, client) connects to all of them. The files are
    /// `{prefix}-queue-c{i}` and `{prefix}-service-s{i}` in the trial's directory. An error, as
    /// [`Setup::queue`], if the member was asked for another shape.
    pub fn mesh(&self, member: Member, prefix: &str) -> Result<Mesh> {
        let role = member.as_str();
        let (senders, receivers, what) = match member {
            Member::Producer | Member::Consumer => {
                let (producers, consumers) = self.queue(role)?;
                (producers, consumers, "queue-c")
            }
            Member::Client | Member::Server => {
                let (clients, servers) = self.service(role)?;
                (clients, servers, "service-s")
            }
        };
        let file = |i: usize| self.socket_path(&format!("{prefix}-{what}{i}"));
        Ok(match member {
            Member::Consumer | Member::Server => Mesh::Bind { path: file(self.index)?, peers: senders },
            Member::Producer | Member::Client => {
                Mesh::Connect((0..receivers).map(file).collect::<Result<_>>()?)
            }
        })
    }

    /// The path of the Unix socket file `file` in the trial's directory, checked to fit a
    /// socket address (`sockaddr_un`'s `sun_path` holds 108 bytes on Linux, with the NUL).
    pub fn socket_path(&self, file: &str) -> Result<std::path::PathBuf> {
        const ROOM: usize = 108;
        let path = self.dir.join(file);
        let len = path.as_os_str().len();
        if len >= ROOM {
            bail!(
                "socket path {} is {len} bytes, too long for a Unix socket: sockaddr_un's sun_path \
                 holds {ROOM} bytes, at most {} of path and the terminating NUL; use a shorter directory",
                path.display(),
                ROOM - 1
            );
        }
        Ok(path)
    }
}

/// A member of a work queue or a service, as [`Setup::mesh`] wires it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    Producer,
    Consumer,
    Client,
    Server,
}

impl Member {
    pub fn as_str(self) -> &'static str {
        match self {
            Member::Producer => "producer",
            Member::Consumer => "consumer",
            Member::Client => "client",
            Member::Server => "server",
        }
    }
}

/// What [`Setup::mesh`] says a member does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mesh {
    /// A consumer or server: binds `path`, and `peers` members (its producers or clients)
    /// connect to it.
    Bind { path: PathBuf, peers: usize },
    /// A producer or client: connects to each of these, one per consumer or server.
    Connect(Vec<PathBuf>),
}

/// Tries a set-up step until it is done or `deadline` passes, sleeping `pause` between tries:
/// what it waits for is another process, starting at its own pace. `attempt` returns `Ok(Ok(t))`
/// when done, `Ok(Err(why))` to try again, and `Err` to fail at once; past the deadline the
/// error is `late(why)` of the last try (its error, or how many peers had come), so each caller
/// keeps its own message. Set-up only: the clock is read once per try.
pub fn retry_until<T, W>(
    deadline: Instant,
    pause: Duration,
    mut attempt: impl FnMut() -> Result<Result<T, W>>,
    late: impl FnOnce(W) -> Error,
) -> Result<T> {
    loop {
        match attempt()? {
            Ok(done) => return Ok(done),
            Err(why) if Instant::now() >= deadline => return Err(late(why)),
            Err(_) => std::thread::sleep(pause),
        }
    }
}

/// `Linux <release>`: the version of every library the kernel itself provides.
pub fn linux_version() -> String {
    match std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        Ok(release) => format!("Linux {}", release.trim()),
        Err(e) => format!("Linux (release unknown: /proc/sys/kernel/osrelease: {e})"),
    }
}

/// An opened endpoint, and what must live until the driver says every sender is done: the
/// owner's handle of a channel whose drop ends it for everybody (a work queue, a service).
pub struct Opened<E> {
    pub endpoint: E,
    pub owner: Option<Box<dyn Any + Send>>,
    /// What the channel holds between sender and receiver, as this endpoint was set up (read
    /// back from the library where it lets one), for the results' buffers table.
    pub buffer: Option<Buffer>,
}

impl<E> Opened<E> {
    pub fn new(endpoint: E) -> Self {
        Opened { endpoint, owner: None, buffer: None }
    }

    /// Gives it the owner's handle of its channel, if this endpoint holds one.
    pub fn owning(self, owner: Option<Box<dyn Any + Send>>) -> Self {
        Opened { owner, ..self }
    }

    /// Says what the channel holds.
    pub fn buffered(self, buffer: Buffer) -> Self {
        Opened { buffer: Some(buffer), ..self }
    }
}

/// How much a channel holds between a sender and its receiver: the depth of its queue or ring
/// in messages of the case's size and in bytes, as far as the library counts them, and what set
/// it (the library's default, or `--buffer`, and any limit that cut what was asked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub messages: Option<usize>,
    pub bytes: Option<usize>,
    pub how: String,
}

impl Buffer {
    /// A queue counted in messages of `size` bytes.
    pub fn messages(messages: usize, size: usize, how: impl Into<String>) -> Buffer {
        Buffer { messages: Some(messages), bytes: Some(messages * size), how: how.into() }
    }

    /// A buffer counted in bytes, whose messages follow from the size (a ring of slots).
    pub fn bytes(bytes: usize, size: usize, how: impl Into<String>) -> Buffer {
        Buffer { messages: Some(bytes / size.max(1)), bytes: Some(bytes), how: how.into() }
    }

    /// A buffer of bytes that the library charges more than the message against (a socket's
    /// per-write overhead): how many messages fit is not a division.
    pub fn kernel_bytes(bytes: usize, how: impl Into<String>) -> Buffer {
        Buffer { messages: None, bytes: Some(bytes), how: how.into() }
    }
}

/// Whether a library has a pattern: how it maps, or why it doesn't.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// It has it; the text says which calls or mechanism carry it.
    Yes(&'static str),
    /// It doesn't; the text is the one-line reason shown beside the dash.
    No(&'static str),
}

impl Support {
    pub fn is_yes(self) -> bool {
        matches!(self, Support::Yes(_))
    }

    pub fn text(self) -> &'static str {
        match self {
            Support::Yes(s) | Support::No(s) => s,
        }
    }
}

/// The capability table's row for one library.
#[derive(Clone, Copy, Debug)]
pub struct Capabilities {
    pub stream: Support,
    pub round_trip: Support,
    pub broadcast_lossless: Support,
    pub broadcast_lossy: Support,
    pub queue: Support,
    pub service: Support,
    pub batch: Support,
    /// The loan mode (`Transfer::Loan`): the calls that write and read a message in the
    /// library's own memory, or why it has none.
    pub loan: Support,
    /// The most subscribers a broadcast takes, where the library has a limit below the
    /// harness's: the count, and the reason shown beside the dash of a broadcast to more.
    pub most_subscribers: Option<(usize, &'static str)>,
}

/// Where a library's service sends each request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requests {
    /// To one of the servers: the servers share the load.
    ToOneServer,
    /// To every server: each answers it, and the client takes the first reply. The servers do
    /// not share a load; a case with several servers says so beside its figure.
    ToEveryServer,
}

/// How a library's messages travel between processes. The report names its comparisons by
/// kind ("shared memory against a Unix domain socket"), never by a library's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Shared memory the library maps and synchronises itself.
    SharedMemory,
    /// The harness's own shared-memory ring: the control every library is held against.
    Control,
    /// The kernel's Unix domain socket, called directly.
    UnixSocket,
    /// The kernel's TCP, over loopback.
    Tcp,
    /// A pipe or a FIFO.
    Pipe,
    /// A POSIX message queue.
    MessageQueue,
    /// A messaging library over the kernel's sockets.
    OverSockets,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::SharedMemory,
        Kind::Control,
        Kind::UnixSocket,
        Kind::Tcp,
        Kind::Pipe,
        Kind::MessageQueue,
        Kind::OverSockets,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SharedMemory => "shared-memory",
            Kind::Control => "control",
            Kind::UnixSocket => "unix-socket",
            Kind::Tcp => "tcp",
            Kind::Pipe => "pipe",
            Kind::MessageQueue => "message-queue",
            Kind::OverSockets => "over-sockets",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What the harness shows and records of a library.
#[derive(Clone, Debug)]
pub struct LibraryInfo {
    /// Short and stable: `fastipc`, `uds`, ...
    pub id: &'static str,
    pub name: &'static str,
    pub kind: Kind,
    pub version: String,
    /// The receive modes it is measured in; the faster is its figure.
    pub modes: &'static [RecvMode],
    pub capabilities: Capabilities,
    /// Where its service sends each request (meaningless when it has no service).
    pub requests: Requests,
    /// The largest message it carries as configured, and why: a case of larger messages is a
    /// dash with that reason. `None`: no limit below what a case may ask.
    pub largest_message: Option<(usize, String)>,
    /// Buffer and ring sizes and other settings, recorded in the results as they are.
    pub configuration: Vec<(&'static str, String)>,
}

/// One library under test. Every method opens one endpoint for one role process; the defaults
/// fail, for libraries whose capability table says they lack the pattern (the driver never asks
/// for those, so the defaults are a guard, not a path).
pub trait Library {
    type Stream: Tx + Rx;
    type Publisher: Tx;
    type Subscriber: Rx;
    type Producer: Tx;
    type Consumer: Rx;
    type Client: Tx + Rx;
    type Server: Tx + Rx;

    fn info() -> LibraryInfo;

    /// Removes what a trial named `trial` may have left that the driver can't find by itself
    /// (it already removes the trial's directory and its `/dev/shm/<trial>*` objects): called
    /// after every trial, whether its processes ended or were killed, and by the next run after
    /// a killed driver. Returns what it removed, as a person would name it.
    fn remove_leftovers(trial: &str) -> Vec<String> {
        let _ = trial;
        Vec::new()
    }

    /// About how many bytes of `/dev/shm` one trial of this shape, message size and `--buffer`
    /// fills (0: the library keeps nothing large there, or cannot say): the driver refuses to
    /// start a trial that would not fit, rather than watch a child die of SIGBUS.
    fn shared_memory(shape: Shape, size: usize, buffer: Option<usize>) -> u64 {
        let _ = (shape, size, buffer);
        0
    }

    /// The longest message the loan mode lends memory for, in this shape with `--buffer`, and
    /// why: a longer one is a dash with that reason, never a copy in pieces. `None`: no limit
    /// below what a case may ask.
    fn largest_loan(shape: Shape, buffer: Option<usize>) -> Option<(usize, String)> {
        let _ = (shape, buffer);
        None
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Self::Stream>> {
        lacks::<Self, _>(setup, side)
    }
    fn publisher(setup: &Setup) -> Result<Opened<Self::Publisher>> {
        lacks::<Self, _>(setup, "publisher")
    }
    fn subscriber(setup: &Setup) -> Result<Opened<Self::Subscriber>> {
        lacks::<Self, _>(setup, "subscriber")
    }
    fn producer(setup: &Setup) -> Result<Opened<Self::Producer>> {
        lacks::<Self, _>(setup, "producer")
    }
    fn consumer(setup: &Setup) -> Result<Opened<Self::Consumer>> {
        lacks::<Self, _>(setup, "consumer")
    }
    fn client(setup: &Setup) -> Result<Opened<Self::Client>> {
        lacks::<Self, _>(setup, "client")
    }
    fn server(setup: &Setup) -> Result<Opened<Self::Server>> {
        lacks::<Self, _>(setup, "server")
    }
}

fn lacks<L: Library + ?Sized, T>(setup: &Setup, role: impl fmt::Debug) -> Result<T> {
    bail!("{} has no {:?} endpoint for {:?}", L::info().id, role, setup.shape)
}

/// The endpoint type of a pattern a library lacks: it can't be built, so it never runs.
pub enum Unsupported {}

impl Tx for Unsupported {
    fn send(&mut self, _: &[u8]) -> Result<()> {
        match *self {}
    }
}

impl Rx for Unsupported {
    fn recv(&mut self, _: &mut [u8]) -> Result<Received> {
        match *self {}
    }
}

/// One side of a stream or round trip made of one-way channels: what it sends on, what it
/// receives from (a stream's sender has no receiving half, its receiver no sending half), and
/// what both need alive (a client handle, a node), dropped after them.
pub struct Pair<T, R, K> {
    pub tx: Option<T>,
    pub rx: Option<R>,
    pub keep: K,
}

impl<T, R, K> Pair<T, R, K> {
    /// Something of whichever half this side has, its receiving half first (a stream side has
    /// at least one): what the adapter reports of the channel, say.
    pub fn either<X>(&self, of_rx: impl FnOnce(&R) -> X, of_tx: impl FnOnce(&T) -> X) -> Result<X> {
        match (&self.rx, &self.tx) {
            (Some(rx), _) => Ok(of_rx(rx)),
            (None, Some(tx)) => Ok(of_tx(tx)),
            (None, None) => bail!("a stream side that neither sends nor receives"),
        }
    }
}

impl<T: Tx, R, K> Tx for Pair<T, R, K> {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        match &mut self.tx {
            Some(tx) => tx.send(message),
            None => bail!("this end of the stream only receives"),
        }
    }

    #[inline]
    fn send_batch(&mut self, messages: &[u8], size: usize) -> Result<()> {
        match &mut self.tx {
            Some(tx) => tx.send_batch(messages, size),
            None => bail!("this end of the stream only receives"),
        }
    }

    #[inline]
    fn send_loaned<W: FnOnce(&mut [u8])>(&mut self, len: usize, write: W) -> Result<()> {
        match &mut self.tx {
            Some(tx) => tx.send_loaned(len, write),
            None => bail!("this end of the stream only receives"),
        }
    }
}

impl<T: Tx, R: Rx, K> Rx for Pair<T, R, K> {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        match &mut self.rx {
            Some(rx) => rx.recv(buf),
            None => bail!("this end of the stream only sends"),
        }
    }

    #[inline]
    fn recv_batch(&mut self, buf: &mut [u8], size: usize) -> Result<Batch> {
        match &mut self.rx {
            Some(rx) => rx.recv_batch(buf, size),
            None => bail!("this end of the stream only sends"),
        }
    }

    #[inline]
    fn recv_loaned<X, F: FnOnce(&[u8]) -> X>(&mut self, read: F) -> Result<Loaned<X>> {
        match &mut self.rx {
            Some(rx) => rx.recv_loaned(read),
            None => bail!("this end of the stream only sends"),
        }
    }

    /// The request is read in place on the receiving half while the reply is written in place
    /// on the sending half: the two are separate channels.
    #[inline]
    fn echo_loaned<F: FnOnce(&[u8], &mut [u8])>(&mut self, answer: F) -> Result<Received> {
        let (Some(tx), Some(rx)) = (&mut self.tx, &mut self.rx) else {
            bail!("an echo needs both halves of the stream");
        };
        let echoed = rx.recv_loaned(|request| {
            tx.send_loaned(request.len(), |reply| answer(request, reply)).map(|()| request.len())
        })?;
        echoed.transpose().map(Received::from)
    }
}

/// The end of a channel, for libraries whose close does not tell a receiver (`end.rs`).
pub mod end;

/// Scenarios every adapter's tests run (`testing.rs`).
pub mod testing;

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn setup(shape: Shape, mode: RecvMode) -> Setup<'static> {
        Setup {
            name: "t",
            dir: Path::new("/tmp/d"),
            size: 16,
            shape,
            index: 1,
            mode,
            transfer: Transfer::Copy,
            timeout: Duration::from_secs(1),
            batch: 1,
            buffer: None,
        }
    }

    #[test]
    fn a_stream_endpoint_is_a_stream_or_a_round_trip() {
        assert!(!setup(Shape::Stream, RecvMode::Waiting).stream_or_round_trip().unwrap());
        assert!(setup(Shape::RoundTrip, RecvMode::Waiting).stream_or_round_trip().unwrap());
        let queue = Shape::Queue { producers: 1, consumers: 1 };
        let e = setup(queue, RecvMode::Waiting).stream_or_round_trip().unwrap_err().to_string();
        assert_eq!(e, "a stream endpoint was asked for Queue { producers: 1, consumers: 1 }");
    }

    #[test]
    fn a_buffer_in_bytes_is_whole_messages_and_at_least_one() {
        let st = setup(Shape::Stream, RecvMode::Waiting);
        assert_eq!(st.buffer_messages(), None, "no --buffer: the defaults");
        assert_eq!(Setup { buffer: Some(1000), ..st }.buffer_messages(), Some(62));
        assert_eq!(Setup { buffer: Some(3), ..st }.buffer_messages(), Some(1));
        assert_eq!(Buffer::bytes(4096, 16, "ring").messages, Some(256));
    }

    #[test]
    fn a_mesh_binds_receivers_and_connects_senders_to_all() {
        let st = setup(Shape::Queue { producers: 3, consumers: 2 }, RecvMode::Waiting);
        assert_eq!(
            st.mesh(Member::Consumer, "zmq").unwrap(),
            Mesh::Bind { path: "/tmp/d/zmq-queue-c1".into(), peers: 3 }
        );
        assert_eq!(
            st.mesh(Member::Producer, "zmq").unwrap(),
            Mesh::Connect(vec!["/tmp/d/zmq-queue-c0".into(), "/tmp/d/zmq-queue-c1".into()])
        );
        let e = st.mesh(Member::Server, "zmq").unwrap_err().to_string();
        assert!(e.contains("a server endpoint was asked for Queue"), "{e}");
        let st = setup(Shape::Service { clients: 4, servers: 2 }, RecvMode::Waiting);
        assert_eq!(
            st.mesh(Member::Server, "nng").unwrap(),
            Mesh::Bind { path: "/tmp/d/nng-service-s1".into(), peers: 4 }
        );
        assert!(matches!(st.mesh(Member::Client, "nng").unwrap(), Mesh::Connect(all) if all.len() == 2));
    }

    #[test]
    fn retry_until_tries_again_then_names_the_last_try() {
        let tries = Cell::new(0);
        let third = retry_until(
            Instant::now() + Duration::from_secs(5),
            Duration::from_millis(1),
            || {
                tries.set(tries.get() + 1);
                Ok(if tries.get() == 3 { Ok("done") } else { Err(tries.get()) })
            },
            |n| anyhow!("try {n}"),
        );
        assert_eq!((third.unwrap(), tries.get()), ("done", 3));
        let late = retry_until(
            Instant::now() + Duration::from_millis(20),
            Duration::from_millis(1),
            || Ok(Err::<(), _>(tries.replace(tries.get() + 1))),
            |n| anyhow!("still nothing at try {n}"),
        );
        assert!(late.unwrap_err().to_string().starts_with("still nothing at try "));
        assert!(tries.get() > 4, "it tried again until the deadline");
        let fatal = retry_until(
            Instant::now() + Duration::from_secs(5),
            Duration::from_millis(1),
            || -> Result<Result<(), ()>> { bail!("refused") },
            |()| anyhow!("late"),
        );
        assert_eq!(fatal.unwrap_err().to_string(), "refused");
    }
}
