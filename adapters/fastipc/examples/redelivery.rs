//! Does FastIPC 1.0.0 itself hand a server a request that was already answered, as the clients
//! leave a service? With `fipc` calls alone (service::create / join / wait_for_members, send,
//! receive_into), no harness code, each round ends a service the way an ipcbench trial does:
//!
//! * server 0 creates the service (`max_clients` 4), joins it as a server and waits for every
//!   member; the other servers and 4 clients join; everybody says "ready", then all get "go";
//! * each client makes `--calls` calls and a few more, one request at a time (its client id and
//!   sequence number in every request; the few more spread the clients' last requests over every
//!   place in their rings, since a harness trial ends wherever its window does), checks that
//!   each reply is its own request's echo, drops its connection, says "done" and waits, its
//!   process alive, for "drain" (as the harness's clients do);
//! * once every client is done, the parent tells the servers "left" then "drain": server 0 drops
//!   the `Service`, which ends it; each server receives until `Disconnected`, echoing every
//!   request, and reports every (client, seq) it took, how often, and any failed reply.
//!
//! Every request of every client was answered before that client left, so a (client, seq) taken
//! twice (by one server or by two), or taken after the clients left, is a redelivery. A reply that
//! fails for a request taken once after the clients left is the expected end (the service ended
//! under it). One that fails for a request taken once before they left is FastIPC's error about a
//! reply it delivered (its client had it: a client checks each reply before its next call). That
//! is what this program found (adapters/fastipc/README.md, "Seen here"): no redelivery, and now
//! and then such a failed reply, which is the failure ipcbench's `service/4c*` trials show.
//!
//! Each round is a fresh service name, in four configurations: 4 clients x 1 server and 4 x 4, with
//! servers and clients waiting (timeout `None`) or polling (`NO_WAIT`), as the adapter does.
//!
//!   cargo run --release -p ipcbench-fastipc --example redelivery -- --rounds 500
//!   options: --rounds N (100), --calls K per client per round (200 waiting, 20 polling: on a
//!            small machine a polling call waits for the scheduler), --size BYTES (16),
//!            --ring BYTES per client (65536, the adapter's; 4096 wraps every 32 requests),
//!            --only 4c1s-waiting,4c4s-polling,... (all four), --seconds S (stop after S seconds,
//!            with the rounds done: a busy machine makes the polling rounds slow)
//!
//! A harness trial's clients make far more calls (past 2^16 each); `--calls 70000` covers that,
//! at seconds a round.
//!
//! It prints, per configuration: rounds, requests, requests taken, duplicates, requests taken
//! after the clients left and failed replies, with the first few examples; exit 0 once all rounds
//! ran (whatever they found), 1 on an error. FastIPC keeps a service in memfds named by abstract
//! sockets: nothing is left in /dev/shm or on disk.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fipc::{Connection, Error, NO_WAIT, ServiceRole};

const CLIENTS: u32 = 4;
/// Each client's ring unless `--ring` says: the adapter's `SERVICE_RING`.
const RING: usize = 1 << 16;
/// How long a join or the owner's wait for the members may take.
const JOIN: Duration = Duration::from_secs(10);
/// A child that is still running after this ends itself: no round hangs the program.
const CHILD_DEADLINE: Duration = Duration::from_secs(60);
/// How many examples of each finding the summary shows.
const EXAMPLES: usize = 5;

type Result<T> = std::result::Result<T, String>;

/// One of the four configurations.
#[derive(Clone, Copy)]
struct Config {
    servers: u32,
    polling: bool,
}

impl Config {
    const ALL: [Config; 4] = [
        Config { servers: 1, polling: false },
        Config { servers: 4, polling: false },
        Config { servers: 1, polling: true },
        Config { servers: 4, polling: true },
    ];

    fn label(self) -> String {
        format!("{CLIENTS}c{}s-{}", self.servers, if self.polling { "polling" } else { "waiting" })
    }

    /// A client's calls per round unless `--calls` says: polling processes outnumber the cores
    /// of a small machine, and each call then waits for the scheduler.
    fn default_calls(self) -> u64 {
        if self.polling { 20 } else { 200 }
    }

    /// The receive timeout, as the adapter's `Endpoint`: `None` waits, `NO_WAIT` polls.
    fn timeout(self) -> Option<Duration> {
        if self.polling { NO_WAIT } else { None }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("--server") => server(&Member::parse(&args[1..])),
        Some("--client") => client(&Member::parse(&args[1..])),
        _ => parent(&args),
    };
    if let Err(e) = outcome {
        eprintln!("redelivery: {e}");
        std::process::exit(1);
    }
}

// === The message: seq (8 bytes LE), client (4 bytes LE), zeros, and a check byte last ===

fn stamp(buf: &mut [u8], client: u32, seq: u64) {
    buf.fill(0);
    buf[..8].copy_from_slice(&seq.to_le_bytes());
    buf[8..12].copy_from_slice(&client.to_le_bytes());
    let last = buf.len() - 1;
    buf[last] = check_byte(client, seq);
}

fn check_byte(client: u32, seq: u64) -> u8 {
    (seq as u8) ^ (client as u8).rotate_left(4) ^ 0xA5
}

/// (client, seq) of a request, or why it is not one of ours.
fn read(msg: &[u8], size: usize) -> Result<(u32, u64)> {
    if msg.len() != size {
        return Err(format!("{} bytes where every request has {size}", msg.len()));
    }
    let seq = u64::from_le_bytes(msg[..8].try_into().unwrap());
    let client = u32::from_le_bytes(msg[8..12].try_into().unwrap());
    if msg[size - 1] != check_byte(client, seq) {
        return Err(format!("a bad check byte (first bytes {:02x?})", &msg[..12]));
    }
    Ok((client, seq))
}

// === The children ===

/// A child's command line: `--server|--client NAME INDEX SERVERS CALLS SIZE RING waiting|polling`
/// (a client's CALLS: its own; a server's: the most any client makes).
struct Member {
    name: String,
    index: u32,
    config: Config,
    calls: u64,
    size: usize,
    ring: usize,
}

impl Member {
    fn args(&self) -> Vec<String> {
        let mode = if self.config.polling { "polling" } else { "waiting" };
        vec![
            self.name.clone(),
            self.index.to_string(),
            self.config.servers.to_string(),
            self.calls.to_string(),
            self.size.to_string(),
            self.ring.to_string(),
            mode.into(),
        ]
    }

    fn parse(args: &[String]) -> Member {
        let bad = || -> ! {
            eprintln!("redelivery: a child's arguments, not {args:?}");
            std::process::exit(2)
        };
        let [name, index, servers, calls, size, ring, mode] = args else { bad() };
        let polling = match mode.as_str() {
            "waiting" => false,
            "polling" => true,
            _ => bad(),
        };
        let number = |s: &str| s.parse::<u64>().unwrap_or_else(|_| bad());
        Member {
            name: name.clone(),
            index: number(index) as u32,
            config: Config { servers: number(servers) as u32, polling },
            calls: number(calls),
            size: number(size) as usize,
            ring: number(ring) as usize,
        }
    }
}

/// One line to the parent, at once.
fn say(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).map_err(|e| format!("telling the parent: {e}"))
}

/// The next line from the parent, trimmed ("" at its end).
fn hear() -> String {
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    line.trim().to_string()
}

/// A child that outlives its round ends itself, so that a hang shows as an error, not a stall.
fn watchdog(what: String) {
    std::thread::spawn(move || {
        std::thread::sleep(CHILD_DEADLINE);
        eprintln!("redelivery: {what} still running after {CHILD_DEADLINE:?}: ending itself");
        std::process::exit(3);
    });
}

/// A client: `calls` calls, each reply checked, then it leaves; its process stays until "drain".
fn client(me: &Member) -> Result<()> {
    watchdog(format!("client {} of {}", me.index, me.name));
    let mut conn = fipc::service::join(&me.name, ServiceRole::Client, JOIN)
        .map_err(|e| format!("client {}: service::join({}): {e}", me.index, me.name))?;
    say("ready")?;
    if hear() != "go" {
        return Err(format!("client {}: no \"go\"", me.index));
    }
    let (mut request, mut reply) = (vec![0u8; me.size], vec![0u8; me.size]);
    for seq in 0..me.calls {
        stamp(&mut request, me.index, seq);
        conn.send(&request, fipc::FOREVER)
            .map_err(|e| format!("client {}: sending request {seq}: {e}", me.index))?;
        let n = receive(&mut conn, &mut reply, me.config.timeout())
            .map_err(|e| format!("client {}: the reply to request {seq}: {e}", me.index))?;
        if reply[..n] != request[..] {
            let got =
                read(&reply[..n], me.size).map_or_else(|e| e, |(c, s)| format!("request {s} of client {c}"));
            return Err(format!("client {}: request {seq} got the reply to {got}", me.index));
        }
    }
    // Leaves with every request answered: nothing of it is pending anywhere.
    drop(conn);
    say(&format!("done {}", me.calls))?;
    while !matches!(hear().as_str(), "drain" | "") {}
    Ok(())
}

/// One message into `buf`, waiting or polling; `Timeout` only ends a poll.
fn receive(conn: &mut Connection, buf: &mut [u8], timeout: Option<Duration>) -> fipc::Result<usize> {
    loop {
        match conn.receive_into(buf, timeout) {
            Err(Error::Timeout) => continue,
            other => return other,
        }
    }
}

/// A server: echoes every request until the service ends, and reports what it took.
fn server(me: &Member) -> Result<()> {
    watchdog(format!("server {} of {}", me.index, me.name));
    let (clients, servers) = (CLIENTS, me.config.servers);
    // Server 0 owns the service, as the adapter's server 0 does.
    let owner = match me.index {
        0 => Some(
            fipc::service::create(&me.name, me.ring, me.size, clients, servers)
                .map_err(|e| format!("service::create({}): {e}", me.name))?,
        ),
        _ => None,
    };
    let mut conn = fipc::service::join(&me.name, ServiceRole::Server, JOIN)
        .map_err(|e| format!("server {}: service::join({}): {e}", me.index, me.name))?;
    if let Some(service) = &owner {
        service
            .wait_for_members(None, clients + servers, JOIN)
            .map_err(|e| format!("waiting for {clients} clients and {servers} servers: {e}"))?;
    }
    say("ready")?;
    if hear() != "go" {
        return Err(format!("server {}: no \"go\"", me.index));
    }
    // "left": every client has dropped its connection; "drain": the owner ends the service.
    let left = Arc::new(AtomicBool::new(false));
    let control = {
        let left = left.clone();
        std::thread::spawn(move || {
            loop {
                match hear().as_str() {
                    "left" => left.store(true, Ordering::Release),
                    "drain" | "" => break,
                    _ => {}
                }
            }
            left.store(true, Ordering::Release);
            drop(owner);
        })
    };

    // How often each (client, seq) was taken; what else happened, one report line each.
    let mut taken = vec![vec![0u32; me.calls as usize]; clients as usize];
    let mut lines = Vec::new();
    let mut buf = vec![0u8; me.size];
    let mut total = 0u64;
    let end = loop {
        // As the harness does: a receive that says "a message" without writing one shows.
        buf[..8].fill(0xEE);
        let n = match conn.receive_into(&mut buf, me.config.timeout()) {
            Ok(n) => n,
            Err(Error::Timeout) => continue,
            Err(e) => break e,
        };
        let after_left = left.load(Ordering::Acquire);
        total += 1;
        let request = match read(&buf[..n], me.size) {
            Ok((c, s)) if c < clients && s < me.calls => Some((c, s)),
            Ok((c, s)) => {
                lines.push(format!("odd request {s} of client {c}, which never sent it"));
                None
            }
            Err(e) => {
                lines.push(format!("odd {e}"));
                None
            }
        };
        if let Some((c, s)) = request {
            let times = &mut taken[c as usize][s as usize];
            *times += 1;
            if *times > 1 {
                lines.push(format!("again {c} {s} {times} {after_left}"));
            }
            if after_left {
                lines.push(format!("late {c} {s}"));
            }
        }
        // The reply: the request's echo, as the harness's server sends it.
        if let Err(e) = conn.send(&buf[..n], fipc::FOREVER) {
            let (c, s) = request.map_or((u32::MAX, u64::MAX), |r| r);
            lines.push(format!("replyfail {c} {s} {after_left} {}", e.name()));
        }
    };
    if end != Error::Disconnected {
        return Err(format!("server {}: receive_into: {end}", me.index));
    }
    drop(conn);
    control.join().map_err(|_| "the control thread panicked".to_string())?;
    // Which requests it took, a bitmap per client (the parent adds the servers' up).
    for (c, times) in taken.iter().enumerate() {
        let mut bits = vec![0u8; times.len().div_ceil(8)];
        for (s, &t) in times.iter().enumerate() {
            if t > 0 {
                bits[s / 8] |= 1 << (s % 8);
            }
        }
        let hex: String = bits.iter().map(|b| format!("{b:02x}")).collect();
        lines.push(format!("took {c} {hex}"));
    }
    lines.push(format!("total {total}"));
    say(&lines.join("\n"))
}

// === The parent ===

/// What one configuration's rounds found.
#[derive(Default)]
struct Tally {
    rounds: u64,
    requests: u64,
    taken: u64,
    /// (client, seq) taken more than once (by one server or by several): the extra takes.
    duplicates: u64,
    /// Requests a server took after every client had left.
    late: u64,
    /// Failed replies to a request taken twice: a redelivery's reply.
    failed_redelivered: u64,
    /// Failed replies to a request taken once: the service ended under the reply.
    failed_single: u64,
    /// Of those, the ones taken before the clients left: the client had its reply (it checks
    /// each one before its next call), so the reply arrived though `send` said it failed.
    failed_but_delivered: u64,
    odd: u64,
    examples: Vec<String>,
    seconds: f64,
}

impl Tally {
    fn example(&mut self, what: String) {
        if self.examples.len() < EXAMPLES {
            self.examples.push(what);
        }
    }
}

/// What every round of a run asks of its clients.
struct Shape {
    calls: u64,
    /// Each client's calls beyond `calls`.
    extra: Vec<u64>,
    size: usize,
    ring: usize,
}

struct Kid {
    what: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Kid {
    fn line(&mut self) -> Result<String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) => Err(format!("{} ended without a word (its error is above)", self.what)),
            Ok(_) => Ok(line.trim().to_string()),
            Err(e) => Err(format!("reading {}: {e}", self.what)),
        }
    }

    fn tell(&mut self, line: &str) -> Result<()> {
        let stdin = self.stdin.as_mut().ok_or_else(|| format!("{}: input closed", self.what))?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("telling {}: {e}", self.what))
    }
}

fn parent(args: &[String]) -> Result<()> {
    let usage = "usage: redelivery [--rounds N] [--calls K] [--size BYTES] [--ring BYTES] [--only 4c1s-waiting,...] \
         [--seconds S]";
    let (mut seconds, mut ring) = (None, RING);
    let (mut rounds, mut calls, mut size, mut configs) = (100u64, None, 16usize, Config::ALL.to_vec());
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} without a value; {usage}"))?;
        let number = || value.parse::<u64>().map_err(|_| format!("{flag} {value}: not a number; {usage}"));
        match flag.as_str() {
            "--rounds" => rounds = number()?,
            "--calls" => calls = Some(number()?.max(1)),
            "--size" => size = number()? as usize,
            "--ring" => ring = number()? as usize,
            "--seconds" => seconds = Some(Duration::from_secs(number()?)),
            "--only" => {
                configs = value
                    .split(',')
                    .map(|l| {
                        Config::ALL.into_iter().find(|c| c.label() == l).ok_or_else(|| format!("--only {l}?"))
                    })
                    .collect::<Result<_>>()?
            }
            _ => return Err(usage.into()),
        }
    }
    if !ring.is_power_of_two() || !(4096..=1 << 31).contains(&ring) {
        return Err(format!("--ring {ring}: a power of two from 4096 to 2^31"));
    }
    if !(16..=ring / 4).contains(&size) {
        return Err(format!("--size {size}: 16 to {} bytes", ring / 4));
    }
    // A request holds round64(its size) + round64(max_message) bytes of its client's ring.
    let lap = (ring / (size.next_multiple_of(64) * 2)) as u64;
    let exe = std::env::current_exe().map_err(|e| format!("finding this program: {e}"))?;
    println!(
        "FastIPC service: {rounds} rounds of {} configurations, {CLIENTS} clients x {} calls (and 0 to \
         {} more) of {size} B, rings of {ring} B",
        configs.len(),
        calls.map_or("200 (waiting) or 20 (polling)".to_string(), |k| k.to_string()),
        lap - 1
    );
    let mut tallies: Vec<Tally> = configs.iter().map(|_| Tally::default()).collect();
    let began = Instant::now();
    for round in 0..rounds {
        if seconds.is_some_and(|s| began.elapsed() >= s) {
            eprintln!("redelivery: --seconds reached after {round} rounds");
            break;
        }
        if round > 0 && round % 50 == 0 {
            let found: u64 = tallies.iter().map(|t| t.duplicates + t.odd).sum();
            eprintln!(
                "redelivery: {round} rounds, {found} redeliveries so far ({:.0} s)",
                began.elapsed().as_secs_f64()
            );
        }
        // The configurations take turns, so that each sees the machine as the others do.
        for (config, tally) in configs.iter().zip(&mut tallies) {
            let started = Instant::now();
            let calls = calls.unwrap_or(config.default_calls());
            // Client i makes `calls + extra[i]` calls: its last request lands anywhere in its ring.
            let extra: Vec<u64> = (0..u64::from(CLIENTS)).map(|i| (round * 37 + i * 11) % lap).collect();
            let shape = Shape { calls, extra, size, ring };
            let outcome = one_round(&exe, *config, round, &shape, tally);
            tally.seconds += started.elapsed().as_secs_f64();
            outcome.map_err(|e| format!("round {round}, {}: {e}", config.label()))?;
        }
    }
    for (config, t) in configs.iter().zip(&tallies) {
        println!(
            "{}: {} rounds, {} requests, {} taken by the servers, {} duplicates, {} taken after the \
             clients left, failed replies: {} to a redelivered request, {} to a request taken once; \
             {} odd ({:.1} s)",
            config.label(),
            t.rounds,
            t.requests,
            t.taken,
            t.duplicates,
            t.late,
            t.failed_redelivered,
            t.failed_single,
            t.odd,
            t.seconds
        );
        for e in &t.examples {
            println!("    {e}");
        }
    }
    // A request taken after the clients left is an extra take too: the duplicates count it.
    let redelivered: u64 = tallies.iter().map(|t| t.duplicates + t.odd).sum();
    println!(
        "{}",
        if redelivered == 0 {
            "no request was delivered twice or after its client left".to_string()
        } else {
            format!("{redelivered} redeliveries: FastIPC handed a server requests already answered")
        }
    );
    let spurious: u64 = tallies.iter().map(|t| t.failed_but_delivered).sum();
    if spurious > 0 {
        println!(
            "{spurious} replies arrived though the server's send returned an error while the service was \
             alive: FastIPC's doing (what ipcbench's servers stop on)"
        );
    }
    Ok(())
}

/// One service, its servers and clients, ended as a harness trial ends; adds what it found to `tally`.
fn one_round(
    exe: &std::path::Path,
    config: Config,
    round: u64,
    shape: &Shape,
    tally: &mut Tally,
) -> Result<()> {
    let Shape { size, ring, .. } = *shape;
    let own = |client: u32| shape.calls + shape.extra[client as usize];
    let most = (0..CLIENTS).map(own).max().unwrap_or(0);
    let name = format!("ipcbench-redelivery-{}-r{round}-{}", std::process::id(), config.label());
    let spawn = |role: &str, index: u32| -> Result<Kid> {
        let calls = if role == "--client" { own(index) } else { most };
        let args = Member { name: name.clone(), index, config, calls, size, ring }.args();
        let mut child = Command::new(exe)
            .arg(role)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting a {role}: {e}"))?;
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let what = format!("{} {index}", role.trim_start_matches("--"));
        Ok(Kid { what, stdin: child.stdin.take(), stdout, child })
    };
    let mut servers = Vec::new();
    let mut clients = Vec::new();
    let outcome = (|| {
        for i in 0..config.servers {
            servers.push(spawn("--server", i)?);
        }
        for i in 0..CLIENTS {
            clients.push(spawn("--client", i)?);
        }
        for kid in servers.iter_mut().chain(&mut clients) {
            match kid.line()?.as_str() {
                "ready" => {}
                other => return Err(format!("{} said {other:?}, not \"ready\"", kid.what)),
            }
        }
        for kid in servers.iter_mut().chain(&mut clients) {
            kid.tell("go")?;
        }
        // Every client "done": its connection dropped, every one of its requests answered.
        for (i, kid) in clients.iter_mut().enumerate() {
            let line = kid.line()?;
            if line != format!("done {}", own(i as u32)) {
                return Err(format!("{} said {line:?}", kid.what));
            }
        }
        // Then the harness's "drain": the owner ends the service.
        for kid in servers.iter_mut().chain(&mut clients) {
            if kid.what.starts_with("server") {
                kid.tell("left")?;
            }
            kid.tell("drain")?;
            kid.stdin.take();
        }
        let mut taken = vec![vec![0u32; most as usize]; CLIENTS as usize];
        let mut failed = Vec::new();
        for kid in &mut servers {
            let mut report = String::new();
            std::io::Read::read_to_string(&mut kid.stdout, &mut report)
                .map_err(|e| format!("reading {}: {e}", kid.what))?;
            if !report.lines().any(|l| l.starts_with("total ")) {
                return Err(format!("{} ended without its report (its error is above)", kid.what));
            }
            for line in report.lines() {
                let words: Vec<&str> = line.split(' ').collect();
                match words[..] {
                    ["took", c, hex] => {
                        let row = &mut taken[c.parse::<usize>().unwrap()];
                        for (s, times) in row.iter_mut().enumerate() {
                            let byte = u8::from_str_radix(&hex[s / 8 * 2..s / 8 * 2 + 2], 16).unwrap();
                            *times += u32::from(byte >> (s % 8) & 1);
                        }
                    }
                    // Taken `n` times by this server: the bitmap counted one.
                    ["again", c, s, _, late] => {
                        taken[c.parse::<usize>().unwrap()][s.parse::<usize>().unwrap()] += 1;
                        tally.example(format!(
                            "round {round}: {} took request {s} of client {c} again{}",
                            kid.what,
                            if late == "true" { ", after the clients left" } else { "" }
                        ));
                    }
                    ["late", c, s] => {
                        tally.late += 1;
                        tally.example(format!(
                            "round {round}: {} took request {s} of client {c} after the clients left",
                            kid.what
                        ));
                    }
                    ["replyfail", c, s, late, error] => failed.push((
                        kid.what.clone(),
                        c.to_string(),
                        s.to_string(),
                        late == "true",
                        error.to_string(),
                    )),
                    ["total", n] => tally.taken += n.parse::<u64>().unwrap(),
                    _ if line.starts_with("odd ") => {
                        tally.odd += 1;
                        tally.example(format!("round {round}: {} took an {line}", kid.what));
                    }
                    _ => return Err(format!("{} said {line:?}", kid.what)),
                }
            }
        }
        for (c, row) in taken.iter().enumerate() {
            for (s, &times) in row.iter().enumerate() {
                match times {
                    _ if s as u64 >= own(c as u32) && times > 0 => {
                        tally.odd += u64::from(times);
                        tally.example(format!("round {round}: request {s} of client {c}, never sent, taken"));
                    }
                    _ if s as u64 >= own(c as u32) => {}
                    0 => return Err(format!("request {s} of client {c} was answered but no server took it")),
                    1 => {}
                    n => {
                        tally.duplicates += u64::from(n - 1);
                        tally.example(format!("round {round}: request {s} of client {c} taken {n} times"));
                    }
                }
            }
        }
        for (server, c, s, late, error) in failed {
            let twice = matches!((c.parse::<usize>(), s.parse::<usize>()), (Ok(c), Ok(s)) if taken[c][s] > 1);
            if twice {
                tally.failed_redelivered += 1;
            } else {
                tally.failed_single += 1;
                tally.failed_but_delivered += u64::from(!late);
            }
            tally.example(format!(
                "round {round}: {server}'s reply to request {s} of client {c} failed with {error} ({}{})",
                if twice { "a redelivered request" } else { "taken once" },
                match (late, twice) {
                    (true, _) => ", taken after the clients left",
                    (false, false) => ", before the clients left: its client had this reply, so it arrived",
                    (false, true) => "",
                }
            ));
        }
        for kid in servers.iter_mut().chain(&mut clients) {
            let status = kid.child.wait().map_err(|e| format!("waiting for {}: {e}", kid.what))?;
            if !status.success() {
                return Err(format!("{} ended with {status}", kid.what));
            }
        }
        tally.rounds += 1;
        tally.requests += (0..CLIENTS).map(own).sum::<u64>();
        Ok(())
    })();
    if outcome.is_err() {
        // Ends this round's children (by their own handles) so that none outlives the program.
        for kid in servers.iter_mut().chain(&mut clients) {
            let _ = kid.child.kill();
            let _ = kid.child.wait();
        }
    }
    outcome
}
