//! How a role's loop hands each message to its library and takes each one back: copied through
//! the role's own buffer (`Copied`, the comparison's method and every pattern's), or written and
//! read where the library lends its memory (`Lent`, a loan case's stream or round trip). The
//! loops are generic over these, so each way is compiled into its own loop: no branch or call
//! per message beyond the library's own. A copy writes and checks what `--verify` says (the
//! library's copies touch every byte of it); a loan writes and checks every byte of every
//! message whatever it says (`message`), so that it does not win by leaving memory untouched.

use anyhow::{Context, Result, anyhow};
use ipcbench_api::{Loaned, Received, Rx, Tx};

use super::message::{self, Header, WARMUP};

/// How a sending loop sends message `seq`.
pub trait Put {
    fn size(&self) -> usize;
    fn put<T: Tx>(&mut self, tx: &mut T, seq: u64, phase: u8) -> Result<()>;
}

/// How a receiving loop takes the next message: its header, once every byte of it is checked.
pub trait Take {
    fn take<R: Rx>(&mut self, rx: &mut R) -> Result<Loaned<Header>>;
}

/// How an echo answers the next request: what its receive brought, and the request's phase.
pub trait Echo {
    fn echo<E: Tx + Rx>(&mut self, ep: &mut E) -> Result<(Received, u8)>;
}

/// Through the role's own buffer: the message is stamped there and copied in by `send`; it
/// arrives in the buffer by `recv`.
pub struct Copied {
    buf: Vec<u8>,
}

impl Copied {
    /// A role's buffer of one message, the sender's index written once (a receive overwrites it).
    pub fn new(size: usize, me: u32) -> Copied {
        let mut buf = vec![0u8; size];
        message::init(&mut buf, me);
        Copied { buf }
    }
}

impl Put for Copied {
    fn size(&self) -> usize {
        self.buf.len()
    }

    #[inline(always)]
    fn put<T: Tx>(&mut self, tx: &mut T, seq: u64, phase: u8) -> Result<()> {
        message::stamp(&mut self.buf, seq, phase);
        tx.send(&self.buf)
    }
}

impl Take for Copied {
    #[inline(always)]
    fn take<R: Rx>(&mut self, rx: &mut R) -> Result<Loaned<Header>> {
        let got = Loaned::from(rx.recv(&mut self.buf)?);
        let buf = &self.buf;
        got.map(|n| message::read(arrived(buf, n)?, buf.len()).map_err(|e| anyhow!(e))).transpose()
    }
}

impl Echo for Copied {
    #[inline(always)]
    fn echo<E: Tx + Rx>(&mut self, ep: &mut E) -> Result<(Received, u8)> {
        let size = self.buf.len();
        // Marks the buffer so that a receive that says "a message" without writing one shows
        // in the reply's check (a cost of one store against a round trip).
        self.buf[..8].fill(0xEE);
        let got = ep.recv(&mut self.buf)?;
        let Received::Message(n) = got else { return Ok((got, WARMUP)) };
        let msg = arrived(&self.buf, n)?;
        ep.send(msg).with_context(|| match message::read(msg, size) {
            Ok(h) => format!("request {} of client {}", h.seq, h.sender),
            Err(e) => format!("a request that is not one ({e})"),
        })?;
        Ok((got, message::phase(msg)))
    }
}

/// In the library's memory: the sender stamps the whole message into the memory `send_loaned`
/// lends, the receiver checks it where `recv_loaned` shows it, and an echo copies the request
/// into the reply it is lent (the one copy an echo cannot avoid).
pub struct Lent {
    size: usize,
    me: u32,
}

impl Lent {
    pub fn new(size: usize, me: u32) -> Lent {
        Lent { size, me }
    }
}

impl Put for Lent {
    fn size(&self) -> usize {
        self.size
    }

    #[inline(always)]
    fn put<T: Tx>(&mut self, tx: &mut T, seq: u64, phase: u8) -> Result<()> {
        let me = self.me;
        // Lent memory holds anything: every byte is written, the sender's index too.
        tx.send_loaned(self.size, |buf| message::stamp_as(buf, me, seq, phase))
    }
}

impl Take for Lent {
    #[inline(always)]
    fn take<R: Rx>(&mut self, rx: &mut R) -> Result<Loaned<Header>> {
        let size = self.size;
        rx.recv_loaned(|msg| message::read_whole(msg, size))?.transpose().map_err(|e| anyhow!(e))
    }
}

impl Echo for Lent {
    #[inline(always)]
    fn echo<E: Tx + Rx>(&mut self, ep: &mut E) -> Result<(Received, u8)> {
        let mut phase = WARMUP;
        let got = ep
            .echo_loaned(|request, reply| {
                reply.copy_from_slice(request);
                phase = message::phase(request);
            })
            .context("echoing a request in place")?;
        Ok((got, phase))
    }
}

/// The message a receive put at the start of `buf`.
#[inline(always)]
pub(super) fn arrived(buf: &[u8], n: usize) -> Result<&[u8]> {
    buf.get(..n).ok_or_else(|| anyhow!("the adapter reported {n} bytes in a {}-byte buffer", buf.len()))
}
