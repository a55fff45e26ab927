//! The processes of one trial: how each is started (the same binary, `child`, dying with the
//! driver), how its output reaches the driver, and the guard that leaves none of them behind.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::INTERRUPTED;
use crate::matrix::Role;
use crate::results::RoleReport;
use crate::role::ChildArgs;

/// How much of a failed child's standard error goes into the reason.
const STDERR_TAIL: usize = 1500;

/// The most of a child's standard error kept (its end): a child that writes without end costs
/// the driver this much memory, not more.
const STDERR_KEPT: usize = 64 << 10;

/// The longest line a child may write: a report with its histograms is well under 1 MiB.
const LONGEST_LINE: u64 = 16 << 20;

/// The end of a child's standard error, and how much before it was cut.
#[derive(Default)]
struct Kept {
    bytes: Vec<u8>,
    cut: u64,
}

impl Kept {
    fn push(&mut self, more: &[u8]) {
        self.bytes.extend_from_slice(more);
        if self.bytes.len() > 2 * STDERR_KEPT {
            let over = self.bytes.len() - STDERR_KEPT;
            self.bytes.drain(..over);
            self.cut += over as u64;
        }
    }
}

/// What a child said or did, as the driver's event loop sees it: child `i`'s line, or the end
/// of its output.
pub enum Event {
    Line(usize, String),
    End(usize),
}

/// The children of one trial; whatever happens, none outlives it.
pub struct Children {
    pub procs: Vec<Proc>,
}

pub struct Proc {
    pub role: Role,
    pub index: usize,
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    stderr: Arc<Mutex<Kept>>,
    pub ready: bool,
    pub report: Option<RoleReport>,
}

impl Proc {
    /// Starts the child these arguments describe as child `i` of its trial, with threads that
    /// pass its output lines to `events` and keep its standard error. The error says which
    /// role could not start.
    pub fn start(
        exe: &Path,
        args: &ChildArgs,
        i: usize,
        events: mpsc::Sender<Event>,
        verbose: bool,
    ) -> Result<Proc, String> {
        let mut cmd = Command::new(exe);
        // A library's temporary files (ipc-channel's rendezvous socket, for one) go in the
        // trial's directory, which the driver removes whatever becomes of the child.
        cmd.arg("child")
            .args(args.to_args())
            .env("TMPDIR", &args.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: prctl and getppid are async-signal-safe. A child dies with the driver, even
        // a killed one; a driver that died before the prctl took effect is seen by getppid.
        let driver = std::process::id() as libc::pid_t;
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != driver {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let (role, index) = (args.role, args.index);
        let mut child =
            cmd.spawn().map_err(|e| format!("starting {} {index}: {e}{}", role.as_str(), limit_hint(&e)))?;
        if verbose {
            eprintln!("    spawned {} {index} pid {}", role.as_str(), child.id());
        }
        let stdout = child.stdout.take().expect("piped");
        let mut stderr_pipe = child.stderr.take().expect("piped");
        let stderr = Arc::new(Mutex::new(Kept::default()));
        let sink = Arc::clone(&stderr);
        let stdin = child.stdin.take();
        // The process is a Proc from here: whatever fails below, it is killed and reaped.
        let mut proc = Proc { role, index, child, stdin, stderr, ready: false, report: None };
        let threads = std::thread::Builder::new()
            .name(format!("stderr {}", proc.label()))
            .spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = stderr_pipe.read(&mut buf) {
                    if let Ok(mut s) = sink.lock() {
                        s.push(&buf[..n]);
                    }
                }
            })
            .and_then(|_| {
                std::thread::Builder::new().name(format!("stdout {}", proc.label())).spawn(move || {
                    let mut out = BufReader::new(stdout);
                    while let Some(line) = read_line(&mut out) {
                        if events.send(Event::Line(i, line)).is_err() {
                            return;
                        }
                    }
                    let _ = events.send(Event::End(i));
                })
            });
        if let Err(e) = threads {
            let _ = proc.child.kill();
            let _ = proc.child.wait();
            return Err(format!(
                "starting a thread to read {}'s output: {e}{}",
                proc.label(),
                limit_hint(&e)
            ));
        }
        Ok(proc)
    }

    pub fn label(&self) -> String {
        self.role.label(self.index)
    }

    /// Whether the process is stopped (SIGSTOP, or a debugger): it will never report.
    pub fn stopped(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).is_ok_and(|stat| {
            // The state is the first field after the command's name.
            crate::machine::process_fields(&stat)
                .and_then(|mut f| f.next())
                .is_some_and(|state| matches!(state.chars().next(), Some('T' | 't')))
        })
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: our own child's pid; it is not reaped before `Children` drops.
        unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
    }

    /// The end of its standard error, as a reason quotes it (`: ...`), or nothing.
    pub fn stderr_tail(&self) -> String {
        let (err, cut) = self.stderr.lock().map(|k| (k.bytes.clone(), k.cut)).unwrap_or_default();
        let text = String::from_utf8_lossy(&err);
        let text = text.trim();
        if text.is_empty() {
            return String::new();
        }
        let start = text.len().saturating_sub(STDERR_TAIL);
        let start = (start..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let cut = cut + start as u64;
        let before =
            if cut > 0 { format!("(its first {} cut) ", crate::format::bytes(cut)) } else { String::new() };
        format!(": {before}{}", text[start..].replace('\n', " | "))
    }
}

/// Which limit of this process an error of starting a process or thread ran into, in words.
fn limit_hint(e: &std::io::Error) -> String {
    let limit = |resource| {
        // SAFETY: getrlimit fills the struct it is given.
        let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrlimit(resource, &mut r) } == 0 { r.rlim_cur.to_string() } else { "?".into() }
    };
    match e.raw_os_error() {
        Some(libc::EMFILE) => {
            format!(" (the open-file limit, ulimit -n, is {}: raise it)", limit(libc::RLIMIT_NOFILE))
        }
        Some(libc::EAGAIN) => format!(
            " (the limit of processes and threads was reached: ulimit -u is {}, and a cgroup's pids.max may be lower)",
            limit(libc::RLIMIT_NPROC)
        ),
        _ => String::new(),
    }
}

/// One line of a child's output without its newline; a line longer than `LONGEST_LINE` is cut
/// there and the rest of it dropped (what is left is no message the driver knows, and says so).
/// None at the end of the output.
fn read_line(out: &mut impl BufRead) -> Option<String> {
    let mut line = Vec::new();
    let n = out.by_ref().take(LONGEST_LINE).read_until(b'\n', &mut line).ok()?;
    if n == 0 {
        return None;
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if n as u64 == LONGEST_LINE {
        // Skip to the line's end, a buffer at a time.
        loop {
            let buf = out.fill_buf().ok()?;
            if buf.is_empty() {
                break;
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    out.consume(at + 1);
                    break;
                }
                None => {
                    let all = buf.len();
                    out.consume(all);
                }
            }
        }
        line.truncate(200);
        line.extend_from_slice(format!("... (a line of over {} MiB, cut)", LONGEST_LINE >> 20).as_bytes());
    }
    Some(String::from_utf8_lossy(&line).into_owned())
}

impl Drop for Children {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.child.kill();
        }
        for p in &mut self.procs {
            let _ = p.child.wait();
        }
    }
}

/// Whether a child's end is the run's interruption. A Ctrl-C at a terminal reaches the children
/// too, and may end one before the driver's own handler has run: give the handler a moment.
pub fn by_interrupt(status: ExitStatus) -> bool {
    if matches!(status.signal(), Some(libc::SIGINT | libc::SIGTERM)) {
        std::thread::sleep(Duration::from_millis(300));
    }
    INTERRUPTED.load(Ordering::SeqCst)
}

/// How a process ended, as a reason says it.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig} ({})", signal_name(sig)),
        _ => "ended".into(),
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGCONT => "SIGCONT",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that writes without end costs the driver a bounded buffer, and says how much it
    /// cut; its last words are kept.
    #[test]
    fn an_endless_stderr_is_kept_to_its_end_and_says_what_was_cut() {
        let mut kept = Kept::default();
        let chunk = vec![b'x'; 4096];
        for _ in 0..2560 {
            kept.push(&chunk);
        }
        kept.push(b"the last words");
        assert!(kept.bytes.len() <= 2 * STDERR_KEPT, "{} bytes kept", kept.bytes.len());
        assert_eq!(kept.cut + kept.bytes.len() as u64, 2560 * 4096 + 14);
        assert!(kept.bytes.ends_with(b"the last words"));
    }

    /// A line without end is cut at the longest a line may be, and the next line reads whole.
    #[test]
    fn a_line_without_end_is_cut_and_the_next_one_is_whole() {
        let mut text = vec![b'y'; LONGEST_LINE as usize + 5000];
        text.extend_from_slice(b"\nresult {}\n");
        let mut reader = BufReader::new(&text[..]);
        let cut = read_line(&mut reader).unwrap();
        assert!(cut.len() < 300 && cut.ends_with("MiB, cut)"), "{}", &cut[cut.len() - 60..]);
        assert_eq!(read_line(&mut reader).as_deref(), Some("result {}"));
        assert_eq!(read_line(&mut reader), None);
    }
}
