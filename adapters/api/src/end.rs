//! The end of a channel, for libraries whose close does not tell a receiver that its sender is
//! done, or may drop what is still queued (message-queue libraries: ZeroMQ, NNG). A sender ends
//! by sending [`marker`]s until its receivers have closed; a message shorter than any data
//! message (at least 8 bytes) is a marker, and a receiver is done when [`Ends`] has seen one
//! from each of its senders. Every message a sender sent before its marker arrives before it:
//! these libraries keep order per connection.

use crate::{Result, bail};

const TAG: [u8; 3] = *b"END";

/// The marker of sender `index`: 7 bytes, "END" and the index; shorter than the smallest
/// data message (8 bytes).
pub fn marker(index: usize) -> [u8; 7] {
    let mut m = [0u8; 7];
    m[..3].copy_from_slice(&TAG);
    m[3..].copy_from_slice(&(index as u32).to_le_bytes());
    m
}

/// Whether a message of `len` bytes is a marker rather than data.
#[inline(always)]
pub fn is_marker(len: usize) -> bool {
    len < super::SMALLEST_MESSAGE
}

/// The senders a receiver has seen end.
#[derive(Debug)]
pub struct Ends {
    seen: Vec<bool>,
    left: usize,
}

impl Ends {
    pub fn new(senders: usize) -> Ends {
        Ends { seen: vec![false; senders], left: senders }
    }

    /// Takes a marker; true once every sender has ended. A sender may repeat its marker.
    #[cold]
    pub fn see(&mut self, message: &[u8]) -> Result<bool> {
        let index = match message {
            [a, b, c, i @ ..] if [*a, *b, *c] == TAG && i.len() == 4 => {
                u32::from_le_bytes([i[0], i[1], i[2], i[3]]) as usize
            }
            _ => bail!(
                "a message of {} bytes arrived: shorter than any data message, and not an end marker",
                message.len()
            ),
        };
        let Some(seen) = self.seen.get_mut(index) else {
            bail!("an end marker from sender {index}, but this channel has {} senders", self.seen.len())
        };
        if !*seen {
            *seen = true;
            self.left -= 1;
        }
        Ok(self.left == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sender_must_end_once_or_more() {
        let mut ends = Ends::new(2);
        assert!(!ends.see(&marker(1)).unwrap());
        assert!(!ends.see(&marker(1)).unwrap(), "a repeated marker is not a second sender");
        assert!(ends.see(&marker(0)).unwrap());
        assert!(is_marker(marker(0).len()) && !is_marker(8));
    }

    #[test]
    fn anything_else_short_is_an_error() {
        let mut ends = Ends::new(2);
        let e = ends.see(&marker(2)).unwrap_err().to_string();
        assert!(e.contains("sender 2") && e.contains("2 senders"), "{e}");
        let e = ends.see(b"hello").unwrap_err().to_string();
        assert!(e.contains("5 bytes") && e.contains("not an end marker"), "{e}");
    }
}
