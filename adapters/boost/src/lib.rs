//! The ipcbench adapter for Boost.Interprocess's `message_queue`, through a small C++ shim
//! (`shim/mq.cpp`) compiled against the system's Boost headers.
//!
//! A `message_queue` is a bounded queue of messages up to a fixed size in POSIX shared memory
//! (`/dev/shm/<name>`), guarded by a process-shared mutex and two condition variables; any number
//! of processes send to it and receive from it. So it is a stream (one queue), a round trip (two
//! queues, one each way) and a work queue (one queue, every producer and consumer on it); each
//! message goes to one receiver, so no broadcast, and it has no replies, so no service.
//!
//! The end of a stream is a message of zero bytes, which no case sends: a stream's sender sends
//! it when dropped; a work queue's producer 0 holds a second handle (the owner's) which, once
//! every producer is done (the driver's drain), sends one per consumer behind the last data
//! (messages of one priority leave in the order they came).
//!
//! The mutex is not robust: a process killed while holding it leaves the others blocked for
//! ever. The driver's case deadline kills them, and it removes the trial's `/dev/shm` objects.

use std::ffi::{CStr, CString, c_char, c_int, c_long, c_uint, c_void};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Opened, Pair, Received, RecvMode, Requests, Rx, Setup, Shape,
    Side, Support, Tx, Unsupported, retry_until,
};

unsafe extern "C" {
    fn ipcb_boost_version() -> *const c_char;
    fn ipcb_mq_create(
        name: *const c_char,
        depth: usize,
        max_size: usize,
        err: *mut c_char,
        len: usize,
    ) -> *mut c_void;
    fn ipcb_mq_open(name: *const c_char, missing: *mut c_int, err: *mut c_char, len: usize) -> *mut c_void;
    fn ipcb_mq_depth(q: *mut c_void) -> usize;
    fn ipcb_mq_max_size(q: *mut c_void) -> usize;
    fn ipcb_mq_send(q: *mut c_void, buf: *const c_void, size: usize, err: *mut c_char, len: usize) -> c_int;
    fn ipcb_mq_timed_send(
        q: *mut c_void,
        buf: *const c_void,
        size: usize,
        ms: c_uint,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn ipcb_mq_receive(
        q: *mut c_void,
        buf: *mut c_void,
        cap: usize,
        wait: c_int,
        err: *mut c_char,
        len: usize,
    ) -> c_long;
    fn ipcb_mq_close(q: *mut c_void);
    fn ipcb_mq_remove(name: *const c_char) -> c_int;
}

/// Messages each queue holds: a fixed depth, recorded, up to `DEPTH_BYTES` of them.
pub const DEPTH: usize = 1024;
/// The most a queue holds by default: a message_queue preallocates its whole depth in /dev/shm,
/// so 1024 messages of 16 MiB would ask for 16 GiB. 64 MiB keeps 1024 messages up to 64 KiB.
pub const DEPTH_BYTES: usize = 64 << 20;

/// Boost.Interprocess `message_queue`.
pub struct Boost;

/// A stream side: the queue it sends on, the queue it receives from.
pub type Channel = Pair<Sender, Receiver, ()>;

/// The version of the Boost headers the shim was compiled against, such as `1.85`.
pub fn version() -> String {
    // SAFETY: the shim returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(ipcb_boost_version()) };
    v.to_string_lossy().replace('_', ".")
}

impl Library for Boost {
    type Stream = Channel;
    type Publisher = Unsupported;
    type Subscriber = Unsupported;
    type Producer = Sender;
    type Consumer = Receiver;
    type Client = Unsupported;
    type Server = Unsupported;

    /// A queue each way: `max_num_msg` slots of the message size and a few words of index each.
    fn shared_memory(shape: Shape, size: usize, buffer: Option<usize>) -> u64 {
        let depth = depth_of(size, buffer);
        let queues = if shape == Shape::RoundTrip { 2 } else { 1 };
        queues * (depth * (size + 32)) as u64
    }

    fn info() -> LibraryInfo {
        let one_reader = "a message_queue hands each message to one receiver";
        LibraryInfo {
            id: "boost",
            kind: ipcbench_api::Kind::SharedMemory,
            name: "Boost.Interprocess message_queue",
            version: version(),
            modes: &[RecvMode::Waiting, RecvMode::Polling],
            capabilities: Capabilities {
                stream: Support::Yes(
                    "one message_queue; send, and receive (waiting) or try_receive (polling)",
                ),
                round_trip: Support::Yes("two message_queues, one each way"),
                broadcast_lossless: Support::No(one_reader),
                broadcast_lossy: Support::No(one_reader),
                queue: Support::Yes(
                    "one message_queue: every producer sends to it, every consumer receives from it",
                ),
                service: Support::No(
                    "a message_queue has no replies; a service would be the harness pairing queues",
                ),
                batch: Support::No("send and receive move one message per call"),
                loan: Support::No("message_queue copies in (send) and out (receive): it lends no slot"),
                most_subscribers: None,
            },
            requests: Requests::ToOneServer,
            largest_message: None,
            configuration: vec![
                (
                    "depth (max_num_msg)",
                    format!("{DEPTH}, or {} MiB of messages where fewer (at least 4)", DEPTH_BYTES >> 20),
                ),
                ("max_msg_size", "the case's message size".into()),
                ("priority", "0 for every message: first in, first out".into()),
                ("headers", concat!(env!("IPCB_BOOST_HEADERS"), ", compiled into a C++17 shim").into()),
                ("end of stream", "a message of zero bytes".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Channel>> {
        let round_trip = setup.stream_or_round_trip()?;
        let [forth, back, _] = names(setup.name);
        let wait = setup.mode == RecvMode::Waiting;
        let pair = match side {
            Side::Accept => {
                let rx = Queue::create(&forth, setup)?;
                let tx = if round_trip { Some(Queue::create(&back, setup)?) } else { None };
                Pair {
                    tx: tx.map(|queue| Sender { queue, ends: Some(setup.timeout) }),
                    rx: Some(Receiver { queue: rx, wait, closed: false }),
                    keep: (),
                }
            }
            Side::Connect => {
                let deadline = Instant::now() + setup.timeout;
                let tx = Queue::open(&forth, setup, deadline)?;
                let rx = if round_trip { Some(Queue::open(&back, setup, deadline)?) } else { None };
                // Both sides have the queues mapped: the names can go.
                remove(setup.name);
                Pair {
                    tx: Some(Sender { queue: tx, ends: Some(setup.timeout) }),
                    rx: rx.map(|queue| Receiver { queue, wait, closed: false }),
                    keep: (),
                }
            }
        };
        let buffer = pair.either(|rx| rx.queue.buffer(setup), |tx| tx.queue.buffer(setup))?;
        Ok(Opened::new(pair).buffered(buffer))
    }

    fn producer(setup: &Setup) -> Result<Opened<Sender>> {
        let (_, consumers) = setup.queue("producer")?;
        let name = &names(setup.name)[2];
        if setup.index != 0 {
            let queue = Queue::open(name, setup, Instant::now() + setup.timeout)?;
            let buffer = queue.buffer(setup);
            return Ok(Opened::new(Sender { queue, ends: None }).buffered(buffer));
        }
        let queue = Queue::create(name, setup)?;
        let own = Queue::open(name, setup, Instant::now())?;
        let owner = QueueOwner { queue: own, consumers, timeout: setup.timeout };
        let buffer = queue.buffer(setup);
        Ok(Opened::new(Sender { queue, ends: None }).owning(Some(Box::new(owner))).buffered(buffer))
    }

    fn consumer(setup: &Setup) -> Result<Opened<Receiver>> {
        setup.queue("consumer")?;
        let queue = Queue::open(&names(setup.name)[2], setup, Instant::now() + setup.timeout)?;
        let buffer = queue.buffer(setup);
        Ok(Opened::new(Receiver { queue, wait: setup.mode == RecvMode::Waiting, closed: false })
            .buffered(buffer))
    }
}

/// A stream's two queues and a work queue's one: under `/dev/shm`, where the driver's cleanup
/// after each trial finds them (`<trial>-...`).
fn names(trial: &str) -> [String; 3] {
    [format!("{trial}-boost-forth"), format!("{trial}-boost-back"), format!("{trial}-boost-queue")]
}

/// Removes the names of trial `trial`'s queues, if they are still there.
pub fn remove(trial: &str) {
    for name in names(trial) {
        if let Ok(c) = CString::new(name) {
            // SAFETY: a NUL-terminated name; the shim catches every exception.
            unsafe { ipcb_mq_remove(c.as_ptr()) };
        }
    }
}

/// Room for the text of a C++ exception.
struct ErrorText([u8; 256]);

impl ErrorText {
    fn new() -> ErrorText {
        ErrorText([0; 256])
    }

    fn ptr(&mut self) -> *mut c_char {
        self.0.as_mut_ptr().cast()
    }

    fn text(&self) -> String {
        CStr::from_bytes_until_nul(&self.0).map(|c| c.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// One open `message_queue`, closed (unmapped) when dropped.
struct Queue {
    q: *mut c_void,
    name: String,
    size: usize,
    /// Where the shim writes an exception's text: made once, read only after a failure, so no
    /// call on the message path clears a buffer.
    err: ErrorText,
}

// SAFETY: a message_queue handle may be used from any thread; each is used by one at a time.
unsafe impl Send for Queue {}

/// Messages each queue holds: `--buffer` in messages, or `DEPTH` up to `DEPTH_BYTES` (at least 4).
fn depth(setup: &Setup) -> usize {
    depth_of(setup.size, setup.buffer)
}

fn depth_of(size: usize, buffer: Option<usize>) -> usize {
    let size = size.max(1);
    buffer.map_or(DEPTH.min(DEPTH_BYTES / size).max(4), |b| (b / size).max(1))
}

impl Queue {
    /// What this queue holds, as it says (`get_max_msg`).
    fn buffer(&self, setup: &Setup) -> Buffer {
        // SAFETY: `q` is an open queue.
        let depth = unsafe { ipcb_mq_depth(self.q) };
        let why = if setup.buffer.is_some() { "--buffer" } else { "the adapter's default" };
        Buffer::messages(depth, self.size, format!("max_num_msg {depth} ({why}, read back)"))
    }

    fn create(name: &str, setup: &Setup) -> Result<Queue> {
        let (size, depth) = (setup.size, depth(setup));
        let c = CString::new(name).map_err(|_| anyhow!("queue name {name:?} holds a NUL"))?;
        // A crashed run of the same name would make create_only fail.
        // SAFETY: a NUL-terminated name.
        unsafe { ipcb_mq_remove(c.as_ptr()) };
        let mut err = ErrorText::new();
        // SAFETY: a NUL-terminated name; `err` has room for its length.
        let q = unsafe { ipcb_mq_create(c.as_ptr(), depth, size, err.ptr(), err.0.len()) };
        if q.is_null() {
            bail!("message_queue(create_only, {name}, {depth}, {size}): {}", err.text());
        }
        Ok(Queue { q, name: name.to_string(), size, err: ErrorText::new() })
    }

    /// Opens a queue another process creates, retrying every millisecond until `deadline`.
    fn open(name: &str, setup: &Setup, deadline: Instant) -> Result<Queue> {
        let (size, want) = (setup.size, depth(setup));
        let c = CString::new(name).map_err(|_| anyhow!("queue name {name:?} holds a NUL"))?;
        let attempt = || {
            let mut err = ErrorText::new();
            let mut missing = 0;
            // SAFETY: a NUL-terminated name; `missing` and `err` are valid for writes.
            let q = unsafe { ipcb_mq_open(c.as_ptr(), &mut missing, err.ptr(), err.0.len()) };
            if !q.is_null() {
                let queue = Queue { q, name: name.to_string(), size, err: ErrorText::new() };
                // SAFETY: `q` is an open queue.
                let (max, depth) = unsafe { (ipcb_mq_max_size(q), ipcb_mq_depth(q)) };
                if max != size || depth != want {
                    bail!(
                        "{name} holds {depth} messages of up to {max} bytes, not {want} of the case's {size}"
                    );
                }
                return Ok(Ok(queue));
            }
            if missing == 0 {
                bail!("message_queue(open_only, {name}): {}", err.text());
            }
            Ok(Err(err))
        };
        retry_until(deadline, Duration::from_millis(1), attempt, |err| {
            anyhow!("no message_queue {name} was created in time (last attempt: {})", err.text())
        })
    }

    /// The end of a stream: a message of zero bytes, once there is room (at most `within`).
    fn send_end(&self, within: Duration) -> Result<()> {
        let mut err = ErrorText::new();
        let ms = within.as_millis().min(u32::MAX as u128) as c_uint;
        // SAFETY: an open queue; a zero-length message reads nothing from the buffer.
        match unsafe { ipcb_mq_timed_send(self.q, [0u8; 1].as_ptr().cast(), 0, ms, err.ptr(), err.0.len()) } {
            1 => Ok(()),
            0 => bail!("no room for the end of {} within {within:?}", self.name),
            _ => bail!("the end of {} could not be sent: {}", self.name, err.text()),
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: `q` is open and closed once, here.
        unsafe { ipcb_mq_close(self.q) };
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
                eprintln!("boost: {e}");
                break;
            }
        }
        if let Ok(c) = CString::new(self.queue.name.as_str()) {
            // SAFETY: a NUL-terminated name.
            unsafe { ipcb_mq_remove(c.as_ptr()) };
        }
    }
}

/// The sending side of a queue.
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
        let q = &mut self.queue;
        // SAFETY: an open queue; `message` is valid for reads of its length; `err` of its own.
        if unsafe { ipcb_mq_send(q.q, message.as_ptr().cast(), message.len(), q.err.ptr(), q.err.0.len()) }
            != 0
        {
            bail!("send on {}: {}", q.name, q.err.text());
        }
        Ok(())
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        if let Some(within) = self.ends
            && let Err(e) = self.queue.send_end(within)
        {
            eprintln!("boost: {e}");
        }
    }
}

/// The receiving side of a queue.
pub struct Receiver {
    queue: Queue,
    /// `receive` (waiting) or `try_receive` (polling).
    wait: bool,
    closed: bool,
}

impl Rx for Receiver {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        if self.closed {
            return Ok(Received::Closed);
        }
        let size = self.queue.size;
        // receive refuses a buffer shorter than the queue's max_msg_size.
        let Some(buf) = buf.get_mut(..size) else {
            bail!("a buffer of {} bytes for {}, whose messages are {size} bytes", buf.len(), self.queue.name);
        };
        let q = &mut self.queue;
        // SAFETY: an open queue; `buf` is valid for writes of `size` bytes; `err` of its length.
        let n = unsafe {
            ipcb_mq_receive(
                q.q,
                buf.as_mut_ptr().cast(),
                size,
                c_int::from(self.wait),
                q.err.ptr(),
                q.err.0.len(),
            )
        };
        match n {
            n if n == size as c_long => Ok(Received::Message(size)),
            0 => {
                self.closed = true;
                Ok(Received::Closed)
            }
            -2 => Ok(Received::Empty),
            -1 => bail!("receive on {}: {}", self.queue.name, self.queue.err.text()),
            n => bail!("a message of {n} bytes on {}, whose messages are {size} bytes", self.queue.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::testing::{self, Scratch};
    use std::path::Path;

    fn shm(name: &str) -> bool {
        Path::new("/dev/shm").join(name).exists()
    }

    /// A queue holds 1024 messages by default, `--buffer`'s messages with it.
    #[test]
    fn the_buffer_sets_the_queues_depth() {
        for (label, buffer, depth) in [("boost-buf", None, DEPTH), ("boost-buf64k", Some(64 << 10), 4096)] {
            let place = Scratch::new(label);
            let setup = Setup { buffer, ..place.setup(Shape::Stream) };
            for b in testing::stream_buffers::<Boost>(&setup) {
                let b = b.unwrap();
                assert_eq!((b.messages, b.bytes), (Some(depth), Some(depth * 16)), "{}", b.how);
                assert_eq!(b.how.contains("--buffer"), buffer.is_some(), "{}", b.how);
            }
        }
    }

    #[test]
    fn version_is_the_headers() {
        let v = version();
        assert!(v.starts_with("1."), "{v}");
        assert_eq!(Boost::info().version, v);
    }

    fn stream(mode: RecvMode) {
        let place = Scratch::new(&format!("boost-{mode}"));
        let name = &place.name;
        let gone = || assert!(!shm(&format!("{name}-boost-forth")), "the name outlived the set-up");
        testing::stream_in_order::<Boost>(
            &Setup { size: 64, mode, ..place.setup(Shape::Stream) },
            5000,
            gone,
        );
    }

    #[test]
    fn stream_waiting() {
        stream(RecvMode::Waiting);
    }

    #[test]
    fn stream_polling() {
        stream(RecvMode::Polling);
    }

    #[test]
    fn round_trip_over_two_queues() {
        let place = Scratch::new("boost-rtt");
        testing::round_trips::<Boost>(&Setup { size: 1024, ..place.setup(Shape::RoundTrip) }, 300);
        assert!(!shm(&format!("{}-boost-back", place.name)));
    }

    #[test]
    fn a_work_queue_4x4_hands_each_message_to_one_consumer() {
        let place = Scratch::new("boost-queue");
        let shape = Shape::Queue { producers: 4, consumers: 4 };
        testing::queue_exactly_once::<Boost>(&Setup { mode: RecvMode::Polling, ..place.setup(shape) }, 2000);
        assert!(!shm(&format!("{}-boost-queue", place.name)));
    }

    #[test]
    fn a_missing_queue_times_out_with_its_name() {
        let place = Scratch::new("boost-missing");
        let st = Setup { timeout: Duration::from_millis(20), ..place.setup(Shape::Stream) };
        let err = Boost::stream(&st, Side::Connect).err().unwrap().to_string();
        let name = &place.name;
        assert!(err.contains(&format!("no message_queue {name}-boost-forth was created in time")), "{err}");
    }
}
