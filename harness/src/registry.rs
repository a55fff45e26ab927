//! The libraries built in: one table, the one place that names each adapter. The list, the
//! dispatch of a child process and the clean-up after a trial all follow from it. Adding a
//! library is a crate under adapters/, its line in `LIBRARIES` and its dependency line in
//! harness/Cargo.toml.

use anyhow::{Result, bail};
use ipcbench_api::{Library, LibraryInfo};

use crate::matrix;
use crate::pattern;
use crate::role::ChildArgs;

/// What the harness asks of one adapter, as plain functions of its `Library` type.
pub struct Entry {
    pub info: fn() -> LibraryInfo,
    /// Runs one role process: everything below it is compiled for that library alone.
    pub run_child: fn(&ChildArgs) -> Result<()>,
    /// After every trial: what only the library can find of it.
    pub remove_leftovers: fn(&str) -> Vec<String>,
    /// The `/dev/shm` a trial of a shape, size and buffer fills, about.
    pub shared_memory: fn(ipcbench_api::Shape, usize, Option<usize>) -> u64,
    /// The longest message its loan mode lends memory for, and why.
    pub largest_loan: fn(ipcbench_api::Shape, Option<usize>) -> Option<(usize, String)>,
}

/// The entry of library `L`.
pub const fn entry<L: Library>() -> Entry {
    Entry {
        info: L::info,
        run_child: pattern::start::run_child::<L>,
        remove_leftovers: L::remove_leftovers,
        shared_memory: L::shared_memory,
        largest_loan: L::largest_loan,
    }
}

/// The entry of the control, `L`: its children also take `doctor --calibrate`'s handicap.
const fn control<L: Library>() -> Entry {
    Entry { run_child: pattern::start::run_control::<L>, ..entry::<L>() }
}

/// Every library built in, in the order of the tables.
pub static LIBRARIES: [Entry; 15] = [
    entry::<ipcbench_fastipc::FastIpc>(),
    entry::<ipcbench_iceoryx2::Iceoryx2>(),
    entry::<ipcbench_aeron::AeronIpc>(),
    entry::<ipcbench_zmq::Zmq>(),
    entry::<ipcbench_nng::Nng>(),
    entry::<ipcbench_ipc_channel::IpcChannel>(),
    entry::<ipcbench_boost::Boost>(),
    entry::<ipcbench_cpp_ipc::CppIpc>(),
    entry::<ipcbench_uds::Uds>(),
    entry::<ipcbench_uds::Seqpacket>(),
    entry::<ipcbench_uds::Tcp>(),
    entry::<ipcbench_pipes::Pipe>(),
    entry::<ipcbench_pipes::Fifo>(),
    entry::<ipcbench_posix_mq::PosixMq>(),
    control::<ipcbench_shm_ring::ShmRing>(),
];

/// The control: the hand-written shared-memory ring, the sentinel's library in an A/B run and
/// the one `doctor --calibrate` weighs.
pub const CONTROL: &str = "shm-ring";

/// The library the report's questions are asked of when `report --subject` names none: the one
/// the comparison this tool grew from is about.
pub const DEFAULT_SUBJECT: &str = "fastipc";

/// Every library's id, in the order of the tables.
pub fn ids() -> Vec<&'static str> {
    LIBRARIES.iter().map(|e| (e.info)().id).collect()
}

/// The library with this id; an unknown one is an error naming the nearest.
pub fn find(id: &str) -> Result<(&'static Entry, LibraryInfo)> {
    for e in &LIBRARIES {
        let info = (e.info)();
        if info.id == id {
            return Ok((e, info));
        }
    }
    bail!("{}", unknown(id))
}

/// The libraries a `--lib` list names (every one when there is no list), in the list's order,
/// each once.
pub fn select(wanted: Option<&str>) -> Result<Vec<LibraryInfo>> {
    let Some(list) = wanted else {
        return Ok(LIBRARIES.iter().map(|e| (e.info)()).collect());
    };
    let wanted: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if wanted.is_empty() {
        bail!("--lib names no library: the libraries built in are {}", ids().join(", "));
    }
    let mut out: Vec<LibraryInfo> = Vec::new();
    for id in wanted {
        let (_, info) = find(id)?;
        if !out.iter().any(|l| l.id == info.id) {
            out.push(info);
        }
    }
    Ok(out)
}

/// Runs one role process of the library the arguments name: the one dispatch on its name.
pub fn run_child(args: &ChildArgs) -> Result<()> {
    (find(&args.library)?.0.run_child)(args)
}

/// After trial `trial` of library `id`: what only the library can find of it, removed; what
/// was there.
pub fn remove_leftovers(id: &str, trial: &str) -> Vec<String> {
    find(id).map(|(e, _)| (e.remove_leftovers)(trial)).unwrap_or_default()
}

/// The longest message library `id` lends memory for in this shape, and why (`None`: no limit).
pub fn largest_loan(id: &str, shape: ipcbench_api::Shape, buffer: Option<usize>) -> Option<(usize, String)> {
    find(id).ok().and_then(|(e, _)| (e.largest_loan)(shape, buffer))
}

/// About how much of `/dev/shm` a trial of library `id` fills.
pub fn shared_memory(id: &str, shape: ipcbench_api::Shape, size: usize, buffer: Option<usize>) -> u64 {
    find(id).map(|(e, _)| (e.shared_memory)(shape, size, buffer)).unwrap_or(0)
}

pub fn unknown(id: &str) -> String {
    let ids = ids();
    let near = matrix::near_matches(id, ids.iter().copied());
    let hint = if near.is_empty() { String::new() } else { format!("did you mean {}? ", near.join(", ")) };
    format!("unknown library {id:?}: {hint}the libraries built in are {}", ids.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_library_is_found_by_its_id_once() {
        let ids = ids();
        assert_eq!(ids.len(), LIBRARIES.len());
        for id in &ids {
            assert_eq!(find(id).unwrap().1.id, *id);
            assert_eq!(ids.iter().filter(|x| *x == id).count(), 1, "{id} twice");
        }
        assert!(unknown("fastpic").contains("did you mean fastipc"));
        let two = select(Some("uds, fastipc,uds")).unwrap();
        assert_eq!(two.iter().map(|l| l.id).collect::<Vec<_>>(), ["uds", "fastipc"]);
        assert!(select(Some(",")).unwrap_err().to_string().contains("--lib names no library"));
    }
}
