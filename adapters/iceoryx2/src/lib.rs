//! ipcbench adapter for iceoryx2 0.10, from Rust, its own language: zero-copy shared memory.
//!
//! | Pattern | Services and ports |
//! |---|---|
//! | stream | publish-subscribe of `[u8]`, one publisher, one subscriber, safe overflow off |
//! | round trip | two publish-subscribe services, one each way |
//! | broadcast, lossless | publish-subscribe, safe overflow off: the publisher waits for room |
//! | broadcast, lossy | publish-subscribe, safe overflow on: a full buffer drops its oldest sample |
//! | service | request-response of `[u8]`; every server receives every request and answers it |
//! | work queue | none: a sample goes to every subscriber, a request to every server |
//!
//! A message is copied into a loaned sample (`loan_slice_uninit` + `write_from_slice`) and sent;
//! the receiver copies the payload out into the harness's buffer and releases the sample. In the
//! loan mode (a stream's or round trip's `loan/` case) the harness writes the message into the
//! loaned sample itself (`loan_slice_uninit`, `assume_init`, `send`) and reads the received
//! sample where it lies before releasing it; an echo reads the request's sample while it writes
//! the reply's.
//!
//! Waiting receivers sleep on an event service of the same name (`Listener::timed_wait`), which
//! the sending side notifies after each send (`Notifier::notify`); polling receivers call
//! `receive` in a loop and nothing is notified. A receiver knows its sender has gone when the
//! service's dynamic configuration counts no publisher (no client, for a server) and nothing is
//! left to receive.
//!
//! Isolation: every node of a trial uses a `Config` whose prefix is the trial's name and whose
//! root is the trial's directory, so its files live there and its shared memory is named
//! `/dev/shm/<name>_*` (which the driver removes after the trial, with the global management
//! segment iceoryx2 keeps on purpose). Signal handling is off: SIGTERM ends a child.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use iceoryx2::active_request::ActiveRequest;
use iceoryx2::config::Config;
use iceoryx2::node::{Node, NodeBuilder};
use iceoryx2::pending_response::PendingResponse;
use iceoryx2::port::client::Client;
use iceoryx2::port::listener::Listener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::server::Server;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::port::update_connections::UpdateConnections as _;
use iceoryx2::prelude::{
    BackpressureStrategy, EventId, FileName, LogLevel, PortFactory as _, SemanticString as _, ServiceName,
    SignalHandlingMode, ipc, set_log_level,
};
use iceoryx2::service::port_factory::{event, publish_subscribe, request_response};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Loaned, Opened, Pair, Received, RecvMode, Requests, Rx,
    Setup, Shape, Side, Support, Tx, Unsupported, retry_until,
};

/// iceoryx2.
pub struct Iceoryx2;

/// Samples a subscriber's buffer holds: at 1 KiB, the 256 KiB of FastIPC's stream ring.
const BUFFER: usize = 256;
/// How long a waiting receiver sleeps at most before it looks again whether its sender has gone.
const RECHECK: Duration = Duration::from_millis(20);
/// The event a dropped notifier sends its listeners: a sender's end wakes its receivers.
const DROPPED: EventId = EventId::new(1);

type Svc = ipc::Service;
type PubSub = publish_subscribe::PortFactory<Svc, [u8], ()>;
type ReqRes = request_response::PortFactory<Svc, [u8], u64, [u8], ()>;
/// A request carries its client's index in a u64 user header.
type Pending = PendingResponse<Svc, [u8], u64, [u8], ()>;
type Active = ActiveRequest<Svc, [u8], u64, [u8], ()>;

impl Library for Iceoryx2 {
    type Stream = Pair<Sending, Receiving, Node<Svc>>;
    type Publisher = Sending;
    type Subscriber = Receiving;
    type Producer = Unsupported;
    type Consumer = Unsupported;
    type Client = Caller;
    type Server = Answerer;

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "iceoryx2",
            kind: ipcbench_api::Kind::SharedMemory,
            name: "iceoryx2",
            version: "0.10.0".into(),
            modes: &[RecvMode::Waiting, RecvMode::Polling],
            capabilities: Capabilities {
                stream: Support::Yes(
                    "publish-subscribe of [u8], 1 publisher and 1 subscriber, safe overflow off",
                ),
                round_trip: Support::Yes("two publish-subscribe services, one each way"),
                broadcast_lossless: Support::Yes("publish-subscribe, safe overflow off: the publisher waits"),
                broadcast_lossy: Support::Yes(
                    "publish-subscribe, safe overflow on: overwrites the oldest sample",
                ),
                queue: Support::No(
                    "no work queue: a sample goes to every subscriber and a request to every server",
                ),
                service: Support::Yes("request-response: every server receives every request and answers it"),
                batch: Support::No("no call sends or receives several samples at once"),
                loan: Support::Yes("loan_slice_uninit / write / send, and a received sample read in place"),
                most_subscribers: None,
            },
            requests: Requests::ToEveryServer,
            largest_message: None,
            configuration: vec![
                ("subscriber buffer (samples)", BUFFER.to_string()),
                ("history (samples)", "0".into()),
                ("lossless publisher", "safe overflow off, BackpressureStrategy::RetryUntilDelivered".into()),
                ("lossy publisher", "safe overflow on".into()),
                ("payload", "[u8] slices of the case's size, copied into a loaned sample".into()),
                (
                    "request-response",
                    "safe overflow off both ways; a u64 user header names the client".into(),
                ),
                (
                    "waiting receive",
                    "an event service: Notifier::notify per send, Listener::timed_wait".into(),
                ),
                ("polling receive", "receive() in a loop, no notification".into()),
                ("signal handling", "SignalHandlingMode::Disabled".into()),
                ("isolation", "Config prefix = the trial's name, root = the trial's directory".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Pair<Sending, Receiving, Node<Svc>>>> {
        let node = node(setup)?;
        let (tx, rx) = match (setup.stream_or_round_trip()?, side) {
            (false, Side::Accept) => (None, Some(Receiving::open(&node, setup, "data")?)),
            (false, Side::Connect) => (Some(Sending::open(&node, setup, "data", 1)?), None),
            // Each side's subscriber first, then its publisher (which waits for the other side's
            // subscriber), then the wait for the other side's publisher.
            (true, Side::Accept) => {
                let rx = Receiving::open(&node, setup, "ping")?;
                (Some(Sending::open(&node, setup, "pong", 1)?), Some(rx))
            }
            (true, Side::Connect) => {
                let rx = Receiving::open(&node, setup, "pong")?;
                (Some(Sending::open(&node, setup, "ping", 1)?), Some(rx))
            }
        };
        if let Some(rx) = &rx {
            rx.wait_for_publisher(setup)?;
        }
        let pair = Pair { tx, rx, keep: node };
        let buffer = pair.either(|rx| rx.buffer(setup), |tx| tx.buffer(setup))?;
        Ok(Opened::new(pair).buffered(buffer))
    }

    fn publisher(setup: &Setup) -> Result<Opened<Sending>> {
        let (_, subscribers) = setup.broadcast("publisher")?;
        let node = node(setup)?;
        let mut s = Sending::open(&node, setup, "broadcast", subscribers)?;
        s._node = Some(node);
        let buffer = s.buffer(setup);
        Ok(Opened::new(s).buffered(buffer))
    }

    fn subscriber(setup: &Setup) -> Result<Opened<Receiving>> {
        setup.broadcast("subscriber")?;
        let node = node(setup)?;
        let mut r = Receiving::open(&node, setup, "broadcast")?;
        r.wait_for_publisher(setup)?;
        r._node = Some(node);
        let buffer = r.buffer(setup);
        Ok(Opened::new(r).buffered(buffer))
    }

    fn client(setup: &Setup) -> Result<Opened<Caller>> {
        let (_, servers) = setup.service("client")?;
        let node = node(setup)?;
        let service = request_response(&node, setup)?;
        let client = service
            .client_builder()
            .initial_max_slice_len(setup.size)
            .create()
            .map_err(|e| anyhow!("creating the client: {e:?}"))?;
        let replies = match setup.mode {
            RecvMode::Waiting => {
                Some(listener(&event_service(&node, setup, &format!("reply{}", setup.index), 1)?)?)
            }
            RecvMode::Polling => None,
        };
        let requests = match setup.mode {
            RecvMode::Waiting => Some(notifier(&event_service(&node, setup, "requests", servers)?)?),
            RecvMode::Polling => None,
        };
        // Every server must be there before the first request, or it would miss some.
        wait_until(setup, &format!("{servers} servers"), || {
            service.dynamic_config().number_of_servers() >= servers
        })?;
        if requests.is_some() {
            wait_until(setup, "the servers' listeners", || n_listeners(&node, setup, "requests", servers))?;
        }
        Ok(Opened::new(Caller {
            client,
            pending: None,
            replies,
            requests,
            index: setup.index as u64,
            replies_seen: 0,
            servers,
            timeout: setup.timeout,
            _service: service,
            _node: node,
        }))
    }

    fn server(setup: &Setup) -> Result<Opened<Answerer>> {
        let (clients, _) = setup.service("server")?;
        let node = node(setup)?;
        let service = request_response(&node, setup)?;
        let server = service
            .server_builder()
            .initial_max_slice_len(setup.size)
            .create()
            .map_err(|e| anyhow!("creating the server: {e:?}"))?;
        let (requests, replies) = match setup.mode {
            RecvMode::Waiting => {
                let servers = setup.service("server")?.1;
                let requests = listener(&event_service(&node, setup, "requests", servers)?)?;
                let replies = (0..clients)
                    .map(|c| notifier(&event_service(&node, setup, &format!("reply{c}"), 1)?))
                    .collect::<Result<Vec<_>>>()?;
                (Some(requests), replies)
            }
            RecvMode::Polling => (None, Vec::new()),
        };
        // Its clients' count falling to zero is how it learns they are done: wait until all came.
        wait_until(setup, &format!("{clients} clients"), || {
            service.dynamic_config().number_of_clients() >= clients
        })?;
        // Connected now, not at its first receive: until then a client's requests only fill the
        // buffer, and once it is full they are dropped (iceoryx2 will not block on a receiver
        // that has not connected).
        server.update_connections().map_err(|e| anyhow!("connecting the server to its clients: {e:?}"))?;
        Ok(Opened::new(Answerer { server, active: None, requests, replies, service, _node: node }))
    }
}

/// This trial's node: its files under the trial's directory, its shared memory named after the
/// trial, no signal handler.
fn node(setup: &Setup) -> Result<Node<Svc>> {
    set_log_level(LogLevel::Warn);
    let mut config = Config::default();
    config.global.prefix = FileName::new(format!("{}_", setup.name).as_bytes())
        .map_err(|e| anyhow!("{:?} as an iceoryx2 prefix: {e:?}", setup.name))?;
    let root = setup.dir.join("iceoryx2");
    let root_str = root.to_str().ok_or_else(|| anyhow!("{} is not UTF-8", root.display()))?;
    let root_path = iceoryx2::prelude::Path::new(root_str.as_bytes())
        .map_err(|e| anyhow!("{root_str} as an iceoryx2 root path: {e:?}"))?;
    config.global.set_root_path(&root_path);
    NodeBuilder::new()
        .config(&config)
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<Svc>()
        .map_err(|e| anyhow!("creating an iceoryx2 node under {root_str}: {e:?}"))
}

fn service_name(setup: &Setup, what: &str) -> Result<ServiceName> {
    let name = format!("{}/{what}", setup.name);
    ServiceName::new(&name).map_err(|e| anyhow!("{name:?} as an iceoryx2 service name: {e:?}"))
}

/// Opens or creates, retrying while another process is creating the same service.
fn open_or_create<T, E: Debug>(setup: &Setup, what: &str, mut f: impl FnMut() -> Result<T, E>) -> Result<T> {
    retry_until(
        Instant::now() + setup.timeout,
        Duration::from_millis(1),
        || Ok(f()),
        |e| anyhow!("opening or creating {what}: {e:?}"),
    )
}

fn wait_until(setup: &Setup, what: &str, mut ready: impl FnMut() -> bool) -> Result<()> {
    retry_until(
        Instant::now() + setup.timeout,
        Duration::from_millis(1),
        || Ok(if ready() { Ok(()) } else { Err(()) }),
        |()| anyhow!("{what} were not there within {:?}", setup.timeout),
    )
}

/// Samples a subscriber's buffer holds: `--buffer` in messages, or the adapter's default.
fn depth(setup: &Setup) -> usize {
    setup.buffer_messages().unwrap_or(BUFFER)
}

/// A publish-subscribe channel's depth, as read back.
fn pub_sub_buffer(samples: usize, setup: &Setup, whose: &str) -> Buffer {
    let why = if setup.buffer.is_some() { "--buffer" } else { "the adapter's default" };
    Buffer::messages(samples, setup.size, format!("{whose} buffer of {samples} samples ({why}, read back)"))
}

fn publish_subscribe(node: &Node<Svc>, setup: &Setup, what: &str) -> Result<PubSub> {
    let (lossy, subscribers) = match setup.shape {
        Shape::Broadcast { lossy, subscribers } => (lossy, subscribers),
        _ => (false, 1),
    };
    let name = service_name(setup, what)?;
    open_or_create(setup, &format!("the publish-subscribe service {name}"), || {
        node.service_builder(&name)
            .publish_subscribe::<[u8]>()
            .max_publishers(1)
            .max_subscribers(subscribers)
            // A node per process: the default (20) would refuse a broadcast's 20th subscriber.
            .max_nodes(subscribers + 1)
            .subscriber_max_buffer_size(depth(setup))
            .history_size(0)
            .enable_safe_overflow(lossy)
            .open_or_create()
    })
}

fn request_response(node: &Node<Svc>, setup: &Setup) -> Result<ReqRes> {
    let (clients, servers) = setup.service("endpoint")?;
    let name = service_name(setup, "service")?;
    open_or_create(setup, &format!("the request-response service {name}"), || {
        node.service_builder(&name)
            .request_response::<[u8], [u8]>()
            .request_user_header::<u64>()
            .max_clients(clients)
            .max_servers(servers)
            .max_active_requests_per_client(16)
            .max_response_buffer_size(servers.max(2))
            .enable_safe_overflow_for_requests(false)
            .enable_safe_overflow_for_responses(false)
            .open_or_create()
    })
}

fn event_service(
    node: &Node<Svc>,
    setup: &Setup,
    what: &str,
    listeners: usize,
) -> Result<event::PortFactory<Svc>> {
    let name = service_name(setup, what)?;
    open_or_create(setup, &format!("the event service {name}"), || {
        node.service_builder(&name)
            .event()
            .max_listeners(listeners.max(1))
            .max_notifiers(8)
            // Every listener's process and the notifiers' (the defaults refuse a 20th node).
            .max_nodes(listeners.max(1) + 8)
            .notifier_dropped_event(DROPPED)
            .open_or_create()
    })
}

fn n_listeners(node: &Node<Svc>, setup: &Setup, what: &str, listeners: usize) -> bool {
    event_service(node, setup, what, listeners)
        .is_ok_and(|s| s.dynamic_config().number_of_listeners() >= listeners)
}

fn listener(service: &event::PortFactory<Svc>) -> Result<Listener<Svc>> {
    service.listener_builder().create().map_err(|e| anyhow!("creating a listener: {e:?}"))
}

fn notifier(service: &event::PortFactory<Svc>) -> Result<Notifier<Svc>> {
    service.notifier_builder().create().map_err(|e| anyhow!("creating a notifier: {e:?}"))
}

/// Sleeps until notified, or `RECHECK` passes.
#[cold]
fn sleep_on(listener: &Listener<Svc>) -> Result<()> {
    listener.timed_wait(|_| {}, RECHECK).map_err(|e| anyhow!("Listener::timed_wait: {e:?}"))?;
    Ok(())
}

/// Copies a received payload into the harness's buffer.
#[inline(always)]
fn copy_out(payload: &[u8], buf: &mut [u8]) -> Result<Received> {
    let n = payload.len();
    let Some(room) = buf.get_mut(..n) else {
        bail!("a sample of {n} bytes arrived; messages of this case have {}", buf.len())
    };
    room.copy_from_slice(payload);
    Ok(Received::Message(n))
}

/// A publisher, and in waiting mode the notifier that wakes its subscribers.
pub struct Sending {
    // Dropped first: the publisher leaves the service before the notifier's drop wakes anyone.
    publisher: Publisher<Svc, [u8], ()>,
    notifier: Option<Notifier<Svc>>,
    service: PubSub,
    _node: Option<Node<Svc>>,
}

impl Sending {
    /// What each subscriber's buffer holds, as the service says.
    fn buffer(&self, setup: &Setup) -> Buffer {
        let samples = self.service.static_config().subscriber_max_buffer_size();
        pub_sub_buffer(samples, setup, "the service's largest subscriber")
    }

    /// Waits until `subscribers` subscribers (and their listeners) are there: a late one would
    /// miss the first samples.
    fn open(node: &Node<Svc>, setup: &Setup, what: &str, subscribers: usize) -> Result<Sending> {
        let service = publish_subscribe(node, setup, what)?;
        let publisher = service
            .publisher_builder()
            .initial_max_slice_len(setup.size)
            .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .create()
            .map_err(|e| anyhow!("creating the publisher of {what}: {e:?}"))?;
        wait_until(setup, &format!("{subscribers} subscribers of {what}"), || {
            service.dynamic_config().number_of_subscribers() >= subscribers
        })?;
        let notifier = match setup.mode {
            RecvMode::Waiting => {
                wait_until(setup, &format!("the listeners of {what}"), || {
                    n_listeners(node, setup, what, subscribers)
                })?;
                Some(notifier(&event_service(node, setup, what, subscribers)?)?)
            }
            RecvMode::Polling => None,
        };
        Ok(Sending { publisher, notifier, service, _node: None })
    }
}

impl Sending {
    #[inline]
    fn notify(&self) -> Result<()> {
        if let Some(n) = &self.notifier {
            n.notify().map_err(|e| anyhow!("Notifier::notify: {e:?}"))?;
        }
        Ok(())
    }
}

impl Tx for Sending {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        let sample = self
            .publisher
            .loan_slice_uninit(message.len())
            .map_err(|e| anyhow!("loan_slice_uninit: {e:?}"))?;
        sample.write_from_slice(message).send().map_err(|e| anyhow!("Sample::send: {e:?}"))?;
        self.notify()
    }

    /// The sample is written in place: `loan_slice_uninit`, the harness's writer over all of it,
    /// `assume_init`, `send`.
    #[inline]
    fn send_loaned<W: FnOnce(&mut [u8])>(&mut self, len: usize, write: W) -> Result<()> {
        let mut sample =
            self.publisher.loan_slice_uninit(len).map_err(|e| anyhow!("loan_slice_uninit: {e:?}"))?;
        let payload = sample.payload_mut();
        // SAFETY: the payload is `len` bytes of the service's shared memory, mapped (zeroed by
        // the OS) and only ever written since: as u8 it is readable memory; the writer writes
        // every byte before anything reads it.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(payload.as_mut_ptr().cast::<u8>(), payload.len()) };
        write(bytes);
        // SAFETY: every byte of the payload was written just above.
        let sample = unsafe { sample.assume_init() };
        sample.send().map_err(|e| anyhow!("Sample::send: {e:?}"))?;
        self.notify()
    }
}

/// A subscriber, and in waiting mode the listener it sleeps on.
pub struct Receiving {
    subscriber: Subscriber<Svc, [u8], ()>,
    listener: Option<Listener<Svc>>,
    service: PubSub,
    _node: Option<Node<Svc>>,
}

impl Receiving {
    /// What this subscriber's buffer holds.
    fn buffer(&self, setup: &Setup) -> Buffer {
        pub_sub_buffer(self.subscriber.buffer_size(), setup, "the subscriber's")
    }

    fn open(node: &Node<Svc>, setup: &Setup, what: &str) -> Result<Receiving> {
        let service = publish_subscribe(node, setup, what)?;
        let subscriber = service
            .subscriber_builder()
            .buffer_size(depth(setup))
            .create()
            .map_err(|e| anyhow!("creating a subscriber of {what}: {e:?}"))?;
        let listener = match setup.mode {
            RecvMode::Waiting => {
                let subscribers = setup.broadcast("subscriber").map(|b| b.1).unwrap_or(1);
                Some(listener(&event_service(node, setup, what, subscribers)?)?)
            }
            RecvMode::Polling => None,
        };
        Ok(Receiving { subscriber, listener, service, _node: None })
    }

    /// Waits until the publisher is there, so that "no publisher" later means it has gone; then
    /// connects to it now, not at the first receive: until then the publisher only fills the
    /// buffer, and once it is full drops the rest (iceoryx2 will not block on a receiver that has
    /// not connected).
    fn wait_for_publisher(&self, setup: &Setup) -> Result<()> {
        wait_until(setup, "the publisher", || self.service.dynamic_config().number_of_publishers() >= 1)?;
        self.subscriber.update_connections().map_err(|e| anyhow!("connecting to the publisher: {e:?}"))
    }
}

impl Receiving {
    /// The next sample, read by `read` while it is held: waits on the listener (waiting), or
    /// returns at once (polling).
    #[inline]
    fn next<T>(&mut self, read: impl FnOnce(&[u8]) -> T) -> Result<Loaned<T>> {
        loop {
            if let Some(sample) =
                self.subscriber.receive().map_err(|e| anyhow!("Subscriber::receive: {e:?}"))?
            {
                return Ok(Loaned::Message(read(sample.payload())));
            }
            if self.service.dynamic_config().number_of_publishers() == 0 {
                // Gone: what it sent before leaving is still there to receive.
                return match self.subscriber.receive().map_err(|e| anyhow!("Subscriber::receive: {e:?}"))? {
                    Some(sample) => Ok(Loaned::Message(read(sample.payload()))),
                    None => Ok(Loaned::Closed),
                };
            }
            match &self.listener {
                Some(l) => sleep_on(l)?,
                None => return Ok(Loaned::Empty),
            }
        }
    }
}

impl Rx for Receiving {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        match self.next(|payload| copy_out(payload, buf))? {
            Loaned::Message(copied) => copied,
            Loaned::Empty => Ok(Received::Empty),
            Loaned::Lost(n) => Ok(Received::Lost(n)),
            Loaned::Closed => Ok(Received::Closed),
        }
    }

    /// The received sample read where it lies, released after.
    #[inline]
    fn recv_loaned<T, F: FnOnce(&[u8]) -> T>(&mut self, read: F) -> Result<Loaned<T>> {
        self.next(read)
    }
}

/// A request-response client; its requests carry its index, so servers know whom to wake.
pub struct Caller {
    client: Client<Svc, [u8], u64, [u8], ()>,
    pending: Option<Pending>,
    replies: Option<Listener<Svc>>,
    requests: Option<Notifier<Svc>>,
    index: u64,
    /// Replies to the pending request so far, and how many there will be.
    replies_seen: usize,
    servers: usize,
    timeout: Duration,
    _service: ReqRes,
    _node: Node<Svc>,
}

impl Tx for Caller {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        let mut request = self
            .client
            .loan_slice_uninit(message.len())
            .map_err(|e| anyhow!("Client::loan_slice_uninit: {e:?}"))?;
        *request.user_header_mut() = self.index;
        let pending =
            request.write_from_slice(message).send().map_err(|e| anyhow!("RequestMut::send: {e:?}"))?;
        self.pending = Some(pending);
        self.replies_seen = 0;
        if let Some(n) = &self.requests {
            n.notify().map_err(|e| anyhow!("Notifier::notify: {e:?}"))?;
        }
        Ok(())
    }
}

impl Rx for Caller {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        let Some(pending) = &self.pending else { bail!("a reply was awaited with no request pending") };
        if self.replies_seen > 0 {
            bail!("a second reply was awaited for one request");
        }
        loop {
            // The first reply answers the call. The request stays pending until the next one is
            // sent (the other servers' replies are then dropped with it), and at the end until
            // every server has answered: iceoryx2 drops what a departed client sent.
            if let Some(reply) = pending.receive().map_err(|e| anyhow!("PendingResponse::receive: {e:?}"))? {
                self.replies_seen = 1;
                return copy_out(reply.payload(), buf);
            }
            if !pending.is_connected() {
                // Every server let go of it: its reply, if any, is there now.
                return match pending.receive().map_err(|e| anyhow!("PendingResponse::receive: {e:?}"))? {
                    Some(reply) => {
                        self.replies_seen = 1;
                        copy_out(reply.payload(), buf)
                    }
                    None => bail!("no server answered: every server let go of the request"),
                };
            }
            match &self.replies {
                Some(l) => sleep_on(l)?,
                None => return Ok(Received::Empty),
            }
        }
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        let Some(pending) = self.pending.take() else { return };
        let deadline = Instant::now() + self.timeout;
        while self.replies_seen < self.servers && pending.is_connected() && Instant::now() < deadline {
            match pending.receive() {
                Ok(Some(_)) => self.replies_seen += 1,
                Ok(None) => std::thread::sleep(Duration::from_micros(100)),
                Err(e) => {
                    eprintln!("iceoryx2: waiting for the last replies: {e:?}");
                    return;
                }
            }
        }
        if self.replies_seen < self.servers && pending.is_connected() {
            eprintln!(
                "iceoryx2: {} of {} servers answered the last request within {:?}",
                self.replies_seen, self.servers, self.timeout
            );
        }
    }
}

/// A request-response server; it notifies the client whose request it answered.
pub struct Answerer {
    server: Server<Svc, [u8], u64, [u8], ()>,
    active: Option<Active>,
    requests: Option<Listener<Svc>>,
    replies: Vec<Notifier<Svc>>,
    service: ReqRes,
    _node: Node<Svc>,
}

impl Rx for Answerer {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        loop {
            if let Some(request) = self.server.receive().map_err(|e| anyhow!("Server::receive: {e:?}"))? {
                let got = copy_out(request.payload(), buf);
                self.active = Some(request);
                return got;
            }
            if self.service.dynamic_config().number_of_clients() == 0 {
                return match self.server.receive().map_err(|e| anyhow!("Server::receive: {e:?}"))? {
                    Some(request) => {
                        let got = copy_out(request.payload(), buf);
                        self.active = Some(request);
                        got
                    }
                    None => Ok(Received::Closed),
                };
            }
            match &self.requests {
                Some(l) => sleep_on(l)?,
                None => return Ok(Received::Empty),
            }
        }
    }
}

impl Tx for Answerer {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        let Some(request) = self.active.take() else { bail!("a reply with no request to answer") };
        // With several servers, the client takes the first reply and lets go of the request:
        // the others' replies have nobody to go to.
        if !request.is_connected() {
            return Ok(());
        }
        let client = *request.user_header() as usize;
        let reply = request
            .loan_slice_uninit(message.len())
            .map_err(|e| anyhow!("ActiveRequest::loan_slice_uninit: {e:?}"))?;
        if let Err(e) = reply.write_from_slice(message).send() {
            bail!("ResponseMut::send: {e:?}");
        }
        if let Some(n) = self.replies.get(client) {
            n.notify().map_err(|e| anyhow!("Notifier::notify: {e:?}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::testing::{self, Scratch, in_each_mode};

    /// The subscriber's buffer is 256 samples by default, `--buffer`'s messages with it.
    #[test]
    fn the_buffer_sets_the_subscribers_samples() {
        for (label, buffer, samples) in [("ibuf", None, BUFFER), ("ibuf64k", Some(64 << 10), 4096)] {
            let place = Scratch::new(label);
            let setup = Setup { buffer, ..place.setup(Shape::Stream) };
            for b in testing::stream_buffers::<Iceoryx2>(&setup) {
                let b = b.unwrap();
                assert_eq!(b.messages, Some(samples), "{}", b.how);
                assert_eq!(b.how.contains("--buffer"), buffer.is_some(), "{}", b.how);
            }
        }
    }

    #[test]
    fn broadcasts_reach_every_subscriber_in_order_in_each_mode() {
        for (label, lossy) in [("ib", false), ("ibl", true)] {
            in_each_mode::<Iceoryx2>(label, Shape::Broadcast { lossy, subscribers: 2 }, |setup| {
                testing::broadcast_in_order::<Iceoryx2>(setup, 5000, testing::Keeps::Buffer);
            });
        }
    }

    // Short test names: iceoryx2 builds socket paths from the name and directory.

    // A sample may be shorter than the case's size: the contract's checks only.
    #[test]
    fn a_stream_arrives_in_order_then_ends_in_each_mode() {
        in_each_mode::<Iceoryx2>("is", Shape::Stream, |setup| {
            testing::stream_delivers::<Iceoryx2>(&Setup { size: 64, ..*setup }, 2000, || {});
        });
    }

    /// The loan mode: every byte written in place arrives, read in place, on a stream and in
    /// round trips echoed in place; the loan's limit is the library's.
    #[test]
    fn messages_written_and_read_in_place_arrive_whole_in_each_mode() {
        in_each_mode::<Iceoryx2>("ir-loan", Shape::Stream, |setup| {
            testing::loans::<Iceoryx2>(&Setup { size: 1024, ..*setup }, 300);
        });
        assert!(Iceoryx2::largest_loan(Shape::Stream, None).is_none(), "a sample of the case's size");
    }

    #[test]
    fn round_trips_answer_each_request_in_each_mode() {
        in_each_mode::<Iceoryx2>("ir", Shape::RoundTrip, |setup| {
            testing::round_trips::<Iceoryx2>(&Setup { size: 1024, ..*setup }, 300);
        });
    }

    /// `Requests::ToEveryServer`: each server answers every request of every client.
    #[test]
    fn every_server_answers_every_request_in_each_mode() {
        in_each_mode::<Iceoryx2>("isv", Shape::Service { clients: 2, servers: 2 }, |setup| {
            assert_eq!(testing::service_replies::<Iceoryx2>(setup, 200), [400, 400], "{}", setup.mode);
        });
    }

    #[test]
    fn another_shape_is_refused() {
        let place = Scratch::new("ish");
        let e = Iceoryx2::stream(&place.setup(Shape::Queue { producers: 1, consumers: 1 }), Side::Accept);
        let e = e.err().unwrap().to_string();
        assert_eq!(e, "a stream endpoint was asked for Queue { producers: 1, consumers: 1 }");
    }
}
