//! The control: a minimal single-producer single-consumer ring of fixed-size slots in shared
//! memory, written for this project (ipc-bench's shm case). No library is in the way: a send is
//! a copy into the next slot and a release store of the slot's sequence word; a receive looks at
//! that word until it names the message it expects, copies the slot out and release-stores the
//! tail. It is the physical reference every shared-memory library is held against.
//!
//! The producer's index lives in the slots themselves (each slot's sequence word, as Aeron's frame
//! length and Vyukov's bounded queue do), so the consumer learns of a message from the cache line
//! that carries it: a head index on a line of its own cost the consumer, caught up, one more
//! line fetched per message (30–45 M msg/s at 16 B on this machine type against 140 M without).
//! The producer caches the tail and rereads it only when the ring looks full. A polling consumer
//! that finds its slot empty issues spin-wait hints (`PAUSE`) before saying so, as Aeron's
//! busy-spin idle strategy does: without them, it takes the line from the producer mid-write,
//! over and over (3.4 against 15.6 M msg/s at 1 KiB).
//!
//! The accepting side (receiver, echo) creates the ring file(s) in /dev/shm
//! (`<name>-ring-forth`, and `<name>-ring-back` for a round trip), sized and mapped, and waits
//! for the connecting side to map them and say so; then it unlinks them, so nothing is left even
//! if a process dies later (the harness's driver also removes `/dev/shm/<name>-*` after every
//! trial). A sender's drop sets the ring's `closed` flag; its receiver sees it once the ring is
//! empty.
//!
//! Two receive modes. Polling: the receiver spins on its slot's sequence word, the sender on the
//! tail while the ring is full. Waiting: a side with nothing to do sleeps at once on a futex
//! (`FUTEX_WAIT`, not private: the word is in shared memory), after saying so in its `asleep`
//! word; the other side, after each sequence or tail store, wakes it (`FUTEX_WAKE`) if that word
//! says it sleeps. The sleeper waits
//! on a `bell` word that every wake rings (increments) first, so no wake can fall between its
//! last look at the ring and its sleep.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Opened, Pair, Received, RecvMode, Requests, Rx, Setup, Shape,
    Side, Support, Tx, Unsupported, retry_until,
};

/// The control.
pub struct ShmRing;

/// The ring's room for messages (rounded down to a power of two of slots): FastIPC's stream ring.
const RING_BYTES: usize = 1 << 18;
/// The header: each word on a cache line of its own (128 bytes: adjacent-line prefetch).
const LINE: usize = 128;
const HEADER: usize = 5 * LINE;
/// A slot's sequence word, before its message.
const SEQ: usize = 8;
/// Spin-wait hints (`PAUSE`) of a one-way polling consumer's first empty look after a message;
/// one at each later look. Measured: with one at every look the 16 B stream settled at 45 or
/// 145 M msg/s from run to run, with eight at the first it settled at 145 M. A round trip's
/// side pauses once at every look: its next message answers its own, and eight would lengthen
/// the round trip (260 against 110 ns).
const CAUGHT_UP_PAUSES: u32 = 8;
const MAGIC: u64 = 0x6970_6362_7269_6e67; // "ipcbring"
/// Both: spinning on the indices, or sleeping on a futex.
const MODES: &[RecvMode] = &RecvMode::ALL;

/// A stream side: the ring it sends on, the ring it receives from.
pub type Channel = Pair<Producer, ConsumerEnd, ()>;

impl Library for ShmRing {
    type Stream = Channel;
    type Publisher = Unsupported;
    type Subscriber = Unsupported;
    type Producer = Unsupported;
    type Consumer = Unsupported;
    type Client = Unsupported;
    type Server = Unsupported;

    /// A ring file each way.
    fn shared_memory(shape: Shape, size: usize, buffer: Option<usize>) -> u64 {
        let ways = if shape == Shape::RoundTrip { 2 } else { 1 };
        Ring::geometry(size, buffer.unwrap_or(RING_BYTES)).map_or(0, |(_, len)| ways * len as u64)
    }

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "shm-ring",
            kind: ipcbench_api::Kind::Control,
            name: "shared-memory ring (the control)",
            version: format!("ipcbench {}", env!("CARGO_PKG_VERSION")),
            modes: MODES,
            capabilities: Capabilities {
                stream: Support::Yes("one SPSC ring of fixed-size slots in /dev/shm"),
                round_trip: Support::Yes("two rings, one each way"),
                broadcast_lossless: Support::No("the control is a single-producer single-consumer ring"),
                broadcast_lossy: Support::No("the control is a single-producer single-consumer ring"),
                queue: Support::No("the control is a single-producer single-consumer ring"),
                service: Support::No("the control is a single-producer single-consumer ring"),
                batch: Support::No("the control moves one message per call"),
                loan: Support::No(
                    "the control copies in and out: it is the copy every library is held against",
                ),
                most_subscribers: None,
            },
            requests: Requests::ToOneServer,
            // Messages longer than half the ring get a ring of two slots of their size.
            largest_message: None,
            configuration: vec![
                ("ring (bytes of slots each way)", format!("{RING_BYTES}, or two slots where more")),
                ("slots", "the ring's bytes / the case's size, rounded down to a power of two".into()),
                ("slot", "an 8-byte sequence word, then the message rounded up to 8 bytes".into()),
                (
                    "receive",
                    "polling: spins on its slot's sequence word, 8 PAUSEs at a stream receiver's first empty \
                     look after a message and 1 at every other look (the sender on the tail while the ring \
                     is full); waiting: sleeps on a futex at once, woken after the other side's store"
                        .into(),
                ),
                ("memory", "a file in /dev/shm, mapped shared, unlinked once both sides have it".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Channel>> {
        let wait = setup.mode == RecvMode::Waiting;
        let round_trip = setup.stream_or_round_trip()?;
        let path = |what: &str| PathBuf::from(format!("/dev/shm/{}-ring-{what}", setup.name));
        let bytes = setup.buffer.unwrap_or(RING_BYTES);
        let (slots, _) = Ring::geometry(setup.size, bytes)?;
        let why = if setup.buffer.is_some() { "--buffer" } else { "the control's default" };
        let buffer = Buffer::messages(
            slots,
            setup.size,
            format!(
                "{slots} slots of the case's size ({why}: {bytes} bytes, rounded down to a power of two of slots, at least 2)"
            ),
        );
        let pair = match side {
            Side::Accept => {
                let forth = Ring::create(path("forth"), setup.size, bytes)?;
                let back =
                    if round_trip { Some(Ring::create(path("back"), setup.size, bytes)?) } else { None };
                forth.wait_for_peer(setup.timeout)?;
                // Both rings are mapped on both sides now: their files can go.
                forth.unlink();
                if let Some(back) = &back {
                    back.unlink();
                }
                Pair {
                    tx: back.map(|ring| Producer::new(ring, wait)),
                    rx: Some(ConsumerEnd::new(forth, !round_trip, wait)),
                    keep: (),
                }
            }
            Side::Connect => {
                let forth = Ring::open(path("forth"), setup.size, bytes, setup.timeout)?;
                let back = if round_trip {
                    Some(Ring::open(path("back"), setup.size, bytes, setup.timeout)?)
                } else {
                    None
                };
                // Mapped both: the accepting side may unlink the files now.
                forth.word(PEER).store(1, Ordering::Release);
                Pair {
                    tx: Some(Producer::new(forth, wait)),
                    rx: back.map(|ring| ConsumerEnd::new(ring, false, wait)),
                    keep: (),
                }
            }
        };
        Ok(Opened::new(pair).buffered(buffer))
    }
}

/// Indices of the header's words, each on a line of its own.
const READY: usize = 0;
const PEER: usize = 1;
const TAIL: usize = 2;
/// Waiting mode: the receiver's sleep (for its slot to fill), then the sender's (for the tail).
const RX_SLEEP: usize = 3;
const TX_SLEEP: usize = 4;
/// Shares the ready line: set once, read at the end.
const CLOSED_OFFSET: usize = 8;
/// In a sleep line: the sleeper's `asleep` word at 0, the waker's `bell` at this offset.
const BELL_OFFSET: usize = 64;

// The futex words are the low halves of 64-bit words.
const _: () = assert!(cfg!(target_endian = "little"), "the control's futex words assume little-endian");

/// One side's sleep: its `asleep` word and the `bell` its futex waits on.
struct Sleep<'a> {
    asleep: &'a AtomicU64,
    bell: &'a AtomicU32,
}

impl Sleep<'_> {
    /// Sleeps unless `done()` (read after saying so) is already true. The bell is read before
    /// `done`, so a wake after that read changes the bell and the futex returns at once.
    #[cold]
    fn until(&self, done: impl Fn() -> bool) {
        self.asleep.store(1, Ordering::SeqCst);
        let bell = self.bell.load(Ordering::SeqCst);
        if !done() {
            // SAFETY: FUTEX_WAIT on a 4-byte-aligned word of a live shared mapping; no timeout.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.bell.as_ptr(),
                    libc::FUTEX_WAIT,
                    bell,
                    std::ptr::null::<libc::timespec>(),
                )
            };
        }
        self.asleep.store(0, Ordering::Relaxed);
    }

    /// After an index store (or the close): wakes the other side if it sleeps.
    #[inline(always)]
    fn wake(&self) {
        fence(Ordering::SeqCst);
        if self.asleep.load(Ordering::Relaxed) != 0 {
            self.ring();
        }
    }

    #[cold]
    fn ring(&self) {
        self.bell.fetch_add(1, Ordering::SeqCst);
        // SAFETY: FUTEX_WAKE of every waiter on a word of a live shared mapping.
        unsafe { libc::syscall(libc::SYS_futex, self.bell.as_ptr(), libc::FUTEX_WAKE, i32::MAX) };
    }
}

/// One mapped ring.
struct Ring {
    base: NonNull<u8>,
    len: usize,
    /// The message's bytes, and a slot's (its sequence word, the message rounded up to 8).
    slot: usize,
    stride: usize,
    mask: u64,
    /// The accepting side's file, unlinked once the peer has mapped it (or on drop).
    owned: std::cell::Cell<Option<PathBuf>>,
}

impl Ring {
    /// A ring of `bytes` for messages of `size`: its slots (a power of two, at least 2) and the
    /// mapping's length.
    fn geometry(size: usize, bytes: usize) -> Result<(usize, usize)> {
        if size == 0 {
            bail!("messages of 0 bytes: the control's slots hold at least one");
        }
        let slots = (1usize << (bytes / size).max(1).ilog2()).max(2);
        let len = slots.checked_mul(Ring::stride(size)).and_then(|n| n.checked_add(HEADER));
        let len = len.ok_or_else(|| anyhow!("a ring of {slots} slots of {size} bytes is too large"))?;
        Ok((slots, len))
    }

    /// A slot's bytes for messages of `size`: the sequence word, then the message rounded up to 8
    /// bytes so that the next slot's word is aligned.
    fn stride(size: usize) -> usize {
        SEQ + size.div_ceil(8) * 8
    }

    fn create(path: PathBuf, size: usize, bytes: usize) -> Result<Ring> {
        let (slots, len) = Ring::geometry(size, bytes)?;
        // Made new, the creator's alone: a stale or foreign file of this name fails the trial.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        file.set_len(len as u64).with_context(|| format!("sizing {}", path.display()))?;
        let ring = Ring::map(&file, len, size, slots)?;
        ring.owned.set(Some(path));
        // A fresh file is zeroed: the indices start at 0. Ready last.
        ring.word(READY).store(MAGIC, Ordering::Release);
        Ok(ring)
    }

    fn open(path: PathBuf, size: usize, bytes: usize, timeout: Duration) -> Result<Ring> {
        let (slots, len) = Ring::geometry(size, bytes)?;
        let attempt = || {
            if let Ok(file) = OpenOptions::new().read(true).write(true).open(&path)
                && file.metadata().is_ok_and(|m| m.len() == len as u64)
            {
                let ring = Ring::map(&file, len, size, slots)?;
                if ring.word(READY).load(Ordering::Acquire) == MAGIC {
                    return Ok(Ok(ring));
                }
            }
            Ok(Err(()))
        };
        retry_until(Instant::now() + timeout, Duration::from_millis(1), attempt, |()| {
            anyhow!("no ring of {len} bytes ready at {} within {timeout:?}", path.display())
        })
    }

    fn map(file: &std::fs::File, len: usize, slot: usize, slots: usize) -> Result<Ring> {
        // SAFETY: a shared mapping of a file of `len` bytes, which this process keeps until drop.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(anyhow!("mmap of {len} bytes: {}", std::io::Error::last_os_error()));
        }
        let base = NonNull::new(p.cast::<u8>()).ok_or_else(|| anyhow!("mmap returned null"))?;
        Ok(Ring {
            base,
            len,
            slot,
            stride: Ring::stride(slot),
            mask: slots as u64 - 1,
            owned: std::cell::Cell::new(None),
        })
    }

    /// Header word `i` (its own cache line).
    #[inline(always)]
    fn word(&self, i: usize) -> &AtomicU64 {
        // SAFETY: the header is inside the mapping, 8-byte aligned (page-aligned base).
        unsafe { &*self.base.as_ptr().add(i * LINE).cast::<AtomicU64>() }
    }

    #[inline(always)]
    fn closed(&self) -> &AtomicU64 {
        // SAFETY: as `word`, in the ready word's line.
        unsafe { &*self.base.as_ptr().add(READY * LINE + CLOSED_OFFSET).cast::<AtomicU64>() }
    }

    /// Sleep line `line` (`RX_SLEEP` or `TX_SLEEP`).
    #[inline(always)]
    fn sleep(&self, line: usize) -> Sleep<'_> {
        // SAFETY: as `word`; the bell is 4-byte aligned within the same line.
        let bell = unsafe { &*self.base.as_ptr().add(line * LINE + BELL_OFFSET).cast::<AtomicU32>() };
        Sleep { asleep: self.word(line), bell }
    }

    /// Message `index`'s slot: its sequence word, then `slot` bytes of message.
    #[inline(always)]
    fn slot_ptr(&self, index: u64) -> (&AtomicU64, *mut u8) {
        // SAFETY: `index & mask` < slots, so the slot lies within the mapping; the stride is a
        // multiple of 8, so its word is 8-byte aligned (page-aligned base, header of whole lines).
        unsafe {
            let p = self.base.as_ptr().add(HEADER + (index & self.mask) as usize * self.stride);
            (&*p.cast::<AtomicU64>(), p.add(SEQ))
        }
    }

    fn unlink(&self) {
        if let Some(path) = self.owned.take() {
            let _ = std::fs::remove_file(path);
        }
    }

    /// The accepting side: waits until the peer has mapped the rings.
    fn wait_for_peer(&self, timeout: Duration) -> Result<()> {
        let peer = || Ok(if self.word(PEER).load(Ordering::Acquire) == 0 { Err(()) } else { Ok(()) });
        retry_until(Instant::now() + timeout, Duration::from_millis(1), peer, |()| {
            anyhow!("nobody mapped the ring within {timeout:?}")
        })
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
        self.unlink();
    }
}

/// The sending end of a ring: the next message's index (only this side writes it, into the
/// slots' sequence words), and the tail it last read: it reads the consumer's line again only
/// when the ring looks full (the usual SPSC economy of cache traffic).
pub struct Producer {
    ring: Ring,
    head: u64,
    tail: u64,
    /// Waiting mode: sleeps while the ring is full, wakes a sleeping receiver.
    wait: bool,
}

impl Producer {
    fn new(ring: Ring, wait: bool) -> Producer {
        Producer { ring, head: 0, tail: 0, wait }
    }
}

impl Tx for Producer {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        let r = &self.ring;
        if message.len() != r.slot {
            bail!("a message of {} bytes in a ring of {}-byte slots", message.len(), r.slot);
        }
        let head = self.head;
        while head.wrapping_sub(self.tail) > r.mask {
            self.tail = r.word(TAIL).load(Ordering::Acquire);
            if head.wrapping_sub(self.tail) > r.mask {
                if self.wait {
                    let tail = r.word(TAIL);
                    r.sleep(TX_SLEEP).until(|| head.wrapping_sub(tail.load(Ordering::SeqCst)) <= r.mask);
                } else {
                    std::hint::spin_loop();
                }
            }
        }
        let (seq, slot) = r.slot_ptr(head);
        // SAFETY: the slot is free (the consumer has moved past it) and `slot` bytes long.
        unsafe { std::ptr::copy_nonoverlapping(message.as_ptr(), slot, r.slot) };
        // Message `head` is in: its word says `head + 1` (0, a fresh slot's, names none).
        self.head = head.wrapping_add(1);
        seq.store(self.head, Ordering::Release);
        if self.wait {
            r.sleep(RX_SLEEP).wake();
        }
        Ok(())
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.ring.closed().store(1, Ordering::SeqCst);
        // A receiver may sleep in either mode's peer: ring its bell whatever this side's mode.
        self.ring.sleep(RX_SLEEP).ring();
    }
}

/// The receiving end of a ring: the next message's index (only this side writes the tail).
pub struct ConsumerEnd {
    ring: Ring,
    tail: u64,
    /// Polling: whether it has found its slot empty since its last message, and how many
    /// `PAUSE`s its first empty look takes.
    looked: bool,
    caught_up_pauses: u32,
    /// Waiting mode: sleeps while the ring is empty, wakes a sleeping sender.
    wait: bool,
}

impl ConsumerEnd {
    /// `one_way`: a stream's receiver, not a round trip's side.
    fn new(ring: Ring, one_way: bool, wait: bool) -> ConsumerEnd {
        let caught_up_pauses = if one_way { CAUGHT_UP_PAUSES } else { 1 };
        ConsumerEnd { ring, tail: 0, looked: false, caught_up_pauses, wait }
    }
}

impl Rx for ConsumerEnd {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        let r = &self.ring;
        let tail = self.tail;
        let (seq, slot) = r.slot_ptr(tail);
        let next = tail.wrapping_add(1);
        while seq.load(Ordering::Acquire) != next {
            // Closed is set after the last message's store: an empty slot then is the end.
            if r.closed().load(Ordering::Acquire) != 0 && seq.load(Ordering::Acquire) != next {
                return Ok(Received::Closed);
            }
            if !self.wait {
                // Longer at the first empty look after a message: the producer, if it is
                // streaming, gets lines ahead before the consumer reads its line again.
                let pauses = if self.looked { 1 } else { self.caught_up_pauses };
                self.looked = true;
                for _ in 0..pauses {
                    std::hint::spin_loop();
                }
                return Ok(Received::Empty);
            }
            let closed = r.closed();
            r.sleep(RX_SLEEP)
                .until(|| seq.load(Ordering::SeqCst) == next || closed.load(Ordering::SeqCst) != 0);
        }
        let Some(room) = buf.get_mut(..r.slot) else {
            bail!("a buffer of {} bytes for {}-byte slots", buf.len(), r.slot);
        };
        // SAFETY: the producer released this slot with its sequence store, read above with Acquire.
        unsafe { std::ptr::copy_nonoverlapping(slot, room.as_mut_ptr(), r.slot) };
        self.tail = next;
        self.looked = false;
        r.word(TAIL).store(next, Ordering::Release);
        if self.wait {
            r.sleep(TX_SLEEP).wake();
        }
        Ok(Received::Message(r.slot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use ipcbench_api::testing::{self, Scratch};

    /// In each mode; 20 000 messages of 64 bytes go round the ring (4096 slots) several times,
    /// so a waiting sender sleeps on a full ring too.
    #[test]
    fn a_stream_arrives_in_order_then_ends_and_leaves_no_file() {
        testing::in_each_mode::<ShmRing>("ring-stream", Shape::Stream, |setup| {
            testing::stream_in_order::<ShmRing>(&Setup { size: 64, ..*setup }, 20_000, || {});
            assert!(!PathBuf::from(format!("/dev/shm/{}-ring-forth", setup.name)).exists());
        });
    }

    /// `--buffer` sizes the ring; both ends say so. A stream through a ring of 2 slots still
    /// arrives whole.
    #[test]
    fn the_buffer_sizes_the_ring() {
        let place = Scratch::new("ring-buffer");
        for (buffer, slots) in [(None, 16384), (Some(4096), 256)] {
            let setup = Setup { buffer, ..place.setup(Shape::Stream) };
            for b in testing::stream_buffers::<ShmRing>(&setup) {
                assert_eq!(b.unwrap().messages, Some(slots));
            }
        }
        let tiny = Setup { buffer: Some(1), ..place.setup(Shape::Stream) };
        testing::stream_in_order::<ShmRing>(&tiny, 1000, || {});
    }

    #[test]
    fn round_trips_answer_each_request() {
        testing::in_each_mode::<ShmRing>("ring-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<ShmRing>(&Setup { size: 1024, ..*setup }, 300);
        });
    }

    #[test]
    fn slots_are_a_power_of_two_within_the_ring() {
        assert_eq!(Ring::geometry(16, RING_BYTES).unwrap(), (16384, HEADER + 16384 * 24));
        assert_eq!(Ring::geometry(1024, RING_BYTES).unwrap(), (256, HEADER + 256 * 1032));
        assert_eq!(Ring::stride(13), 24, "the word, then 13 bytes rounded up to 16");
        assert_eq!(Ring::geometry(1000, RING_BYTES).unwrap().0, 256, "rounded down");
        assert_eq!(Ring::geometry(16, 1000).unwrap().0, 32, "--buffer 1000: 62 messages, rounded down");
        assert_eq!(Ring::geometry(1024, 100).unwrap().0, 2, "two slots at least");
        let e = Ring::geometry(0, RING_BYTES).err().unwrap().to_string();
        assert!(e.contains("0 bytes"), "{e}");
    }

    #[test]
    fn a_ring_carries_messages_in_order_and_ends() {
        let path = PathBuf::from(format!("/dev/shm/ipcbench-test-{}-ring", std::process::id()));
        let consumer = Ring::create(path.clone(), 16, RING_BYTES).unwrap();
        let producer = Ring::open(path.clone(), 16, RING_BYTES, Duration::from_secs(1)).unwrap();
        consumer.unlink();
        assert!(!path.exists(), "unlinked once both have it");
        let mut tx = Producer::new(producer, false);
        let mut rx = ConsumerEnd::new(consumer, true, false);
        let mut buf = [0u8; 16];
        assert_eq!(rx.recv(&mut buf).unwrap(), Received::Empty);
        // Twice round the ring, the producer never more than a ring ahead.
        for round in 0..2u64 {
            for i in 0..16384u64 {
                tx.send(&(round * 16384 + i).to_le_bytes().repeat(2)).unwrap();
            }
            for i in 0..16384u64 {
                assert_eq!(rx.recv(&mut buf).unwrap(), Received::Message(16));
                assert_eq!(buf[..8], (round * 16384 + i).to_le_bytes());
            }
        }
        assert!(tx.send(&[0u8; 8]).is_err(), "a message must fill its slot");
        drop(tx);
        assert_eq!(rx.recv(&mut buf).unwrap(), Received::Closed);
    }
}
