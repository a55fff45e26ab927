//! A machine that is not the run's alone (docs/FAULTS.md): names planted where a run makes its
//! directory, a `TMPDIR` that is missing, not writable or full, a CPU hog on each core, a
//! memory hog. The names and the folders are made in a mount namespace of the test's own (never
//! in the machine's /tmp), the memory hog in a cgroup of its own; the CPU hogs are the test's
//! processes, there to load the whole machine.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::*;

/// What is at a path, not followed: its kind, mode, owner and (a symlink) its target.
fn what_is_at(path: &Path) -> (bool, u32, u32, Option<PathBuf>) {
    let m = std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (m.is_dir(), m.permissions().mode() & 0o7777, m.uid(), std::fs::read_link(path).ok())
}

/// A pid no process has now: a child's, once it has been waited for (the kernel hands pids out
/// upwards, so one is not given again for a long while).
fn a_dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Names planted in the run's TMPDIR by someone else: 10,000 symlinks at the names of the old
/// form (`ipcb<pid>`, the pids the next runs get), a symlink and directories shaped like a dead
/// run's of the new form (another user's; this user's at 0755; one whose marker is a symlink).
/// The run goes as if none were there: it never writes through, removes or changes any of them.
#[test]
fn names_planted_where_a_run_makes_its_directory_change_nothing() {
    // Its run is busy, unlike the waiting runs made `beside`: it runs alone, still in a mount
    // namespace and a TMPDIR of its own.
    let _alone = serial();
    let t = RunTest::beside("planted");
    let tmp = t.tmp.clone();
    std::fs::create_dir_all(&tmp).unwrap();
    let elsewhere = t.out.with_extension("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let from = std::process::id();
    let mut planted: Vec<PathBuf> = Vec::new();
    for pid in from..from + 10_000 {
        let at = tmp.join(format!("ipcb{pid}"));
        std::os::unix::fs::symlink(&elsewhere, &at).unwrap();
        planted.push(at);
    }
    let dead = a_dead_pid();
    // A marker naming a dead run, in a directory that is not this user's run directory.
    let shaped = |name: &str, mode: u32| {
        let dir = tmp.join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("lock"), format!("{dead}\n")).unwrap();
        std::fs::create_dir(dir.join("t1")).unwrap();
        std::fs::write(dir.join("t1/manifest"), format!("library uds\nname {name}t1\n")).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        dir
    };
    planted.push(shaped(&format!("ipcb{dead}xwide00"), 0o755));
    let marker_elsewhere = shaped(&format!("ipcb{dead}xlinked"), 0o700);
    std::fs::remove_file(marker_elsewhere.join("lock")).unwrap();
    std::fs::write(elsewhere.with_extension("lock"), format!("{dead}\n")).unwrap();
    std::os::unix::fs::symlink(elsewhere.with_extension("lock"), marker_elsewhere.join("lock")).unwrap();
    planted.push(marker_elsewhere);
    let link = tmp.join(format!("ipcb{dead}xsymlnk"));
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    planted.push(link);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let theirs = shaped(&format!("ipcb{dead}xtheirs"), 0o700);
        for e in walk(&theirs) {
            std::os::unix::fs::lchown(&e, Some(65534), Some(65534)).unwrap();
        }
        planted.push(theirs);
    }
    let before: Vec<_> = planted.iter().map(|p| what_is_at(p)).collect();

    let args = words("run stream/16B --lib uds,shm-ring,iceoryx2 --runs 1 --warmup 20ms --duration 60ms");
    let (pid, output) = t.run_beside(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("removed what"), "nothing planted is taken for a dead run's: {stderr}");
    let doc = the_document(&t.out);
    assert!(doc.results.iter().all(|r| r.status == Status::Ok), "{:?}", doc.results);
    let after: Vec<_> = planted.iter().map(|p| what_is_at(p)).collect();
    assert!(before == after, "every planted name is as it was");
    for dir in planted.iter().filter(|p| p.is_dir() && !p.is_symlink()) {
        let manifest = std::fs::read_to_string(dir.join("t1/manifest")).unwrap_or_default();
        assert!(manifest.starts_with("library uds"), "{}: its files are as they were", dir.display());
    }
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing went through a symlink");
    let _ = std::fs::remove_dir_all(&elsewhere);
    let _ = std::fs::remove_file(elsewhere.with_extension("lock"));
    t.nothing_left_beside(pid, &output);
}

/// Every path under `dir`, itself first.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = vec![dir.to_path_buf()];
    if dir.is_dir() && !dir.is_symlink() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            all.extend(walk(&e.path()));
        }
    }
    all
}

/// A TMPDIR that is not there, not writable or full: the run is refused before any trial,
/// saying which folder and what to do, and leaves no results file; with TMPDIR unset the run
/// uses /tmp.
#[test]
fn a_tmpdir_missing_unwritable_or_full_is_refused_with_what_to_do() {
    let out = out_dir("tmpdir");
    let o = out.to_str().unwrap().to_string();
    let args = ["run", "stream/16B", "--lib", "uds", "--runs", "1", "--warmup", "20ms", "--duration", "60ms"];
    let missing = out.with_extension("missing");
    let run = bin().args(args).args(["--out", &o]).env("TMPDIR", &missing).output().unwrap();
    let text = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{text}");
    let named = format!("TMPDIR ({}), where a run makes its directory, cannot be read", missing.display());
    assert!(text.contains(&named) && text.contains("create it, or set TMPDIR"), "{text}");
    assert!(std::fs::read_dir(&out).map_or(true, |d| d.count() == 0), "no results file");

    // In a mount namespace of their own: TMPDIR on a read-only tmpfs, then on a full one. (Not
    // /tmp itself: the binary and its libraries may lie under /tmp, and a mount there hides
    // them; unset, TMPDIR is /tmp, and the run takes the same path to it.)
    let spot = out.with_extension("spot");
    std::fs::create_dir_all(&spot).unwrap();
    let full = format!(
        "mount -t tmpfs -o size=64k none {0} && (cat /dev/zero > {0}/fill 2>/dev/null; true)",
        spot.display()
    );
    for (mount, expect) in [
        (
            format!("mount -t tmpfs -o ro,size=1m none {}", spot.display()),
            vec![format!("TMPDIR ({})", spot.display()), "is not writable by this user: set TMPDIR".into()],
        ),
        (
            full,
            vec![
                format!("creating this run's directory {}/ipcb", spot.display()),
                "No space left on device".into(),
                format!("{} has none free: make room there, or set TMPDIR to another folder", spot.display()),
            ],
        ),
    ] {
        let script = format!("{mount} || exit 99; exec \"$0\" \"$@\"");
        let mut c = in_private_mounts(&script, Path::new(BIN), &args);
        let run = c.args(["--out", &o]).env("TMPDIR", &spot).output().unwrap();
        let text = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{mount}: {text}");
        assert!(expect.iter().all(|e| text.contains(e.as_str())), "{mount}: {expect:?} in {text}");
        assert!(!text.contains("panicked"), "{text}");
        assert!(std::fs::read_dir(&out).map_or(true, |d| d.count() == 0), "no results file");
    }
    let _ = std::fs::remove_dir_all(&spot);

    // Unset: the run makes its directory in /tmp, and removes it.
    let _one = serial();
    let shm_before = shm_entries();
    let (pid, run) = to_the_end(bin().args(args).args(["--out", &o]).env_remove("TMPDIR"));
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(the_document(&out).results[0].status, Status::Ok);
    let _ = std::fs::remove_dir_all(&out);
    no_process_directory_or_queue(pid, Path::new("/tmp"));
    let new: Vec<String> = shm_entries().into_iter().filter(|e| !shm_before.contains(e)).collect();
    assert!(new.is_empty(), "/dev/shm gained {new:?}");
}

/// Beside a CPU hog on each core: every run reads the load beside its window; the hogs, always
/// runnable, are in its run queue and took a share of the CPUs the trial used; every result is a
/// figure marked loaded, or a failure that says what ran in its window.
#[test]
fn a_run_beside_a_cpu_hog_on_each_core_says_it_was_loaded() {
    let t = RunTest::new("hogged");
    let hogs = Hogs::one_per_core();
    let line = "run stream/16B stream-rtt/16B --lib shm-ring,uds --runs 3 --warmup 50ms --duration 500ms";
    let (pid, output) = to_the_end(bin().args(words(line)).arg("--out").arg(&t.out));
    drop(hogs);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let doc = the_document(&t.out);
    let cores = std::thread::available_parallelism().unwrap().get();
    for r in &doc.results {
        let what = format!("{} {}", r.case, r.library);
        if r.status == Status::Failed {
            let reason = r.reason.as_deref().unwrap_or_default();
            assert!(
                reason.contains("each process ran:") && reason.contains("beside it: others"),
                "{what}: {reason}"
            );
            continue;
        }
        assert_eq!(r.status, Status::Ok, "{what}: {:?}", r.reason);
        for run in runs_of(r) {
            let load = run.load.unwrap_or_else(|| panic!("{what}: no load read: {run:?}"));
            assert_eq!(load.cpus, cores, "{what}: {load:?}");
            assert!(load.runnable.iter().all(|&n| n >= cores as u32), "{what}: the hogs run: {load:?}");
            assert!(
                load.others_cores > 0.0 && load.others_cores <= cores as f64 + load.resolution_cores,
                "{what}: {load:?}"
            );
        }
        let summary = r.load.unwrap_or_else(|| panic!("{what}: no load summary"));
        // Over the runs its figure stands on: those of its better mode in its host state.
        let best = r.best().unwrap().runs.len();
        assert!(summary.of >= 1 && summary.of as usize <= best, "{what}: {summary:?} of {best} runs");
        assert!(summary.least <= summary.others_cores && summary.others_cores <= summary.most, "{summary:?}");
        // Each of its figure's runs beside a hog that runs whenever a role does not.
        assert!(summary.loaded(), "{what}: {summary:?}");
    }
    assert!(stderr.contains("(LOADED: others took "), "{stderr}");
    let report = std::fs::read_to_string(the_json_path(&t.out).with_extension("").join("report.md")).unwrap();
    assert!(
        report.contains("^: loaded: other processes took more than 0.2 of a core"),
        "the legend: {report}"
    );
    assert!(report.contains("load beside the runs"), "the machines table's column: {report}");
    t.nothing_left(pid);
}

/// Beside a memory hog that leaves the run 1 GiB (a memory cgroup of the test's own holding
/// both): every case runs, and nothing is left.
#[test]
fn a_run_beside_a_memory_hog_that_leaves_1_gib_runs_whole() {
    let Some(group) = Cgroup::new("memory", "a_run_beside_a_memory_hog_that_leaves_1_gib_runs_whole") else {
        return;
    };
    let hog_bytes: u64 = 512 << 20;
    std::fs::write(group.0.join("memory.limit_in_bytes"), (hog_bytes + (1 << 30)).to_string()).unwrap();
    let t = RunTest::new("memory-hog");
    // The hog holds its memory, touched, until it is killed.
    let mut hog = Command::new("sh")
        .args(["-c", &format!("{} && exec perl -e '$x = \"a\" x {hog_bytes}; sleep 600'", group.enter())])
        .spawn()
        .unwrap();
    let held = Instant::now() + Duration::from_secs(20);
    let usage = || {
        std::fs::read_to_string(group.0.join("memory.usage_in_bytes"))
            .ok()
            .and_then(|u| u.trim().parse::<u64>().ok())
    };
    while usage().is_none_or(|u| u < hog_bytes) && Instant::now() < held {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(usage().is_some_and(|u| u >= hog_bytes), "the hog holds its memory: {:?}", usage());
    let line =
        "run stream/16B --lib uds,shm-ring,iceoryx2,aeron,zmq --runs 1 --warmup 20ms --duration 100ms --out";
    let (pid, output) = group.run(&[&words(line)[..], &[t.out()]].concat());
    let _ = hog.kill();
    let _ = hog.wait();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc = the_document(&t.out);
    assert!(doc.results.iter().all(|r| r.status == Status::Ok), "{:?}", doc.results);
    t.nothing_left(pid);
    std::fs::remove_dir(&group.0).expect("the cgroup is empty: every process of the run ended");
}
