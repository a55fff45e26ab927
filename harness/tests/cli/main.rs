//! The binary as a user runs it: every (library, case) pair with short windows and its
//! correctness checks, the dashes, bad input, faults, interruptions, resumes, reports, and
//! nothing left behind. Windows are short: these tests check correctness, never speed. The
//! helpers are here, the tests in a module per concern.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ipcbench::matrix::{Pattern, Role};
use ipcbench::results::{self, CaseResult, Document, Figures, RoleReport, RunRecord, Status};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ipcbench");

/// The binary, with a terminal wide enough that no line it prints is wrapped: the tests find
/// words in its lines (one test narrows it on purpose). Its runs check every byte of every
/// message (`IPCBENCH_VERIFY=full`) unless a test says `--verify sample`.
fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.env("COLUMNS", "10000").env("IPCBENCH_VERIFY", "full");
    c
}

/// Every library built in, in the order of the tables (each one's stream receiver has a
/// stream/16B case, so the fault suite faults one receiver per library).
static LIBRARIES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(ipcbench::registry::ids);

/// Runs that start role processes go one at a time: two at once on two cores would only slow
/// each other down and blur the kill tests' timing.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A test that starts role processes: it runs alone (or beside the others, `beside`), has a
/// results folder of its own, and ends by checking that its run left nothing behind.
struct RunTest {
    _alone: Option<std::sync::MutexGuard<'static, ()>>,
    shm_before: Vec<String>,
    out: PathBuf,
    /// Its driver's temporary folder: the machine's, or a run made `beside`'s own.
    tmp: PathBuf,
}

impl RunTest {
    fn new(name: &str) -> RunTest {
        let alone = serial();
        RunTest {
            _alone: Some(alone),
            shm_before: shm_entries(),
            out: out_dir(name),
            tmp: std::env::temp_dir(),
        }
    }

    /// A test whose run mostly waits (a role stopped, and the deadline that finds it): it runs
    /// beside the others, its driver with a /dev/shm and a temporary folder of its own (`beside`),
    /// so that no run sees another's segments, directories or lock.
    fn beside(name: &str) -> RunTest {
        // Short: a library's socket paths lie under it (a Unix socket's path has 107 bytes).
        static TESTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = TESTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = std::env::temp_dir().join(format!("ipcbt{}-{n}", std::process::id()));
        RunTest { _alone: None, shm_before: Vec::new(), out: out_dir(name), tmp }
    }

    /// `ipcbench <args> --out <its folder>` in a mount namespace of its own, with a tmpfs as its
    /// /dev/shm and its own TMPDIR: its pid, its output (standard error; standard output holds
    /// what its /dev/shm held when it ended). Run it with a test made `beside`.
    fn run_beside(&self, args: &[&str]) -> (u32, Output) {
        let tmp = &self.tmp;
        std::fs::create_dir_all(tmp).unwrap();
        let script = "mount -t tmpfs -o size=1g none /dev/shm || exit 99
            \"$0\" \"$@\" >/dev/null & pid=$!; echo \"driver $pid\"; wait $pid; rc=$?
            echo left; ls -A /dev/shm; exit $rc";
        let mut c = in_private_mounts(script, Path::new(BIN), args);
        c.arg("--out").arg(&self.out).env("TMPDIR", tmp).env("IPCBENCH_VERIFY", "full");
        let output = c.output().unwrap();
        let said = String::from_utf8_lossy(&output.stdout).into_owned();
        let pid = said.lines().find_map(|l| l.strip_prefix("driver ")).and_then(|p| p.parse().ok());
        let pid = pid.unwrap_or_else(|| panic!("no driver started: {said}"));
        (pid, output)
    }

    /// A run made `beside` left no process, directory or POSIX queue, and nothing in its own
    /// /dev/shm (`output`'s standard output).
    fn nothing_left_beside(self, driver_pid: u32, output: &Output) {
        let said = String::from_utf8_lossy(&output.stdout);
        let left: Vec<&str> = said.lines().skip_while(|l| *l != "left").skip(1).collect();
        assert!(said.lines().any(|l| l == "left"), "the run's /dev/shm was not listed: {said}");
        assert!(left.is_empty(), "/dev/shm gained {left:?}");
        no_process_directory_or_queue(driver_pid, &self.tmp);
        let _ = std::fs::remove_dir_all(&self.tmp);
        let _ = std::fs::remove_dir_all(&self.out);
    }

    fn out(&self) -> &str {
        self.out.to_str().unwrap()
    }

    /// The run of the driver with this pid left no process, directory or /dev/shm entry.
    fn nothing_left(self, driver_pid: u32) {
        assert_nothing_left(driver_pid, &self.shm_before);
        let _ = std::fs::remove_dir_all(&self.out);
    }
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ipcbench-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A command line written as one string (no argument holds a space).
fn words(line: &str) -> Vec<&str> {
    line.split(' ').filter(|w| !w.is_empty()).collect()
}

fn ipcbench(args: &[&str]) -> Output {
    bin().args(args).output().expect("the ipcbench binary runs")
}

/// The fields of one line of `medians.csv` (RFC 4180: a quoted field may hold commas and
/// doubled quotes).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut field, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    out.push(field);
    out
}

/// The one results file in `dir`.
fn the_json_path(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the results folder exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "one results file in {}: {files:?}", dir.display());
    files.into_iter().next().unwrap()
}

fn the_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(the_json_path(dir)).unwrap())
        .expect("the results file is JSON")
}

/// The one results file in `dir`, read as the crate reads it: typed, refused if it is not whole.
fn the_document(dir: &Path) -> Document {
    let path = the_json_path(dir);
    results::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

/// A result of a typed document.
fn result_in<'a>(doc: &'a Document, case: &str, lib: &str) -> &'a CaseResult {
    doc.results
        .iter()
        .find(|r| r.case == case && r.library == lib)
        .unwrap_or_else(|| panic!("no result for {case} {lib}"))
}

fn shm_entries() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The tag every name of a run's trials starts with, whose driver had this pid: its directory's
/// name less the random part nobody can guess (`ipcb<pid>x<token>`).
fn tag_of_run(driver_pid: u32) -> String {
    format!("ipcb{driver_pid}x")
}

/// The role processes of the run whose driver had this pid, still alive.
fn children_of_run(driver_pid: u32) -> Vec<String> {
    let tag = format!("--name {}", tag_of_run(driver_pid));
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(" child ") && cmd.contains(&tag) {
                found.push(cmd);
            }
        }
    }
    found
}

fn assert_nothing_left(driver_pid: u32, shm_before: &[String]) {
    no_process_directory_or_queue(driver_pid, &std::env::temp_dir());
    let after = shm_entries();
    let new: Vec<&String> = after.iter().filter(|e| !shm_before.contains(e)).collect();
    assert!(new.is_empty(), "/dev/shm gained {new:?}");
}

/// The run of the driver with this pid (its temporary folder `tmp`) left no child process, no
/// run directory and no POSIX queue.
fn no_process_directory_or_queue(driver_pid: u32, tmp: &Path) {
    assert!(
        children_of_run(driver_pid).is_empty(),
        "children outlived the run: {:?}",
        children_of_run(driver_pid)
    );
    let dirs = run_dirs(tmp, driver_pid);
    assert!(dirs.is_empty(), "the run's directory outlived it: {dirs:?}");
    let tag = tag_of_run(driver_pid);
    // POSIX queues: every queue of the run, whatever its name, where the queues can be listed.
    match posix_queues() {
        Some(queues) => {
            let left: Vec<&String> = queues.iter().filter(|q| q.starts_with(&tag)).collect();
            assert!(left.is_empty(), "POSIX queues outlived the run: {left:?}");
        }
        None => eprintln!("the POSIX queues cannot be listed here (not root, no /dev/mqueue): not checked"),
    }
}

/// Every POSIX queue of this machine's IPC namespace, by name: the queue file system mounted
/// in a mount namespace of its own (as root), or where the system mounted it (`/dev/mqueue`);
/// None where neither can be read.
fn posix_queues() -> Option<Vec<String>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let listed = std::fs::read_dir("/dev/mqueue").ok()?;
        return Some(listed.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect());
    }
    let at = std::env::temp_dir().join(format!("ipcbench-test-{}-mqueue", std::process::id()));
    std::fs::create_dir_all(&at).ok()?;
    let listed = Command::new("unshare")
        .args(["-m", "sh", "-c", "mount -t mqueue none \"$0\" && ls -1 \"$0\""])
        .arg(&at)
        .output()
        .ok()
        .filter(|o| o.status.success());
    let _ = std::fs::remove_dir(&at);
    Some(String::from_utf8_lossy(&listed?.stdout).lines().map(String::from).collect())
}

/// FastIPC 1.0.0's known defect (adapters/fastipc/README.md, shown by its
/// `examples/redelivery.rs` with FastIPC's calls alone): now and then a server's `send` of a
/// reply returns FIPC_DISCONNECTED while the service is alive, though the reply arrives (about
/// one trial in a few hundred of `service/4c*` here). The server stops on the error and the
/// harness fails the case, as it must. This is that failure's reason.
fn is_fastipcs_failed_reply(r: &CaseResult) -> bool {
    r.library == "fastipc"
        && r.pattern == Pattern::Service
        && r.reason
            .as_deref()
            .is_some_and(|r| r.contains("replying to its request number") && r.contains("FIPC_DISCONNECTED"))
}

/// A lossless broadcast held back through its whole window by a subscriber behind (a slow one,
/// or one of more processes than cores): the publisher sent nothing in the measured window, and
/// the run fails the case with that reason and its measured cause. On two busy cores ZeroMQ's
/// publisher, once its queues are full, waits for the slow one to drain half of them (its
/// low-water mark), which can outlast the window; Aeron's polling publisher did so in the
/// reference runs, and iceoryx2's polling publisher to 32 subscribers in a 120 ms window here.
/// The reason says what each process ran in the window, the load beside it, and which
/// subscriber the publisher waited for.
fn is_a_held_back_publisher(r: &CaseResult) -> bool {
    let reason = r.reason.as_deref().unwrap_or_default();
    r.status == Status::Failed
        && (r.pattern == Pattern::SlowSubscriber || r.oversubscribed)
        && r.case.contains("/lossless/")
        && reason.starts_with("publisher 0: the measured window is empty (no send of its began and ended")
        && reason.contains("each process ran: publisher 0 ")
        && reason.contains("; beside it: others ")
        && reason.contains("; the publisher waits for every subscriber, and subscriber ")
}

/// The capability of its library that a result stands on, as the results file records it: a
/// library that lacks it (or was not built here, as cpp-ipc without its source) has a dash.
fn capability_of<'a>(doc: &'a Document, r: &CaseResult) -> &'a results::Capability {
    let record = doc.libraries.iter().find(|l| l.id == r.library).expect("the result's library is recorded");
    let key = capability_key(r, |key| record.capabilities.get(key).is_some_and(|c| c.supported));
    record.capabilities.get(key).unwrap_or_else(|| panic!("{} records no {key}", r.library))
}

/// The key of the capability a result stands on, as its params say its case: the batch calls or
/// the in-place calls where its library (`has`) lacks them, else its pattern's (`Case::column`).
fn capability_key(r: &CaseResult, has: impl Fn(&str) -> bool) -> &'static str {
    let params = r.params.as_ref().expect("a new file's result has its params");
    let case = params.case(&r.case, r.size, r.batch, r.transfer).expect("its params make its case");
    match () {
        _ if case.batch > 1 && !has("batch") => "batch",
        _ if case.transfer == ipcbench_api::Transfer::Loan && !has("loan") => "loan",
        _ => case.column().key(),
    }
}

/// The status a result of a run that nothing disturbed must have: `Ok`, or `Unsupported` where
/// its library lacks the capability it stands on in this build. No test asserts "every library
/// ok" without it.
fn expected_status(doc: &Document, r: &CaseResult) -> Status {
    if capability_of(doc, r).supported { Status::Ok } else { Status::Unsupported }
}

/// A cpp-ipc result of a build without its source: a dash that says how to build it.
fn assert_not_built(r: &CaseResult) {
    assert_eq!(r.status, Status::Unsupported, "{}: cpp-ipc is not built here", r.case);
    assert_eq!(r.reason.as_deref(), Some(ipcbench_cpp_ipc::NOT_BUILT), "{}", r.case);
}

/// A result's median, which a measured result has.
fn median_of(r: &CaseResult) -> &Figures {
    assert_eq!(r.status, Status::Ok, "{} {}: {:?}", r.case, r.library, r.reason);
    r.median.as_ref().unwrap_or_else(|| panic!("{} {}: no median", r.case, r.library))
}

/// Every run of a result, every mode's.
fn runs_of(r: &CaseResult) -> impl Iterator<Item = &RunRecord> {
    r.modes.iter().flat_map(|m| &m.runs)
}

/// A run's reports of one role.
fn reports(run: &RunRecord, role: Role) -> impl Iterator<Item = &RoleReport> {
    run.roles.iter().filter(move |x| x.role == role)
}

/// A run's first report of one role.
fn report_of(run: &RunRecord, role: Role) -> &RoleReport {
    reports(run, role).next().unwrap_or_else(|| panic!("no {} reported: {run:?}", role.as_str()))
}

/// The directories under `tmp` of the run whose driver had this pid (`ipcb<pid>x<token>`).
fn run_dirs(tmp: &Path, driver_pid: u32) -> Vec<PathBuf> {
    let tag = tag_of_run(driver_pid);
    let Ok(entries) = std::fs::read_dir(tmp) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&tag))
        .map(|e| e.path())
        .collect()
}

/// Busy loops at the run's own priority, one per core, for as long as this lives.
struct Hogs(Vec<std::process::Child>);

impl Hogs {
    fn one_per_core() -> Hogs {
        let cores = std::thread::available_parallelism().unwrap().get();
        let hog = || Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        Hogs((0..cores).map(|_| hog()).collect())
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A cgroup (v1) of the test's own under `controller`, removed when this drops; None where
/// one cannot be made (only root with that controller can), which the test says it skipped.
struct Cgroup(PathBuf);

impl Cgroup {
    fn new(controller: &str, test: &str) -> Option<Cgroup> {
        let base = Path::new("/sys/fs/cgroup").join(controller);
        let group = base.join(format!("ipcbench-test-{}-{test}", std::process::id()));
        if std::fs::create_dir(&group).is_err() {
            eprintln!("{test}: skipped, {} is not writable", base.display());
            return None;
        }
        Some(Cgroup(group))
    }

    /// A shell prelude (`after_prelude`) that moves the shell, then what it execs, into it.
    fn enter(&self) -> String {
        format!("echo $$ > {}/cgroup.procs", self.0.display())
    }

    /// `ipcbench <args>` in it, to its end: the driver's pid and its output.
    fn run(&self, args: &[&str]) -> (u32, Output) {
        to_the_end(&mut after_prelude(&self.enter(), args))
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A stream's run sent messages and its receiver got every one of them.
fn the_stream_delivered_all(run: &RunRecord, what: &str) {
    let sent = report_of(run, Role::Sender).sent().sent;
    assert!(sent > 0, "{what}: nothing sent");
    assert_eq!(sent, report_of(run, Role::Receiver).got().received, "{what}: every message arrived");
}

/// One result's progress line in a run's standard error: `[i/n] <case> <lib>`, then its figure,
/// or first a flag in parentheses (a noisy or loaded result's).
fn progress_line<'a>(stderr: &'a str, case: &str, lib: &str) -> &'a str {
    let name = format!("] {case} {lib}");
    stderr
        .lines()
        .find(|l| l.split_once(&name).is_some_and(|(_, rest)| rest.starts_with([':', ' '])))
        .unwrap_or_else(|| panic!("no line of {case} {lib}: {stderr}"))
}

/// A short run of these cases (all when empty) into `out`: the driver's pid, its output, the
/// results, typed.
fn short_run(out: &Path, cases: &[&str]) -> (u32, Output, Document) {
    short(out, &[&["run"], cases].concat())
}

/// `ipcbench <args>` with short windows into `out`: the driver's pid, its output, the results.
fn short(out: &Path, args: &[&str]) -> (u32, Output, Document) {
    windowed(out, args, ["120ms", "30ms"])
}

/// A window and its warm-up for cases whose one message takes milliseconds (16 MiB, checked
/// whole): a stalled host (39% steal, seen in CI) held one such send past a whole 120 ms window,
/// which then held none and failed its trial, as it should.
const LONG: [&str; 2] = ["500ms", "50ms"];

/// `ipcbench <args>`, one run of each case, with this window and warm-up, into `out`.
fn windowed(out: &Path, args: &[&str], [window, warmup]: [&str; 2]) -> (u32, Output, Document) {
    let mut c = bin();
    c.args(args).args(["--runs", "1", "--duration", window, "--warmup", warmup, "--out"]).arg(out);
    let (pid, output) = to_the_end(&mut c);
    (pid, output, the_document(out))
}

/// Runs `c` to its end with its output kept: its pid (the driver's, for the leftover checks) and
/// its output.
fn to_the_end(c: &mut Command) -> (u32, Output) {
    let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

fn assert_refused(args: &[&str], expect: &[&str]) {
    let out = ipcbench(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} was accepted");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    for e in expect {
        assert!(stderr.contains(e), "{args:?}: {e:?} not in {stderr}");
    }
}

impl RunTest {
    /// Runs `ipcbench <line> --out <its folder> -v` and sends `signal` to the first child of
    /// each listed role, `after` its start (in its measured window). Returns the driver's pid,
    /// exit status, stderr and results.
    fn run_and_signal(
        &self,
        line: &str,
        roles: &[&str],
        after: Duration,
        signal: i32,
    ) -> (u32, std::process::ExitStatus, String, Document) {
        let line = format!("{line} --out {} -v", self.out());
        let mut driver =
            bin().args(words(&line)).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let pid = driver.id();
        let stderr = BufReader::new(driver.stderr.take().unwrap());
        let mut text = String::new();
        let mut pending: Vec<&str> = roles.to_vec();
        for line in stderr.lines() {
            let line = line.unwrap();
            text.push_str(&line);
            text.push('\n');
            if let Some(pos) = pending.iter().position(|r| line.contains(&format!("spawned {r} 0 pid "))) {
                let child: i32 = line.rsplit(' ').next().unwrap().parse().unwrap();
                pending.remove(pos);
                std::thread::sleep(after);
                // SAFETY: kill with a pid this test just read; the worst case is ESRCH.
                unsafe { libc::kill(child, signal) };
            }
        }
        (pid, driver.wait().unwrap(), text, the_document(&self.out))
    }
}

/// `sh -c script` in a mount namespace of its own (as root `unshare -m`, else in a user
/// namespace), so that what it mounts (a small tmpfs over /dev/shm or a results folder, an empty
/// one over target/) goes with it and the machine's own is never touched. In the script `$0` is
/// `program` and `"$@"` the arguments: `exec "$0" "$@"` keeps the shell's pid, which is
/// `unshare`'s, for the driver.
fn in_private_mounts(script: &str, program: &Path, args: &[&str]) -> Command {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut c = Command::new("unshare");
    c.args(if root { &["-m"][..] } else { &["-r", "-m"][..] })
        .args(["sh", "-c", script])
        .arg(program)
        .args(args)
        .env("COLUMNS", "10000");
    c
}

/// `ipcbench args`, started by a shell that first runs `prelude`, in which `$$` is the
/// driver's pid (the shell then becomes the driver).
fn after_prelude(prelude: &str, args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", &format!("{prelude} && exec \"$0\" \"$@\"")]).arg(BIN).args(args).env("COLUMNS", "10000");
    c
}

/// Starts `ipcbench <args> --out <out>` with its standard error piped.
fn start(args: &[&str], out: &Path) -> std::process::Child {
    bin().args(args).arg("--out").arg(out).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
}

/// A driver started as `start` does, once its standard error has said `text`: the process, its
/// pid, and the rest of its standard error, to read on (kept open until the driver ends: a
/// driver whose standard error is closed cannot say what it does).
fn start_until(
    args: &[&str],
    out: &Path,
    text: &str,
) -> (std::process::Child, u32, BufReader<std::process::ChildStderr>) {
    let mut driver = start(args, out);
    let pid = driver.id();
    let mut stderr = BufReader::new(driver.stderr.take().unwrap());
    read_until(&mut stderr, text);
    (driver, pid, stderr)
}

/// Reads the driver's standard error until a line holds `text`; returns everything read.
fn read_until(stderr: &mut impl BufRead, text: &str) -> String {
    let mut all = String::new();
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        all.push_str(&line);
        if line.contains(text) {
            break;
        }
        line.clear();
    }
    all
}

mod ab;
mod adding_a_library;
mod bends;
mod browser;
mod compare;
mod duplex;
mod faults;
mod host;
mod hostile;
mod input;
mod latency;
mod loans;
mod matrix;
mod package;
mod report;
mod runs;
mod safety;
