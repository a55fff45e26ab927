//! What every message carries, and the one clock every process reads.
//!
//! Layout (little endian): bytes 0..8 the sequence number, 8..12 the sender's index, 12 the
//! phase (warm-up or measured), and the last byte a check derived from the sequence number, so
//! a receiver sees that the whole message, to its end, arrived. Messages of 8 to 15 bytes (the
//! small end of a size sweep) carry the compact form: bytes 0..5 the sequence number's low 40
//! bits (a trillion messages), 5 the sender's index, 6 the phase, and the check byte last.
//!
//! The payload policy: every byte between the header and the check byte (the body) is written
//! for every message, a pattern derived from its sender and sequence number, and a receiver
//! compares every byte of it. No way of moving messages (copied, or written and read in place)
//! can win by leaving memory untouched, and a message whose body came from another message (a
//! torn read of a ring the sender overwrote) is caught.

/// The smallest message; below `FULL`, the compact form.
pub const SMALLEST: usize = ipcbench_api::SMALLEST_MESSAGE;
const FULL: usize = 16;

pub const WARMUP: u8 = 0;
pub const MEASURED: u8 = 1;

#[inline(always)]
fn check_byte(seq: u64) -> u8 {
    (seq as u8) ^ 0xA5
}

/// The body's 8-byte words step by this (odd: no two words of a message repeat).
const STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// The body's first word, from the message's sender and sequence number.
#[inline(always)]
fn first_word(seq: u64, sender: u32) -> u64 {
    (seq ^ (u64::from(sender) << 48)).wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ 0x5851_F42D_4C95_7F2D
}

/// Writes the body: word `i` is `first + i * STEP`, little endian, the last word cut short.
/// Written as a loop the compiler vectorises.
#[inline(always)]
fn fill(body: &mut [u8], first: u64) {
    let mut chunks = body.chunks_exact_mut(8);
    let mut word = first;
    for c in &mut chunks {
        c.copy_from_slice(&word.to_le_bytes());
        word = word.wrapping_add(STEP);
    }
    let rest = chunks.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&word.to_le_bytes()[..n]);
}

/// Whether every byte of the body is what `fill` wrote: all of it is read and compared, with
/// no early exit, so the check costs the same whatever arrived.
#[inline(always)]
fn intact(body: &[u8], first: u64) -> bool {
    let mut chunks = body.chunks_exact(8);
    let mut word = first;
    let mut diff = 0u64;
    for c in &mut chunks {
        diff |= u64::from_le_bytes(c.try_into().unwrap()) ^ word;
        word = word.wrapping_add(STEP);
    }
    let rest = chunks.remainder();
    let expected = word.to_le_bytes();
    for (i, &b) in rest.iter().enumerate() {
        diff |= u64::from(b ^ expected[i]);
    }
    diff == 0
}

/// The first byte of the body that is not what `fill` wrote (the error's detail; cold).
#[cold]
fn first_wrong(body: &[u8], first: u64) -> usize {
    let mut expected = vec![0u8; body.len()];
    fill(&mut expected, first);
    body.iter().zip(&expected).position(|(a, b)| a != b).unwrap_or(body.len())
}

/// Where a message's header sits: the full form, or the compact one (messages under 16 bytes,
/// and timed messages, whose bytes 7..15 carry the instant they were due).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Full,
    Compact,
}

fn form_of(len: usize) -> Form {
    if len >= FULL { Form::Full } else { Form::Compact }
}

/// Where the body starts: after the full header (13 bytes), the compact one (7), or a timed
/// message's instant (15).
const BODY_FULL: usize = 13;
const BODY_COMPACT: usize = 7;
const BODY_TIMED: usize = 15;

fn body_of(form: Form) -> usize {
    match form {
        Form::Full => BODY_FULL,
        Form::Compact => BODY_COMPACT,
    }
}

/// Writes the sender's index once; it stays in the sender's buffer. (No case has 256 senders,
/// the most the compact form can name.)
pub fn init(buf: &mut [u8], sender: u32) {
    init_form(buf, sender, form_of(buf.len()));
}

fn init_form(buf: &mut [u8], sender: u32, form: Form) {
    buf.fill(0);
    match form {
        Form::Full => buf[8..12].copy_from_slice(&sender.to_le_bytes()),
        Form::Compact => buf[5] = sender as u8,
    }
}

/// Writes message `seq`'s header, its whole body and its check byte (the sender's index stays
/// from `init`).
#[inline(always)]
pub fn stamp(buf: &mut [u8], seq: u64, phase: u8) {
    let form = form_of(buf.len());
    stamp_form(buf, seq, phase, form, body_of(form));
}

/// Writes every byte of message `seq` of sender `sender` into memory that may hold anything
/// (a loan): its index, then what `stamp` writes.
#[inline(always)]
pub fn stamp_as(buf: &mut [u8], sender: u32, seq: u64, phase: u8) {
    let form = form_of(buf.len());
    match form {
        Form::Full => buf[8..12].copy_from_slice(&sender.to_le_bytes()),
        Form::Compact => buf[5] = sender as u8,
    }
    stamp_form(buf, seq, phase, form, body_of(form));
}

#[inline(always)]
fn stamp_form(buf: &mut [u8], seq: u64, phase: u8, form: Form, body: usize) {
    let sender = match form {
        Form::Full => {
            buf[..8].copy_from_slice(&seq.to_le_bytes());
            buf[12] = phase;
            u32::from_le_bytes(buf[8..12].try_into().unwrap())
        }
        Form::Compact => {
            buf[..5].copy_from_slice(&seq.to_le_bytes()[..5]);
            buf[6] = phase;
            u32::from(buf[5])
        }
    };
    let last = buf.len() - 1;
    if body < last {
        fill(&mut buf[body..last], first_word(seq, sender));
    }
    buf[last] = check_byte(seq);
}

/// A received message's header, once its length and check byte are right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub seq: u64,
    pub sender: u32,
    pub phase: u8,
}

/// A message's header, once its length, its check byte and every byte of its body are right.
#[inline(always)]
pub fn read(msg: &[u8], expected_len: usize) -> Result<Header, String> {
    let form = form_of(expected_len);
    read_form(msg, expected_len, form, body_of(form))
}

#[inline(always)]
fn read_form(msg: &[u8], expected_len: usize, form: Form, body: usize) -> Result<Header, String> {
    if msg.len() != expected_len {
        return Err(format!("a message of {} bytes where {expected_len} were sent", msg.len()));
    }
    let (seq, sender, phase) = match form {
        Form::Full => (
            u64::from_le_bytes(msg[..8].try_into().unwrap()),
            u32::from_le_bytes(msg[8..12].try_into().unwrap()),
            msg[12],
        ),
        Form::Compact => {
            let mut seq = [0u8; 8];
            seq[..5].copy_from_slice(&msg[..5]);
            (u64::from_le_bytes(seq), u32::from(msg[5]), msg[6])
        }
    };
    let last = expected_len - 1;
    if msg[last] != check_byte(seq) || phase > MEASURED {
        return Err(format!("message {seq} from sender {sender} is corrupt (phase or last byte wrong)"));
    }
    if body < last && !intact(&msg[body..last], first_word(seq, sender)) {
        return Err(corrupt_body(&msg[body..last], seq, sender, body));
    }
    Ok(Header { seq, sender, phase })
}

#[cold]
fn corrupt_body(body: &[u8], seq: u64, sender: u32, from: usize) -> String {
    let at = from + first_wrong(body, first_word(seq, sender));
    format!(
        "message {seq} from sender {sender} is corrupt: byte {at} of its body is not what its sender \
         wrote (every byte of every message is written and checked)"
    )
}

/// A timed message (a latency case's, `matrix::TIMED_SMALLEST` bytes or more): the compact
/// header, and at bytes 7..15 the instant (`now_ns`) it was due, or its sender opened its
/// endpoint.
pub fn init_timed(buf: &mut [u8], sender: u32) {
    init_form(buf, sender, Form::Compact);
}

#[inline(always)]
pub fn stamp_timed(buf: &mut [u8], seq: u64, phase: u8, due_ns: u64) {
    stamp_form(buf, seq, phase, Form::Compact, BODY_TIMED);
    buf[7..15].copy_from_slice(&due_ns.to_le_bytes());
}

/// A timed message's header and the instant it carries.
#[inline(always)]
pub fn read_timed(msg: &[u8], expected_len: usize) -> Result<(Header, u64), String> {
    if expected_len < FULL {
        return Err(format!("a timed message needs {FULL} bytes, not {expected_len}"));
    }
    let h = read_form(msg, expected_len, Form::Compact, BODY_TIMED)?;
    Ok((h, u64::from_le_bytes(msg[7..15].try_into().unwrap())))
}

/// The phase a message was sent in, unchecked (an echo's look at what it returns): `WARMUP`
/// for anything too short to carry one.
#[inline(always)]
pub fn phase(msg: &[u8]) -> u8 {
    let at = if msg.len() >= FULL { 12 } else { 6 };
    msg.get(at).copied().unwrap_or(WARMUP)
}

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the machine, so the driver's
/// start instant means the same to every child.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is valid for a write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_message_reads_back() {
        let mut buf = vec![0u8; 16];
        init(&mut buf, 3);
        stamp(&mut buf, 0x1234_5678_9abc, MEASURED);
        assert_eq!(read(&buf, 16), Ok(Header { seq: 0x1234_5678_9abc, sender: 3, phase: MEASURED }));
        let mut big = vec![0u8; 1024];
        init(&mut big, 0);
        stamp(&mut big, 7, WARMUP);
        assert_eq!(read(&big, 1024).unwrap().seq, 7);
    }

    #[test]
    fn small_messages_carry_the_compact_form() {
        for len in [8, 9, 15] {
            let mut buf = vec![0u8; len];
            init(&mut buf, 3);
            stamp(&mut buf, 0x12_3456_789a, MEASURED);
            assert_eq!(
                read(&buf, len),
                Ok(Header { seq: 0x12_3456_789a, sender: 3, phase: MEASURED }),
                "{len}"
            );
            buf[len - 1] ^= 1;
            assert!(read(&buf, len).is_err(), "a changed last byte, {len} bytes");
        }
        // The sequence number wraps at 40 bits.
        let mut buf = [0u8; 8];
        init(&mut buf, 0);
        stamp(&mut buf, (1 << 40) + 1, WARMUP);
        assert_eq!(read(&buf, 8).unwrap().seq, 1);
    }

    #[test]
    fn a_timed_message_carries_its_instant() {
        for len in [16, 1024] {
            let mut buf = vec![0u8; len];
            init_timed(&mut buf, 2);
            stamp_timed(&mut buf, 41, MEASURED, 0x0123_4567_89ab_cdef);
            assert_eq!(
                read_timed(&buf, len),
                Ok((Header { seq: 41, sender: 2, phase: MEASURED }, 0x0123_4567_89ab_cdef)),
                "{len}"
            );
            buf[len - 1] ^= 1;
            assert!(read_timed(&buf, len).is_err(), "a changed last byte, {len} bytes");
        }
        assert!(read_timed(&[0u8; 8], 8).unwrap_err().contains("16 bytes"));
    }

    #[test]
    fn every_byte_of_the_body_is_written_and_checked() {
        // A corrupted byte in the middle of a 64 KiB message is caught, as is one next to the
        // header and one next to the check byte, in every form.
        let len = 64 << 10;
        let mut buf = vec![0u8; len];
        init(&mut buf, 2);
        stamp(&mut buf, 77, MEASURED);
        assert!(buf[BODY_FULL..len - 1].iter().filter(|&&b| b == 0).count() < len / 64, "a body written");
        assert_eq!(read(&buf, len).unwrap().seq, 77);
        for at in [BODY_FULL, len / 2, len - 2] {
            let mut bad = buf.clone();
            bad[at] ^= 0x10;
            let e = read(&bad, len).unwrap_err();
            assert!(e.contains(&format!("byte {at} of its body")), "{at}: {e}");
        }
        // Another message's body under this one's header (a torn read) is caught.
        let mut other = vec![0u8; len];
        init(&mut other, 2);
        stamp(&mut other, 78, MEASURED);
        let mut torn = buf.clone();
        torn[len / 2..len - 1].copy_from_slice(&other[len / 2..len - 1]);
        assert!(read(&torn, len).is_err(), "a torn message");
        // So is the same sequence number's body from another sender.
        let mut elsewhere = vec![0u8; 1024];
        init(&mut elsewhere, 3);
        stamp(&mut elsewhere, 77, MEASURED);
        let mut mine = vec![0u8; 1024];
        init(&mut mine, 2);
        stamp(&mut mine, 77, MEASURED);
        mine[100..1023].copy_from_slice(&elsewhere[100..1023]);
        assert!(read(&mine, 1024).is_err(), "another sender's body");
        for len in [9, 14, 17, 23, 1000] {
            let mut small = vec![0u8; len];
            init(&mut small, 1);
            stamp(&mut small, 5, WARMUP);
            assert!(read(&small, len).is_ok(), "{len}");
            let body = if len >= FULL { BODY_FULL } else { BODY_COMPACT };
            small[body] ^= 1;
            assert!(read(&small, len).is_err(), "{len}: the body's first byte");
        }
        let mut timed = vec![0u8; 4096];
        init_timed(&mut timed, 0);
        stamp_timed(&mut timed, 3, MEASURED, 12345);
        assert_eq!(read_timed(&timed, 4096).unwrap().1, 12345);
        timed[2048] ^= 1;
        assert!(read_timed(&timed, 4096).unwrap_err().contains("byte 2048"));
    }

    #[test]
    fn a_message_stamped_in_lent_memory_is_whole() {
        for len in [8, 16, 1000] {
            let mut lent = vec![0xCDu8; len];
            stamp_as(&mut lent, 3, 9, MEASURED);
            let mut own = vec![0u8; len];
            init(&mut own, 3);
            stamp(&mut own, 9, MEASURED);
            assert_eq!(lent, own, "{len}: every byte written");
        }
    }

    #[test]
    fn damage_is_seen() {
        let mut buf = vec![0u8; 64];
        init(&mut buf, 0);
        stamp(&mut buf, 9, MEASURED);
        assert!(read(&buf[..32], 64).is_err(), "a short message");
        buf[63] ^= 1;
        assert!(read(&buf, 64).is_err(), "a changed last byte");
    }
}
