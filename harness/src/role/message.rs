//! What every message carries, and the one clock every process reads.
//!
//! Layout (little endian): bytes 0..8 the sequence number, 8..12 the sender's index, 12 the
//! phase (warm-up or measured), and the last byte a check derived from the sequence number, so
//! a receiver sees that the whole message, to its end, arrived. Messages of 8 to 15 bytes (the
//! small end of a size sweep) carry the compact form: bytes 0..5 the sequence number's low 40
//! bits (a trillion messages), 5 the sender's index, 6 the phase, and the check byte last.

/// The smallest message; below `FULL`, the compact form.
pub const SMALLEST: usize = ipcbench_api::SMALLEST_MESSAGE;
const FULL: usize = 16;

pub const WARMUP: u8 = 0;
pub const MEASURED: u8 = 1;

#[inline(always)]
fn check_byte(seq: u64) -> u8 {
    (seq as u8) ^ 0xA5
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

#[inline(always)]
pub fn stamp(buf: &mut [u8], seq: u64, phase: u8) {
    stamp_form(buf, seq, phase, form_of(buf.len()));
}

#[inline(always)]
fn stamp_form(buf: &mut [u8], seq: u64, phase: u8, form: Form) {
    match form {
        Form::Full => {
            buf[..8].copy_from_slice(&seq.to_le_bytes());
            buf[12] = phase;
        }
        Form::Compact => {
            buf[..5].copy_from_slice(&seq.to_le_bytes()[..5]);
            buf[6] = phase;
        }
    }
    let last = buf.len() - 1;
    buf[last] = check_byte(seq);
}

/// A received message's header, once its length and check byte are right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub seq: u64,
    pub sender: u32,
    pub phase: u8,
}

#[inline(always)]
pub fn read(msg: &[u8], expected_len: usize) -> Result<Header, String> {
    read_form(msg, expected_len, form_of(expected_len))
}

#[inline(always)]
fn read_form(msg: &[u8], expected_len: usize, form: Form) -> Result<Header, String> {
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
    if msg[expected_len - 1] != check_byte(seq) || phase > MEASURED {
        return Err(format!("message {seq} from sender {sender} is corrupt (phase or last byte wrong)"));
    }
    Ok(Header { seq, sender, phase })
}

/// A timed message (a latency case's, `matrix::TIMED_SMALLEST` bytes or more): the compact
/// header, and at bytes 7..15 the instant (`now_ns`) it was due, or its sender opened its
/// endpoint.
pub fn init_timed(buf: &mut [u8], sender: u32) {
    init_form(buf, sender, Form::Compact);
}

#[inline(always)]
pub fn stamp_timed(buf: &mut [u8], seq: u64, phase: u8, due_ns: u64) {
    stamp_form(buf, seq, phase, Form::Compact);
    buf[7..15].copy_from_slice(&due_ns.to_le_bytes());
}

/// A timed message's header and the instant it carries.
#[inline(always)]
pub fn read_timed(msg: &[u8], expected_len: usize) -> Result<(Header, u64), String> {
    if expected_len < FULL {
        return Err(format!("a timed message needs {FULL} bytes, not {expected_len}"));
    }
    let h = read_form(msg, expected_len, Form::Compact)?;
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
    fn damage_is_seen() {
        let mut buf = vec![0u8; 64];
        init(&mut buf, 0);
        stamp(&mut buf, 9, MEASURED);
        assert!(read(&buf[..32], 64).is_err(), "a short message");
        buf[63] ^= 1;
        assert!(read(&buf, 64).is_err(), "a changed last byte");
    }
}
