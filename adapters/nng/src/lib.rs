//! ipcbench adapter for NNG 2.0, through the raw bindings of `nng-sys` (NNG 2.0.0, built from
//! its bundled source), over `ipc://` endpoints (Unix sockets) in the trial's directory.
//!
//! | Pattern | Sockets |
//! |---|---|
//! | stream, round trip | pair1 (receiver or echo listens, sender or pinger dials) |
//! | broadcast, lossy | pub0 (listens) to sub0 (dials, subscribes to everything) |
//! | broadcast, lossless | none: pub0 drops the oldest message for a subscriber whose queue is full |
//! | work queue | push0 producers, each dialing every pull0 consumer (which listen) |
//! | service | req0 clients, each dialing every rep0 server (which listen) |
//!
//! Before a sender or client says ready, every connection it needs is up (counted by pipe
//! notifications): no message of the window goes to a subscriber not yet there, and no server
//! is left out of a client's round-robin. Closing an NNG socket may drop what it still queues,
//! so a sender ends by sending end markers until every peer has closed its connection (see
//! `ipcbench_api::end`). A server's channel ends when the driver says every client is done: its
//! owner handle closes the server's socket, which ends the receive the server is waiting in.
//! Buffers are NNG's defaults, recorded in the configuration, unless `--buffer` sets every
//! send and receive buffer the socket's protocol has to its bytes in messages (at most 8192, the
//! most NNG takes).

use std::ffi::{CStr, CString, c_int, c_void};
use std::ptr;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use ipcbench_api::end::{self, Ends};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Member, Mesh, Opened, Received, RecvMode, Requests, Rx,
    Setup, Side, Support, Tx, retry_until,
};
use nng_sys as sys;

/// NNG 2.0.
pub struct Nng;

/// How soon a dialer retries a listener that is not there yet (NNG's default is 1 s, which
/// would only lengthen set-up).
const RECONNECT_MS: i32 = 10;
const RECONNECT_MAX_MS: i32 = 100;

impl Library for Nng {
    type Stream = Endpoint;
    type Publisher = Endpoint;
    type Subscriber = Endpoint;
    type Producer = Endpoint;
    type Consumer = Endpoint;
    type Client = Endpoint;
    type Server = Endpoint;

    fn info() -> LibraryInfo {
        // SAFETY: nng_version returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(sys::nng_version()) }.to_string_lossy();
        LibraryInfo {
            id: "nng",
            kind: ipcbench_api::Kind::OverSockets,
            name: "NNG",
            version: format!("{version} (built from source by crate nng-sys 0.4.0+2.0.0)"),
            modes: &[RecvMode::Waiting, RecvMode::Polling],
            capabilities: Capabilities {
                stream: Support::Yes("pair1 over ipc://"),
                round_trip: Support::Yes("pair1 over ipc://, both ways"),
                broadcast_lossless: Support::No(
                    "pub0 always drops the oldest message for a full subscriber; NNG has no blocking broadcast",
                ),
                broadcast_lossy: Support::Yes("pub0 to sub0 subscribed to everything"),
                queue: Support::Yes("push0 producers, each dialing every pull0 consumer"),
                service: Support::Yes("req0 clients, each dialing every rep0 server"),
                batch: Support::No("no call sends or receives several messages at once"),
                loan: Support::No(
                    "an nng_msg is the caller's heap memory, copied through a Unix socket: no call lends shared memory",
                ),
                most_subscribers: None,
            },
            requests: Requests::ToOneServer,
            largest_message: None,
            configuration: vec![
                ("transport", "ipc:// (Unix sockets) in the trial's directory".into()),
                ("nng_init", "NULL: NNG's default thread pools".into()),
                ("pair1 send and receive buffers (messages)", "0 and 0 (defaults)".into()),
                ("push0 send buffer (messages)", "0 (default)".into()),
                ("pub0 queue per subscriber (messages)", "16 (default)".into()),
                ("sub0 receive buffer (messages)", "128, dropping the oldest (defaults)".into()),
                ("reconnect time, min and max (ms)", format!("{RECONNECT_MS} and {RECONNECT_MAX_MS}")),
                ("waiting receive", "nng_recv, blocking".into()),
                ("polling receive", "nng_recv with NNG_FLAG_NONBLOCK in a loop".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Endpoint>> {
        setup.stream_or_round_trip().map_err(|e| anyhow!("nng: {e}"))?;
        let at = endpoint(setup, "stream")?;
        Ok(opened(match side {
            Side::Accept => Endpoint::listening(setup, sys::nng_pair1_open, &at, 1)?,
            Side::Connect => Endpoint::dialing(setup, sys::nng_pair1_open, &[at])?,
        }))
    }

    fn publisher(setup: &Setup) -> Result<Opened<Endpoint>> {
        let (lossy, subscribers) = setup.broadcast("publisher")?;
        if !lossy {
            bail!("nng has no lossless broadcast: pub0 always drops");
        }
        let at = endpoint(setup, "broadcast")?;
        let mut e = Endpoint::new(setup, sys::nng_pub0_open)?;
        e.listen(&at)?;
        e.wait_for(subscribers, &format!("subscribers at {}", at.to_string_lossy()))?;
        e.ending = Some(subscribers);
        Ok(opened(e))
    }

    fn subscriber(setup: &Setup) -> Result<Opened<Endpoint>> {
        if !setup.broadcast("subscriber")?.0 {
            bail!("nng has no lossless broadcast: pub0 always drops");
        }
        let at = endpoint(setup, "broadcast")?;
        let mut e = Endpoint::new(setup, sys::nng_sub0_open)?;
        // SAFETY: an empty prefix (null, 0) subscribes to every message.
        check(
            unsafe { sys::nng_sub0_socket_subscribe(e.socket, ptr::null(), 0) },
            "nng_sub0_socket_subscribe",
        )?;
        e.dial(&at)?;
        e.ends = Ends::new(1);
        Ok(opened(e))
    }

    fn producer(setup: &Setup) -> Result<Opened<Endpoint>> {
        Ok(opened(meshed(setup, Member::Producer, sys::nng_push0_open)?))
    }

    fn consumer(setup: &Setup) -> Result<Opened<Endpoint>> {
        Ok(opened(meshed(setup, Member::Consumer, sys::nng_pull0_open)?))
    }

    fn client(setup: &Setup) -> Result<Opened<Endpoint>> {
        let mut e = meshed(setup, Member::Client, sys::nng_req0_open)?;
        // A client's requests are all answered when it closes: nothing to end.
        e.ending = None;
        Ok(opened(e))
    }

    fn server(setup: &Setup) -> Result<Opened<Endpoint>> {
        let Mesh::Bind { path, .. } = setup.mesh(Member::Server, "nng")? else {
            bail!("nng: a server binds")
        };
        // No end marker comes: its owner handle closes its socket instead.
        let e = Endpoint::listening(setup, sys::nng_rep0_open, &address(&path)?, 0)?;
        let closer = Closer(e.socket);
        Ok(opened(e).owning(Some(Box::new(closer))))
    }
}

/// The `ipc://` address of one listening socket of this trial.
fn endpoint(setup: &Setup, what: &str) -> Result<CString> {
    address(&setup.socket_path(&format!("nng-{what}"))?)
}

fn address(path: &std::path::Path) -> Result<CString> {
    let path = path.to_str().ok_or_else(|| anyhow!("{} is not UTF-8", path.display()))?;
    Ok(CString::new(format!("ipc://{path}"))?)
}

/// A producer, consumer or client, wired as `Setup::mesh` says: a consumer listens, done when
/// its producers have ended; a producer or client dials every consumer or server.
fn meshed(setup: &Setup, member: Member, open: Open) -> Result<Endpoint> {
    match setup.mesh(member, "nng")? {
        Mesh::Bind { path, peers } => Endpoint::listening(setup, open, &address(&path)?, peers),
        Mesh::Connect(paths) => {
            let all = paths.iter().map(|p| address(p)).collect::<Result<Vec<_>>>()?;
            Endpoint::dialing(setup, open, &all)
        }
    }
}

/// NNG's error text for a non-zero result.
fn check(rv: c_int, call: &str) -> Result<()> {
    if rv == 0 {
        return Ok(());
    }
    Err(anyhow!("{call}: {}", error_text(rv)))
}

fn error_text(rv: c_int) -> String {
    // SAFETY: nng_strerror returns a static NUL-terminated string for any value.
    unsafe { CStr::from_ptr(sys::nng_strerror(sys::nng_err(rv as u32))) }.to_string_lossy().into_owned()
}

const EAGAIN: c_int = sys::nng_err::NNG_EAGAIN.0 as c_int;
const ENOTSUP: c_int = sys::nng_err::NNG_ENOTSUP.0 as c_int;

/// The deepest buffer NNG's protocols take, in messages.
const DEEPEST: usize = 8192;

/// An endpoint, with what its buffers hold.
fn opened(e: Endpoint) -> Opened<Endpoint> {
    let buffer = e.buffer.clone();
    Opened::new(e).buffered(buffer)
}

/// Sets the socket's send and receive buffers to `--buffer`'s messages where its protocol has
/// them (pair1 both, push0 and pub0 a send buffer, sub0 a receive buffer; pull0, req0 and rep0
/// none), then reads back what it has.
fn buffers(socket: sys::nng_socket, setup: &Setup) -> Result<Buffer> {
    let wanted = setup.buffer_messages();
    let (mut parts, mut deepest) = (Vec::new(), None);
    for (what, option) in [("send", sys::NNG_OPT_SENDBUF), ("receive", sys::NNG_OPT_RECVBUF)] {
        let name = option.as_ptr().cast();
        if let Some(n) = wanted {
            // SAFETY: the option name is a NUL-terminated constant.
            let rv = unsafe { sys::nng_socket_set_int(socket, name, n.min(DEEPEST) as c_int) };
            if rv != ENOTSUP {
                check(rv, &format!("setting the {what} buffer to {} messages", n.min(DEEPEST)))?;
            }
        }
        let mut depth: c_int = 0;
        // SAFETY: as above; `depth` is valid for a write.
        let rv = unsafe { sys::nng_socket_get_int(socket, name, &mut depth) };
        if rv == ENOTSUP {
            continue;
        }
        check(rv, &format!("reading the {what} buffer"))?;
        parts.push(format!("{what} buffer {depth}"));
        deepest = deepest.max(Some(depth as usize));
    }
    let Some(messages) = deepest else {
        return Ok(Buffer {
            messages: None,
            bytes: None,
            how: "no send or receive buffer in this protocol; messages wait in NNG's pipes".into(),
        });
    };
    let why = match wanted {
        None => "NNG's defaults".to_string(),
        Some(n) if n > DEEPEST => format!("--buffer asked {n}; NNG takes at most {DEEPEST}"),
        Some(_) => "--buffer".to_string(),
    };
    Ok(Buffer::messages(messages, setup.size, format!("{} messages ({why}, read back)", parts.join(", "))))
}
const ECLOSED: c_int = sys::nng_err::NNG_ECLOSED.0 as c_int;

/// The connections of one socket, counted by NNG's pipe notifications.
#[derive(Default)]
struct Pipes {
    added: AtomicUsize,
    removed: AtomicUsize,
}

impl Pipes {
    fn open(&self) -> usize {
        // Removed first: a pipe is counted removed only after it was counted added.
        let removed = self.removed.load(Ordering::Acquire);
        self.added.load(Ordering::Acquire) - removed
    }
}

unsafe extern "C" fn on_pipe(_: sys::nng_pipe, event: sys::nng_pipe_ev, arg: *mut c_void) {
    // SAFETY: `arg` is the leaked, never freed `Pipes` registered with this callback.
    let pipes = unsafe { &*(arg as *const Pipes) };
    match event {
        sys::NNG_PIPE_EV_ADD_POST => pipes.added.fetch_add(1, Ordering::AcqRel),
        sys::NNG_PIPE_EV_REM_POST => pipes.removed.fetch_add(1, Ordering::AcqRel),
        _ => 0,
    };
}

/// One socket, and what its end needs.
pub struct Endpoint {
    socket: sys::nng_socket,
    /// `NNG_FLAG_NONBLOCK` when polling.
    flags: c_int,
    /// A receiver's senders: it is done when each has sent its end marker.
    ends: Ends,
    /// A sender's end: how many peers must close before its socket may.
    ending: Option<usize>,
    /// Lives as long as the process: NNG may call back until the socket is closed.
    pipes: &'static Pipes,
    index: usize,
    timeout: Duration,
    /// Its buffers as set.
    buffer: Buffer,
}

type Open = unsafe extern "C" fn(*mut sys::nng_socket) -> c_int;

impl Endpoint {
    fn new(setup: &Setup, open: Open) -> Result<Endpoint> {
        if setup.size < ipcbench_api::SMALLEST_MESSAGE {
            bail!(
                "nng: messages of {} bytes: at least {} are needed",
                setup.size,
                ipcbench_api::SMALLEST_MESSAGE
            );
        }
        static INIT: Once = Once::new();
        let mut init = 0;
        // SAFETY: null asks for the default parameters. NNG 2.0 must be initialized first.
        INIT.call_once(|| init = unsafe { sys::nng_init(ptr::null()) }.0 as c_int);
        check(init, "nng_init")?;
        let mut socket = sys::nng_socket::default();
        // SAFETY: `open` is one of NNG's socket constructors; it writes the new socket's id.
        check(unsafe { open(&mut socket) }, "opening a socket")?;
        let buffer = buffers(socket, setup)?;
        let pipes: &'static Pipes = Box::leak(Box::default());
        let e = Endpoint {
            socket,
            flags: match setup.mode {
                RecvMode::Waiting => 0,
                RecvMode::Polling => sys::NNG_FLAG_NONBLOCK as c_int,
            },
            ends: Ends::new(0),
            ending: None,
            pipes,
            index: setup.index,
            timeout: setup.timeout,
            buffer,
        };
        for event in [sys::NNG_PIPE_EV_ADD_POST, sys::NNG_PIPE_EV_REM_POST] {
            let arg = pipes as *const Pipes as *mut c_void;
            // SAFETY: the callback only reads `arg`, a `Pipes` that is never freed.
            let rv = unsafe { sys::nng_pipe_notify(socket, event, Some(on_pipe), arg) };
            check(rv.0 as c_int, "nng_pipe_notify")?;
        }
        Ok(e)
    }

    /// A receiving socket listening at `at`, done when `senders` have ended.
    fn listening(setup: &Setup, open: Open, at: &CStr, senders: usize) -> Result<Endpoint> {
        let mut e = Endpoint::new(setup, open)?;
        e.listen(at)?;
        e.ends = Ends::new(senders);
        Ok(e)
    }

    /// A sending socket dialing every address in `all`, each connection up.
    fn dialing(setup: &Setup, open: Open, all: &[CString]) -> Result<Endpoint> {
        let mut e = Endpoint::new(setup, open)?;
        for at in all {
            e.dial(at)?;
        }
        let names = all.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(", ");
        e.wait_for(all.len(), &format!("connections ({names})"))?;
        e.ending = Some(all.len());
        Ok(e)
    }

    fn listen(&mut self, at: &CStr) -> Result<()> {
        // SAFETY: `at` is NUL-terminated; no listener handle is asked for.
        let rv = unsafe { sys::nng_listen(self.socket, at.as_ptr(), ptr::null_mut(), 0) };
        check(rv, &format!("listening at {}", at.to_string_lossy()))
    }

    /// Dials in the background: the listener may not be there yet, and the dialer retries.
    fn dial(&mut self, at: &CStr) -> Result<()> {
        for (option, ms) in
            [(sys::NNG_OPT_RECONNMINT, RECONNECT_MS), (sys::NNG_OPT_RECONNMAXT, RECONNECT_MAX_MS)]
        {
            // SAFETY: the option names are NUL-terminated constants.
            let rv = unsafe { sys::nng_socket_set_ms(self.socket, option.as_ptr().cast(), ms) };
            check(rv, "setting the reconnect time")?;
        }
        let flags = sys::NNG_FLAG_NONBLOCK as c_int;
        // SAFETY: `at` is NUL-terminated; no dialer handle is asked for.
        let rv = unsafe { sys::nng_dial(self.socket, at.as_ptr(), ptr::null_mut(), flags) };
        check(rv, &format!("dialing {}", at.to_string_lossy()))
    }

    /// Waits until `peers` connections are up.
    fn wait_for(&self, peers: usize, what: &str) -> Result<()> {
        let up = || Ok(if self.pipes.open() < peers { Err(()) } else { Ok(()) });
        retry_until(Instant::now() + self.timeout, Duration::from_millis(1), up, |()| {
            anyhow!("only {} of {peers} {what} were up within {:?}", self.pipes.open(), self.timeout)
        })
    }

    /// Sends end markers until every peer has closed its connection, or the set-up timeout
    /// passes (a receiver that died; the driver reports it).
    fn end(&mut self, peers: usize) -> Result<()> {
        let marker = end::marker(self.index);
        let closed = || self.pipes.removed.load(Ordering::Acquire);
        let send = || {
            if closed() >= peers {
                return Ok(Ok(()));
            }
            // A push0 sends each marker to one consumer, a pub0 may drop it: repeat until done.
            let flags = sys::NNG_FLAG_NONBLOCK as c_int;
            // SAFETY: the pointer and length describe `marker`; NNG copies it.
            let rv = unsafe { sys::nng_send(self.socket, marker.as_ptr().cast(), marker.len(), flags) };
            if rv != 0 && rv != EAGAIN {
                check(rv, "sending the end marker")?;
            }
            Ok(Err(()))
        };
        retry_until(Instant::now() + self.timeout, Duration::from_millis(1), send, |()| {
            anyhow!("{} of {peers} peers closed within {:?} of the end marker", closed(), self.timeout)
        })
    }

    /// A short message: an end marker. Returns whether every sender has now ended.
    #[cold]
    fn marker(&mut self, buf: &[u8], n: usize) -> Result<bool> {
        self.ends.see(&buf[..n.min(buf.len())])
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(peers) = self.ending.take()
            && let Err(e) = self.end(peers)
        {
            eprintln!("nng: sender {} could not end its channel: {e:#}", self.index);
        }
        // SAFETY: closing a socket id is always safe, even one closed already.
        unsafe { sys::nng_socket_close(self.socket) };
    }
}

impl Tx for Endpoint {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        // SAFETY: the pointer and length describe `message`; NNG copies it.
        let rv = unsafe { sys::nng_send(self.socket, message.as_ptr().cast(), message.len(), 0) };
        check(rv, "nng_send")
    }
}

impl Rx for Endpoint {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        loop {
            let mut n = buf.len();
            // SAFETY: NNG copies at most `n` bytes into `buf` and sets `n` to the message's length.
            let rv = unsafe { sys::nng_recv(self.socket, buf.as_mut_ptr().cast(), &mut n, self.flags) };
            match rv {
                0 if !end::is_marker(n) => return Ok(Received::Message(n)),
                0 => {
                    if self.marker(buf, n)? {
                        return Ok(Received::Closed);
                    }
                }
                EAGAIN => return Ok(Received::Empty),
                // Only a server's owner closes a socket in use, once every client is done.
                ECLOSED => return Ok(Received::Closed),
                _ => check(rv, "nng_recv")?,
            }
        }
    }
}

/// A server's owner handle: when the driver says every client is done, it closes the server's
/// socket, and the receive the server waits in returns "closed".
struct Closer(sys::nng_socket);

impl Drop for Closer {
    fn drop(&mut self) {
        // SAFETY: NNG sockets may be closed from any thread; a pending receive then fails.
        unsafe { sys::nng_socket_close(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::Shape;
    use ipcbench_api::testing::{self, Scratch, in_each_mode};

    /// pair1's buffers are 0 by default; `--buffer` sets both, cut to NNG's deepest.
    #[test]
    fn the_buffer_sets_pair1s_send_and_receive_buffers() {
        let place = Scratch::new("nng-buffer");
        for (buffer, depth) in [(None, 0), (Some(1024), 64), (Some(1 << 20), 8192)] {
            let setup = Setup { buffer, ..place.setup(Shape::Stream) };
            for b in testing::stream_buffers::<Nng>(&setup) {
                let b = b.unwrap();
                assert_eq!(b.messages, Some(depth), "{}", b.how);
                assert!(
                    b.how.starts_with(&format!("send buffer {depth}, receive buffer {depth}")),
                    "{}",
                    b.how
                );
                assert_eq!(b.how.contains("at most 8192"), depth == 8192, "{}", b.how);
            }
        }
    }

    #[test]
    fn a_lossy_broadcast_reaches_every_subscriber_in_order() {
        let place = Scratch::new("nng-bcast");
        testing::broadcast_in_order::<Nng>(
            &place.setup(Shape::Broadcast { lossy: true, subscribers: 2 }),
            5000,
            testing::Keeps::Some,
        );
    }

    #[test]
    fn a_sender_with_no_receiver_fails_its_set_up_naming_the_address() {
        let place = Scratch::new("nng-lonely");
        let setup = |shape| Setup { timeout: Duration::from_millis(200), ..place.setup(shape) };
        let shape = Shape::Queue { producers: 1, consumers: 2 };
        let err = Nng::producer(&setup(shape)).err().unwrap().to_string();
        assert!(err.contains("only 0 of 2 connections"), "{err}");
        assert!(err.contains(&format!("ipc://{}/nng-queue-c1", place.dir.display())), "{err}");
        let shape = Shape::Broadcast { lossy: false, subscribers: 1 };
        let err = Nng::publisher(&setup(shape)).err().unwrap().to_string();
        assert!(err.contains("no lossless broadcast"), "{err}");
        assert!(!Nng::info().capabilities.broadcast_lossless.is_yes());
        let err = Nng::stream(&setup(shape), Side::Accept).err().unwrap().to_string();
        assert!(err.starts_with("nng: a stream endpoint was asked for Broadcast"), "{err}");
    }

    #[test]
    fn the_version_is_2_0() {
        assert!(Nng::info().version.starts_with("2.0.0 "), "{}", Nng::info().version);
    }

    // A socket sends any length: the contract's checks only.
    #[test]
    fn a_stream_and_round_trips_in_each_mode() {
        in_each_mode::<Nng>("nng-stream", Shape::Stream, |setup| {
            testing::stream_delivers::<Nng>(setup, 2000, || {});
        });
        in_each_mode::<Nng>("nng-rtt", Shape::RoundTrip, |setup| testing::round_trips::<Nng>(setup, 200));
    }

    #[test]
    fn a_work_queue_2x2_and_a_service_2x2_over_the_mesh() {
        let place = Scratch::new("nng-queue");
        testing::queue_exactly_once::<Nng>(&place.setup(Shape::Queue { producers: 2, consumers: 2 }), 500);
        let place = Scratch::new("nng-service");
        let answered =
            testing::service_replies::<Nng>(&place.setup(Shape::Service { clients: 2, servers: 2 }), 200);
        assert_eq!(answered.iter().sum::<u64>(), 400, "each request answered once: {answered:?}");
    }
}
