//! What every message carries, and the one clock every process reads.
//!
//! Layout (little endian): bytes 0..8 the sequence number, 8..12 the sender's index, 12 the
//! phase (warm-up or measured), and the last byte a check derived from the sequence number, so
//! a receiver sees that the whole message, to its end, arrived. Messages of 8 to 15 bytes (the
//! small end of a size sweep) carry the compact form: bytes 0..5 the sequence number's low 40
//! bits (a trillion messages), 5 the sender's index, 6 the phase, and the check byte last.
//!
//! The payload policy (`--verify`, docs/METHOD.md): the body between the header and the check
//! byte carries a pattern derived from its sender and sequence number. `full` writes and
//! compares every byte of it for every message. `sample`, the default, writes and compares the
//! header, the body's last word and one window of `WINDOW` bytes whose place rotates with the
//! sequence number, so that over consecutive messages every byte position is checked: a torn,
//! misplaced or stale message is caught at a fraction of the full check's cost. A loan writes and
//! reads every byte whatever `--verify` says (`stamp_as`, `read_whole`): lent memory is written
//! and read by no copy of the library's, so without it a loan would win by leaving memory untouched.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::results::Verify;

/// The smallest message; below `FULL`, the compact form.
pub const SMALLEST: usize = ipcbench_api::SMALLEST_MESSAGE;
const FULL: usize = 16;

pub const WARMUP: u8 = 0;
pub const MEASURED: u8 = 1;

#[inline(always)]
fn check_byte(seq: u64) -> u8 {
    (seq as u8) ^ 0xA5
}

/// The place of a sampled window moves by this many bytes from one message to the next; a
/// cache line.
const WINDOW: usize = 64;

/// `--verify sample` in this process: set once by the role before its loop (`set_verify`); per
/// message a relaxed load of a line nobody writes after that, and a branch that always goes the
/// same way. Unset (full) is what the tests that call the loops in-process check.
static SAMPLED: AtomicBool = AtomicBool::new(false);

/// This process's checking of message bodies, for every message it stamps or reads from now.
pub fn set_verify(verify: Verify) {
    SAMPLED.store(verify == Verify::Sample, Ordering::Relaxed);
}

#[inline(always)]
fn sampled() -> bool {
    SAMPLED.load(Ordering::Relaxed)
}

/// The parts of a body of `len` bytes that message `seq` writes and checks: (start, end) of its
/// window, and the start of its last word (to the body's end). None: the whole body (a body
/// no longer than a window and a word).
#[inline(always)]
fn sample_of(len: usize, seq: u64) -> Option<(usize, usize)> {
    if len <= WINDOW + 8 {
        return None;
    }
    // The last word starts on a word boundary: the body's words are laid from its start.
    let tail = (len - 1) / 8 * 8;
    let windows = tail.div_ceil(WINDOW) as u64;
    let at = ((seq % windows) as usize * WINDOW).min(tail - WINDOW);
    Some((at, tail))
}

/// The pattern's word at byte `at` of a body (a multiple of 8) whose first word is `first`.
#[inline(always)]
fn word_at(first: u64, at: usize) -> u64 {
    first.wrapping_add((at / 8) as u64 * STEP)
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

/// Writes message `seq`'s header, its body (whole, or its sample: `--verify`) and its check
/// byte (the sender's index stays from `init`).
#[inline(always)]
pub fn stamp(buf: &mut [u8], seq: u64, phase: u8) {
    let form = form_of(buf.len());
    stamp_form(buf, seq, phase, form, body_of(form), !sampled());
}

/// Writes every byte of message `seq` of sender `sender` into memory that may hold anything
/// (a loan): its index, then its header and whole body whatever `--verify` says.
#[inline(always)]
pub fn stamp_as(buf: &mut [u8], sender: u32, seq: u64, phase: u8) {
    let form = form_of(buf.len());
    match form {
        Form::Full => buf[8..12].copy_from_slice(&sender.to_le_bytes()),
        Form::Compact => buf[5] = sender as u8,
    }
    stamp_form(buf, seq, phase, form, body_of(form), true);
}

#[inline(always)]
fn stamp_form(buf: &mut [u8], seq: u64, phase: u8, form: Form, body: usize, whole: bool) {
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
        let (b, first) = (&mut buf[body..last], first_word(seq, sender));
        match sample_of(b.len(), seq).filter(|_| !whole) {
            None => fill(b, first),
            Some((at, tail)) => {
                fill(&mut b[at..at + WINDOW], word_at(first, at));
                fill(&mut b[tail..], word_at(first, tail));
            }
        }
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

/// A message's header, once its length, its check byte and its body (every byte, or its sample:
/// `--verify`) are right.
#[inline(always)]
pub fn read(msg: &[u8], expected_len: usize) -> Result<Header, String> {
    let form = form_of(expected_len);
    read_form(msg, expected_len, form, body_of(form), !sampled())
}

/// `read`, comparing every byte of the body whatever `--verify` says (a loan's).
#[inline(always)]
pub fn read_whole(msg: &[u8], expected_len: usize) -> Result<Header, String> {
    let form = form_of(expected_len);
    read_form(msg, expected_len, form, body_of(form), true)
}

#[inline(always)]
fn read_form(
    msg: &[u8],
    expected_len: usize,
    form: Form,
    body: usize,
    whole: bool,
) -> Result<Header, String> {
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
    if body < last {
        let (b, first) = (&msg[body..last], first_word(seq, sender));
        let whole_body = [(0, b.len())];
        let sample;
        let parts: &[(usize, usize)] = match sample_of(b.len(), seq).filter(|_| !whole) {
            None => &whole_body,
            Some((at, tail)) => {
                sample = [(at, at + WINDOW), (tail, b.len())];
                &sample
            }
        };
        // Every part compared, without an early exit: the check costs the same whatever arrived.
        let bad =
            parts.iter().fold(false, |bad, &(from, to)| bad | !intact(&b[from..to], word_at(first, from)));
        if bad {
            return Err(corrupt_body(b, parts, first, seq, sender, body));
        }
    }
    Ok(Header { seq, sender, phase })
}

/// The error of a body whose checked `parts` (ranges of `body`) hold a wrong byte: the first.
#[cold]
fn corrupt_body(
    body: &[u8],
    parts: &[(usize, usize)],
    first: u64,
    seq: u64,
    sender: u32,
    from: usize,
) -> String {
    let at = parts
        .iter()
        .find_map(|&(a, b)| {
            let wrong = first_wrong(&body[a..b], word_at(first, a));
            (wrong < b - a).then_some(a + wrong)
        })
        .unwrap_or(body.len());
    format!(
        "message {seq} from sender {sender} is corrupt: byte {} of its body is not what its sender \
         wrote",
        from + at
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
    stamp_form(buf, seq, phase, Form::Compact, BODY_TIMED, !sampled());
    buf[7..15].copy_from_slice(&due_ns.to_le_bytes());
}

/// A timed message's header and the instant it carries.
#[inline(always)]
pub fn read_timed(msg: &[u8], expected_len: usize) -> Result<(Header, u64), String> {
    if expected_len < FULL {
        return Err(format!("a timed message needs {FULL} bytes, not {expected_len}"));
    }
    let h = read_form(msg, expected_len, Form::Compact, BODY_TIMED, !sampled())?;
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

    /// `--verify sample`, through the functions `stamp` and `read` call with the process's
    /// setting (the setting itself is the process's: tests run side by side in one).
    fn stamp_sampled(buf: &mut [u8], seq: u64) {
        stamp_form(buf, seq, MEASURED, Form::Full, BODY_FULL, false);
    }

    fn read_sampled(msg: &[u8]) -> Result<Header, String> {
        read_form(msg, msg.len(), Form::Full, BODY_FULL, false)
    }

    #[test]
    fn a_sample_covers_every_byte_over_consecutive_messages() {
        for len in [1024, 1000, 4099, 64 << 10] {
            let body = len - 1 - BODY_FULL;
            let windows = ((body - 1) / 8 * 8).div_ceil(WINDOW) as u64;
            // Which body bytes some message of the first `windows` checks: a flipped byte there
            // fails that message's read.
            let mut seen = vec![false; body];
            for seq in 0..windows {
                let mut buf = vec![0u8; len];
                init(&mut buf, 1);
                stamp_sampled(&mut buf, seq);
                assert_eq!(read_sampled(&buf).map(|h| h.seq), Ok(seq), "{len}: message {seq}");
                let (at, tail) = sample_of(body, seq).unwrap();
                for p in (at..at + WINDOW).chain(tail..body) {
                    let mut bad = buf.clone();
                    bad[BODY_FULL + p] ^= 0x40;
                    let e = read_sampled(&bad).unwrap_err();
                    assert!(
                        e.contains(&format!("byte {} of its body", BODY_FULL + p)),
                        "{len} {seq} {p}: {e}"
                    );
                    seen[p] = true;
                }
            }
            assert!(seen.iter().all(|&s| s), "{len}: a byte no message checks");
            // The sampled parts are the full form's bytes: a sampled reader takes a whole
            // message, and a whole reader a sampled message's sample.
            let mut whole = vec![0u8; len];
            init(&mut whole, 1);
            stamp_form(&mut whole, 5, MEASURED, Form::Full, BODY_FULL, true);
            assert_eq!(read_sampled(&whole).map(|h| h.seq), Ok(5));
        }
    }

    #[test]
    fn a_sample_catches_torn_stale_and_misplaced_messages() {
        let len = 1024;
        let message = |sender: u32, seq: u64| {
            let mut buf = vec![0u8; len];
            init(&mut buf, sender);
            stamp_sampled(&mut buf, seq);
            buf
        };
        let this = message(2, 77);
        // Torn: the second half from the message before (its last word always differs).
        let mut torn = this.clone();
        torn[len / 2..len - 1].copy_from_slice(&message(2, 76)[len / 2..len - 1]);
        assert!(read_sampled(&torn).is_err(), "a torn message");
        // Stale: a slot whose header and check byte were written and body was not (the body of
        // the message a ring held there before, written whole).
        let mut stale = vec![0u8; len];
        init(&mut stale, 2);
        stamp_form(&mut stale, 61, MEASURED, Form::Full, BODY_FULL, true);
        stale[..BODY_FULL].copy_from_slice(&this[..BODY_FULL]);
        stale[len - 1] = this[len - 1];
        assert!(read_sampled(&stale).is_err(), "a stale body");
        // Misplaced: the same sequence number's body from another sender.
        let mut other = message(3, 77);
        other[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert!(read_sampled(&other).is_err(), "another sender's body");
        // Small messages are checked whole: their body is no longer than a window and a word.
        assert_eq!(sample_of(WINDOW + 8, 9), None);
        let mut small = vec![0u8; 16];
        init(&mut small, 0);
        stamp_sampled(&mut small, 4);
        small[BODY_FULL] ^= 1;
        assert!(read_sampled(&small).is_err());
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
