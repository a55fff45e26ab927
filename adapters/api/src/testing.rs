//! Scenarios an adapter's own tests run against its endpoints, in threads of one process: the
//! same checks for every library, so each adapter tests what is particular to it.

use crate::{Buffer, Library, Loaned, Opened, Received, RecvMode, Rx, Setup, Shape, Side, Transfer, Tx};
use std::any::Any;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// A test's own place, as the driver gives each trial one: a channel name unique to the
/// process and the test, and a directory of that name under the system's temporary
/// directory. Dropping it removes the directory and the `/dev/shm/<name>*` objects, as the
/// driver does after every trial.
pub struct Scratch {
    pub name: String,
    pub dir: PathBuf,
}

impl Scratch {
    /// `test`: a short label, `[A-Za-z0-9_.-]`, that tells the tests apart.
    pub fn new(test: &str) -> Scratch {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        // Short, as the driver's: some libraries build socket paths from it (108 bytes at most).
        let name = format!("ibt{}-{n}-{test}", std::process::id());
        let dir = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch { name, dir }
    }

    /// A `Setup` in this place: messages of 16 bytes, index 0, waiting, 5 s to set up, no
    /// batch. Change the rest with `Setup { size: 64, ..scratch.setup(shape) }`.
    pub fn setup(&self, shape: Shape) -> Setup<'_> {
        Setup {
            name: &self.name,
            dir: &self.dir,
            size: 16,
            shape,
            index: 0,
            mode: RecvMode::Waiting,
            transfer: Transfer::Copy,
            timeout: Duration::from_secs(5),
            batch: 1,
            buffer: None,
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Ok(entries) = std::fs::read_dir("/dev/shm") {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(&self.name) {
                    let path = entry.path();
                    let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
                }
            }
        }
    }
}

/// Runs `scenario` once for each receive mode library `L` is measured in, each in a `Scratch`
/// of its own (`{label}-{mode}`), with a `Setup` of `shape` in that mode.
pub fn in_each_mode<L: Library>(label: &str, shape: Shape, scenario: impl Fn(&Setup)) {
    for &mode in L::info().modes {
        let place = Scratch::new(&format!("{label}-{mode}"));
        scenario(&Setup { mode, ..place.setup(shape) });
    }
}

/// Sends back every message until the end; the messages answered.
fn echo<E: Tx + Rx>(ep: &mut E, size: usize) -> u64 {
    let mut buf = vec![0u8; size];
    let mut answered = 0;
    loop {
        match ep.recv(&mut buf).unwrap() {
            Received::Message(len) => {
                assert_eq!(len, size);
                ep.send(&buf[..len]).unwrap();
                answered += 1;
            }
            Received::Empty => {}
            Received::Closed => return answered,
            other => panic!("{other:?}"),
        }
    }
}

/// `count` calls, one outstanding at a time, the requests numbered from `first`: every reply
/// is its own request.
fn call<E: Tx + Rx>(ep: &mut E, size: usize, first: u64, count: u64) {
    let (mut req, mut rep) = (vec![0u8; size], vec![0u8; size]);
    for seq in first..first + count {
        req[..8].copy_from_slice(&seq.to_le_bytes());
        ep.send(&req).unwrap();
        while ep.recv(&mut rep).unwrap() == Received::Empty {}
        assert_eq!(rep, req, "the reply to request {seq}");
    }
}

/// Where every member of a scenario waits until all are open, as the driver's "go" does. A
/// member whose set-up failed never arrives: the others fail after twice the set-up time
/// rather than wait for ever.
struct Gate {
    arrived: AtomicUsize,
    members: usize,
    timeout: Duration,
}

impl Gate {
    fn new(members: usize, setup_timeout: Duration) -> Gate {
        Gate { arrived: AtomicUsize::new(0), members, timeout: 2 * setup_timeout }
    }

    fn wait(&self) {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        let deadline = Instant::now() + self.timeout;
        while self.arrived.load(Ordering::Acquire) < self.members {
            assert!(Instant::now() < deadline, "a member never opened within {:?}", self.timeout);
            thread::sleep(Duration::from_millis(1));
        }
    }
}

/// `count` messages of `setup.size` bytes (at least 8) on a stream: each arrives, in order,
/// then `Closed`, twice; and a message of another size is refused. As in a trial, nothing is
/// sent before both ends are open; `between` runs then (to check what set-up left).
pub fn stream_in_order<L: Library>(setup: &Setup, count: u64, between: impl FnOnce()) {
    stream::<L>(setup, count, between, true);
}

/// As [`stream_in_order`], with only what the contract asks: each message arrives, in
/// order, then `Closed` once. For a library that carries messages of any size (the harness
/// only ever sends the case's), or that is not asked again after `Closed`.
pub fn stream_delivers<L: Library>(setup: &Setup, count: u64, between: impl FnOnce()) {
    stream::<L>(setup, count, between, false);
}

fn stream<L: Library>(setup: &Setup, count: u64, between: impl FnOnce(), strict: bool) {
    let size = setup.size;
    let both_open = Gate::new(2, setup.timeout);
    thread::scope(|s| {
        let rx = s.spawn(|| {
            // Its owner, if any, lives as long as it receives, as in a child.
            let Opened { endpoint: mut rx, owner, .. } = L::stream(setup, Side::Accept).unwrap();
            both_open.wait();
            let mut buf = vec![0u8; size];
            let mut seq = 0u64;
            loop {
                match rx.recv(&mut buf).unwrap() {
                    Received::Message(len) => {
                        assert_eq!(len, size);
                        assert_eq!(u64::from_le_bytes(buf[..8].try_into().unwrap()), seq, "out of order");
                        seq += 1;
                    }
                    Received::Empty => {}
                    Received::Closed => break,
                    other => panic!("{other:?}"),
                }
            }
            if strict {
                assert_eq!(rx.recv(&mut buf).unwrap(), Received::Closed);
            }
            drop((rx, owner));
            seq
        });
        // The sender's owner (a media driver, say) lives until the receiver is done, as the
        // driver's drain keeps it.
        let Opened { endpoint: mut tx, owner, .. } = L::stream(setup, Side::Connect).unwrap();
        both_open.wait();
        between();
        let mut msg = vec![0u8; size];
        for seq in 0..count {
            msg[..8].copy_from_slice(&seq.to_le_bytes());
            tx.send(&msg).unwrap();
        }
        if strict {
            assert!(tx.send(&msg[1..]).is_err(), "a message of the wrong size is refused");
        }
        drop(tx);
        assert_eq!(rx.join().unwrap(), count);
        drop(owner);
    });
}

/// What each end of a stream says its channel holds (`Opened::buffer`, read back from the
/// library where it lets one): the accepting side's, then the connecting side's. Both ends are
/// opened as in a trial, then closed together (some senders wait in their drop for their peer).
pub fn stream_buffers<L: Library>(setup: &Setup) -> [Option<Buffer>; 2] {
    let both_open = Gate::new(2, setup.timeout);
    thread::scope(|s| {
        let accepting = s.spawn(|| {
            let opened = L::stream(setup, Side::Accept).unwrap();
            both_open.wait();
            opened.buffer.clone()
        });
        let connecting = L::stream(setup, Side::Connect).unwrap();
        both_open.wait();
        let theirs = connecting.buffer.clone();
        drop(connecting);
        [accepting.join().unwrap(), theirs]
    })
}

/// `count` round trips on a stream, the client opening first: every reply is its request.
/// As in a trial, nothing is sent before both ends are open.
pub fn round_trips<L: Library>(setup: &Setup, count: u64) {
    let size = setup.size;
    let both_open = Gate::new(2, setup.timeout);
    thread::scope(|s| {
        let client = s.spawn(|| {
            let Opened { endpoint: mut c, owner, .. } = L::stream(setup, Side::Connect).unwrap();
            both_open.wait();
            call(&mut c, size, 0, count);
            owner
        });
        let Opened { endpoint: mut answerer, owner, .. } = L::stream(setup, Side::Accept).unwrap();
        both_open.wait();
        assert_eq!(echo(&mut answerer, size), count);
        // The echo closes first: a client may wait in its drop until its peer has closed.
        drop(answerer);
        let client_owner = client.join().unwrap();
        drop((owner, client_owner));
    });
}

/// The loan mode (`Transfer::Loan`): `count` messages of `setup.size` bytes written in place
/// on a stream, each byte of each one from its number, then `count` round trips written, read
/// and echoed in place; every byte of every message and reply is checked where it lies.
pub fn loans<L: Library>(setup: &Setup, count: u64) {
    let size = setup.size;
    let stream = Setup { shape: Shape::Stream, transfer: Transfer::Loan, ..*setup };
    let both_open = Gate::new(2, setup.timeout);
    thread::scope(|s| {
        let rx = s.spawn(|| {
            let Opened { endpoint: mut rx, owner, .. } = L::stream(&stream, Side::Accept).unwrap();
            both_open.wait();
            let mut seq = 0u64;
            loop {
                match rx.recv_loaned(|msg| lent_message_is(msg, seq, size)).unwrap() {
                    Loaned::Message(()) => seq += 1,
                    Loaned::Empty => {}
                    Loaned::Closed => break,
                    Loaned::Lost(n) => panic!("lost {n}"),
                }
            }
            drop((rx, owner));
            seq
        });
        let Opened { endpoint: mut tx, owner, .. } = L::stream(&stream, Side::Connect).unwrap();
        both_open.wait();
        for seq in 0..count {
            tx.send_loaned(size, |msg| write_lent(msg, seq)).unwrap();
        }
        drop(tx);
        assert_eq!(rx.join().unwrap(), count, "every message written in place arrived");
        drop(owner);
    });
    let round_trip = Setup { shape: Shape::RoundTrip, transfer: Transfer::Loan, ..*setup };
    let both_open = Gate::new(2, setup.timeout);
    thread::scope(|s| {
        let client = s.spawn(|| {
            let Opened { endpoint: mut c, owner, .. } = L::stream(&round_trip, Side::Connect).unwrap();
            both_open.wait();
            for seq in 0..count {
                c.send_loaned(size, |msg| write_lent(msg, seq)).unwrap();
                while c.recv_loaned(|reply| lent_message_is(reply, seq, size)).unwrap() == Loaned::Empty {}
            }
            owner
        });
        let Opened { endpoint: mut answerer, owner, .. } = L::stream(&round_trip, Side::Accept).unwrap();
        both_open.wait();
        let mut answered = 0;
        loop {
            match answerer.echo_loaned(|request, reply| reply.copy_from_slice(request)).unwrap() {
                Received::Message(len) => {
                    assert_eq!(len, size);
                    answered += 1;
                }
                Received::Empty => {}
                Received::Closed => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(answered, count);
        drop(answerer);
        let client_owner = client.join().unwrap();
        drop((owner, client_owner));
    });
}

/// Writes every byte of lent memory: the number, then bytes derived from it and their place.
fn write_lent(msg: &mut [u8], seq: u64) {
    msg[..8].copy_from_slice(&seq.to_le_bytes());
    for (i, b) in msg[8..].iter_mut().enumerate() {
        *b = (seq as u8) ^ (i as u8);
    }
}

fn lent_message_is(msg: &[u8], seq: u64, size: usize) {
    assert_eq!(msg.len(), size);
    assert_eq!(u64::from_le_bytes(msg[..8].try_into().unwrap()), seq, "out of order");
    assert!(
        msg[8..].iter().enumerate().all(|(i, &b)| b == (seq as u8) ^ (i as u8)),
        "message {seq} is whole"
    );
}

/// What a lossy broadcast's subscriber is sure to receive, by its library's own rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Keeps {
    /// At least what its buffer holds: the library drops only what does not fit.
    Buffer,
    /// Some messages, how many the library does not say (NNG's pub0 drops wherever a queue on
    /// the way is full, its sender's or its subscriber's).
    Some,
}

/// A broadcast of `setup.shape`'s subscribers, `count` messages: each subscriber receives
/// them in order, then `Closed`; all of them when the broadcast is lossless. When it is lossy,
/// some with gaps; where the library drops only what does not fit (`Keeps::Buffer`), never fewer
/// than the subscriber's buffer holds (what its endpoint read back, as the results' buffers
/// table shows it); and where it reports its losses (`Lost`), they and the messages add up to
/// `count`. As in a trial, nothing is sent before every member is open, and the publisher's
/// owner lives until every subscriber is done. Returns how many messages each subscriber
/// received.
pub fn broadcast_in_order<L: Library>(setup: &Setup, count: u64, keeps: Keeps) -> Vec<u64> {
    let (lossy, subscribers) = setup.broadcast("test").unwrap();
    let at = |index| Setup { index, ..*setup };
    let size = setup.size;
    let all_open = Gate::new(subscribers + 1, setup.timeout);
    thread::scope(|s| {
        let all_open = &all_open;
        let listening: Vec<_> = (0..subscribers)
            .map(|i| {
                s.spawn(move || {
                    let opened = L::subscriber(&at(i)).unwrap();
                    let (mut rx, depth) = (opened.endpoint, opened.buffer.and_then(|b| b.messages));
                    all_open.wait();
                    let mut buf = vec![0u8; size];
                    let (mut got, mut next, mut lost) = (0u64, 0u64, 0u64);
                    loop {
                        match rx.recv(&mut buf).unwrap() {
                            Received::Message(len) => {
                                assert_eq!(len, size);
                                let seq = u64::from_le_bytes(buf[..8].try_into().unwrap());
                                if lossy {
                                    assert!(seq >= next, "subscriber {i}: {seq} after {}", next - 1);
                                } else {
                                    assert_eq!(seq, next, "subscriber {i}: out of order");
                                }
                                (got, next) = (got + 1, seq + 1);
                            }
                            Received::Empty => {}
                            Received::Lost(n) if lossy => lost += n,
                            Received::Lost(n) => {
                                panic!("subscriber {i} lost {n} of a lossless broadcast")
                            }
                            Received::Closed => break,
                        }
                    }
                    if lossy {
                        let least = match keeps {
                            Keeps::Buffer => count.min(depth.map_or(1, |d| d as u64)),
                            Keeps::Some => 1,
                        };
                        assert!(
                            got >= least,
                            "subscriber {i}: {got} of {count}, fewer than its buffer of {depth:?}"
                        );
                        assert!(
                            lost == 0 || got + lost == count,
                            "subscriber {i}: {got} received and {lost} lost of {count}"
                        );
                    }
                    got
                })
            })
            .collect();
        let Opened { endpoint: mut tx, owner, .. } = L::publisher(&at(0)).unwrap();
        all_open.wait();
        let mut msg = vec![0u8; size];
        for seq in 0..count {
            msg[..8].copy_from_slice(&seq.to_le_bytes());
            tx.send(&msg).unwrap();
        }
        drop(tx);
        let got: Vec<u64> = listening.into_iter().map(|t| t.join().unwrap()).collect();
        drop(owner);
        if !lossy {
            assert!(got.iter().all(|&n| n == count), "lossless: {got:?} of {count}");
        }
        assert!(got.iter().all(|&n| n > 0 && n <= count), "{got:?} of {count}");
        got
    })
}

/// A work queue of `setup.shape`'s producers and consumers, `per` messages from each
/// producer: every message reaches exactly one consumer once the owner (producer 0's) is
/// dropped after the producers are done, as the driver's drain does. As in a trial, nobody
/// sends before every member is open.
pub fn queue_exactly_once<L: Library>(setup: &Setup, per: u64) {
    let (producers, consumers) = setup.queue("test").unwrap();
    let at = |index| Setup { index, ..*setup };
    let size = setup.size;
    let all_open = Gate::new(producers + consumers, setup.timeout);
    thread::scope(|s| {
        let all_open = &all_open;
        let takers: Vec<_> = (0..consumers)
            .map(|i| {
                s.spawn(move || {
                    let mut rx = L::consumer(&at(i)).unwrap().endpoint;
                    all_open.wait();
                    let mut buf = vec![0u8; size];
                    let mut got = Vec::new();
                    loop {
                        match rx.recv(&mut buf).unwrap() {
                            Received::Message(_) => {
                                got.push(u64::from_le_bytes(buf[..8].try_into().unwrap()))
                            }
                            Received::Empty => {}
                            Received::Closed => break,
                            other => panic!("{other:?}"),
                        }
                    }
                    got
                })
            })
            .collect();
        let send = move |tx: &mut L::Producer, p: u64| {
            all_open.wait();
            let mut msg = vec![0u8; size];
            for seq in 0..per {
                msg[..8].copy_from_slice(&(p * per + seq).to_le_bytes());
                tx.send(&msg).unwrap();
            }
        };
        let others: Vec<_> = (1..producers)
            .map(|p| s.spawn(move || send(&mut L::producer(&at(p)).unwrap().endpoint, p as u64)))
            .collect();
        // Last, as every member is on its way: a producer's set-up may wait for the consumers
        // (ZeroMQ, NNG), and the owner's for every member (FastIPC).
        let Opened { endpoint: mut first, owner, .. } = L::producer(&at(0)).unwrap();
        send(&mut first, 0);
        drop(first);
        for p in others {
            p.join().unwrap();
        }
        drop(owner);
        let mut all: Vec<u64> = takers.into_iter().flat_map(|c| c.join().unwrap()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..producers as u64 * per).collect::<Vec<_>>(), "every message exactly once");
    });
}

/// A service of `setup.shape`'s clients and servers, `per` requests from each client, one
/// outstanding at a time: every reply is its own request. As in a trial, nobody sends before
/// every member is open, and the servers' owners are dropped once every client is done, as
/// the driver's drain does; then every server must end. Returns how many requests each
/// server answered, for the adapter to check against how its library routes them.
pub fn service_replies<L: Library>(setup: &Setup, per: u64) -> Vec<u64> {
    let (clients, servers) = setup.service("test").unwrap();
    let at = |index| Setup { index, ..*setup };
    let size = setup.size;
    let all_open = Gate::new(clients + servers, setup.timeout);
    thread::scope(|s| {
        let all_open = &all_open;
        let (owners, opened) = mpsc::channel::<Option<Box<dyn Any + Send>>>();
        let answering: Vec<_> = (0..servers)
            .map(|i| {
                let owners = owners.clone();
                s.spawn(move || {
                    let Opened { endpoint: mut sv, owner, .. } = L::server(&at(i)).unwrap();
                    owners.send(owner).unwrap();
                    all_open.wait();
                    echo(&mut sv, size)
                })
            })
            .collect();
        let calling: Vec<_> = (0..clients)
            .map(|j| {
                s.spawn(move || {
                    let mut c = L::client(&at(j)).unwrap().endpoint;
                    all_open.wait();
                    call(&mut c, size, j as u64 * per, per);
                })
            })
            .collect();
        // A role's panic goes on with its own message, for a test that knows a library's defect.
        for c in calling {
            c.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
        drop(owners);
        drop(opened.iter().take(servers).collect::<Vec<_>>());
        answering.into_iter().map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}
