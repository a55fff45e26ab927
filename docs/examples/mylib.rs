//! The adapter of docs/ARCHITECTURE.md's "Adding a library": MyLib has a stream only. Here a
//! Unix stream socket stands in for MyLib's channel, so that the tests compile and run it.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Instant;

use ipcbench_api::{
    Capabilities, Kind, Library, LibraryInfo, Opened, Received, RecvMode, Requests, Result, Rx, Setup, Side,
    Support, Tx, Unsupported, anyhow, bail,
};

pub struct MyLib;

/// One end of a stream: the library's handle, and the case's message size.
pub struct Conn {
    socket: UnixStream,
    size: usize,
}

impl Tx for Conn {
    /// One whole message, waiting for room.
    fn send(&mut self, message: &[u8]) -> Result<()> {
        if message.len() != self.size {
            bail!("a message of {} bytes on a stream of {}-byte messages", message.len(), self.size);
        }
        self.socket.write_all(message)?;
        Ok(())
    }
}

impl Rx for Conn {
    /// One whole message, waiting for it; `Closed` once the sender is gone.
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        let (size, mut got) = (self.size, 0);
        while got < size {
            match self.socket.read(&mut buf[got..size])? {
                0 if got == 0 => return Ok(Received::Closed),
                0 => bail!("the sender closed in the middle of a message"),
                n => got += n,
            }
        }
        Ok(Received::Message(size))
    }
}

impl Library for MyLib {
    type Stream = Conn;
    type Publisher = Unsupported;
    type Subscriber = Unsupported;
    type Producer = Unsupported;
    type Consumer = Unsupported;
    type Client = Unsupported;
    type Server = Unsupported;

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "mylib",
            name: "MyLib",
            kind: Kind::OverSockets,
            version: "1.2.3".into(),
            modes: &[RecvMode::Waiting],
            capabilities: Capabilities {
                stream: Support::Yes("one MyLib channel"),
                round_trip: Support::Yes("the same channel, both ways"),
                broadcast_lossless: Support::No("no one-to-many channel"),
                broadcast_lossy: Support::No("no one-to-many channel"),
                queue: Support::No("no channel shared among readers"),
                service: Support::No("no request-reply"),
                batch: Support::No("no call moves several messages"),
                loan: Support::No("no call lends the library's memory"),
                most_subscribers: None,
            },
            requests: Requests::ToOneServer,
            largest_message: None,
            configuration: vec![("channel", "a Unix stream socket".into())],
        }
    }

    /// Accept: create the channel and wait up to `setup.timeout` for the peer; Connect: find it
    /// within `setup.timeout`.
    fn stream(setup: &Setup, side: Side) -> Result<Opened<Conn>> {
        if setup.mode != RecvMode::Waiting {
            bail!("MyLib is measured only waiting, not {}", setup.mode);
        }
        let path = setup.socket_path("mylib")?;
        let deadline = Instant::now() + setup.timeout;
        let late = || anyhow!("no peer at {} within {:?}", path.display(), setup.timeout);
        let socket = match side {
            Side::Accept => {
                let listener = UnixListener::bind(&path)?;
                listener.set_nonblocking(true)?;
                loop {
                    match listener.accept() {
                        // Connected: the socket file has done its job.
                        Ok((socket, _)) => {
                            let _ = std::fs::remove_file(&path);
                            break socket;
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                            std::thread::sleep(std::time::Duration::from_millis(1))
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => return Err(late()),
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            Side::Connect => loop {
                match UnixStream::connect(&path) {
                    Ok(socket) => break socket,
                    Err(_) if Instant::now() < deadline => {
                        std::thread::sleep(std::time::Duration::from_millis(1))
                    }
                    Err(_) => return Err(late()),
                }
            },
        };
        socket.set_nonblocking(false)?;
        Ok(Opened::new(Conn { socket, size: setup.size }))
    }
}
