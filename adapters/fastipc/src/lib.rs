//! FastIPC (crate `fipc` 1.0.0): all four patterns in shared memory.
//!
//! Each endpoint is one `fipc::Connection`; a send copies the caller's buffer into the ring
//! (`send`), a receive copies the message out into the caller's buffer (`receive_into`), waiting
//! (`None`) or polling (`NO_WAIT`) as the endpoint was opened.

use std::time::Duration;

use fipc::{Connection, Error as FipcError, QueueRole, ServiceRole, SubscriberRole};
use ipcbench_api::{
    Batch, Buffer, Capabilities, Context, Library, LibraryInfo, Loaned, Opened, Received, RecvMode, Requests,
    Result, Rx, Setup, Shape, Side, Support, Tx, anyhow, bail,
};

/// Each direction of a stream's connection.
pub const STREAM_RING: usize = 1 << 18;
/// A broadcast's memory, which every subscriber maps (holds `BROADCAST_RING / 64` messages).
pub const BROADCAST_RING: usize = 1 << 18;
/// Each producer's ring in a work queue.
pub const QUEUE_RING: usize = 1 << 16;
/// Each client's ring in a service (its requests and the room for their replies).
pub const SERVICE_RING: usize = 1 << 16;

pub struct FastIpc;

/// FastIPC's largest ring.
const LARGEST_RING: usize = 1 << 31;

/// A ring's bytes: `--buffer` rounded up to a power of two within FastIPC's bounds (`least`:
/// 1024 for a stream, 4096 for the rest), or the adapter's `default`; and what set it.
fn ring(setup: &Setup, default: usize, least: usize) -> (usize, String) {
    match setup.buffer {
        None => (default, "the adapter's default".into()),
        Some(b) => {
            let bytes = b.next_power_of_two().clamp(least, LARGEST_RING);
            let cut =
                if bytes == b { String::new() } else { format!(", {b} made a power of two from {least}") };
            (bytes, format!("--buffer{cut}"))
        }
    }
}

/// A ring of `bytes`, as FastIPC reports it (`read`: its capacity from `max_piece`, where that
/// says it), with FastIPC's framing inside it: how many messages fit is not a division.
fn ring_buffer(bytes: usize, read: Option<usize>, what: &str, why: &str) -> Buffer {
    let back = if read == Some(bytes) { ", read back" } else { "" };
    Buffer::kernel_bytes(bytes, format!("{what} of {bytes} bytes ({why}{back}), FastIPC's framing in it"))
}
/// One connection, and the timeout its receives use: `None` waits, `NO_WAIT` polls.
pub struct Endpoint {
    conn: Connection,
    receive_timeout: Option<Duration>,
    // A stream's listener lives as long as the connection it accepted.
    _listener: Option<fipc::Listener>,
}

impl Endpoint {
    fn new(conn: Connection, setup: &Setup) -> Self {
        let receive_timeout = match setup.mode {
            RecvMode::Waiting => fipc::FOREVER,
            RecvMode::Polling => fipc::NO_WAIT,
        };
        Endpoint { conn, receive_timeout, _listener: None }
    }
}

/// The most messages one batch call moves (the matrix's largest batch).
const MAX_BATCH: usize = 64;

impl Tx for Endpoint {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        self.conn.send(message, fipc::FOREVER).map_err(|e| anyhow!("fipc send on {}: {e}", self.conn.name()))
    }

    /// `send_many` of the batch's messages, described on the stack.
    #[inline]
    fn send_batch(&mut self, messages: &[u8], size: usize) -> Result<()> {
        let mut parts: [&[u8]; MAX_BATCH] = [&[]; MAX_BATCH];
        let mut n = 0;
        for (part, message) in parts.iter_mut().zip(messages.chunks_exact(size)) {
            *part = message;
            n += 1;
        }
        if n * size != messages.len() {
            bail!("a batch of {} bytes: at most {MAX_BATCH} messages of {size} bytes", messages.len());
        }
        self.conn
            .send_many(&parts[..n], fipc::FOREVER)
            .map_err(|e| anyhow!("fipc send_many on {}: {e}", self.conn.name()))?;
        Ok(())
    }

    /// `send_acquire` of the message's length in the ring, written there, then `commit`.
    #[inline]
    fn send_loaned<W: FnOnce(&mut [u8])>(&mut self, len: usize, write: W) -> Result<()> {
        let mut slot = match self.conn.send_acquire(len, fipc::FOREVER) {
            Ok(slot) => slot,
            Err(e) => return Err(loan_error(e, len, self.conn.max_piece())),
        };
        write(&mut slot[..len]);
        slot.commit(len).map_err(|e| anyhow!("fipc commit of {len} bytes: {e}"))
    }
}

/// A failed `send_acquire`: a message over one piece names the ring's limit.
#[cold]
fn loan_error(e: FipcError, len: usize, most: usize) -> ipcbench_api::Error {
    match e {
        FipcError::TooLarge { .. } => ipcbench_api::over_loan(len, most, "fipc's ring (max_piece)"),
        e => anyhow!("fipc send_acquire of {len} bytes: {e}"),
    }
}

impl Rx for Endpoint {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        match self.conn.receive_into(buf, self.receive_timeout) {
            Ok(len) => Ok(Received::Message(len)),
            Err(FipcError::Timeout) => Ok(Received::Empty),
            Err(FipcError::Overrun { lost }) => Ok(Received::Lost(lost)),
            Err(FipcError::Disconnected) => Ok(Received::Closed),
            Err(e) => Err(anyhow!("fipc receive_into on {}: {e}", self.conn.name())),
        }
    }

    /// `receive_many` into the harness's buffer: every message of a case has its size, so
    /// message `i` lands at `i * size`, and every length is checked.
    #[inline]
    fn recv_batch(&mut self, buf: &mut [u8], size: usize) -> Result<Batch> {
        let mut lens = [0usize; MAX_BATCH];
        let room = (buf.len() / size).min(MAX_BATCH);
        match self.conn.receive_many(buf, &mut lens[..room], self.receive_timeout) {
            Ok(count) => {
                if let Some(bad) = lens[..count].iter().find(|&&l| l != size) {
                    bail!(
                        "fipc receive_many on {}: a message of {bad} bytes in a case of {size}",
                        self.conn.name()
                    );
                }
                Ok(Batch::Messages(count))
            }
            Err(FipcError::Timeout) => Ok(Batch::Empty),
            Err(FipcError::Disconnected) => Ok(Batch::Closed),
            Err(e) => Err(anyhow!("fipc receive_many on {}: {e}", self.conn.name())),
        }
    }

    /// `receive_acquire`: the message read where it lies in the ring, released after.
    #[inline]
    fn recv_loaned<T, F: FnOnce(&[u8]) -> T>(&mut self, read: F) -> Result<Loaned<T>> {
        match self.conn.receive_acquire(self.receive_timeout) {
            Ok(slot) => Ok(Loaned::Message(read(&slot))),
            Err(e) => received_none(e),
        }
    }

    /// The connection split in its halves: the request read in place on one while the reply is
    /// written in place on the other, the request released once the reply is committed.
    #[inline]
    fn echo_loaned<F: FnOnce(&[u8], &mut [u8])>(&mut self, answer: F) -> Result<Received> {
        let (tx, rx) = self.conn.split();
        let request = match rx.receive_acquire(self.receive_timeout) {
            Ok(request) => request,
            Err(e) => return received_none(e).map(Received::from),
        };
        let len = request.len();
        let mut reply = match tx.send_acquire(len, fipc::FOREVER) {
            Ok(reply) => reply,
            Err(e) => return Err(loan_error(e, len, tx.max_piece())),
        };
        answer(&request, &mut reply[..len]);
        reply.commit(len).map_err(|e| anyhow!("fipc commit of {len} bytes: {e}"))?;
        drop(request);
        Ok(Received::Message(len))
    }
}

/// A zero-copy receive that brought no message: nothing yet, the end, or an error.
#[cold]
fn received_none<T>(e: FipcError) -> Result<Loaned<T>> {
    match e {
        FipcError::Timeout => Ok(Loaned::Empty),
        FipcError::Overrun { lost } => Ok(Loaned::Lost(lost)),
        FipcError::Disconnected => Ok(Loaned::Closed),
        FipcError::TooLarge { len } => Err(anyhow!(
            "fipc receive_acquire: a message of {len} bytes in several pieces, which only a copying receive \
             joins"
        )),
        e => Err(anyhow!("fipc receive_acquire: {e}")),
    }
}

fn counts(setup: &Setup) -> (u32, u32) {
    match setup.shape {
        Shape::Queue { producers, consumers } => (producers as u32, consumers as u32),
        Shape::Service { clients, servers } => (clients as u32, servers as u32),
        Shape::Broadcast { subscribers, .. } => (1, subscribers as u32),
        Shape::Stream | Shape::RoundTrip => (1, 1),
    }
}

impl Library for FastIpc {
    type Stream = Endpoint;
    type Publisher = Endpoint;
    type Subscriber = Endpoint;
    type Producer = Endpoint;
    type Consumer = Endpoint;
    type Client = Endpoint;
    type Server = Endpoint;

    /// A stream's zero-copy calls take one piece: its ring less 64 bytes of framing.
    fn largest_loan(_shape: Shape, buffer: Option<usize>) -> Option<(usize, String)> {
        let bytes = buffer.map_or(STREAM_RING, |b| b.next_power_of_two().clamp(1024, LARGEST_RING));
        Some((
            bytes - 64,
            format!(
                "send_acquire takes a single piece of the ring, its {bytes} bytes less 64 of framing (max_piece)"
            ),
        ))
    }

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "fastipc",
            kind: ipcbench_api::Kind::SharedMemory,
            name: "FastIPC",
            version: "1.0.0 (crate fipc 1.0.0, prebuilt libfastipc.so from fipc-sys 1.0.0)".into(),
            modes: &[RecvMode::Waiting, RecvMode::Polling],
            capabilities: Capabilities {
                stream: Support::Yes("stream::create/connect: one ring each way in shared memory"),
                round_trip: Support::Yes("the same stream connection, both directions"),
                broadcast_lossless: Support::Yes("broadcast with Gated subscribers: the publisher waits"),
                broadcast_lossy: Support::Yes("broadcast with Lossy subscribers: Overrun on a lap"),
                queue: Support::Yes("work queue: a ring per producer, each message to one consumer"),
                service: Support::Yes("service: servers of a pool share every client's requests"),
                batch: Support::Yes("send_many / receive_many"),
                loan: Support::Yes(
                    "send_acquire / commit and receive_acquire / release, a single piece of the ring",
                ),
                most_subscribers: Some((1024, "broadcast::create takes 1 to 1024 max_subscribers")),
            },
            requests: Requests::ToOneServer,
            largest_message: None,
            configuration: vec![
                ("stream ring (bytes each way)", STREAM_RING.to_string()),
                ("broadcast memory (bytes)", BROADCAST_RING.to_string()),
                ("broadcast max_stall", "none (a gated subscriber is never dropped)".into()),
                ("work queue ring per producer (bytes)", QUEUE_RING.to_string()),
                ("service ring per client (bytes)", SERVICE_RING.to_string()),
                ("service max_message", "the case's message size".into()),
                ("send timeout", "none (waits for room)".into()),
                (
                    "receive",
                    "receive_into the caller's buffer; waiting: timeout none; polling: NO_WAIT in a loop"
                        .into(),
                ),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Endpoint>> {
        match side {
            Side::Accept => {
                let (bytes, why) = ring(setup, STREAM_RING, 1024);
                let mut listener = fipc::stream::create(setup.name, bytes)
                    .with_context(|| format!("fipc::stream::create({}, {bytes})", setup.name))?;
                let conn = listener.accept(setup.timeout).with_context(|| {
                    format!("fipc accept on {} (no client within {:?})", setup.name, setup.timeout)
                })?;
                // A stream's zero-copy calls take its capacity less 64 bytes.
                let buffer = ring_buffer(bytes, Some(conn.max_piece() + 64), "a ring each way", &why);
                let mut endpoint = Endpoint::new(conn, setup);
                endpoint._listener = Some(listener);
                Ok(Opened::new(endpoint).buffered(buffer))
            }
            Side::Connect => {
                let conn = fipc::stream::connect(setup.name, setup.timeout)
                    .with_context(|| format!("fipc::stream::connect({})", setup.name))?;
                let read = conn.max_piece() + 64;
                let buffer = ring_buffer(read, Some(read), "a ring each way (the server's)", "as created");
                Ok(Opened::new(Endpoint::new(conn, setup)).buffered(buffer))
            }
        }
    }

    fn publisher(setup: &Setup) -> Result<Opened<Endpoint>> {
        let (_, subscribers) = counts(setup);
        let (bytes, why) = ring(setup, BROADCAST_RING, 4096);
        let conn = fipc::broadcast::create(setup.name, bytes, subscribers, fipc::FOREVER)
            .with_context(|| format!("fipc::broadcast::create({}, {bytes})", setup.name))?;
        conn.wait_for_members(subscribers, setup.timeout)
            .map_err(|e| anyhow!("waiting for {subscribers} subscribers on {}: {e}", setup.name))?;
        // A broadcast's longest message is a quarter of its capacity.
        let buffer = ring_buffer(bytes, Some(conn.max_piece() * 4), "a broadcast memory", &why);
        Ok(Opened::new(Endpoint::new(conn, setup)).buffered(buffer))
    }

    fn subscriber(setup: &Setup) -> Result<Opened<Endpoint>> {
        let role = match setup.shape {
            Shape::Broadcast { lossy: true, .. } => SubscriberRole::Lossy,
            Shape::Broadcast { lossy: false, .. } => SubscriberRole::Gated,
            other => bail!("a subscriber in a {other:?} case"),
        };
        let conn = fipc::broadcast::join(setup.name, role, setup.timeout)
            .with_context(|| format!("fipc::broadcast::join({}, {role:?})", setup.name))?;
        Ok(Opened::new(Endpoint::new(conn, setup)))
    }

    fn producer(setup: &Setup) -> Result<Opened<Endpoint>> {
        let (producers, consumers) = counts(setup);
        // Producer 0 owns the queue: it lives until the driver says every producer is done.
        let owner = if setup.index == 0 {
            Some(
                fipc::queue::create(setup.name, ring(setup, QUEUE_RING, 4096).0, producers, consumers)
                    .with_context(|| format!("fipc::queue::create({})", setup.name))?,
            )
        } else {
            None
        };
        let conn = fipc::queue::join(setup.name, QueueRole::Producer, setup.timeout)
            .with_context(|| format!("fipc::queue::join({}, Producer)", setup.name))?;
        if let Some(queue) = &owner {
            queue.wait_for_members(None, producers + consumers, setup.timeout).map_err(|e| {
                anyhow!("waiting for {producers} producers and {consumers} consumers on {}: {e}", setup.name)
            })?;
        }
        let (bytes, why) = ring(setup, QUEUE_RING, 4096);
        // A work queue's longest message is a quarter of its capacity.
        let buffer = ring_buffer(bytes, Some(conn.max_piece() * 4), "a ring per producer", &why);
        Ok(Opened::new(Endpoint::new(conn, setup)).owning(owner.map(|q| Box::new(q) as _)).buffered(buffer))
    }

    fn consumer(setup: &Setup) -> Result<Opened<Endpoint>> {
        let conn = fipc::queue::join(setup.name, QueueRole::Consumer, setup.timeout)
            .with_context(|| format!("fipc::queue::join({}, Consumer)", setup.name))?;
        Ok(Opened::new(Endpoint::new(conn, setup)))
    }

    fn client(setup: &Setup) -> Result<Opened<Endpoint>> {
        let conn = fipc::service::join(setup.name, ServiceRole::Client, setup.timeout)
            .with_context(|| format!("fipc::service::join({}, Client)", setup.name))?;
        Ok(Opened::new(Endpoint::new(conn, setup)))
    }

    fn server(setup: &Setup) -> Result<Opened<Endpoint>> {
        let (clients, servers) = counts(setup);
        // Server 0 owns the service: it lives until the driver says every client is done.
        let owner = if setup.index == 0 {
            Some(
                fipc::service::create(
                    setup.name,
                    ring(setup, SERVICE_RING, 4096).0,
                    setup.size,
                    clients,
                    servers,
                )
                .with_context(|| format!("fipc::service::create({})", setup.name))?,
            )
        } else {
            None
        };
        let conn = fipc::service::join(setup.name, ServiceRole::Server, setup.timeout)
            .with_context(|| format!("fipc::service::join({}, Server)", setup.name))?;
        if let Some(service) = &owner {
            service.wait_for_members(None, clients + servers, setup.timeout).map_err(|e| {
                anyhow!("waiting for {clients} clients and {servers} servers on {}: {e}", setup.name)
            })?;
        }
        Ok(Opened::new(Endpoint::new(conn, setup)).owning(owner.map(|s| Box::new(s) as _)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::testing::{self, Scratch, in_each_mode};

    /// A stream's rings are 256 KiB by default; `--buffer` sets them, made a power of two; both
    /// ends read the capacity back.
    #[test]
    fn the_buffer_sets_the_stream_rings() {
        for (label, buffer, bytes) in
            [("fbuf", None, STREAM_RING), ("fbuf64k", Some(64 << 10), 65536), ("fbuf1000", Some(1000), 1024)]
        {
            let place = Scratch::new(label);
            let setup = Setup { buffer, ..place.setup(Shape::Stream) };
            for b in testing::stream_buffers::<FastIpc>(&setup) {
                let b = b.unwrap();
                assert_eq!(b.bytes, Some(bytes), "{}", b.how);
                assert!(b.how.contains("read back"), "{}", b.how);
            }
        }
    }

    #[test]
    fn broadcasts_reach_every_subscriber_in_order_in_each_mode() {
        for (label, lossy) in [("fipc-gated", false), ("fipc-lossy", true)] {
            in_each_mode::<FastIpc>(label, Shape::Broadcast { lossy, subscribers: 2 }, |setup| {
                testing::broadcast_in_order::<FastIpc>(setup, 20_000, testing::Keeps::Buffer);
            });
        }
    }

    // A connection carries any length: the contract's checks only.
    #[test]
    fn a_stream_arrives_in_order_then_ends_in_each_mode() {
        in_each_mode::<FastIpc>("fipc-stream", Shape::Stream, |setup| {
            testing::stream_delivers::<FastIpc>(&Setup { size: 64, ..*setup }, 20_000, || {});
        });
    }

    /// The loan mode: every byte written in place arrives, read in place, on a stream and in
    /// round trips echoed in place; the loan's limit is the library's.
    #[test]
    fn messages_written_and_read_in_place_arrive_whole_in_each_mode() {
        in_each_mode::<FastIpc>("fipc-loan", Shape::Stream, |setup| {
            testing::loans::<FastIpc>(&Setup { size: 1024, ..*setup }, 300);
        });
        assert_eq!(FastIpc::largest_loan(Shape::Stream, None).unwrap().0, STREAM_RING - 64);
        assert_eq!(FastIpc::largest_loan(Shape::RoundTrip, Some(1 << 20)).unwrap().0, (1 << 20) - 64);
    }

    #[test]
    fn round_trips_answer_each_request_in_each_mode() {
        in_each_mode::<FastIpc>("fipc-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<FastIpc>(&Setup { size: 1024, ..*setup }, 300);
        });
    }

    #[test]
    fn a_work_queue_hands_each_message_to_one_consumer_in_each_mode() {
        in_each_mode::<FastIpc>("fipc-queue", Shape::Queue { producers: 2, consumers: 2 }, |setup| {
            testing::queue_exactly_once::<FastIpc>(setup, 2000);
        });
    }

    /// `Requests::ToOneServer`: the servers share the requests, each answered once. FastIPC's
    /// documented defect (README, "Seen here: a server's reply that fails"), a server's `send` reporting
    /// `FIPC_DISCONNECTED` for a reply it delivered, fails a round now and then (seen once in a
    /// clean-clone suite): such a round runs once more; any other failure, or the defect twice
    /// running, fails the test.
    #[test]
    fn a_service_answers_each_request_once_in_each_mode() {
        let round = |label: &str| {
            in_each_mode::<FastIpc>(label, Shape::Service { clients: 2, servers: 2 }, |setup| {
                let answered = testing::service_replies::<FastIpc>(setup, 300);
                assert_eq!(answered.iter().sum::<u64>(), 600, "{}: {answered:?}", setup.mode);
            })
        };
        match std::panic::catch_unwind(|| round("fipc-service")) {
            Ok(()) => {}
            Err(e)
                if e.downcast_ref::<String>()
                    .is_some_and(|m| m.contains("fipc send") && m.contains("FIPC_DISCONNECTED")) =>
            {
                eprintln!("FastIPC's known failed reply (adapters/fastipc/README.md); the round runs again");
                round("fipc-service-again");
            }
            Err(e) => std::panic::resume_unwind(e),
        }
    }

    /// The batch calls: `send_many` of 16 messages, `receive_many` until all are in, in order.
    #[test]
    fn a_batch_arrives_whole_and_in_order() {
        let place = Scratch::new("fipc-batch");
        let setup = Setup { batch: 16, mode: RecvMode::Polling, ..place.setup(Shape::Stream) };
        let size = setup.size;
        std::thread::scope(|s| {
            let rx = s.spawn(|| {
                let mut rx = FastIpc::stream(&setup, Side::Accept).unwrap().endpoint;
                let mut buf = vec![0u8; 16 * size];
                let mut seq = 0u64;
                loop {
                    match rx.recv_batch(&mut buf, size).unwrap() {
                        Batch::Messages(k) => {
                            for m in buf[..k * size].chunks_exact(size) {
                                assert_eq!(u64::from_le_bytes(m[..8].try_into().unwrap()), seq);
                                seq += 1;
                            }
                        }
                        Batch::Empty => {}
                        Batch::Closed => return seq,
                    }
                }
            });
            let mut tx = FastIpc::stream(&setup, Side::Connect).unwrap().endpoint;
            let mut block = vec![0u8; 16 * size];
            for round in 0..100u64 {
                for (i, m) in block.chunks_exact_mut(size).enumerate() {
                    m[..8].copy_from_slice(&(round * 16 + i as u64).to_le_bytes());
                }
                tx.send_batch(&block, size).unwrap();
            }
            assert!(tx.send_batch(&vec![0u8; 65 * size], size).is_err(), "at most 64 messages a call");
            drop(tx);
            assert_eq!(rx.join().unwrap(), 1600);
        });
    }
}
