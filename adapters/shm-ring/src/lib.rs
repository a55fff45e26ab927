//! The control: a minimal single-producer single-consumer ring of fixed-size slots in shared
//! memory, written for this project (ipc-bench's shm case). No library is in the way: a send is
//! a copy into the next slot and a release store of the head; a receive spins until the head
//! moves, copies the slot out and release-stores the tail. It is the physical reference every
//! shared-memory library is held against.
//!
//! The accepting side (receiver, echo) creates the ring file(s) in /dev/shm
//! (`<name>-ring-forth`, and `<name>-ring-back` for a round trip), sized and mapped, and waits
//! for the connecting side to map them and say so; then it unlinks them, so nothing is left even
//! if a process dies later (the harness's driver also removes `/dev/shm/<name>-*` after every
//! trial). A sender's drop sets the ring's `closed` flag; its receiver sees it once the ring is
//! empty.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use ipcbench_api::{
    Capabilities, Library, LibraryInfo, Opened, Pair, Received, RecvMode, Requests, Rx, Setup, Side, Support,
    Tx, Unsupported, retry_until,
};

/// The control.
pub struct ShmRing;

/// The ring's room for messages (rounded down to a power of two of slots): FastIPC's stream ring.
const RING_BYTES: usize = 1 << 18;
/// The header: each index on a cache line of its own (128 bytes: adjacent-line prefetch).
const LINE: usize = 128;
const HEADER: usize = 4 * LINE;
const MAGIC: u64 = 0x6970_6362_7269_6e67; // "ipcbring"
/// Polling only: the receiver spins on the head.
const MODES: &[RecvMode] = &[RecvMode::Polling];

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

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "shm-ring",
            name: "shared-memory ring (the control)",
            version: format!("ipcbench {}", env!("CARGO_PKG_VERSION")),
            modes: MODES,
            capabilities: Capabilities {
                stream: Support::Yes("one SPSC ring of fixed-size slots in /dev/shm; the receiver spins"),
                round_trip: Support::Yes("two rings, one each way"),
                broadcast_lossless: Support::No("the control is a single-producer single-consumer ring"),
                broadcast_lossy: Support::No("the control is a single-producer single-consumer ring"),
                queue: Support::No("the control is a single-producer single-consumer ring"),
                service: Support::No("the control is a single-producer single-consumer ring"),
                batch: Support::No("the control moves one message per call"),
            },
            requests: Requests::ToOneServer,
            largest_message: Some((
                RING_BYTES / 2,
                format!("the control's ring of {} KiB holds two slots at least", RING_BYTES >> 10),
            )),
            configuration: vec![
                ("ring (bytes of slots each way)", RING_BYTES.to_string()),
                ("slots", "the ring's bytes / the case's size, rounded down to a power of two".into()),
                ("receive", "spins on the head (polling); the sender spins while the ring is full".into()),
                ("memory", "a file in /dev/shm, mapped shared, unlinked once both sides have it".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Channel>> {
        setup.require_mode(MODES, "the control's receiver spins: it is measured polling only")?;
        let round_trip = setup.stream_or_round_trip()?;
        let path = |what: &str| PathBuf::from(format!("/dev/shm/{}-ring-{what}", setup.name));
        let pair = match side {
            Side::Accept => {
                let forth = Ring::create(path("forth"), setup.size)?;
                let back = if round_trip { Some(Ring::create(path("back"), setup.size)?) } else { None };
                forth.wait_for_peer(setup.timeout)?;
                // Both rings are mapped on both sides now: their files can go.
                forth.unlink();
                if let Some(back) = &back {
                    back.unlink();
                }
                Pair {
                    tx: back.map(|ring| Producer { ring, tail: 0 }),
                    rx: Some(ConsumerEnd { ring: forth, head: 0 }),
                    keep: (),
                }
            }
            Side::Connect => {
                let forth = Ring::open(path("forth"), setup.size, setup.timeout)?;
                let back = if round_trip {
                    Some(Ring::open(path("back"), setup.size, setup.timeout)?)
                } else {
                    None
                };
                // Mapped both: the accepting side may unlink the files now.
                forth.word(PEER).store(1, Ordering::Release);
                Pair {
                    tx: Some(Producer { ring: forth, tail: 0 }),
                    rx: back.map(|ring| ConsumerEnd { ring, head: 0 }),
                    keep: (),
                }
            }
        };
        Ok(Opened::new(pair))
    }
}

/// Indices of the header's words, each on a line of its own.
const READY: usize = 0;
const PEER: usize = 1;
const HEAD: usize = 2;
const TAIL: usize = 3;
/// Shares the ready line: set once, read at the end.
const CLOSED_OFFSET: usize = 8;

/// One mapped ring.
struct Ring {
    base: NonNull<u8>,
    len: usize,
    slot: usize,
    mask: u64,
    /// The accepting side's file, unlinked once the peer has mapped it (or on drop).
    owned: std::cell::Cell<Option<PathBuf>>,
}

impl Ring {
    fn geometry(size: usize) -> Result<(usize, usize)> {
        if size == 0 || size > RING_BYTES / 2 {
            bail!(
                "messages of {size} bytes: the control's ring holds slots of 1 to {} bytes",
                RING_BYTES / 2
            );
        }
        let slots = 1usize << (RING_BYTES / size).ilog2();
        Ok((slots, HEADER + slots * size))
    }

    fn create(path: PathBuf, size: usize) -> Result<Ring> {
        let (slots, len) = Ring::geometry(size)?;
        let _ = std::fs::remove_file(&path);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        file.set_len(len as u64).with_context(|| format!("sizing {}", path.display()))?;
        let ring = Ring::map(&file, len, size, slots)?;
        ring.owned.set(Some(path));
        // A fresh file is zeroed: the indices start at 0. Ready last.
        ring.word(READY).store(MAGIC, Ordering::Release);
        Ok(ring)
    }

    fn open(path: PathBuf, size: usize, timeout: Duration) -> Result<Ring> {
        let (slots, len) = Ring::geometry(size)?;
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
        Ok(Ring { base, len, slot, mask: slots as u64 - 1, owned: std::cell::Cell::new(None) })
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

    #[inline(always)]
    fn slot_ptr(&self, index: u64) -> *mut u8 {
        // SAFETY: `index & mask` < slots, so the slot lies within the mapping.
        unsafe { self.base.as_ptr().add(HEADER + (index & self.mask) as usize * self.slot) }
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

/// The sending end of a ring, and the tail it last read: it reads the consumer's line again only
/// when the ring looks full (the usual SPSC economy of cache traffic).
pub struct Producer {
    ring: Ring,
    tail: u64,
}

impl Tx for Producer {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        let r = &self.ring;
        if message.len() != r.slot {
            bail!("a message of {} bytes in a ring of {}-byte slots", message.len(), r.slot);
        }
        // Only this side writes the head.
        let head = r.word(HEAD).load(Ordering::Relaxed);
        while head.wrapping_sub(self.tail) > r.mask {
            self.tail = r.word(TAIL).load(Ordering::Acquire);
            if head.wrapping_sub(self.tail) > r.mask {
                std::hint::spin_loop();
            }
        }
        // SAFETY: the slot is free (the consumer has moved past it) and `slot` bytes long.
        unsafe { std::ptr::copy_nonoverlapping(message.as_ptr(), r.slot_ptr(head), r.slot) };
        r.word(HEAD).store(head.wrapping_add(1), Ordering::Release);
        Ok(())
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.ring.closed().store(1, Ordering::Release);
    }
}

/// The receiving end of a ring, and the head it last read (read again only when it has caught
/// up with it).
pub struct ConsumerEnd {
    ring: Ring,
    head: u64,
}

impl Rx for ConsumerEnd {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        let r = &self.ring;
        let tail = r.word(TAIL).load(Ordering::Relaxed);
        if tail == self.head {
            self.head = r.word(HEAD).load(Ordering::Acquire);
            if tail == self.head {
                // Closed is set after the last head store: an empty ring that is closed is done.
                if r.closed().load(Ordering::Acquire) != 0 && tail == r.word(HEAD).load(Ordering::Acquire) {
                    return Ok(Received::Closed);
                }
                return Ok(Received::Empty);
            }
        }
        let Some(room) = buf.get_mut(..r.slot) else {
            bail!("a buffer of {} bytes for {}-byte slots", buf.len(), r.slot);
        };
        // SAFETY: the producer released this slot with its head store, read above with Acquire.
        unsafe { std::ptr::copy_nonoverlapping(r.slot_ptr(tail), room.as_mut_ptr(), r.slot) };
        r.word(TAIL).store(tail.wrapping_add(1), Ordering::Release);
        Ok(Received::Message(r.slot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::Shape;
    use ipcbench_api::testing::{self, Scratch};

    #[test]
    fn a_stream_arrives_in_order_then_ends_and_leaves_no_file() {
        let place = Scratch::new("ring-stream");
        let setup = Setup { size: 64, mode: RecvMode::Polling, ..place.setup(Shape::Stream) };
        testing::stream_in_order::<ShmRing>(&setup, 20_000, || {});
        assert!(!PathBuf::from(format!("/dev/shm/{}-ring-forth", place.name)).exists());
    }

    #[test]
    fn round_trips_answer_each_request_and_waiting_is_refused() {
        let place = Scratch::new("ring-rtt");
        let setup = Setup { size: 1024, mode: RecvMode::Polling, ..place.setup(Shape::RoundTrip) };
        testing::round_trips::<ShmRing>(&setup, 300);
        let e = ShmRing::stream(&place.setup(Shape::Stream), Side::Accept).err().unwrap().to_string();
        assert_eq!(e, "the control's receiver spins: it is measured polling only, not waiting");
    }

    #[test]
    fn slots_are_a_power_of_two_within_the_ring() {
        assert_eq!(Ring::geometry(16).unwrap(), (16384, HEADER + RING_BYTES));
        assert_eq!(Ring::geometry(1024).unwrap(), (256, HEADER + RING_BYTES));
        assert_eq!(Ring::geometry(1000).unwrap().0, 256, "rounded down");
        let e = Ring::geometry(RING_BYTES).err().unwrap().to_string();
        assert!(e.contains("slots of 1 to"), "{e}");
    }

    #[test]
    fn a_ring_carries_messages_in_order_and_ends() {
        let path = PathBuf::from(format!("/dev/shm/ipcbench-test-{}-ring", std::process::id()));
        let consumer = Ring::create(path.clone(), 16).unwrap();
        let producer = Ring::open(path.clone(), 16, Duration::from_secs(1)).unwrap();
        consumer.unlink();
        assert!(!path.exists(), "unlinked once both have it");
        let mut tx = Producer { ring: producer, tail: 0 };
        let mut rx = ConsumerEnd { ring: consumer, head: 0 };
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
