//! A work queue's proof of delivery: each consumer marks, per producer, every sequence number it
//! took in a bitmap (a number taken twice by one consumer fails at once); the driver then checks
//! that no number was taken by two consumers and that together they took exactly 0..sent of each
//! producer.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

/// Room for this many sequence numbers per producer before a bitmap grows. The memory comes
/// zeroed and untouched from the OS, so only what a run uses is ever paged in.
const INITIAL_BITS: usize = 1 << 26;

pub struct Taken {
    producers: Vec<Vec<u64>>,
}

impl Taken {
    pub fn new(producers: usize) -> Taken {
        Taken { producers: (0..producers).map(|_| vec![0u64; INITIAL_BITS / 64]).collect() }
    }

    /// Marks `seq` of `producer` as taken; an error if it was already.
    #[inline(always)]
    pub fn mark(&mut self, producer: u32, seq: u64) -> Result<(), String> {
        let count = self.producers.len();
        let Some(words) = self.producers.get_mut(producer as usize) else {
            return Err(format!("message {seq} names producer {producer}, of {count}"));
        };
        let word = (seq / 64) as usize;
        if word >= words.len() {
            // Rare: doubles, so a run grows it a handful of times at most.
            words.resize((word + 1).next_power_of_two(), 0);
        }
        let bit = 1u64 << (seq % 64);
        if words[word] & bit != 0 {
            return Err(format!("message {seq} of producer {producer} arrived twice at this consumer"));
        }
        words[word] |= bit;
        Ok(())
    }

    /// Writes the bitmaps, without their trailing zero words.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.producers.len() as u64).to_le_bytes());
        for words in &self.producers {
            let used = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
            out.extend_from_slice(&(used as u64).to_le_bytes());
            for w in &words[..used] {
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
        std::fs::File::create(path)
            .and_then(|mut f| f.write_all(&out))
            .with_context(|| format!("writing {}", path.display()))
    }

    pub fn load(path: &Path) -> Result<Taken> {
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .with_context(|| format!("reading {}", path.display()))?;
        let mut words = bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap()));
        let mut next = || words.next().with_context(|| format!("{} is cut short", path.display()));
        let producers = next()? as usize;
        let mut taken = Taken { producers: Vec::with_capacity(producers) };
        for _ in 0..producers {
            let used = next()? as usize;
            let mut v = Vec::with_capacity(used);
            for _ in 0..used {
                v.push(next()?);
            }
            taken.producers.push(v);
        }
        Ok(taken)
    }
}

/// Proves that the consumers together took each of `sent[p]` messages of producer `p` exactly
/// once; else says which message went wrong.
pub fn prove(consumers: &[Taken], sent: &[u64]) -> Result<()> {
    for (p, &n) in sent.iter().enumerate() {
        let words = (n as usize).div_ceil(64);
        let mut union = vec![0u64; words];
        for (c, taken) in consumers.iter().enumerate() {
            let Some(mine) = taken.producers.get(p) else {
                bail!("consumer {c} has no record of producer {p}")
            };
            for (i, &w) in mine.iter().enumerate().filter(|(_, w)| **w != 0) {
                let Some(u) = union.get_mut(i) else {
                    let seq = i as u64 * 64 + w.trailing_zeros() as u64;
                    bail!("producer {p} sent {n} messages, yet consumer {c} took message {seq}");
                };
                if *u & w != 0 {
                    let seq = i as u64 * 64 + (*u & w).trailing_zeros() as u64;
                    bail!("message {seq} of producer {p} reached two consumers");
                }
                *u |= w;
            }
        }
        for (i, &u) in union.iter().enumerate() {
            let want = if (i + 1) * 64 <= n as usize { u64::MAX } else { (1u64 << (n % 64)) - 1 };
            if u != want {
                let seq = i as u64 * 64 + (!u & want).trailing_zeros() as u64;
                bail!("message {seq} of producer {p} reached no consumer (of {n} sent)");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taking(producers: usize, marks: &[(u32, u64)]) -> Taken {
        let mut t = Taken::new(producers);
        for &(p, s) in marks {
            t.mark(p, s).unwrap();
        }
        t
    }

    #[test]
    fn every_message_once_is_proved() {
        let a = taking(2, &[(0, 0), (0, 2), (1, 1)]);
        let b = taking(2, &[(0, 1), (1, 0), (1, 2), (1, 3)]);
        prove(&[a, b], &[3, 4]).unwrap();
    }

    #[test]
    fn a_loss_a_duplicate_and_a_stray_are_named() {
        let lost = prove(&[taking(1, &[(0, 0), (0, 2)])], &[3]).unwrap_err().to_string();
        assert!(lost.contains("message 1 of producer 0 reached no consumer"), "{lost}");
        let twice = prove(&[taking(1, &[(0, 0), (0, 1)]), taking(1, &[(0, 1), (0, 2)])], &[3])
            .unwrap_err()
            .to_string();
        assert!(twice.contains("message 1 of producer 0 reached two consumers"), "{twice}");
        let stray = prove(&[taking(1, &[(0, 0), (0, 70)])], &[1]).unwrap_err().to_string();
        assert!(stray.contains("took message 70"), "{stray}");
        let mut t = Taken::new(1);
        t.mark(0, 5).unwrap();
        assert!(t.mark(0, 5).unwrap_err().contains("twice"));
        assert!(t.mark(3, 0).unwrap_err().contains("producer 3"));
    }

    #[test]
    fn bitmaps_survive_the_file_and_grow_past_their_first_room() {
        let dir = std::env::temp_dir().join(format!("ipcbench-taken-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut t = Taken::new(2);
        let far = INITIAL_BITS as u64 + 5;
        for s in [0, 63, 64, far] {
            t.mark(1, s).unwrap();
        }
        t.save(&dir.join("c0")).unwrap();
        let back = Taken::load(&dir.join("c0")).unwrap();
        assert_eq!(back.producers[0], Vec::<u64>::new());
        assert_eq!(back.producers[1].len(), (far / 64 + 1) as usize);
        assert!(prove(&[back], &[0, far + 1]).unwrap_err().to_string().contains("message 1 of producer 1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
