//! ipcbench adapter for ipc-channel 0.23 (Servo): its byte channels (`ipc::bytes_channel`), Unix
//! `SOCK_SEQPACKET` sockets underneath, one message per packet.
//!
//! Rendezvous: the accepting side (receiver, echo) makes an `IpcOneShotServer` and writes its
//! name to `<trial dir>/<name>.ipc-channel`; the connecting side (sender, pinger) reads it, makes
//! the byte channels and sends the accepting side its ends through the one-shot server: the
//! receiving end of a stream; for a round trip, the receiving end of the requests and the sending
//! end of the replies. A stream ends when its sender's end is dropped: the receiver gets
//! `Disconnected` after every message.
//!
//! `IpcBytesReceiver::recv` returns a new `Vec<u8>` for every message: ipc-channel has no receive
//! into a caller's buffer, so every receive here allocates, then copies into the harness's
//! buffer. Its users pay the same.
//!
//! Two receive modes: waiting, `recv`; polling, `try_recv` called again until it brings a
//! message (`TryRecvError::Empty` until then).

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use ipc_channel::ipc::{self, IpcBytesReceiver, IpcBytesSender, IpcOneShotServer, IpcSender};
use ipc_channel::{IpcError, TryRecvError};
use ipcbench_api::{
    Buffer, Capabilities, Library, LibraryInfo, Opened, Received, RecvMode, Requests, Rx, Setup, Side,
    Support, Tx, Unsupported, retry_until,
};

/// ipc-channel's byte channels.
pub struct IpcChannel;

/// Both: its blocking `recv`, and `try_recv` called again.
const MODES: &[RecvMode] = &RecvMode::ALL;

/// What the connecting side hands the accepting side: the receiving end of the messages it will
/// send, and for a round trip the sending end of the replies.
type Ends = (IpcBytesReceiver, Option<IpcBytesSender>);

impl Library for IpcChannel {
    type Stream = Channel;
    type Publisher = Unsupported;
    type Subscriber = Unsupported;
    type Producer = Unsupported;
    type Consumer = Unsupported;
    type Client = Unsupported;
    type Server = Unsupported;

    fn info() -> LibraryInfo {
        LibraryInfo {
            id: "ipc-channel",
            kind: ipcbench_api::Kind::OverSockets,
            name: "ipc-channel",
            version: "0.23.1".into(),
            modes: MODES,
            capabilities: Capabilities {
                stream: Support::Yes("ipc::bytes_channel: one SEQPACKET socket pair, a message per packet"),
                round_trip: Support::Yes("two byte channels, one each way"),
                broadcast_lossless: Support::No("a channel has exactly one receiver; nothing sends to many"),
                broadcast_lossy: Support::No("a channel has exactly one receiver; nothing sends to many"),
                queue: Support::No("a receiver can't be shared: each channel has exactly one"),
                service: Support::No(
                    "no request-reply: a byte channel carries bytes, so replies can't be routed to clients",
                ),
                batch: Support::No("no call sends or receives several messages at once"),
                loan: Support::No(
                    "bytes cross a Unix socket; its IpcSharedMemory is a region made and sent per message, not a channel's memory lent",
                ),
                most_subscribers: None,
            },
            requests: Requests::ToOneServer,
            largest_message: None,
            configuration: vec![
                ("channel", "ipc::bytes_channel (Unix SOCK_SEQPACKET socket pair)".into()),
                (
                    "receive",
                    "waiting: IpcBytesReceiver::recv; polling: try_recv again until a message is there; \
                     a new Vec<u8> per message, copied out"
                        .into(),
                ),
                ("rendezvous", "IpcOneShotServer, its name passed in a file of the trial's directory".into()),
            ],
        }
    }

    fn stream(setup: &Setup, side: Side) -> Result<Opened<Channel>> {
        let round_trip = setup.stream_or_round_trip()?;
        let file = setup.dir.join(format!("{}.ipc-channel", setup.name));
        let channel = match side {
            Side::Accept => accept(&file, setup.timeout)?,
            Side::Connect => connect(&file, setup.timeout, round_trip)?,
        };
        let how = match setup.buffer {
            None => "ipc-channel sets no depth: its socket pair keeps the kernel's default buffers",
            Some(_) => {
                "--buffer does not reach it: ipc-channel has no setting for the depth of its socket pair, \
                 which keeps the kernel's default buffers"
            }
        };
        let buffer = Buffer { messages: None, bytes: None, how: how.into() };
        Ok(Opened::new(Channel { polling: setup.mode == RecvMode::Polling, ..channel }).buffered(buffer))
    }
}

/// Makes the one-shot server, publishes its name, and waits for the connecting side's ends.
fn accept(file: &Path, timeout: Duration) -> Result<Channel> {
    let (server, name) = IpcOneShotServer::<Ends>::new().context("making an IpcOneShotServer")?;
    // Written whole, then renamed: the other side never reads half a name.
    let partial = file.with_extension("partial");
    std::fs::write(&partial, &name).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, file).with_context(|| format!("renaming to {}", file.display()))?;
    // `accept` has no time-out: wait for it on a thread of its own (left blocked if nobody comes;
    // the process then exits with the error).
    let (done, accepted) = mpsc::channel();
    std::thread::Builder::new()
        .spawn(move || {
            let _ = done.send(server.accept());
        })
        .context("starting the thread that accepts on the one-shot server")?;
    let (_, (rx, tx)) = match accepted.recv_timeout(timeout) {
        Ok(result) => result.map_err(|e| anyhow!("accepting on {name}: {e}"))?,
        Err(_) => {
            bail!("nobody connected to the one-shot server named in {} within {timeout:?}", file.display())
        }
    };
    Ok(Channel { tx, rx: Some(rx), polling: false })
}

/// Waits for the accepting side's name, makes the channels and sends it their other ends.
fn connect(file: &Path, timeout: Duration, round_trip: bool) -> Result<Channel> {
    let name = retry_until(
        Instant::now() + timeout,
        Duration::from_millis(1),
        || Ok(std::fs::read_to_string(file)),
        |e| anyhow!("no one-shot server's name in {} within {timeout:?}: {e}", file.display()),
    )?;
    let (tx, their_rx) = ipc::bytes_channel().context("making a byte channel")?;
    let (their_tx, rx) = if round_trip {
        let (t, r) = ipc::bytes_channel().context("making the reply channel")?;
        (Some(t), Some(r))
    } else {
        (None, None)
    };
    let server = IpcSender::<Ends>::connect(name.clone()).with_context(|| format!("connecting to {name}"))?;
    server.send((their_rx, their_tx)).map_err(|e| anyhow!("sending the channel's ends to {name}: {e}"))?;
    Ok(Channel { tx: Some(tx), rx, polling: false })
}

/// One side of a stream or round trip: what it sends on, what it receives from.
pub struct Channel {
    tx: Option<IpcBytesSender>,
    rx: Option<IpcBytesReceiver>,
    /// `try_recv` instead of `recv`.
    polling: bool,
}

impl Tx for Channel {
    #[inline]
    fn send(&mut self, message: &[u8]) -> Result<()> {
        let Some(tx) = &self.tx else { bail!("this end of the channel only receives") };
        tx.send(message).map_err(|e| anyhow!("IpcBytesSender::send: {e}"))
    }
}

impl Rx for Channel {
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<Received> {
        let Some(rx) = &self.rx else { bail!("this end of the channel only sends") };
        let received = if self.polling { rx.try_recv() } else { rx.recv().map_err(TryRecvError::IpcError) };
        match received {
            Ok(message) => {
                let n = message.len();
                let Some(room) = buf.get_mut(..n) else {
                    bail!("a message of {n} bytes arrived; messages of this case have {}", buf.len())
                };
                room.copy_from_slice(&message);
                Ok(Received::Message(n))
            }
            Err(TryRecvError::Empty) => Ok(Received::Empty),
            Err(TryRecvError::IpcError(IpcError::Disconnected)) => Ok(Received::Closed),
            Err(e) => {
                Err(anyhow!("IpcBytesReceiver::{}: {e}", if self.polling { "try_recv" } else { "recv" }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcbench_api::Shape;
    use ipcbench_api::testing::{self, Scratch};

    // A byte channel carries any size: the contract's checks only.
    #[test]
    fn a_stream_arrives_in_order_then_ends() {
        testing::in_each_mode::<IpcChannel>("ipcc-stream", Shape::Stream, |setup| {
            testing::stream_delivers::<IpcChannel>(&Setup { size: 64, ..*setup }, 2000, || {});
        });
    }

    #[test]
    fn round_trips_answer_each_request() {
        testing::in_each_mode::<IpcChannel>("ipcc-rtt", Shape::RoundTrip, |setup| {
            testing::round_trips::<IpcChannel>(&Setup { size: 1024, ..*setup }, 300);
        });
    }

    #[test]
    fn a_missing_peer_times_out() {
        assert_eq!(IpcChannel::info().modes, &RecvMode::ALL);
        let place = Scratch::new("ipcc-lonely");
        let lonely = Setup { timeout: Duration::from_millis(20), ..place.setup(Shape::Stream) };
        let e = IpcChannel::stream(&lonely, Side::Connect).err().unwrap().to_string();
        assert!(e.contains(&format!("no one-shot server's name in {}", place.dir.display())), "{e}");
    }
}
