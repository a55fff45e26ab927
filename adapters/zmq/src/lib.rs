//! ipcbench adapter for ZeroMQ: libzmq 4.3.5, built from source by the `zmq` crate (zeromq-src 0.3.6), over `ipc://`
//! endpoints (Unix sockets) in the trial's directory. One context, with its one I/O thread, per
//! endpoint.
//!
//! | Pattern | Sockets |
//! |---|---|
//! | stream | PUSH (sender, connects) to PULL (receiver, binds) |
//! | round trip | REQ (pinger, connects) to REP (echo, binds) |
//! | broadcast, lossless | XPUB with `ZMQ_XPUB_NODROP` (binds) to SUB (connect, subscribe to all) |
//! | broadcast, lossy | XPUB (binds) to SUB: it drops like PUB at the high-water mark |
//! | work queue | PUSH producers, each connected to every PULL consumer (which bind) |
//! | service | REQ clients, each connected to every REP server (which bind) |
//!
//! Before a sender says ready, every connection it needs has completed its handshake (read from
//! a socket monitor), and a publisher has received every subscription (`ZMQ_XPUB_VERBOSE`): no
//! message of the window goes to a subscriber not yet there, or piles up for a peer not yet
//! connected. Every socket has linger 0, so a close never waits for a dead peer; a sender
//! therefore ends by sending end markers until its receivers have closed their connections
//! (see `ipcbench_api::end`), so nothing queued is lost at the close. A server's channel ends
//! when the driver says every client is done: its owner handle sends it an end marker.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use ipcbench_api::end::{self, Ends};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Member, Mesh, Opened, Received, RecvMode, Requests, Rx,
    Setup, Side, Support, Tx,
};

/// An endpoint, with what its queues hold.
fn opened(e: Endpoint) -> Opened<Endpoint> {
    let buffer = e.buffer.clone();
    Opened::new(e).buffered(buffer)
}

/// ZeroMQ (libzmq).
pub struct Zmq;

/// The high-water marks, libzmq's default unless `--buffer` sets them (recorded, and checked
/// when a socket is made).
const HWM: i32 = 1000;
/// How soon a connecting socket retries a peer that is not listening yet (libzmq's default is
/// 100 ms, which would only lengthen set-up).
const RECONNECT_MS: i32 = 10;

impl Library for Zmq {
    type Stream = Endpoint;
    type Publisher = Endpoint;
    type Subscriber = Endpoint;
    type Producer = Endpoint;
    type Consumer = Endpoint;
    type Client = Endpoint;
    type Server = Endpoint;

    fn info() -> LibraryInfo {
        let (major, minor, patch) = zmq::version();
        LibraryInfo {
            id: "zmq",
            kind: ipcbench_api::Kind::OverSockets,
            name: "ZeroMQ",
            version: format!(
                "{major}.{minor}.{patch} (libzmq built from source by crate zmq 0.10.0, zeromq-src 0.3.6)"
            ),
            modes: &[RecvMode::Waiting, RecvMode::Polling],
            capabilities: Capabilities {
                stream: Support::Yes("PUSH to PULL over ipc://, as libzmq's own throughput test"),
                round_trip: Support::Yes("REQ to REP over ipc://, as libzmq's own latency test"),
                broadcast_lossless: Support::Yes("XPUB with ZMQ_XPUB_NODROP to SUB: the publisher waits"),
                broadcast_lossy: Support::Yes("XPUB to SUB: drops at the high-water mark, as PUB does"),
                queue: Support::Yes("PUSH producers, each connected to every PULL consumer: round-robin"),
                service: Support::Yes("REQ clients, each connected to every REP server: round-robin"),
                batch: Support::No("no call sends or receives several messages at once"),
                loan: Support::No(
                    "a zmq_msg_t is the caller's heap memory, copied through a Unix socket: no call lends shared memory",
                ),
                most_subscribers: None,
            },
            requests: Requests::ToOneServer,
            largest_message: None,
            configuration: vec![
                ("transport", "ipc:// (Unix sockets) in the trial's directory".into()),
                ("contexts and I/O threads", "one context per endpoint, 1 I/O thread".into()),
                ("ZMQ_SNDHWM (messages)", format!("{HWM} (default)")),
                ("ZMQ_RCVHWM (messages)", format!("{HWM} (default)")),
                ("ZMQ_LINGER (ms)", "0".into()),
                ("ZMQ_RECONNECT_IVL (ms)", RECONNECT_MS.to_string()),
                ("waiting receive", "zmq_recv, blocking".into()),
                ("polling receive", "zmq_recv with ZMQ_DONTWAIT in a loop".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Endpoint>> {
        let round_trip = setup.stream_or_round_trip().map_err(|e| anyhow!("zmq: {e}"))?;
        let at = endpoint(setup, "stream")?;
        Ok(opened(match (side, round_trip) {
            (Side::Accept, false) => Endpoint::bound(setup, zmq::PULL, &at, 1)?,
            (Side::Accept, true) => Endpoint::bound(setup, zmq::REP, &at, 1)?,
            (Side::Connect, false) => Endpoint::connected(setup, zmq::PUSH, &[at])?,
            (Side::Connect, true) => Endpoint::connected(setup, zmq::REQ, &[at])?,
        }))
    }

    fn publisher(setup: &Setup) -> Result<Opened<Endpoint>> {
        let (lossy, subscribers) = setup.broadcast("publisher")?;
        let at = endpoint(setup, "broadcast")?;
        let mut e = Endpoint::new(setup, zmq::XPUB)?;
        e.socket.set_xpub_verbose(true)?;
        if !lossy {
            set_int(&mut e.socket, zmq_sys::ZMQ_XPUB_NODROP, 1).context("setting ZMQ_XPUB_NODROP")?;
        }
        let monitor = Monitor::attach(&e.context, &e.socket, "publisher")?;
        e.socket.bind(&at).with_context(|| format!("binding {at}"))?;
        // A subscription arrives as a message on the XPUB socket: one from each subscriber.
        let deadline = Instant::now() + setup.timeout;
        let mut buf = [0u8; 64];
        for joined in 0..subscribers {
            let left = deadline.saturating_duration_since(Instant::now());
            e.socket.set_rcvtimeo(left.as_millis().max(1) as i32)?;
            match e.socket.recv_into(&mut buf, 0) {
                Ok(n) if n >= 1 && buf[0] == 1 => {}
                Ok(n) => bail!("the publisher received a {n}-byte message that is not a subscription"),
                Err(zmq::Error::EAGAIN) => bail!(
                    "only {joined} of {subscribers} subscribers subscribed at {at} within {:?}",
                    setup.timeout
                ),
                Err(e) => return Err(anyhow!(e).context("waiting for subscriptions")),
            }
        }
        e.socket.set_rcvtimeo(-1)?;
        e.ending = Some(Ending { monitor, peers: subscribers, resend: true });
        Ok(opened(e))
    }

    fn subscriber(setup: &Setup) -> Result<Opened<Endpoint>> {
        setup.broadcast("subscriber")?;
        let at = endpoint(setup, "broadcast")?;
        let mut e = Endpoint::new(setup, zmq::SUB)?;
        e.socket.set_subscribe(b"")?;
        e.socket.connect(&at).with_context(|| format!("connecting to {at}"))?;
        e.ends = Ends::new(1);
        Ok(opened(e))
    }

    fn producer(setup: &Setup) -> Result<Opened<Endpoint>> {
        Ok(opened(meshed(setup, Member::Producer, zmq::PUSH)?))
    }

    fn consumer(setup: &Setup) -> Result<Opened<Endpoint>> {
        Ok(opened(meshed(setup, Member::Consumer, zmq::PULL)?))
    }

    fn client(setup: &Setup) -> Result<Opened<Endpoint>> {
        let mut e = meshed(setup, Member::Client, zmq::REQ)?;
        // A client's requests are all answered when it closes: nothing to end.
        e.ending = None;
        Ok(opened(e))
    }

    fn server(setup: &Setup) -> Result<Opened<Endpoint>> {
        let Mesh::Bind { path, .. } = setup.mesh(Member::Server, "zmq")? else {
            bail!("zmq: a server binds")
        };
        let at = address(&path)?;
        // Its one sender of an end marker is its owner handle, below (a client sends none).
        let e = Endpoint::bound(setup, zmq::REP, &at, 1)?;
        let stopper = Stopper { context: e.context.clone(), at, timeout: setup.timeout };
        Ok(opened(e).owning(Some(Box::new(stopper))))
    }
}

/// The `ipc://` address of one bound socket of this trial.
fn endpoint(setup: &Setup, what: &str) -> Result<String> {
    address(&setup.socket_path(&format!("zmq-{what}"))?)
}

fn address(path: &std::path::Path) -> Result<String> {
    Ok(format!("ipc://{}", path.to_str().ok_or_else(|| anyhow!("{} is not UTF-8", path.display()))?))
}

/// A producer, consumer or client, wired as `Setup::mesh` says: a consumer binds, done when its
/// producers have ended; a producer or client connects to every consumer or server.
fn meshed(setup: &Setup, member: Member, kind: zmq::SocketType) -> Result<Endpoint> {
    match setup.mesh(member, "zmq")? {
        Mesh::Bind { path, peers } => Endpoint::bound(setup, kind, &address(&path)?, peers),
        Mesh::Connect(paths) => {
            let all = paths.iter().map(|p| address(p)).collect::<Result<Vec<_>>>()?;
            Endpoint::connected(setup, kind, &all)
        }
    }
}

fn set_int(socket: &mut zmq::Socket, option: u32, value: i32) -> Result<()> {
    // SAFETY: the pointer and length describe `value`, which outlives the call.
    let rc = unsafe {
        zmq_sys::zmq_setsockopt(
            socket.as_mut_ptr(),
            option as i32,
            (&value as *const i32).cast(),
            std::mem::size_of::<i32>(),
        )
    };
    if rc != 0 {
        return Err(anyhow!(zmq::Error::from_raw(unsafe { zmq_sys::zmq_errno() })));
    }
    Ok(())
}

/// One socket, and what its end needs.
pub struct Endpoint {
    socket: zmq::Socket,
    /// `ZMQ_DONTWAIT` when polling.
    flags: i32,
    /// A receiver's senders: it is done when each has sent its end marker.
    ends: Ends,
    /// A sender's end: how many peers must close before its socket may.
    ending: Option<Ending>,
    index: usize,
    timeout: Duration,
    /// The high-water marks as set.
    buffer: Buffer,
    // Dropped last: the sockets above keep it alive anyway (the crate counts references).
    context: zmq::Context,
}

struct Ending {
    monitor: Monitor,
    peers: usize,
    /// Whether to repeat the marker until every peer has closed: a round-robin socket sends each
    /// to one peer, a lossy one may drop it. REQ may send once only.
    resend: bool,
}

impl Endpoint {
    fn new(setup: &Setup, kind: zmq::SocketType) -> Result<Endpoint> {
        if setup.size < ipcbench_api::SMALLEST_MESSAGE {
            bail!(
                "zmq: messages of {} bytes: at least {} are needed",
                setup.size,
                ipcbench_api::SMALLEST_MESSAGE
            );
        }
        let context = zmq::Context::new();
        context.set_io_threads(1)?;
        let socket = context.socket(kind).with_context(|| format!("creating a {kind:?} socket"))?;
        socket.set_linger(0)?;
        socket.set_reconnect_ivl(RECONNECT_MS)?;
        if socket.get_sndhwm()? != HWM || socket.get_rcvhwm()? != HWM {
            bail!("zmq: the default high-water marks are not {HWM} in this libzmq: update the adapter");
        }
        let why = match setup.buffer_messages() {
            Some(n) => {
                let n = i32::try_from(n).unwrap_or(i32::MAX);
                socket.set_sndhwm(n)?;
                socket.set_rcvhwm(n)?;
                "--buffer"
            }
            None => "libzmq's default",
        };
        let hwm = socket.get_sndhwm()?;
        let buffer = Buffer::messages(
            hwm as usize,
            setup.size,
            format!(
                "ZMQ_SNDHWM and ZMQ_RCVHWM {hwm} messages ({why}, read back): the sender's queue and the \
                 receiver's hold that many each, and the ipc socket's kernel buffer more"
            ),
        );
        let flags = match setup.mode {
            RecvMode::Waiting => 0,
            RecvMode::Polling => zmq::DONTWAIT,
        };
        Ok(Endpoint {
            socket,
            flags,
            ends: Ends::new(0),
            ending: None,
            index: setup.index,
            timeout: setup.timeout,
            buffer,
            context,
        })
    }

    /// A receiving socket, bound at `at`, done when `senders` have ended.
    fn bound(setup: &Setup, kind: zmq::SocketType, at: &str, senders: usize) -> Result<Endpoint> {
        let mut e = Endpoint::new(setup, kind)?;
        e.socket.bind(at).with_context(|| format!("binding {at}"))?;
        e.ends = Ends::new(senders);
        Ok(e)
    }

    /// A sending socket connected to every address in `all`, each handshake done.
    fn connected(setup: &Setup, kind: zmq::SocketType, all: &[String]) -> Result<Endpoint> {
        let mut e = Endpoint::new(setup, kind)?;
        let mut monitor = Monitor::attach(&e.context, &e.socket, "sender")?;
        for at in all {
            e.socket.connect(at).with_context(|| format!("connecting to {at}"))?;
        }
        let deadline = Instant::now() + setup.timeout;
        while monitor.up < all.len() {
            if !monitor.read(deadline)? {
                bail!(
                    "only {} of {} connections ({}) completed their handshake within {:?}",
                    monitor.up,
                    all.len(),
                    all.join(", "),
                    setup.timeout
                );
            }
        }
        e.ends = Ends::new(0);
        e.ending = Some(Ending { monitor, peers: all.len(), resend: kind != zmq::REQ });
        Ok(e)
    }

    /// Sends end markers until every peer has closed its connection, or the set-up timeout
    /// passes (a receiver that died; the driver reports it).
    fn end(&mut self, ending: &mut Ending) -> Result<()> {
        let marker = end::marker(self.index);
        let deadline = Instant::now() + self.timeout;
        let mut sent = false;
        while ending.monitor.down < ending.peers {
            if !sent || ending.resend {
                match self.socket.send(&marker[..], zmq::DONTWAIT) {
                    Ok(()) => sent = true,
                    Err(zmq::Error::EAGAIN) => {}
                    Err(e) => return Err(anyhow!(e).context("sending the end marker")),
                }
            }
            let step = (Instant::now() + Duration::from_millis(1)).min(deadline);
            if !ending.monitor.read(step)? && Instant::now() >= deadline {
                bail!(
                    "{} of {} peers closed within {:?} of the end marker",
                    ending.monitor.down,
                    ending.peers,
                    self.timeout
                );
            }
        }
        Ok(())
    }

    /// A short message: an end marker. Returns whether every sender has now ended.
    #[cold]
    fn marker(&mut self, buf: &[u8], n: usize) -> Result<bool> {
        self.ends.see(&buf[..n.min(buf.len())])
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(mut ending) = self.ending.take()
            && let Err(e) = self.end(&mut ending)
        {
            eprintln!("zmq: sender {} could not end its channel: {e:#}", self.index);
        }
    }
}

impl Tx for Endpoint {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        self.socket.send(message, 0).map_err(|e| anyhow!("zmq_send: {e}"))
    }
}

impl Rx for Endpoint {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        loop {
            match self.socket.recv_into(buf, self.flags) {
                Ok(n) if !end::is_marker(n) => return Ok(Received::Message(n)),
                Ok(n) => {
                    if self.marker(buf, n)? {
                        return Ok(Received::Closed);
                    }
                }
                Err(zmq::Error::EAGAIN) => return Ok(Received::Empty),
                Err(e) => return Err(anyhow!("zmq_recv: {e}")),
            }
        }
    }
}

/// A socket's monitor: counts completed handshakes and closed connections.
struct Monitor {
    pair: zmq::Socket,
    up: usize,
    down: usize,
}

impl Monitor {
    /// Attaches before any bind or connect, so no event is missed.
    fn attach(context: &zmq::Context, socket: &zmq::Socket, name: &str) -> Result<Monitor> {
        let at = format!("inproc://monitor-{name}");
        let events = zmq_sys::ZMQ_EVENT_HANDSHAKE_SUCCEEDED | zmq_sys::ZMQ_EVENT_DISCONNECTED;
        socket.monitor(&at, events as i32).context("starting a socket monitor")?;
        let pair = context.socket(zmq::PAIR)?;
        pair.set_linger(0)?;
        pair.connect(&at).context("connecting to the socket monitor")?;
        Ok(Monitor { pair, up: 0, down: 0 })
    }

    /// Reads the events there are, waiting until `deadline` for the first; false if none came.
    fn read(&mut self, deadline: Instant) -> Result<bool> {
        let mut any = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = if any { 0 } else { left.as_millis().max(1) as i64 };
            if self.pair.poll(zmq::POLLIN, wait)? == 0 {
                return Ok(any);
            }
            // Two frames: the event (16-bit number, 32-bit value), then the endpoint's address.
            let event = self.pair.recv_bytes(0)?;
            while self.pair.get_rcvmore()? {
                self.pair.recv_bytes(0)?;
            }
            let Some(number) = event.get(..2).map(|b| u16::from_ne_bytes([b[0], b[1]]) as u32) else {
                bail!("a socket monitor event of {} bytes", event.len());
            };
            match number {
                zmq_sys::ZMQ_EVENT_HANDSHAKE_SUCCEEDED => self.up += 1,
                zmq_sys::ZMQ_EVENT_DISCONNECTED => self.down += 1,
                _ => {}
            }
            any = true;
        }
    }
}

/// A server's owner handle: when the driver says every client is done, it sends the server an
/// end marker from a REQ socket of its own, and waits until the server has closed.
struct Stopper {
    context: zmq::Context,
    at: String,
    timeout: Duration,
}

impl Stopper {
    fn stop(&self) -> Result<()> {
        let socket = self.context.socket(zmq::REQ)?;
        socket.set_linger(0)?;
        let mut monitor = Monitor::attach(&self.context, &socket, "stopper")?;
        socket.connect(&self.at)?;
        socket.send(&end::marker(0)[..], 0)?;
        let deadline = Instant::now() + self.timeout;
        while monitor.down == 0 {
            if !monitor.read(deadline)? {
                bail!("the server at {} did not close within {:?} of its end marker", self.at, self.timeout);
            }
        }
        Ok(())
    }
}

impl Drop for Stopper {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("zmq: ending the service: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::Shape;
    use ipcbench_api::testing::{self, Scratch, in_each_mode};

    #[test]
    fn broadcasts_reach_every_subscriber_in_order() {
        for lossy in [false, true] {
            let place = Scratch::new(&format!("zmq-bcast-{lossy}"));
            let shape = Shape::Broadcast { lossy, subscribers: 2 };
            testing::broadcast_in_order::<Zmq>(&place.setup(shape), 5000, testing::Keeps::Buffer);
        }
    }

    #[test]
    fn a_sender_with_no_receiver_fails_its_set_up_naming_the_address() {
        let place = Scratch::new("zmq-lonely");
        let setup = |shape| Setup { timeout: Duration::from_millis(200), ..place.setup(shape) };
        let shape = Shape::Queue { producers: 1, consumers: 2 };
        let err = Zmq::producer(&setup(shape)).err().unwrap().to_string();
        assert!(err.contains("only 0 of 2 connections"), "{err}");
        assert!(err.contains(&format!("ipc://{}/zmq-queue-c1", place.dir.display())), "{err}");
        let shape = Shape::Broadcast { lossy: false, subscribers: 1 };
        let err = Zmq::publisher(&setup(shape)).err().unwrap().to_string();
        assert!(err.contains("only 0 of 1 subscribers subscribed"), "{err}");
        let err = Zmq::producer(&setup(Shape::Stream)).err().unwrap().to_string();
        assert!(err.contains("a producer endpoint was asked for Stream"), "{err}");
        let err = Zmq::stream(&setup(shape), Side::Accept).err().unwrap().to_string();
        assert!(err.starts_with("zmq: a stream endpoint was asked for Broadcast"), "{err}");
    }

    /// Without `--buffer` the high-water marks are libzmq's; with it, its bytes in messages.
    #[test]
    fn the_buffer_sets_the_high_water_marks() {
        let place = Scratch::new("zmq-buffer");
        for (buffer, hwm) in [(None, 1000), (Some(64 << 10), 4096)] {
            let setup = Setup { buffer, ..place.setup(Shape::Stream) };
            for b in testing::stream_buffers::<Zmq>(&setup) {
                let b = b.unwrap();
                assert_eq!((b.messages, b.bytes), (Some(hwm), Some(hwm * 16)), "{}", b.how);
                assert_eq!(b.how.contains("--buffer"), buffer.is_some(), "{}", b.how);
            }
        }
    }

    #[test]
    fn the_defaults_recorded_are_the_defaults() {
        let info = Zmq::info();
        assert!(info.version.starts_with("4.3.5 "), "{}", info.version);
        let context = zmq::Context::new();
        let socket = context.socket(zmq::PUSH).unwrap();
        assert_eq!((socket.get_sndhwm().unwrap(), socket.get_rcvhwm().unwrap()), (HWM, HWM));
        assert!(
            info.configuration.iter().any(|(k, v)| *k == "ZMQ_SNDHWM (messages)" && v.starts_with("1000"))
        );
    }

    // A socket sends any length: the contract's checks only.
    #[test]
    fn a_stream_and_round_trips_in_each_mode() {
        in_each_mode::<Zmq>("zmq-stream", Shape::Stream, |setup| {
            testing::stream_delivers::<Zmq>(setup, 2000, || {});
        });
        in_each_mode::<Zmq>("zmq-rtt", Shape::RoundTrip, |setup| testing::round_trips::<Zmq>(setup, 200));
    }

    #[test]
    fn a_work_queue_2x2_and_a_service_2x2_over_the_mesh() {
        let place = Scratch::new("zmq-queue");
        testing::queue_exactly_once::<Zmq>(&place.setup(Shape::Queue { producers: 2, consumers: 2 }), 500);
        let place = Scratch::new("zmq-service");
        let answered =
            testing::service_replies::<Zmq>(&place.setup(Shape::Service { clients: 2, servers: 2 }), 200);
        assert_eq!(answered.iter().sum::<u64>(), 400, "each request answered once: {answered:?}");
    }
}
