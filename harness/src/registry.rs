//! The libraries built in: the one place that names each adapter. Adding a library is a crate
//! under adapters/, its id in `IDS` and an arm in each of the three matches below (and its
//! dependency line in harness/Cargo.toml).

use anyhow::{Result, bail};
use ipcbench_api::LibraryInfo;

use crate::cases;
use crate::child::{self, ChildArgs};

/// Every library's id, in the order of the tables.
pub const IDS: &[&str] = &[
    "fastipc",
    "iceoryx2",
    "aeron",
    "zmq",
    "nng",
    "ipc-channel",
    "boost",
    "uds",
    "uds-seqpacket",
    "tcp",
    "pipe",
    "fifo",
    "posix-mq",
    "shm-ring",
];

pub fn info(id: &str) -> Result<LibraryInfo> {
    use ipcbench_api::Library;
    Ok(match id {
        "fastipc" => ipcbench_fastipc::FastIpc::info(),
        "iceoryx2" => ipcbench_iceoryx2::Iceoryx2::info(),
        "aeron" => ipcbench_aeron::AeronIpc::info(),
        "zmq" => ipcbench_zmq::Zmq::info(),
        "nng" => ipcbench_nng::Nng::info(),
        "ipc-channel" => ipcbench_ipc_channel::IpcChannel::info(),
        "boost" => ipcbench_boost::Boost::info(),
        "uds" => ipcbench_uds::Uds::info(),
        "uds-seqpacket" => ipcbench_uds::Seqpacket::info(),
        "tcp" => ipcbench_uds::Tcp::info(),
        "pipe" => ipcbench_pipes::Pipe::info(),
        "fifo" => ipcbench_pipes::Fifo::info(),
        "posix-mq" => ipcbench_posix_mq::PosixMq::info(),
        "shm-ring" => ipcbench_shm_ring::ShmRing::info(),
        other => bail!("{}", unknown(other)),
    })
}

/// Runs one role process: the one dispatch on the library's name; everything below it is
/// compiled for that library alone.
pub fn run_child(args: &ChildArgs) -> Result<()> {
    match args.library.as_str() {
        "fastipc" => child::run::<ipcbench_fastipc::FastIpc>(args),
        "iceoryx2" => child::run::<ipcbench_iceoryx2::Iceoryx2>(args),
        "aeron" => child::run::<ipcbench_aeron::AeronIpc>(args),
        "zmq" => child::run::<ipcbench_zmq::Zmq>(args),
        "nng" => child::run::<ipcbench_nng::Nng>(args),
        "ipc-channel" => child::run::<ipcbench_ipc_channel::IpcChannel>(args),
        "boost" => child::run::<ipcbench_boost::Boost>(args),
        "uds" => child::run::<ipcbench_uds::Uds>(args),
        "uds-seqpacket" => child::run::<ipcbench_uds::Seqpacket>(args),
        "tcp" => child::run::<ipcbench_uds::Tcp>(args),
        "pipe" => child::run::<ipcbench_pipes::Pipe>(args),
        "fifo" => child::run::<ipcbench_pipes::Fifo>(args),
        "posix-mq" => child::run::<ipcbench_posix_mq::PosixMq>(args),
        "shm-ring" => child::run::<ipcbench_shm_ring::ShmRing>(args),
        other => bail!("{}", unknown(other)),
    }
}

/// After every trial: what only the library can find of it (its `remove_leftovers`).
pub fn remove_leftovers(id: &str, trial: &str) {
    use ipcbench_api::Library;
    match id {
        "fastipc" => ipcbench_fastipc::FastIpc::remove_leftovers(trial),
        "iceoryx2" => ipcbench_iceoryx2::Iceoryx2::remove_leftovers(trial),
        "aeron" => ipcbench_aeron::AeronIpc::remove_leftovers(trial),
        "zmq" => ipcbench_zmq::Zmq::remove_leftovers(trial),
        "nng" => ipcbench_nng::Nng::remove_leftovers(trial),
        "ipc-channel" => ipcbench_ipc_channel::IpcChannel::remove_leftovers(trial),
        "boost" => ipcbench_boost::Boost::remove_leftovers(trial),
        "uds" => ipcbench_uds::Uds::remove_leftovers(trial),
        "uds-seqpacket" => ipcbench_uds::Seqpacket::remove_leftovers(trial),
        "tcp" => ipcbench_uds::Tcp::remove_leftovers(trial),
        "pipe" => ipcbench_pipes::Pipe::remove_leftovers(trial),
        "fifo" => ipcbench_pipes::Fifo::remove_leftovers(trial),
        "posix-mq" => ipcbench_posix_mq::PosixMq::remove_leftovers(trial),
        "shm-ring" => ipcbench_shm_ring::ShmRing::remove_leftovers(trial),
        _ => {}
    }
}

pub fn unknown(id: &str) -> String {
    let near = cases::near_matches(id, IDS.iter().copied());
    let hint = if near.is_empty() { String::new() } else { format!("did you mean {}? ", near.join(", ")) };
    format!("unknown library {id:?}: {hint}the libraries built in are {}", IDS.join(", "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_id_has_its_adapter() {
        for id in super::IDS {
            assert_eq!(super::info(id).unwrap().id, *id);
        }
        assert!(super::unknown("fastpic").contains("did you mean fastipc"));
    }
}
