//! ipcbench adapter for cpp-ipc (libipc) 1.4.1 by mutouyun: shared-memory channels, through a
//! small C++ shim over its `ipc::route` (shim/route.cpp), built from the source tree that
//! `CPP_IPC_SRC` names (no registry carries it; see the README). Without that variable the crate
//! still builds: the library says it was not built, and every case is a dash saying why.
//!
//! | Pattern | Calls |
//! |---|---|
//! | stream | one `ipc::route` (one sender, its receivers each receiving every message) |
//! | round trip | two routes, one each way |
//! | broadcast, lossless | one route, a receiver per subscriber |
//!
//! Every route is opened with `ipc::prefix{<trial name>}`, so all its shared memory is
//! `/dev/shm/<trial name>__IPC_SHM__...`, which the harness's driver removes after every trial;
//! cpp-ipc itself removes it when the last handle closes. A sender waits at set-up until its
//! receivers are connected (`wait_for_recv`: a route drops what it sends while nobody listens),
//! sends with `try_send(data, size, ipc::invalid_value)` (waiting for room, never force-pushing,
//! which would disconnect a slow receiver), and ends by sending an end marker
//! (`ipcbench_api::end`): a receiver is not told that its sender closed. Waiting receives are
//! `recv(ipc::invalid_value)`, polling ones `try_recv()`.

#[cfg(cpp_ipc)]
use ipcbench_api::{Capabilities, Support};

/// cpp-ipc.
pub struct CppIpc;

/// The version built in, as its source tree's tag.
pub const VERSION: &str = "1.4.1";

/// Whether this build has cpp-ipc (its source was given): tests that need it check this first.
pub const BUILT: bool = cfg!(cpp_ipc);

/// What is said of a build without the source.
pub const NOT_BUILT: &str = "cpp-ipc was not built: no registry carries it. Clone https://github.com/mutouyun/cpp-ipc \
     at tag v1.4.1, set CPP_IPC_SRC to that folder and rebuild (scripts/test.sh and .ci/run use \
     ../shared/vendor/cpp-ipc-1.4.1 when it exists)";

#[cfg(cpp_ipc)]
mod route;

#[cfg(not(cpp_ipc))]
mod absent {
    use super::*;
    use ipcbench_api::{Capabilities, Library, LibraryInfo, RecvMode, Requests, Support, Unsupported};

    impl Library for CppIpc {
        type Stream = Unsupported;
        type Publisher = Unsupported;
        type Subscriber = Unsupported;
        type Producer = Unsupported;
        type Consumer = Unsupported;
        type Client = Unsupported;
        type Server = Unsupported;

        fn info() -> LibraryInfo {
            let no = Support::No(NOT_BUILT);
            LibraryInfo {
                id: "cpp-ipc",
                kind: ipcbench_api::Kind::SharedMemory,
                name: "cpp-ipc (not built)",
                version: format!("{VERSION}, not built (CPP_IPC_SRC unset)"),
                modes: &RecvMode::ALL,
                capabilities: Capabilities {
                    stream: no,
                    round_trip: no,
                    broadcast_lossless: no,
                    broadcast_lossy: no,
                    queue: no,
                    service: no,
                    batch: no,
                    loan: no,
                    most_subscribers: None,
                },
                requests: Requests::ToOneServer,
                largest_message: None,
                configuration: vec![("built", NOT_BUILT.into())],
            }
        }
    }
}

/// What cpp-ipc has and lacks, built or not.
#[cfg(cpp_ipc)]
fn capabilities() -> Capabilities {
    Capabilities {
        stream: Support::Yes("one ipc::route; try_send waiting for room, recv or try_recv"),
        round_trip: Support::Yes("two ipc::routes, one each way"),
        broadcast_lossless: Support::Yes(
            "one ipc::route, a receiver per subscriber: the sender waits for the slowest",
        ),
        broadcast_lossy: Support::No(
            "a full route's send force-pushes, which disconnects the lagging receivers (they then get nothing) \
             instead of dropping some of their messages",
        ),
        queue: Support::No(
            "no work queue: multi-consumer unicast is not instantiated in 1.4.1 (\"TBD\" in src/libipc/ipc.cpp)",
        ),
        service: Support::No("no request-reply: a reply would be the harness pairing routes"),
        batch: Support::No("no call sends or receives several messages at once"),
        loan: Support::No(
            "send copies the caller's bytes in and recv hands back a buffer it owns: no call lends a slot to write in",
        ),
        most_subscribers: Some((32, "a route's receivers are the bits of a 32-bit mask: 32 at most")),
    }
}

#[cfg(all(test, not(cpp_ipc)))]
mod tests {
    use super::*;
    use ipcbench_api::Library;

    /// Built without the source: it says so, and how to build it, for every pattern.
    #[test]
    fn without_the_source_it_says_it_was_not_built_and_how_to_build_it() {
        let info = CppIpc::info();
        assert!(info.version.contains("not built"), "{}", info.version);
        assert!(!info.capabilities.stream.is_yes());
        assert!(info.capabilities.stream.text().contains("set CPP_IPC_SRC"));
    }
}
