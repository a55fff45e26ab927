//! A run's files are its own, its flags are kept or refused, and exhaustion is an error with its
//! cause: /dev/shm too small, the results folder full, the open-file limit, no more threads. Each
//! exhaustion is made in a mount namespace or a cgroup of the test's own, never the machine's.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use ipcbench::results::Failure;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// The run directory of a live run whose driver has this pid, under `tmp`.
fn run_dir_of(tmp: &Path, pid: u32) -> PathBuf {
    let found = run_dirs(tmp, pid);
    assert_eq!(found.len(), 1, "one directory of run {pid}: {found:?}");
    found.into_iter().next().unwrap()
}

/// While a trial runs: the run's directory is 0700 and this user's, at a name nobody could
/// guess (`ipcb<pid>x` and six random characters), its lock 0600 and naming the driver, and the
/// trial's folder holds the manifest of what it may create, named after the directory.
#[test]
fn a_runs_directory_is_made_new_its_own_and_0700() {
    let t = RunTest::new("run-dir");
    let args = words("run stream/16B --lib uds --runs 1 --warmup 20ms --duration 400ms -v");
    let (mut driver, pid, mut stderr) = start_until(&args, &t.out, "spawned sender 0 pid");
    let dir = run_dir_of(&std::env::temp_dir(), pid);
    let tag = dir.file_name().unwrap().to_str().unwrap().to_string();
    let token = tag.strip_prefix(&tag_of_run(pid)).unwrap();
    assert!(token.len() == 6 && token.bytes().all(|c| c.is_ascii_alphanumeric()), "{tag}");
    let meta = std::fs::symlink_metadata(&dir).unwrap();
    assert!(meta.is_dir(), "{}", dir.display());
    assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    // SAFETY: geteuid has no preconditions.
    assert_eq!(meta.uid(), unsafe { libc::geteuid() });
    assert_eq!(mode(&dir.join("lock")), 0o600);
    assert_eq!(std::fs::read_to_string(dir.join("lock")).unwrap(), format!("{pid}\n"), "the marker");
    let manifest = std::fs::read_to_string(dir.join("t1/manifest")).unwrap();
    assert_eq!(manifest, format!("library uds\nname {tag}t1\n"));
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(driver.wait().unwrap().success(), "{rest}");
    t.nothing_left(pid);
}

/// `--resume` of a file a live driver still writes is refused, naming it; a file whose
/// settings the command line would refuse is refused the same way; `--buffer` and `--connects`
/// are refused beside `--resume`, not dropped.
#[test]
fn resume_refuses_a_live_runs_file_and_settings_the_command_line_would() {
    let t = RunTest::new("resume-live");
    let args = words("run stream/16B stream-rtt/16B --lib uds,pipe --runs 1 --warmup 20ms --duration 300ms");
    let (mut driver, pid, _stderr) = start_until(&args, &t.out, "results in");
    let file = the_json_path(&t.out);
    let f = file.to_str().unwrap();
    assert_refused(
        &["run", "--resume", f],
        &[&format!("is being written by a run that is still alive (pid {pid})")],
    );
    for flag in [&["--buffer", "1MiB"][..], &["--connects", "5"], &["--lib", "uds"], &["--duration", "2s"]] {
        assert_refused(&[&["run", "--resume", f][..], flag].concat(), &["cannot be used with"]);
    }
    // SAFETY: the driver's pid, which this test started.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    assert_eq!(driver.wait().unwrap().code(), Some(130));
    let lock = t.out.join(format!(".{}.lock", file.file_name().unwrap().to_str().unwrap()));
    assert!(!lock.exists(), "the lock goes with its run");

    assert_eq!(the_document(&t.out).status, results::RunStatus::Interrupted);
    // The file, edited as a hand might: settings this binary refuses.
    let mut doc = the_json(&t.out);
    doc["settings"]["duration_s"] = 1e-9.into();
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    assert_refused(
        &["run", "--resume", f],
        &[
            "holds settings this binary refuses",
            "--duration 1ns: too short a window to measure; give at least 10ms",
        ],
    );
    doc["settings"]["duration_s"] = 0.3.into();
    doc["settings"]["connects"] = 0.into();
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    assert_refused(&["run", "--resume", f], &["--connects 0: a whole number from 1 to 10000"]);
    t.nothing_left(pid);
}

/// A /dev/shm object of a trial's name that is there before it (stale, or another user's who
/// learnt the run's name from its directory) fails that trial, naming it, and is neither mapped
/// nor removed; the next case runs.
#[test]
fn a_foreign_object_of_a_trials_name_fails_the_trial_and_is_left_alone() {
    let t = RunTest::new("foreign-shm");
    // Two trials of stream/16B (a receive mode each), then stream/1KiB's first: trial 3.
    let args = words("run stream/16B stream/1KiB --lib shm-ring --runs 1 --warmup 20ms --duration 300ms -v");
    let (mut driver, pid, mut stderr) = start_until(&args, &t.out, "spawned sender 0 pid");
    let tag = run_dir_of(&std::env::temp_dir(), pid).file_name().unwrap().to_str().unwrap().to_string();
    let foreign = format!("/dev/shm/{tag}t3-ring-forth");
    std::fs::write(&foreign, "theirs\n").unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(driver.wait().unwrap().code(), Some(1), "{rest}");
    let doc = the_document(&t.out);
    let r = result_in(&doc, "stream/1KiB", "shm-ring");
    assert_eq!(r.failure, Some(Failure::Machine), "{r:?}");
    let reason = r.reason.as_deref().unwrap_or_default();
    assert!(reason.contains(&format!("{foreign} is there before the trial began")), "{reason}");
    assert_eq!(result_in(&doc, "stream/16B", "shm-ring").status, Status::Ok);
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "theirs\n", "left as it was");
    std::fs::remove_file(&foreign).unwrap();
    t.nothing_left(pid);
}

/// A /dev/shm of 64 KiB: a trial whose library says it needs more fails before its children
/// start, saying what is free and what it needs; one whose library cannot say dies of SIGBUS,
/// and the reason says so with /dev/shm's free space; the rest of the run goes on. 64 KiB, not
/// more: iceoryx2's set-up alone touches more than 256 KiB of its segments with this buffer,
/// while what its window touches depends on how far its publisher runs ahead (with 1 MiB it
/// sometimes fits, and the trial passes).
#[test]
fn a_dev_shm_too_small_fails_each_trial_that_needs_more_and_says_so() {
    let t = RunTest::new("small-shm");
    let out = t.out.to_str().unwrap().to_string();
    let (pid, output) = to_the_end(&mut in_private_mounts(
        "mount -t tmpfs -o size=64k none /dev/shm && exec \"$0\" \"$@\"",
        Path::new(BIN),
        &[
            "run",
            "stream/1KiB",
            "--lib",
            "aeron,boost,iceoryx2,uds",
            "--buffer",
            "16MiB",
            "--runs",
            "1",
            "--warmup",
            "20ms",
            "--duration",
            "60ms",
            "--out",
            &out,
        ],
    ));
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let doc = the_document(&t.out);
    for lib in ["aeron", "boost"] {
        let r = result_in(&doc, "stream/1KiB", lib);
        let reason = r.reason.as_deref().unwrap_or_else(|| panic!("{lib} has no reason: {r:?}"));
        assert!(reason.contains("/dev/shm has 64 KiB free, the case needs about"), "{lib}: {reason}");
        assert_eq!(r.failure, Some(Failure::Machine), "{lib}: {r:?}");
    }
    let r = result_in(&doc, "stream/1KiB", "iceoryx2");
    let reason = r.reason.as_deref().unwrap_or_else(|| panic!("iceoryx2 has no reason: {r:?}"));
    assert!(reason.contains("(SIGBUS)") && reason.contains("/dev/shm has"), "iceoryx2: {reason}");
    assert!(matches!(r.failure, Some(Failure::Killed { signal: libc::SIGBUS, .. })), "{r:?}");
    assert_eq!(result_in(&doc, "stream/1KiB", "uds").status, Status::Ok);
    t.nothing_left(pid);
}

/// A results folder that fills: the run stops with an error naming the folder and its free
/// space; the file is whole, as last written, with no partial copy beside it; `--resume` goes
/// on once there is room, and keeps what was done.
#[test]
fn a_full_results_folder_keeps_the_last_whole_file_and_resume_goes_on() {
    let t = RunTest::new("full-out");
    std::fs::create_dir_all(&t.out).unwrap();
    let (out, kept) = (t.out.join("out"), t.out.join("kept"));
    std::fs::create_dir_all(&out).unwrap();
    let script = format!(
        "o={o}; k={k}; mount -t tmpfs -o size=48k none $o || exit 99
         \"$0\" run stream/16B stream-rtt/16B stream/1KiB stream-rtt/1KiB --lib uds,pipe --runs 1 \
           --warmup 20ms --duration 60ms --out $o 2>$k.err1 & echo \"first $!\"; wait $!; echo \"rc1 $?\"
         ls -A $o > $k.ls; cp $o/run-*.json $k.json
         mount -o remount,size=20m $o
         \"$0\" run --resume $o/run-*.json 2>$k.err2 & echo \"second $!\"; wait $!; echo \"rc2 $?\"
         cp $o/run-*.json $k.final.json",
        o = out.display(),
        k = kept.display()
    );
    let run = in_private_mounts(&script, Path::new(BIN), &[]).output().unwrap();
    let said = String::from_utf8_lossy(&run.stdout).into_owned();
    let word = |key: &str| -> u32 {
        let line = said.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("{key}: {said}"));
        line.split(' ').nth(1).unwrap().parse().unwrap()
    };
    let read = |ext: &str| std::fs::read_to_string(kept.with_extension(ext)).unwrap();
    let err1 = read("err1");
    assert_eq!(word("rc1"), 2, "{err1}");
    assert!(err1.contains("No space left on device"), "{err1}");
    assert!(
        err1.contains(&format!("{} has ", out.display())) && err1.contains(" free, the file needs about"),
        "{err1}"
    );
    assert!(err1.contains("is as it was last written") && err1.contains("ipcbench run --resume"), "{err1}");
    assert!(!err1.contains("panicked"), "{err1}");
    let listed = read("ls");
    assert!(listed.lines().all(|l| !l.contains(".tmp")), "a partial copy was left: {listed}");
    let load = |ext: &str| {
        let path = kept.with_extension(ext);
        results::load(&path).unwrap_or_else(|e| panic!("the file left is whole: {}: {e:#}", path.display()))
    };
    assert_eq!(load("json").status, results::RunStatus::Running);
    let cut: Value = serde_json::from_str(&read("json")).unwrap();
    let done = cut["results"].as_array().unwrap().len();
    assert!((1..8).contains(&done), "{done} results kept");
    assert_eq!(word("rc2"), 0, "{}", read("err2"));
    let fin: Value = serde_json::from_str(&read("final.json")).unwrap();
    assert_eq!(
        fin["results"].as_array().unwrap()[..done],
        cut["results"].as_array().unwrap()[..],
        "what was done is kept"
    );
    let fin = load("final.json");
    assert_eq!(fin.status, results::RunStatus::Complete);
    assert_eq!(fin.results.len(), 8);
    assert!(fin.results.iter().all(|r| r.status == Status::Ok), "{:?}", fin.results);
    assert_nothing_left(word("first"), &t.shm_before);
    t.nothing_left(word("second"));
}

/// An open-file limit too low for a 5-process case: each such trial fails saying so, with the
/// limit; no panic; a 2-process case passes.
#[test]
fn too_few_open_files_fail_each_trial_that_needs_more_clearly() {
    let t = RunTest::new("nofile");
    let out = t.out.to_str().unwrap().to_string();
    let args =
        ["run", "stream/16B", "service/4c1s/16B", "--lib", "uds,zmq,fastipc", "--runs", "1", "--out", &out];
    let (pid, output) =
        to_the_end(after_prelude("ulimit -n 24", &args).args(["--warmup", "20ms", "--duration", "60ms"]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let doc = the_document(&t.out);
    for lib in ["uds", "zmq", "fastipc"] {
        assert_eq!(result_in(&doc, "stream/16B", lib).status, Status::Ok, "{lib}");
        let r = result_in(&doc, "service/4c1s/16B", lib);
        let reason = r.reason.as_deref().unwrap();
        assert_eq!(r.status, Status::Failed);
        assert!(
            reason.contains("Too many open files") && reason.contains("ulimit -n, is 24"),
            "{lib}: {reason}"
        );
    }
    t.nothing_left(pid);
}

/// Processes and threads that cannot be started (a cgroup allowing 8): each trial fails saying
/// which could not start and why, the run ends as a run with failed cases does, the harness
/// never panics, and nothing is left (the cgroup empties).
#[test]
fn threads_that_cannot_start_fail_the_trial_not_the_run() {
    let Some(group) = Cgroup::new("pids", "threads_that_cannot_start_fail_the_trial_not_the_run") else {
        return;
    };
    let t = RunTest::new("nproc");
    std::fs::write(group.0.join("pids.max"), "8").unwrap();
    let line = "run stream/16B --lib uds,zmq,fastipc,nng --runs 1 --warmup 20ms --duration 60ms --out";
    let (pid, output) = group.run(&[&words(line)[..], &[t.out()]].concat());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let doc = the_document(&t.out);
    let reasons: Vec<&str> = doc.results.iter().filter_map(|r| r.reason.as_deref()).collect();
    assert!(!reasons.is_empty() && reasons.iter().all(|r| !r.contains("panicked")), "{reasons:?}");
    // Which process or thread hits the limit first varies (the driver's reader threads, a
    // child's, a library's own: libzmq aborts, FastIPC says FIPC_NO_MEMORY); the cause is said.
    assert!(reasons.iter().any(|r| r.contains("Resource temporarily unavailable")), "{reasons:?}");
    for r in &doc.results {
        assert_eq!(r.status, Status::Failed, "{r:?}");
        assert!(r.failure.is_some(), "a failure has its kind: {r:?}");
    }
    t.nothing_left(pid);
    std::fs::remove_dir(&group.0).expect("the cgroup is empty: every process of the run ended");
}

/// The check that no POSIX queue outlives a run sees a queue that is there (as root, where it
/// lists them all).
#[test]
fn the_leftover_check_sees_a_posix_queue() {
    let Some(before) = posix_queues() else {
        eprintln!(
            "the_leftover_check_sees_a_posix_queue: skipped, not root (the check probes names instead)"
        );
        return;
    };
    let name = format!("/ipcbench-test-{}-probe", std::process::id());
    let c = std::ffi::CString::new(name.clone()).unwrap();
    // SAFETY: a NUL-terminated name; default attributes; the descriptor is closed below.
    let mqd = unsafe {
        libc::mq_open(
            c.as_ptr(),
            libc::O_CREAT | libc::O_RDONLY,
            0o600,
            std::ptr::null_mut::<libc::mq_attr>(),
        )
    };
    assert_ne!(mqd, -1, "{}", std::io::Error::last_os_error());
    let during = posix_queues().unwrap();
    // SAFETY: the descriptor and name made above.
    unsafe {
        libc::mq_close(mqd);
        libc::mq_unlink(c.as_ptr());
    }
    assert!(
        !before.contains(&name[1..].to_string()) && during.contains(&name[1..].to_string()),
        "{during:?}"
    );
}
