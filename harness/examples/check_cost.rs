//! What the payload check costs a message, with nothing else around it: the harness's own
//! `message::stamp` (a sender's write of a message into its buffer) and `message::read` (a
//! receiver's check of it), in one process, on a buffer in the cache, for `--verify full` and
//! `--verify sample`, at 16 B, 1 KiB and 64 KiB. A round trip's client pays one of each per round
//! trip (the echo returns the request unread); a stream pays the stamp on one core and the read
//! on the other. `scripts/bench-verify.sh` holds these against the control's figures.
//!
//! `check_cost` prints, per size and mode, the nanoseconds of a stamp and of a read (the median of
//! 11 batches).

use std::hint::black_box;
use std::time::Instant;

use ipcbench::results::Verify;
use ipcbench::role::message::{self, MEASURED};

/// Messages per batch: enough that a batch lasts milliseconds at 64 KiB.
const BATCH: u64 = 20_000;
const BATCHES: usize = 11;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    for size in [16usize, 1024, 64 << 10] {
        for verify in [Verify::Full, Verify::Sample] {
            message::set_verify(verify);
            let mut buf = vec![0u8; size];
            message::init(&mut buf, 1);
            let mut seq = 0u64;
            let (mut stamps, mut reads) = (Vec::new(), Vec::new());
            for _ in 0..BATCHES {
                let t = Instant::now();
                for _ in 0..BATCH {
                    message::stamp(black_box(&mut buf), seq, MEASURED);
                    seq += 1;
                }
                stamps.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
                // Reads of the last message stamped, the sequence number varying the window as
                // a receiver's would not: the cost of one read is the same whichever it checks.
                let t = Instant::now();
                for _ in 0..BATCH {
                    let h = message::read(black_box(&buf), size).expect("a whole message");
                    black_box(h);
                }
                reads.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
            }
            println!(
                "{size} B --verify {}: stamp {:.1} ns, read {:.1} ns",
                verify.as_str(),
                median(stamps),
                median(reads)
            );
        }
    }
}
