//! The ipcbench adapter for POSIX message queues, one of ipc-bench's primitives: a stream is one
//! queue, a round trip two (one each way), a work queue one queue that every producer sends on
//! and every consumer receives from.
//!
//! The accepting side (receiver, echo) creates `/<name>.forth` (and `/<name>.back`) with
//! `O_CREAT | O_EXCL`, `mq_maxmsg` the system's `msg_max` and `mq_msgsize` the case's size. The
//! connecting side opens them (retrying every millisecond until they exist) and unlinks both
//! names at once: from then on the queues live only as long as the two processes hold them, so
//! nothing outlives a crash. (`/dev/mqueue` is often not mounted, so a left-over queue could not
//! even be seen; the driver also unlinks both names after every trial, see `remove`.)
//!
//! The end of a stream is a message of zero bytes, which no case sends: a sender's drop sends it
//! (`mq_timedsend`, waiting at most the set-up timeout for room), and a receiver that gets it
//! returns `Closed` from then on. A work queue's producer 0 creates `/<name>.queue` and holds
//! an owner's descriptor; once every producer is done (the driver's drain) the owner sends one
//! empty message per consumer behind the last data (a queue is first in, first out within a
//! priority), so each consumer ends after the queue is empty, and unlinks the name.
//!
//! Two receive modes: waiting, a blocking `mq_receive`; polling, the receiving descriptor opened
//! `O_NONBLOCK` (a descriptor of its own: senders' stay blocking) and `mq_receive` called again
//! until a message is there.

use std::ffi::CString;
use std::io;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Opened, Pair, Received, RecvMode, Requests, Rx, Setup, Side,
    Support, Tx, Unsupported, retry_until,
};

/// POSIX message queues.
pub struct PosixMq;

/// A stream side: the queue it sends on, the queue it receives from.
pub type Channel = Pair<Sender, Receiver, ()>;

/// Where the system's limits for unprivileged queues are read.
const MSG_MAX: &str = "/proc/sys/fs/mqueue/msg_max";
const MSGSIZE_MAX: &str = "/proc/sys/fs/mqueue/msgsize_max";

/// Both: a blocking `mq_receive`, and a non-blocking one called again.
const MODES: &[RecvMode] = &RecvMode::ALL;

/// How a receiving descriptor is opened: `O_NONBLOCK` when polling.
fn receiving(setup: &Setup) -> libc::c_int {
    match setup.mode {
        RecvMode::Waiting => libc::O_RDONLY,
        RecvMode::Polling => libc::O_RDONLY | libc::O_NONBLOCK,
    }
}

fn limit(path: &str) -> Result<usize> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("reading {path}: {e}"))?;
    text.trim().parse().map_err(|e| anyhow!("{path} holds {:?}: {e}", text.trim()))
}

impl Library for PosixMq {
    type Stream = Channel;
    type Publisher = Unsupported;
    type Subscriber = Unsupported;
    type Producer = Sender;
    type Consumer = Receiver;
    type Client = Unsupported;
    type Server = Unsupported;

    fn info() -> LibraryInfo {
        let shown = |path: &str| match limit(path) {
            Ok(n) => n.to_string(),
            Err(e) => format!("unknown ({e})"),
        };
        LibraryInfo {
            id: "posix-mq",
            kind: ipcbench_api::Kind::MessageQueue,
            name: "POSIX message queues",
            version: ipcbench_api::linux_version(),
            modes: MODES,
            capabilities: Capabilities {
                stream: Support::Yes("one queue; mq_send and mq_receive"),
                round_trip: Support::Yes("two queues, one each way"),
                broadcast_lossless: Support::No("a message queue hands each message to one reader"),
                broadcast_lossy: Support::No("a message queue hands each message to one reader"),
                queue: Support::Yes(
                    "one queue; every producer mq_sends on it, every consumer mq_receives from it",
                ),
                service: Support::No(
                    "a message queue has no replies; a service would be the harness pairing queues",
                ),
                batch: Support::No("mq_send and mq_receive move one message per call"),
                loan: Support::No("the kernel copies every message in (mq_send) and out (mq_receive)"),
                most_subscribers: None,
            },
            requests: Requests::ToOneServer,
            largest_message: Some(match limit(MSGSIZE_MAX) {
                Ok(n) => (
                    n,
                    format!("the system's msgsize_max ({MSGSIZE_MAX}), the limit of an unprivileged queue"),
                ),
                Err(e) => (0, format!("the system's msgsize_max is unknown ({e})")),
            }),
            configuration: vec![
                ("depth (mq_maxmsg)", format!("{}: the system's msg_max ({MSG_MAX})", shown(MSG_MAX))),
                ("msgsize_max", format!("{} bytes ({MSGSIZE_MAX})", shown(MSGSIZE_MAX))),
                ("mq_msgsize", "the case's message size".into()),
                ("end of stream", "a message of zero bytes".into()),
                (
                    "receive",
                    "waiting: a blocking mq_receive; polling: the receiving descriptor O_NONBLOCK, \
                     mq_receive again until a message is there"
                        .into(),
                ),
            ],
        }
    }

    /// `/dev/mqueue` need not be mounted, so the driver can't list queues: by name.
    fn remove_leftovers(trial: &str) -> Vec<String> {
        remove(trial).into_iter().map(|q| format!("the POSIX queue {q}")).collect()
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Channel>> {
        let round_trip = setup.stream_or_round_trip()?;
        let [forth, back, _] = names(setup.name);
        let deadline = Instant::now() + setup.timeout;
        let pair = match side {
            Side::Accept => {
                let depth = depth(setup)?;
                // Created both before either is opened by the peer: it opens them in this order.
                let rx = Queue::create(&forth, depth, setup.size, receiving(setup))?;
                let tx = if round_trip {
                    Some(Queue::create(&back, depth, setup.size, libc::O_WRONLY)?)
                } else {
                    None
                };
                Pair {
                    tx: tx.map(|queue| Sender { queue, ends: Some(setup.timeout) }),
                    rx: Some(Receiver { queue: rx, closed: false }),
                    keep: (),
                }
            }
            Side::Connect => {
                let tx = Queue::open(&forth, libc::O_WRONLY, setup.size, deadline)?;
                let rx = if round_trip {
                    Some(Queue::open(&back, receiving(setup), setup.size, deadline)?)
                } else {
                    None
                };
                // Both ends hold the queues now: the names can go.
                remove(setup.name);
                Pair {
                    tx: Some(Sender { queue: tx, ends: Some(setup.timeout) }),
                    rx: rx.map(|queue| Receiver { queue, closed: false }),
                    keep: (),
                }
            }
        };
        let buffer = pair.either(|rx| rx.queue.buffer(setup), |tx| tx.queue.buffer(setup))??;
        Ok(Opened::new(pair).buffered(buffer))
    }

    fn producer(setup: &Setup) -> Result<Opened<Sender>> {
        let (_, consumers) = check_queue(setup, "producer")?;
        let name = &names(setup.name)[2];
        if setup.index != 0 {
            let deadline = Instant::now() + setup.timeout;
            let queue = Queue::open(name, libc::O_WRONLY, setup.size, deadline)?;
            let buffer = queue.buffer(setup)?;
            return Ok(Opened::new(Sender { queue, ends: None }).buffered(buffer));
        }
        let queue = Queue::create(name, depth(setup)?, setup.size, libc::O_WRONLY)?;
        let own = Queue::open(name, libc::O_WRONLY, setup.size, Instant::now())?;
        let owner = QueueOwner { queue: own, consumers, timeout: setup.timeout };
        let buffer = queue.buffer(setup)?;
        Ok(Opened::new(Sender { queue, ends: None }).owning(Some(Box::new(owner))).buffered(buffer))
    }

    fn consumer(setup: &Setup) -> Result<Opened<Receiver>> {
        check_queue(setup, "consumer")?;
        let deadline = Instant::now() + setup.timeout;
        let queue = Queue::open(&names(setup.name)[2], receiving(setup), setup.size, deadline)?;
        let buffer = queue.buffer(setup)?;
        Ok(Opened::new(Receiver { queue, closed: false }).buffered(buffer))
    }
}

/// A queue's depth: `--buffer` in messages, at most the system's `msg_max` (the limit of an
/// unprivileged queue); without it, `msg_max`.
fn depth(setup: &Setup) -> Result<usize> {
    let most = limit(MSG_MAX)?;
    Ok(setup.buffer_messages().map_or(most, |n| n.min(most)))
}

fn check_queue(setup: &Setup, role: &str) -> Result<(usize, usize)> {
    setup.queue(role)
}

/// The queues a trial may make: a stream's two, a work queue's one. Public so that the harness's
/// tests can check that none outlives its trial (/dev/mqueue, which would list them, is not
/// always mounted).
pub fn names(trial: &str) -> [String; 3] {
    [format!("/{trial}.forth"), format!("/{trial}.back"), format!("/{trial}.queue")]
}

/// Unlinks the queues of trial `trial`, if they are still there: the connecting side once it
/// holds them, and the driver after every trial (a side that died before the other opened them).
/// Returns the names of those that were there.
pub fn remove(trial: &str) -> Vec<String> {
    let mut removed = Vec::new();
    for name in names(trial) {
        if let Ok(c) = CString::new(name.clone()) {
            // SAFETY: a NUL-terminated name; ENOENT (already gone) is the usual answer.
            if unsafe { libc::mq_unlink(c.as_ptr()) } == 0 {
                removed.push(name);
            }
        }
    }
    removed
}

/// One open queue descriptor.
struct Queue {
    mqd: libc::mqd_t,
    name: String,
    size: usize,
}

impl Queue {
    /// The queue's attributes, as `mq_getattr` says.
    fn attr(&self) -> Result<libc::mq_attr> {
        // SAFETY: mq_attr is plain old data, filled by mq_getattr.
        let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
        // SAFETY: `mqd` is open; `attr` is valid for writes.
        if unsafe { libc::mq_getattr(self.mqd, &mut attr) } != 0 {
            bail!("mq_getattr({}): {}", self.name, io::Error::last_os_error());
        }
        Ok(attr)
    }

    /// What this queue holds, as `mq_getattr` says.
    fn buffer(&self, setup: &Setup) -> Result<Buffer> {
        let depth = self.attr()?.mq_maxmsg as usize;
        let why = match setup.buffer_messages() {
            None => format!("the system's msg_max, {MSG_MAX}"),
            Some(n) if n > depth => format!("--buffer asked {n}; cut to the system's msg_max, {MSG_MAX}"),
            Some(_) => "--buffer".into(),
        };
        Ok(Buffer::messages(depth, self.size, format!("mq_maxmsg {depth} ({why}; read back)")))
    }

    fn create(name: &str, depth: usize, size: usize, access: libc::c_int) -> Result<Queue> {
        let c = CString::new(name).map_err(|_| anyhow!("queue name {name:?} holds a NUL"))?;
        // SAFETY: mq_attr is plain old data; the fields the kernel reads are set below.
        let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
        attr.mq_maxmsg = depth as _;
        attr.mq_msgsize = size as _;
        // SAFETY: a NUL-terminated name and a valid attr for the call's duration.
        let mqd = unsafe {
            libc::mq_open(
                c.as_ptr(),
                access | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                0o600 as libc::mode_t,
                &attr as *const libc::mq_attr,
            )
        };
        if mqd < 0 {
            let e = io::Error::last_os_error();
            let hint = match e.raw_os_error() {
                Some(libc::EINVAL) => format!(
                    " (depth {depth} above {MSG_MAX}, or messages of {size} bytes above {MSGSIZE_MAX}?)"
                ),
                Some(libc::EMFILE) => {
                    " (RLIMIT_MSGQUEUE, the bytes of queues a user may hold, is used up)".into()
                }
                _ => String::new(),
            };
            bail!(
                "mq_open({name}, O_CREAT | O_EXCL) with depth {depth} and messages of {size} bytes: {e}{hint}"
            );
        }
        Ok(Queue { mqd, name: name.to_string(), size })
    }

    /// Opens a queue the peer creates, retrying while it is not there yet.
    fn open(name: &str, access: libc::c_int, size: usize, deadline: Instant) -> Result<Queue> {
        let c = CString::new(name).map_err(|_| anyhow!("queue name {name:?} holds a NUL"))?;
        let attempt = || {
            // SAFETY: a NUL-terminated name.
            let mqd = unsafe { libc::mq_open(c.as_ptr(), access | libc::O_CLOEXEC) };
            if mqd >= 0 {
                let queue = Queue { mqd, name: name.to_string(), size };
                let carried = queue.attr()?.mq_msgsize as usize;
                if carried != size {
                    bail!("{name} carries messages of {carried} bytes, not the case's {size}");
                }
                return Ok(Ok(queue));
            }
            let e = io::Error::last_os_error();
            if !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINTR)) {
                bail!("mq_open({name}): {e}");
            }
            Ok(Err(e))
        };
        retry_until(deadline, Duration::from_millis(1), attempt, |e| {
            anyhow!("no queue {name} was created in time (last attempt: {e})")
        })
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: `mqd` is open and closed once, here.
        unsafe { libc::mq_close(self.mqd) };
    }
}

/// A work queue's owner: once every producer is done, one end per consumer, then the name goes.
struct QueueOwner {
    queue: Queue,
    consumers: usize,
    timeout: Duration,
}

impl Drop for QueueOwner {
    fn drop(&mut self) {
        for _ in 0..self.consumers {
            if let Err(e) = self.queue.send_end(self.timeout) {
                eprintln!("posix-mq: {e}");
                break;
            }
        }
        if let Ok(c) = CString::new(self.queue.name.as_str()) {
            // SAFETY: a NUL-terminated name.
            unsafe { libc::mq_unlink(c.as_ptr()) };
        }
    }
}

/// The sending end of a queue.
pub struct Sender {
    queue: Queue,
    /// A stream's sender ends it when dropped, waiting at most this long for room; a work
    /// queue's producers leave that to the queue's owner.
    ends: Option<Duration>,
}

impl Tx for Sender {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        if message.len() != self.queue.size {
            bail!(
                "a message of {} bytes on {}, whose messages are {} bytes",
                message.len(),
                self.queue.name,
                self.queue.size
            );
        }
        loop {
            // SAFETY: `message` is valid for reads of its length; `mqd` is open.
            if unsafe { libc::mq_send(self.queue.mqd, message.as_ptr().cast(), message.len(), 0) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                bail!("mq_send on {}: {e}", self.queue.name);
            }
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        if let Some(timeout) = self.ends
            && let Err(e) = self.queue.send_end(timeout)
        {
            eprintln!("posix-mq: {e}");
        }
    }
}

impl Queue {
    /// The end of a stream: a message of zero bytes, once there is room for it.
    fn send_end(&self, left: Duration) -> Result<()> {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is valid for a write; mq_timedsend's deadline is on CLOCK_REALTIME.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        let nanos = ts.tv_nsec as u64 + u64::from(left.subsec_nanos());
        ts.tv_sec += (left.as_secs() + nanos / 1_000_000_000) as libc::time_t;
        ts.tv_nsec = (nanos % 1_000_000_000) as _;
        loop {
            // SAFETY: a zero-length message; `mqd` is open; `ts` is valid.
            if unsafe { libc::mq_timedsend(self.mqd, [0u8; 1].as_ptr().cast(), 0, 0, &ts) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                bail!("the end of {} could not be sent within {left:?}: {e}", self.name);
            }
        }
    }
}

/// The receiving end of a queue.
pub struct Receiver {
    queue: Queue,
    closed: bool,
}

impl Rx for Receiver {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        if self.closed {
            return Ok(Received::Closed);
        }
        let size = self.queue.size;
        // mq_receive refuses a buffer shorter than the queue's mq_msgsize.
        let Some(buf) = buf.get_mut(..size) else {
            bail!("a buffer of {} bytes for {}, whose messages are {size} bytes", buf.len(), self.queue.name);
        };
        loop {
            // SAFETY: `buf` is valid for writes of `size` bytes; `mqd` is open.
            let n = unsafe {
                libc::mq_receive(self.queue.mqd, buf.as_mut_ptr().cast(), size, std::ptr::null_mut())
            };
            if n == size as isize {
                return Ok(Received::Message(size));
            }
            if n == 0 {
                self.closed = true;
                return Ok(Received::Closed);
            }
            if n > 0 {
                bail!("a message of {n} bytes on {}, whose messages are {size} bytes", self.queue.name);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                // Only a descriptor opened O_NONBLOCK (polling) says so.
                io::ErrorKind::WouldBlock => return Ok(Received::Empty),
                _ => bail!("mq_receive on {}: {e}", self.queue.name),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::Shape;
    use ipcbench_api::testing::{self, Scratch};

    fn exists(name: &str) -> bool {
        let c = CString::new(name).unwrap();
        // SAFETY: a NUL-terminated name.
        let mqd = unsafe { libc::mq_open(c.as_ptr(), libc::O_RDONLY) };
        if mqd >= 0 {
            unsafe { libc::mq_close(mqd) };
        }
        mqd >= 0
    }

    #[test]
    fn info_records_the_limits() {
        let info = PosixMq::info();
        assert_eq!(info.id, "posix-mq");
        let depth = &info.configuration[0].1;
        assert!(depth.contains("msg_max"), "{depth}");
        assert!(depth.split(':').next().unwrap().parse::<usize>().is_ok(), "{depth}");
        assert!(info.largest_message.unwrap().0 >= 8192);
    }

    #[test]
    fn a_stream_ends_after_its_last_message_and_leaves_no_queue() {
        testing::in_each_mode::<PosixMq>("mq-stream", Shape::Stream, |setup| {
            let name = setup.name;
            let gone = || assert!(!exists(&format!("/{name}.forth")), "the name outlived the set-up");
            testing::stream_in_order::<PosixMq>(&Setup { size: 64, ..*setup }, 1000, gone);
        });
    }

    #[test]
    fn round_trip_over_two_queues() {
        testing::in_each_mode::<PosixMq>("mq-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<PosixMq>(&Setup { size: 1024, ..*setup }, 200);
            assert!(!exists(&format!("/{}.back", setup.name)));
        });
    }

    #[test]
    fn a_work_queue_4x2_hands_each_message_to_one_consumer() {
        let shape = Shape::Queue { producers: 4, consumers: 2 };
        testing::in_each_mode::<PosixMq>("mq-queue", shape, |setup| {
            testing::queue_exactly_once::<PosixMq>(setup, 500);
            assert!(!exists(&format!("/{}.queue", setup.name)));
        });
    }

    #[test]
    fn a_missing_queue_times_out_with_its_name() {
        let place = Scratch::new("mq-missing");
        let st = Setup { timeout: Duration::from_millis(20), ..place.setup(Shape::Stream) };
        let err = PosixMq::stream(&st, Side::Connect).err().unwrap().to_string();
        assert!(err.contains(&format!("no queue /{}.forth was created in time", place.name)), "{err}");
    }

    /// The depth is msg_max by default; `--buffer` sets fewer, and more is cut to msg_max.
    #[test]
    fn the_buffer_sets_the_depth_within_msg_max() {
        let most = limit(MSG_MAX).unwrap();
        for (label, buffer, depth) in
            [("mqb", None, most), ("mqb2", Some(32), 2), ("mqbig", Some(1 << 30), most)]
        {
            let place = Scratch::new(label);
            let setup = Setup { buffer, ..place.setup(Shape::Stream) };
            for b in testing::stream_buffers::<PosixMq>(&setup) {
                let b = b.unwrap();
                assert_eq!(b.messages, Some(depth), "{}", b.how);
                assert_eq!(b.how.contains("cut to the system's msg_max"), label == "mqbig", "{}", b.how);
            }
        }
    }

    #[test]
    fn a_polling_receive_of_an_empty_queue_is_empty() {
        assert_eq!(PosixMq::info().modes, &RecvMode::ALL);
        let place = Scratch::new("mq-polling");
        let st = Setup { mode: RecvMode::Polling, ..place.setup(Shape::Stream) };
        let mut rx = PosixMq::stream(&st, Side::Accept).unwrap().endpoint;
        assert_eq!(rx.recv(&mut [0u8; 16]).unwrap(), Received::Empty);
    }

    #[test]
    fn remove_unlinks_a_left_over_queue() {
        let place = Scratch::new("mq-left");
        let name = &place.name;
        let rx = PosixMq::stream(&place.setup(Shape::Stream), Side::Accept).unwrap();
        assert!(exists(&format!("/{name}.forth")));
        remove(name);
        assert!(!exists(&format!("/{name}.forth")));
        drop(rx);
    }
}
