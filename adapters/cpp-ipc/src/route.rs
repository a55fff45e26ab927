//! The adapter over the shim's `ipc::route` (built only with `CPP_IPC_SRC`, `cfg(cpp_ipc)`).

use std::ffi::{CString, c_char, c_int, c_long, c_void};
use std::ptr::NonNull;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use ipcbench_api::end::{self, Ends};
use ipcbench_api::{
    Buffer, Library, LibraryInfo, Opened, Pair, Received, RecvMode, Requests, Rx, Setup, Side, Tx,
    Unsupported,
};

use super::{CppIpc, VERSION, capabilities};

unsafe extern "C" {
    fn ipcb_route_open(prefix: *const c_char, name: *const c_char, receiver: c_int) -> *mut c_void;
    fn ipcb_route_wait_for_recv(h: *mut c_void, count: usize, ms: u64) -> c_int;
    fn ipcb_route_recv_count(h: *mut c_void) -> usize;
    fn ipcb_route_send(h: *mut c_void, data: *const c_void, size: usize, ms: u64) -> c_int;
    fn ipcb_route_recv(h: *mut c_void, buf: *mut c_void, cap: usize, ms: u64, poll: c_int) -> c_long;
    fn ipcb_route_forever() -> u64;
    fn ipcb_route_close(h: *mut c_void);
}

/// cpp-ipc's ring: 256 elements of 64 bytes, fixed when it is compiled.
const ELEMENTS: usize = 256;
const ELEMENT: usize = 64;

impl Library for CppIpc {
    type Stream = Pair<Sending, Receiving, ()>;
    type Publisher = Sending;
    type Subscriber = Receiving;
    type Producer = Unsupported;
    type Consumer = Unsupported;
    type Client = Unsupported;
    type Server = Unsupported;

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "cpp-ipc",
            kind: ipcbench_api::Kind::SharedMemory,
            name: "cpp-ipc (libipc)",
            version: format!(
                "{VERSION} (built from CPP_IPC_SRC with its CMake project, a C++17 shim over ipc::route)"
            ),
            modes: &RecvMode::ALL,
            capabilities: capabilities(),
            requests: Requests::ToOneServer,
            largest_message: None,
            configuration: vec![
                (
                    "channel",
                    "ipc::route (one sender, every receiver gets every message), prefix the trial's name"
                        .into(),
                ),
                (
                    "ring",
                    format!(
                        "{ELEMENTS} elements of {ELEMENT} bytes, fixed at compile time; a longer message is stored apart"
                    ),
                ),
                (
                    "send",
                    "try_send(data, size, ipc::invalid_value): waits for room, never force-pushes".into(),
                ),
                (
                    "receive",
                    "waiting: recv(ipc::invalid_value); polling: try_recv() again until a message is there"
                        .into(),
                ),
                ("end of stream", "an end marker (7 bytes) from each sender".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Pair<Sending, Receiving, ()>>> {
        let round_trip = setup.stream_or_round_trip()?;
        // Each side's receiver first, then its sender, which waits for the other side's receiver.
        let pair = match side {
            Side::Accept => {
                let rx = Receiving::open(setup, "forth")?;
                let tx = if round_trip { Some(Sending::open(setup, "back", 1)?) } else { None };
                Pair { tx, rx: Some(rx), keep: () }
            }
            Side::Connect => {
                let rx = if round_trip { Some(Receiving::open(setup, "back")?) } else { None };
                Pair { tx: Some(Sending::open(setup, "forth", 1)?), rx, keep: () }
            }
        };
        Ok(Opened::new(pair).buffered(buffer(setup)))
    }

    fn publisher(setup: &Setup) -> Result<Opened<Sending>> {
        let (lossy, subscribers) = setup.broadcast("publisher")?;
        if lossy {
            bail!(
                "cpp-ipc has no lossy broadcast here: a full route's force-push disconnects the lagging receivers"
            );
        }
        Ok(Opened::new(Sending::open(setup, "broadcast", subscribers)?).buffered(buffer(setup)))
    }

    fn subscriber(setup: &Setup) -> Result<Opened<Receiving>> {
        setup.broadcast("subscriber")?;
        Ok(Opened::new(Receiving::open(setup, "broadcast")?).buffered(buffer(setup)))
    }
}

/// The ring's depth: `--buffer` cannot change it.
fn buffer(setup: &Setup) -> Buffer {
    let reach = if setup.buffer.is_some() { "--buffer does not reach it: " } else { "" };
    let how = format!(
        "{reach}cpp-ipc's ring of {ELEMENTS} elements of {ELEMENT} bytes is fixed when it is compiled; a message over {ELEMENT} bytes takes one element and is stored apart"
    );
    Buffer { messages: Some(ELEMENTS), bytes: (setup.size <= ELEMENT).then_some(ELEMENTS * ELEMENT), how }
}

/// One end of a route, closed when dropped.
struct Route {
    h: NonNull<c_void>,
    name: String,
}

impl Route {
    fn open(setup: &Setup, what: &str, receiver: bool) -> Result<Route> {
        let prefix = CString::new(setup.name).map_err(|_| anyhow!("the trial name holds a NUL"))?;
        let cname = CString::new(what).map_err(|_| anyhow!("{what:?} holds a NUL"))?;
        // SAFETY: NUL-terminated strings; the shim copies what it keeps.
        let h = unsafe { ipcb_route_open(prefix.as_ptr(), cname.as_ptr(), c_int::from(receiver)) };
        let name = format!("{}:{what}", setup.name);
        let h = NonNull::new(h).ok_or_else(|| anyhow!("ipc::route {name} could not connect"))?;
        Ok(Route { h, name })
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        // SAFETY: opened by ipcb_route_open, closed once.
        unsafe { ipcb_route_close(self.h.as_ptr()) };
    }
}

/// A route's sending end.
pub struct Sending {
    route: Route,
    forever: u64,
    index: usize,
    timeout: Duration,
}

impl Sending {
    /// Opens it and waits until `receivers` receivers are connected: a route drops what it
    /// sends while nobody listens.
    fn open(setup: &Setup, what: &str, receivers: usize) -> Result<Sending> {
        let route = Route::open(setup, what, false)?;
        let ms = setup.timeout.as_millis() as u64;
        // SAFETY: an open route.
        if unsafe { ipcb_route_wait_for_recv(route.h.as_ptr(), receivers, ms) } == 0 {
            // SAFETY: as above.
            let n = unsafe { ipcb_route_recv_count(route.h.as_ptr()) };
            bail!(
                "only {n} of {receivers} receivers connected to ipc::route {} within {:?}",
                route.name,
                setup.timeout
            );
        }
        // SAFETY: a constant.
        let forever = unsafe { ipcb_route_forever() };
        Ok(Sending { route, forever, index: setup.index, timeout: setup.timeout })
    }

    fn send_within(&self, message: &[u8], ms: u64) -> bool {
        // SAFETY: `message` is valid for reads of its length; the route is open.
        unsafe { ipcb_route_send(self.route.h.as_ptr(), message.as_ptr().cast(), message.len(), ms) != 0 }
    }
}

impl Tx for Sending {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        if self.send_within(message, self.forever) {
            return Ok(());
        }
        Err(anyhow!("try_send on ipc::route {} failed: no receiver is connected any more", self.route.name))
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        if !self.send_within(&end::marker(self.index), self.timeout.as_millis() as u64) {
            eprintln!("cpp-ipc: sender {} could not send its end marker on {}", self.index, self.route.name);
        }
    }
}

/// A route's receiving end.
pub struct Receiving {
    route: Route,
    poll: bool,
    forever: u64,
    ends: Ends,
    closed: bool,
}

impl Receiving {
    fn open(setup: &Setup, what: &str) -> Result<Receiving> {
        let route = Route::open(setup, what, true)?;
        // SAFETY: a constant.
        let forever = unsafe { ipcb_route_forever() };
        Ok(Receiving {
            route,
            poll: setup.mode == RecvMode::Polling,
            forever,
            ends: Ends::new(1),
            closed: false,
        })
    }
}

impl Rx for Receiving {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        loop {
            if self.closed {
                return Ok(Received::Closed);
            }
            // SAFETY: `buf` is valid for writes of its length; the route is open.
            let n = unsafe {
                ipcb_route_recv(
                    self.route.h.as_ptr(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    self.forever,
                    c_int::from(self.poll),
                )
            };
            if n < 0 {
                bail!(
                    "a message of {} bytes on ipc::route {}, where the case's are {}",
                    -n,
                    self.route.name,
                    buf.len()
                );
            }
            let n = n as usize;
            match n {
                0 if self.poll => return Ok(Received::Empty),
                0 => continue,
                n if end::is_marker(n) => self.closed = self.ends.see(&buf[..n])?,
                n => return Ok(Received::Message(n)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::Shape;
    use ipcbench_api::testing::{self, Scratch, in_each_mode};

    #[test]
    fn a_stream_arrives_in_order_then_ends_in_each_mode() {
        in_each_mode::<CppIpc>("cppipc-stream", Shape::Stream, |setup| {
            testing::stream_delivers::<CppIpc>(setup, 5000, || {});
            testing::stream_delivers::<CppIpc>(&Setup { size: 1024, ..*setup }, 1000, || {});
        });
    }

    #[test]
    fn round_trips_answer_each_request_in_each_mode() {
        in_each_mode::<CppIpc>("cppipc-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<CppIpc>(&Setup { size: 1024, ..*setup }, 300);
        });
    }

    #[test]
    fn a_lossless_broadcast_reaches_every_subscriber_in_order() {
        let shape = Shape::Broadcast { lossy: false, subscribers: 3 };
        in_each_mode::<CppIpc>("cppipc-bcast", shape, |setup| {
            let got = testing::broadcast_in_order::<CppIpc>(setup, 3000, testing::Keeps::Buffer);
            assert_eq!(got, [3000, 3000, 3000]);
        });
    }

    /// Its shared memory is named after the trial, and gone once both ends have closed, but
    /// for the connection counter the process holds until it exits (`CA_CONN__`; the driver
    /// removes `/dev/shm/<trial>*` after every trial whatever is left).
    #[test]
    fn its_memory_is_named_after_the_trial_and_removed_on_close() {
        let place = Scratch::new("cppipc-mem");
        let setup = place.setup(Shape::Stream);
        let ours = || {
            let names = std::fs::read_dir("/dev/shm")
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned());
            names.filter(|n| n.starts_with(&place.name) && !n.ends_with("__IPC_SHM__CA_CONN__")).count()
        };
        let [b, _] = testing::stream_buffers::<CppIpc>(&Setup { buffer: Some(4096), ..setup });
        assert!(b.unwrap().how.starts_with("--buffer does not reach it"));
        assert_eq!(ours(), 0, "every object removed when the last handle closed");
        let rx = CppIpc::stream(&setup, Side::Accept).unwrap();
        assert!(ours() > 0, "named /dev/shm/<trial>__IPC_SHM__...");
        drop(rx);
    }

    #[test]
    fn a_sender_with_no_receiver_fails_naming_the_route() {
        let place = Scratch::new("cppipc-lonely");
        let setup = Setup { timeout: Duration::from_millis(50), ..place.setup(Shape::Stream) };
        let e = CppIpc::stream(&setup, Side::Connect).err().unwrap().to_string();
        assert!(
            e.contains(&format!("only 0 of 1 receivers connected to ipc::route {}:forth", place.name)),
            "{e}"
        );
    }
}
