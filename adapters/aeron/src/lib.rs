//! ipcbench adapter for Aeron 1.54: the official C client and C media driver (through the
//! `rusteron-media-driver` crate, which builds both from source), over `aeron:ipc`.
//!
//! | Pattern | Publications and subscriptions |
//! |---|---|
//! | stream | an exclusive publication on `aeron:ipc`; one subscription, polled with fragment limit 1 |
//! | round trip | two streams, one each way |
//! | broadcast, lossless | one exclusive publication, N subscriptions: IPC is tethered, so the slowest subscriber holds the publisher back |
//! | broadcast, lossy | none (see `info`) |
//!
//! The media driver is embedded in the process of the stream's sender, the round trip's pinger
//! or the broadcast's publisher, on a thread of its own, with its directory at
//! `/dev/shm/<trial name>-aeron` (deleted when it starts and when it stops; the harness's driver
//! removes it after the trial whatever happens). It lives until the harness says every sender is
//! done (`drain`), so receivers never lose it while they drain. Receivers' clients connect to it.
//!
//! A message is one `offer` (retried while back-pressured); a receive is one `poll` with fragment
//! limit 1 that copies the fragment into the harness's buffer. Aeron's subscriptions are polled:
//! there is no blocking receive. Its users wait with an idle strategy between polls that found
//! nothing, and so does the waiting mode here: Aeron's own backoff strategy
//! (`aeron_idle_strategy_backoff_idle` with Aeron's defaults: 10 spins, 20 yields, then parks of
//! 1 µs doubling to 1 ms), reset by every poll that brings a fragment. The polling mode polls
//! again at once. A sender ends by offering an end marker (see `ipcbench_api::end`); its
//! receivers end when they have polled it.

use std::ffi::CString;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use ipcbench_api::end::{self, Ends};
use ipcbench_api::{
    Batch, Buffer, Capabilities, Library, LibraryInfo, Loaned, Opened, Pair, Received, RecvMode, Requests,
    Rx, Setup, Shape, Side, Support, Tx, Unsupported, over_loan, retry_until,
};
use rusteron_media_driver::bindings::aeron_threading_mode_enum;
use rusteron_media_driver::{
    Aeron, AeronContext, AeronDriver, AeronDriverContext, AeronExclusivePublication, AeronOfferError,
    AeronSubscription, Handlers,
};

/// Aeron.
pub struct AeronIpc;

/// Aeron's default IPC term length, set explicitly so that the record is the truth.
const TERM: usize = 64 << 20;
/// Aeron's largest message whatever the term (`AERON_FRAME_MAX_MESSAGE_LENGTH`,
/// aeron_udp_protocol.h); below it a message may be an eighth of the term
/// (`aeron_compute_max_message_length`).
const LARGEST_MESSAGE: usize = 16 << 20;
/// Aeron's default IPC MTU (`AERON_IPC_MTU_LENGTH_DEFAULT`, aeron_driver_context.c), which the
/// adapter leaves as it is: a frame's length, header included.
const IPC_MTU: usize = 1408;
/// Fragments one poll may take: one message per receive.
const FRAGMENT_LIMIT: usize = 1;
const CHANNEL: &std::ffi::CStr = c"aeron:ipc";
/// Stream ids: the data one way, and the round trip's replies.
const FORTH: i32 = 1001;
const BACK: i32 = 1002;
/// Both: polls in a loop (polling), or polls with Aeron's backoff idle strategy between empty
/// polls (waiting).
const MODES: &[RecvMode] = &RecvMode::ALL;

impl Library for AeronIpc {
    type Stream = Pair<Sending, Receiving, Aeron>;
    type Publisher = Sending;
    type Subscriber = Receiving;
    type Producer = Unsupported;
    type Consumer = Unsupported;
    type Client = Unsupported;
    type Server = Unsupported;

    /// Each publication's log (three terms and a page of metadata) in the driver's directory,
    /// and the driver's own files (its command-and-control file and loss report, about 4 MiB).
    fn shared_memory(shape: Shape, size: usize, buffer: Option<usize>) -> u64 {
        let publications = if shape == Shape::RoundTrip { 2 } else { 1 };
        publications * (3 * term_of(buffer, size) as u64 + 4096) + (4 << 20)
    }

    /// `try_claim` takes one frame: the IPC MTU (Aeron's default) less the frame's header.
    fn largest_loan(_shape: Shape, _buffer: Option<usize>) -> Option<(usize, String)> {
        Some((
            IPC_MTU - FRAME_HEADER,
            format!(
                "try_claim takes one frame, the IPC MTU ({IPC_MTU} bytes, Aeron's default) less its {FRAME_HEADER}-byte header"
            ),
        ))
    }

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "aeron",
            kind: ipcbench_api::Kind::SharedMemory,
            name: "Aeron",
            version: "1.54.0 (C client and media driver, crate rusteron-media-driver 0.2.16)".into(),
            modes: MODES,
            capabilities: Capabilities {
                stream: Support::Yes("an exclusive publication on aeron:ipc, one offer per message"),
                round_trip: Support::Yes("two aeron:ipc streams, one each way"),
                broadcast_lossless: Support::Yes(
                    "one exclusive publication, a subscription per subscriber: IPC is tethered to the slowest",
                ),
                broadcast_lossy: Support::No(
                    "IPC subscriptions are tethered; an untethered one is dropped only after seconds behind, \
                     and a lone subscriber never is: no lossy mode like the others'",
                ),
                queue: Support::No("no work queue: every subscription receives every message"),
                service: Support::No("no request-reply"),
                batch: Support::Yes("offer_block of pre-formatted frames; polls with a fragment limit"),
                loan: Support::Yes(
                    "try_claim / commit, and a poll whose handler reads the fragment in the term",
                ),
                most_subscribers: None,
            },
            requests: Requests::ToOneServer,
            largest_message: Some((
                LARGEST_MESSAGE,
                "Aeron's largest message (AERON_FRAME_MAX_MESSAGE_LENGTH); the adapter makes the term at \
                 least eight messages long, as a message may be at most an eighth of it"
                    .into(),
            )),
            configuration: vec![
                ("media driver", "embedded in the sender's process, on a thread of its own".into()),
                ("threading mode", "AERON_THREADING_MODE_SHARED (one driver agent)".into()),
                ("conductor idle strategy", "backoff (Aeron's default: spins, yields, then sleeps)".into()),
                ("IPC term buffer length (bytes)", format!("{TERM}, or eight messages where more")),
                ("fragment limit", format!("{FRAGMENT_LIMIT}; in the batch cases, the batch (16 or 64)")),
                ("channel", "aeron:ipc, exclusive publications".into()),
                ("driver directory", "/dev/shm/<trial name>-aeron, deleted on start and on shutdown".into()),
                (
                    "receive",
                    "polling: poll again at once; waiting: Aeron's backoff idle strategy between empty polls \
                     (10 spins, 20 yields, parks of 1 µs doubling to 1 ms)"
                        .into(),
                ),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Pair<Sending, Receiving, Aeron>>> {
        let round_trip = setup.stream_or_round_trip()?;
        // The connecting side (sender, pinger) runs the media driver.
        let driver = match side {
            Side::Connect => Some(Driver::start(setup)?),
            Side::Accept => None,
        };
        let aeron = connect(setup)?;
        let (out, back) = match side {
            Side::Connect => (FORTH, BACK),
            Side::Accept => (BACK, FORTH),
        };
        let rx = match (side, round_trip) {
            (Side::Accept, _) | (Side::Connect, true) => Some(Receiving::open(&aeron, setup, back)?),
            (Side::Connect, false) => None,
        };
        let tx = match (side, round_trip) {
            (Side::Connect, _) | (Side::Accept, true) => Some(Sending::open(&aeron, setup, out)?),
            (Side::Accept, false) => None,
        };
        if let Some(rx) = &rx {
            rx.wait_for_publication(setup)?;
        }
        let buffer = window(setup, tx.as_ref().map(Sending::term_length).transpose()?);
        let pair = Pair { tx, rx, keep: aeron };
        let opened = Opened::new(pair).owning(driver.map(|d| Box::new(d) as Box<dyn std::any::Any + Send>));
        Ok(opened.buffered(buffer))
    }

    fn publisher(setup: &Setup) -> Result<Opened<Sending>> {
        let (lossy, _) = setup.broadcast("publisher")?;
        if lossy {
            bail!("Aeron has no lossy broadcast here: IPC subscriptions are tethered");
        }
        let driver = Driver::start(setup)?;
        let aeron = connect(setup)?;
        let mut s = Sending::open(&aeron, setup, FORTH)?;
        s._aeron = Some(aeron);
        let buffer = window(setup, Some(s.term_length()?));
        Ok(Opened::new(s).owning(Some(Box::new(driver))).buffered(buffer))
    }

    fn subscriber(setup: &Setup) -> Result<Opened<Receiving>> {
        setup.broadcast("subscriber")?;
        let aeron = connect(setup)?;
        let mut r = Receiving::open(&aeron, setup, FORTH)?;
        r.wait_for_publication(setup)?;
        r._aeron = Some(aeron);
        Ok(Opened::new(r).buffered(window(setup, None)))
    }
}

/// Aeron's backoff idle strategy, as its agents use it: the state Aeron allocates for it.
struct Backoff(std::ptr::NonNull<std::ffi::c_void>);

impl Backoff {
    fn new() -> Result<Backoff> {
        use rusteron_media_driver::bindings as c;
        let mut state = std::ptr::null_mut();
        // SAFETY: Aeron allocates and fills the state; this value owns it until drop.
        let r = unsafe { c::aeron_idle_strategy_backoff_state_init(&mut state, 10, 20, 1_000, 1_000_000) };
        match std::ptr::NonNull::new(state) {
            Some(state) if r == 0 => Ok(Backoff(state)),
            _ => bail!("aeron_idle_strategy_backoff_state_init failed ({r})"),
        }
    }

    /// After a poll that found `work` fragments: resets on work, else spins, yields or parks.
    #[inline]
    fn idle(&mut self, work: i32) {
        // SAFETY: the state made in `new`, used by this thread only.
        unsafe { rusteron_media_driver::bindings::aeron_idle_strategy_backoff_idle(self.0.as_ptr(), work) }
    }
}

impl Drop for Backoff {
    fn drop(&mut self) {
        // SAFETY: allocated by Aeron in `new`, freed once.
        unsafe { rusteron_media_driver::bindings::aeron_free(self.0.as_ptr()) }
    }
}

// SAFETY: the state is plain memory, used by one thread at a time (the endpoint's owner).
unsafe impl Send for Backoff {}

/// The IPC term length: `--buffer` rounded up to a power of two within Aeron's bounds (64 KiB
/// to 1 GiB), or `TERM`; and at least eight of the case's messages, since Aeron refuses a
/// message longer than an eighth of its term (128 MiB for 16 MiB messages).
fn term(setup: &Setup) -> usize {
    term_of(setup.buffer, setup.size)
}

fn term_of(buffer: Option<usize>, size: usize) -> usize {
    let asked = buffer.map_or(TERM, |b| b.next_power_of_two().clamp(64 << 10, 1 << 30));
    asked.max((size * 8).next_power_of_two()).min(1 << 30)
}

/// What an IPC publication lets a sender run ahead of its slowest subscriber: its window, half
/// the term (`read`: the term as the publication says, where this end has one), in frames of
/// the case's messages.
fn window(setup: &Setup, read: Option<usize>) -> Buffer {
    let term = read.unwrap_or_else(|| term(setup));
    let why = match setup.buffer {
        None if term > TERM => "eight messages, more than the adapter's term".to_string(),
        None => "the adapter's term".to_string(),
        Some(b) if b == term => "--buffer".to_string(),
        Some(b) if term > term_of(Some(b), 0) => format!("--buffer {b} raised to eight messages"),
        Some(b) => format!("--buffer {b} made a power of two from 64 KiB"),
    };
    let back = if read.is_some() { ", read back" } else { ", set by the sender's driver" };
    let bytes = term / 2;
    Buffer {
        messages: Some(bytes / frame_step(setup.size)),
        bytes: Some(bytes),
        how: format!(
            "the publication window, half the IPC term of {term} bytes ({why}{back}); each message a \
             frame of {} bytes",
            frame_step(setup.size)
        ),
    }
}

/// The media driver's directory for this trial, in /dev/shm (memory) like Aeron's own default.
fn driver_dir(setup: &Setup) -> String {
    format!("/dev/shm/{}-aeron", setup.name)
}

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| anyhow!("{s:?} holds a NUL byte"))
}

/// An embedded media driver: its agent runs on a thread of its own until dropped.
struct Driver {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Driver {
    fn start(setup: &Setup) -> Result<Driver> {
        let dir = driver_dir(setup);
        let cdir = c_string(&dir)?;
        let context = AeronDriverContext::new().map_err(|e| anyhow!("AeronDriverContext::new: {e:?}"))?;
        let settings = || -> Result<(), rusteron_media_driver::AeronCError> {
            context.set_dir(&cdir)?;
            context.set_dir_delete_on_start(true)?;
            context.set_dir_delete_on_shutdown(true)?;
            context.set_threading_mode(aeron_threading_mode_enum::AERON_THREADING_MODE_SHARED)?;
            context.set_ipc_term_buffer_length(term(setup))?;
            Ok(())
        };
        settings().map_err(|e| anyhow!("setting up the media driver in {dir}: {e:?}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let (started, outcome) = mpsc::channel();
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new().name("aeron-driver".into()).spawn(move || {
            let run = || -> Result<(), rusteron_media_driver::AeronCError> {
                let driver = AeronDriver::new(&context)?;
                driver.start(true)?;
                let _ = started.send(Ok(()));
                while !stopped.load(Ordering::Acquire) {
                    driver.main_idle_strategy(driver.main_do_work()?);
                }
                Ok(())
            };
            if let Err(e) = run() {
                let _ = started.send(Err(format!("{e:?}")));
                eprintln!("aeron: the media driver stopped: {e:?}");
            }
            // The last reference to the context goes here: the directory is deleted.
        })?;
        let driver = Driver { stop, thread: Some(thread) };
        match outcome.recv_timeout(setup.timeout) {
            Ok(Ok(())) => Ok(driver),
            Ok(Err(e)) => bail!("starting the media driver in {dir}: {e}"),
            Err(_) => bail!("the media driver in {dir} did not start within {:?}", setup.timeout),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A client of this trial's media driver (which may still be starting in another process).
fn connect(setup: &Setup) -> Result<Aeron> {
    let dir = driver_dir(setup);
    let cdir = c_string(&dir)?;
    let attempt = || -> Result<Aeron, rusteron_media_driver::AeronCError> {
        let context = AeronContext::new()?;
        context.set_dir(&cdir)?;
        // The default handler exits the process; a child reports instead.
        context.set_error_handler(Some(|code: i32, message: &str| {
            eprintln!("aeron: error {code}: {message}")
        }))?;
        let aeron = Aeron::new(&context)?;
        aeron.start()?;
        Ok(aeron)
    };
    retry_until(
        Instant::now() + setup.timeout,
        Duration::from_millis(5),
        || Ok(attempt()),
        |e| anyhow!("connecting to the media driver in {dir} within {:?}: {e:?}", setup.timeout),
    )
}

/// An exclusive publication.
pub struct Sending {
    publication: AeronExclusivePublication,
    /// The batch cases' block of frames for `offer_block`, and what its headers need.
    block: Vec<u8>,
    log: Log,
    /// The most `try_claim` takes: one frame, the MTU less its header (the constants').
    max_payload: usize,
    index: usize,
    timeout: Duration,
    _aeron: Option<Aeron>,
}

/// What a frame header of this publication holds, from its constants.
struct Log {
    term_length: usize,
    position_bits_to_shift: usize,
    initial_term_id: i32,
    session_id: i32,
    stream_id: i32,
}

/// Aeron's data frame header: 32 bytes, frames aligned to 32.
const FRAME_HEADER: usize = 32;
const FRAME_ALIGNMENT: usize = 32;
/// An unfragmented message: the BEGIN and END flags.
const UNFRAGMENTED: u8 = 0x80 | 0x40;
const HDR_TYPE_DATA: i16 = 1;

fn frame_step(size: usize) -> usize {
    (FRAME_HEADER + size).next_multiple_of(FRAME_ALIGNMENT)
}

impl Sending {
    fn open(aeron: &Aeron, setup: &Setup, stream: i32) -> Result<Sending> {
        let publication = aeron
            .async_add_exclusive_publication(CHANNEL, stream)
            .and_then(|a| a.poll_blocking(setup.timeout))
            .map_err(|e| anyhow!("adding an exclusive publication on aeron:ipc stream {stream}: {e:?}"))?;
        let c = publication.get_constants().map_err(|e| anyhow!("the publication's constants: {e:?}"))?;
        let log = Log {
            term_length: c.term_buffer_length(),
            position_bits_to_shift: c.position_bits_to_shift(),
            initial_term_id: c.initial_term_id(),
            session_id: c.session_id(),
            stream_id: c.stream_id(),
        };
        let block =
            if setup.batch > 1 { vec![0u8; setup.batch * frame_step(setup.size)] } else { Vec::new() };
        if block.len() > c.max_message_length() {
            bail!("a block of {} bytes is over the publication's {}", block.len(), c.max_message_length());
        }
        let max_payload = c.max_payload_length();
        Ok(Sending {
            publication,
            block,
            log,
            max_payload,
            index: setup.index,
            timeout: setup.timeout,
            _aeron: None,
        })
    }

    /// The publication's term length, as its constants say.
    fn term_length(&self) -> Result<usize> {
        let c =
            self.publication.get_constants().map_err(|e| anyhow!("the publication's constants: {e:?}"))?;
        Ok(c.term_buffer_length())
    }

    /// Retries what Aeron says to retry, fails on the rest.
    #[inline]
    fn retry(result: i64, what: &str) -> Result<bool> {
        match AeronOfferError::from_position(result) {
            Ok(_) => Ok(true),
            Err(
                AeronOfferError::BackPressured | AeronOfferError::AdminAction | AeronOfferError::NotConnected,
            ) => {
                std::hint::spin_loop();
                Ok(false)
            }
            Err(e) => bail!("{what}: {e:?}"),
        }
    }

    /// Offers until the message is in, or the deadline passes.
    fn offer_by(&self, message: &[u8], deadline: Option<Instant>) -> Result<()> {
        loop {
            match self.publication.offer(message) {
                Ok(_) => return Ok(()),
                Err(
                    e @ (AeronOfferError::BackPressured
                    | AeronOfferError::AdminAction
                    | AeronOfferError::NotConnected),
                ) => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        bail!("offer: still {e:?} after {:?}", self.timeout);
                    }
                    std::hint::spin_loop();
                }
                Err(e) => bail!("offer: {e:?}"),
            }
        }
    }
}

impl Tx for Sending {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        self.offer_by(message, None)
    }

    /// `try_claim` of one frame in the term, written in place, then `commit`.
    #[inline]
    fn send_loaned<W: FnOnce(&mut [u8])>(&mut self, len: usize, write: W) -> Result<()> {
        if len > self.max_payload {
            return Err(over_loan(
                len,
                self.max_payload,
                "Aeron's try_claim (one frame: the MTU less its header)",
            ));
        }
        let mut claim = loop {
            match self.publication.try_claim_owned(len) {
                Ok(claim) => break claim,
                Err(
                    AeronOfferError::BackPressured
                    | AeronOfferError::AdminAction
                    | AeronOfferError::NotConnected,
                ) => std::hint::spin_loop(),
                Err(e) => bail!("try_claim of {len} bytes: {e:?}"),
            }
        };
        write(&mut claim.data()[..len]);
        claim.commit().map_err(|e| anyhow!("committing a claim of {len} bytes: {e:?}"))?;
        Ok(())
    }

    /// `offer_block` of the messages as a block of data frames that the adapter formats: each
    /// a 32-byte header (length, flags, type, term offset, session, stream, term id) and the
    /// message, aligned to 32. A block must fit in the rest of its term: when it does not,
    /// `append_padding` fills the term and the block goes at the start of the next.
    #[inline]
    fn send_batch(&mut self, messages: &[u8], size: usize) -> Result<()> {
        let step = frame_step(size);
        let n = messages.len() / size;
        let len = n * step;
        if len > self.block.len() || n * size != messages.len() {
            bail!("a batch of {} bytes in a block of room {}", messages.len(), self.block.len());
        }
        for (frame, message) in self.block.chunks_exact_mut(step).zip(messages.chunks_exact(size)) {
            frame[FRAME_HEADER..FRAME_HEADER + size].copy_from_slice(message);
        }
        let log = &self.log;
        loop {
            let position = self.publication.position();
            if position < 0 {
                bail!("the publication is closed");
            }
            let term_offset = position as usize & (log.term_length - 1);
            let remaining = log.term_length - term_offset;
            if len > remaining {
                Sending::retry(self.publication.append_padding(remaining), "append_padding")?;
                continue;
            }
            let term_id = log.initial_term_id.wrapping_add((position >> log.position_bits_to_shift) as i32);
            for (i, frame) in self.block[..len].chunks_exact_mut(step).enumerate() {
                frame[0..4].copy_from_slice(&((FRAME_HEADER + size) as i32).to_le_bytes());
                frame[4] = 0;
                frame[5] = UNFRAGMENTED;
                frame[6..8].copy_from_slice(&HDR_TYPE_DATA.to_le_bytes());
                frame[8..12].copy_from_slice(&((term_offset + i * step) as i32).to_le_bytes());
                frame[12..16].copy_from_slice(&log.session_id.to_le_bytes());
                frame[16..20].copy_from_slice(&log.stream_id.to_le_bytes());
                frame[20..24].copy_from_slice(&term_id.to_le_bytes());
                frame[24..32].fill(0);
            }
            if Sending::retry(self.publication.offer_block(&self.block[..len]), "offer_block")? {
                return Ok(());
            }
        }
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        let deadline = Instant::now() + self.timeout;
        if let Err(e) = self.offer_by(&end::marker(self.index), Some(deadline)) {
            eprintln!("aeron: sender {} could not offer its end marker: {e:#}", self.index);
        }
    }
}

/// A subscription, polled one fragment at a time (a batch's worth in the batch cases).
pub struct Receiving {
    subscription: AeronSubscription,
    /// The case's message size: a message longer than the MTU's payload comes in fragments,
    /// gathered until this many bytes are in.
    size: usize,
    ends: Ends,
    /// Every sender has ended: the next batch receive says so.
    ended: bool,
    /// Waiting mode: the idle strategy between polls that found nothing.
    idle: Option<Backoff>,
    _aeron: Option<Aeron>,
}

impl Receiving {
    fn open(aeron: &Aeron, setup: &Setup, stream: i32) -> Result<Receiving> {
        let subscription = aeron
            .async_add_subscription(CHANNEL, stream, Handlers::NONE, Handlers::NONE)
            .and_then(|a| a.poll_blocking(setup.timeout))
            .map_err(|e| anyhow!("adding a subscription on aeron:ipc stream {stream}: {e:?}"))?;
        let idle = if setup.mode == RecvMode::Waiting { Some(Backoff::new()?) } else { None };
        Ok(Receiving { subscription, size: setup.size, ends: Ends::new(1), ended: false, idle, _aeron: None })
    }

    /// Waits until the publication's image is there: from then on it receives from its start.
    fn wait_for_publication(&self, setup: &Setup) -> Result<()> {
        retry_until(
            Instant::now() + setup.timeout,
            Duration::from_millis(1),
            || {
                let images = self.subscription.image_count().map_err(|e| anyhow!("image_count: {e:?}"))?;
                Ok(if images < 1 { Err(()) } else { Ok(()) })
            },
            |()| anyhow!("no publication joined the subscription within {:?}", setup.timeout),
        )
    }
}

impl Rx for Receiving {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        // Bytes of the message gathered so far, and the length of a fragment with no room.
        let (mut filled, mut over) = (0usize, 0usize);
        loop {
            let fragments = self
                .subscription
                .poll_fn(
                    |data: &[u8], _| match buf.get_mut(filled..filled + data.len()) {
                        Some(room) => {
                            room.copy_from_slice(data);
                            filled += data.len();
                        }
                        None => over = data.len(),
                    },
                    FRAGMENT_LIMIT,
                )
                .map_err(|e| anyhow!("poll: {e:?}"))?;
            if over > 0 {
                bail!("a fragment of {over} bytes after {filled} bytes of a message of {}", self.size);
            }
            if let Some(idle) = &mut self.idle {
                idle.idle(fragments);
            }
            if filled >= self.size {
                return Ok(Received::Message(filled));
            }
            if filled == 0 {
                if self.idle.is_some() {
                    continue;
                }
                return Ok(Received::Empty);
            }
            // An end marker, never fragmented, comes alone; anything else shorter than a message
            // is its first fragments, and the rest is being written: poll on for it.
            if fragments > 0 && end::is_marker(filled) {
                return Ok(if self.ends.see(&buf[..filled])? { Received::Closed } else { Received::Empty });
            }
        }
    }

    /// One poll of one fragment, read by `read` where it lies in the term (a loan case's messages
    /// fit one frame; an end marker ends the stream).
    #[inline]
    fn recv_loaned<T, F: FnOnce(&[u8]) -> T>(&mut self, read: F) -> Result<Loaned<T>> {
        let mut read = Some(read);
        loop {
            let (size, ends) = (self.size, &mut self.ends);
            let (mut out, mut marker, mut wrong) = (None, None, None);
            let fragments = self
                .subscription
                .poll_fn(
                    |data: &[u8], _| {
                        if data.len() == size
                            && let Some(read) = read.take()
                        {
                            out = Some(read(data));
                        } else if end::is_marker(data.len()) {
                            marker = Some(ends.see(data));
                        } else {
                            wrong = Some(data.len());
                        }
                    },
                    FRAGMENT_LIMIT,
                )
                .map_err(|e| anyhow!("poll: {e:?}"))?;
            if let Some(len) = wrong {
                bail!("a fragment of {len} bytes arrived; a loan case's messages are one frame of {size}");
            }
            if let Some(out) = out {
                return Ok(Loaned::Message(out));
            }
            if let Some(all) = marker {
                return Ok(if all? { Loaned::Closed } else { Loaned::Empty });
            }
            match &mut self.idle {
                Some(idle) => idle.idle(fragments),
                None => return Ok(Loaned::Empty),
            }
        }
    }

    /// One poll with a fragment limit of the batch: each fragment (one frame of `offer_block`,
    /// whose length the check below validates) copied to its place in `buf`.
    #[inline]
    fn recv_batch(&mut self, buf: &mut [u8], size: usize) -> Result<Batch> {
        loop {
            if self.ended {
                return Ok(Batch::Closed);
            }
            let room = buf.len() / size;
            let (mut k, mut wrong, mut marker) = (0usize, None, None);
            let ends = &mut self.ends;
            let fragments = self
                .subscription
                .poll_fn(
                    |data: &[u8], _| {
                        if data.len() == size && k < room {
                            buf[k * size..(k + 1) * size].copy_from_slice(data);
                            k += 1;
                        } else if end::is_marker(data.len()) {
                            marker = Some(ends.see(data));
                        } else {
                            wrong = Some(data.len());
                        }
                    },
                    room,
                )
                .map_err(|e| anyhow!("poll: {e:?}"))?;
            if let Some(len) = wrong {
                bail!("a frame of {len} bytes arrived; messages of this case have {size}");
            }
            if let Some(all) = marker {
                self.ended = all?;
            }
            if let Some(idle) = &mut self.idle {
                idle.idle(fragments);
            }
            match k {
                0 if self.ended => return Ok(Batch::Closed),
                // Waiting: poll again after the idle strategy.
                0 if self.idle.is_some() => {}
                0 => return Ok(Batch::Empty),
                k => return Ok(Batch::Messages(k)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use ipcbench_api::testing::{self, Scratch};

    #[test]
    fn a_lossless_broadcast_reaches_every_subscriber_in_order() {
        let shape = Shape::Broadcast { lossy: false, subscribers: 2 };
        testing::in_each_mode::<AeronIpc>("aeron-bcast", shape, |setup| {
            testing::broadcast_in_order::<AeronIpc>(setup, 5000, testing::Keeps::Buffer);
        });
    }

    // An offer takes any length, and a receive after `Closed` polls again: the contract's checks
    // only.
    #[test]
    fn a_stream_arrives_in_order_then_ends() {
        assert_eq!(AeronIpc::info().modes, &RecvMode::ALL);
        testing::in_each_mode::<AeronIpc>("aeron-stream", Shape::Stream, |setup| {
            testing::stream_delivers::<AeronIpc>(&Setup { size: 64, ..*setup }, 5000, || {});
        });
    }

    /// The loan mode: every byte written in place arrives, read in place, on a stream and in
    /// round trips echoed in place; the loan's limit is the library's.
    #[test]
    fn messages_written_and_read_in_place_arrive_whole_in_each_mode() {
        testing::in_each_mode::<AeronIpc>("aeron-loan", Shape::Stream, |setup| {
            testing::loans::<AeronIpc>(&Setup { size: 1024, ..*setup }, 300);
        });
        assert_eq!(AeronIpc::largest_loan(Shape::Stream, None).unwrap().0, 1376);
    }

    #[test]
    fn round_trips_answer_each_request() {
        testing::in_each_mode::<AeronIpc>("aeron-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<AeronIpc>(&Setup { size: 1024, ..*setup }, 300);
        });
    }

    /// The term is 64 MiB by default; `--buffer` sets it, made a power of two; the sender reads
    /// it back from its publication.
    #[test]
    fn the_buffer_sets_the_term() {
        for (label, buffer, term) in [("aeron-buf", None, TERM), ("aeron-buf1m", Some(1000 << 10), 1 << 20)] {
            let place = Scratch::new(label);
            let setup = Setup { buffer, timeout: Duration::from_secs(2), ..place.setup(Shape::Stream) };
            let [receiver, sender] = testing::stream_buffers::<AeronIpc>(&setup);
            let (receiver, sender) = (receiver.unwrap(), sender.unwrap());
            assert_eq!(sender.bytes, Some(term / 2), "{}", sender.how);
            assert_eq!(sender.messages, Some(term / 2 / 64), "frames of 64 bytes for 16: {}", sender.how);
            assert!(sender.how.contains("read back"), "{}", sender.how);
            assert_eq!(receiver.bytes, sender.bytes, "{}", receiver.how);
        }
    }

    /// The backoff strategy's state is made, used and freed.
    #[test]
    fn the_waiting_idle_strategy_backs_off_and_resets() {
        let mut backoff = Backoff::new().unwrap();
        let started = Instant::now();
        // 10 spins and 20 yields, then parks from 1 µs doubling: 40 idles take a while.
        for _ in 0..40 {
            backoff.idle(0);
        }
        assert!(started.elapsed() >= Duration::from_micros(500), "{:?}", started.elapsed());
        backoff.idle(1);
    }
}
