//! The floor the harness is held against: two processes making the same `fipc` calls as the
//! harness's FastIPC adapter (stream::create/accept/connect, send, receive_into), with nothing
//! else in the loop: no header, no checks, no histogram.
//!
//!   baseline stream waiting|polling     one-way 16-byte messages for 1 s after 0.3 s
//!   baseline rtt waiting|polling        16-byte round trips for 1 s after 0.3 s
//!
//! As the harness does, a parent process starts the accepting side, then the sender, each a
//! process of its own.
//!
//! It prints one line: the messages (or round trips) per second of the measured second.
//! scripts/bench-overhead.sh runs it alternately with `ipcbench run stream/16B stream-rtt/16B`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fipc::{Error, NO_WAIT};

const SIZE: usize = 16;
const RING: usize = ipcbench_fastipc::STREAM_RING;
const WARMUP: Duration = Duration::from_millis(300);
const WINDOW: Duration = Duration::from_secs(1);

fn receive(conn: &mut fipc::Connection, buf: &mut [u8], timeout: Option<Duration>) -> Option<usize> {
    loop {
        match conn.receive_into(buf, timeout) {
            Ok(n) => return Some(n),
            Err(Error::Timeout) => continue,
            Err(Error::Disconnected) => return None,
            Err(e) => panic!("receive_into: {e}"),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: baseline stream|rtt waiting|polling";
    let (what, mode) = (args.get(1).expect(usage).as_str(), args.get(2).expect(usage).as_str());
    let timeout = match mode {
        "waiting" => None,
        "polling" => NO_WAIT,
        _ => panic!("{usage}"),
    };
    let name = format!("ipcbench-baseline-{}", std::process::id());
    let mut buf = [0u8; SIZE];
    if let Some(at) = args.iter().position(|a| a == "--peer") {
        // The accepting side: receives (and echoes, for rtt) until the other side ends.
        let name = &args[at + 1];
        let mut listener = fipc::stream::create(name, RING).expect("stream::create");
        println!("ready");
        let mut conn = listener.accept(Duration::from_secs(10)).expect("accept");
        while let Some(n) = receive(&mut conn, &mut buf, timeout) {
            if what == "rtt" {
                conn.send(&buf[..n], None).expect("send");
            }
        }
        return;
    }
    let Some(at) = args.iter().position(|a| a == "--sender") else {
        // The parent, as the harness's driver: starts the accepting side, then the sender, each
        // a process of its own, and waits for both.
        let spawn = |role: &str| {
            Command::new(std::env::current_exe().unwrap())
                .args([what, mode, role, &name])
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawning a peer")
        };
        let mut peer = spawn("--peer");
        let mut ready = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(peer.stdout.take().unwrap()), &mut ready)
            .unwrap();
        let sender = spawn("--sender").wait_with_output().expect("the sender ends");
        print!("{}", String::from_utf8_lossy(&sender.stdout));
        peer.wait().expect("the peer ends");
        return;
    };
    let name = &args[at + 1];
    let mut conn = fipc::stream::connect(name, Duration::from_secs(10)).expect("connect");
    let start = Instant::now();
    let (mut count, mut measured_from, mut began) = (0u64, 0u64, None);
    loop {
        // The same clock cadence as the harness's one-way sender; a round trip reads it once.
        if what == "rtt" || count % 32 == 0 {
            let now = Instant::now();
            match began {
                None if now - start >= WARMUP => {
                    began = Some(now);
                    measured_from = count;
                }
                Some(b) if now - b >= WINDOW => {
                    let rate = (count - measured_from) as f64 / (now - b).as_secs_f64();
                    println!("baseline {what} {mode}: {:.3} M/s", rate / 1e6);
                    break;
                }
                _ => {}
            }
        }
        buf[..8].copy_from_slice(&count.to_le_bytes());
        conn.send(&buf, None).expect("send");
        if what == "rtt" {
            receive(&mut conn, &mut buf, timeout).expect("the echo ended");
        }
        count += 1;
    }
}
