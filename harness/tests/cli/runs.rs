//! Runs that are interrupted, killed, resumed, run side by side, or interleaved.

use ipcbench::results::{Failure, RunStatus};

use super::*;

/// SIGINT or SIGTERM to the driver in its second case: the children stop, what is done is kept,
/// the exit code says interrupted, nothing is left.
fn interrupt_the_driver(signal: i32) {
    let t = RunTest::new(&format!("interrupt{signal}"));
    let args = words("run stream/16B stream-rtt/16B --lib iceoryx2 --runs 1 --warmup 50ms --duration 300ms");
    // The first case's line says it is done; then the second one is under way.
    let (mut driver, pid, _stderr) = start_until(&args, &t.out, "[1/2]");
    std::thread::sleep(Duration::from_millis(150));
    // SAFETY: the driver's pid, which this test started.
    unsafe { libc::kill(pid as i32, signal) };
    let started = Instant::now();
    let status = driver.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "the driver stops promptly");
    assert_eq!(status.code(), Some(130), "the exit code says interrupted");
    let doc = the_document(&t.out);
    assert_eq!(doc.status, RunStatus::Interrupted);
    assert_eq!(result_in(&doc, "stream/16B", "iceoryx2").status, Status::Ok);
    assert_eq!(result_in(&doc, "stream-rtt/16B", "iceoryx2").status, Status::Interrupted);
    // Its killed children's shared memory (and the segment iceoryx2 keeps on purpose) is gone.
    t.nothing_left(pid);
}

#[test]
fn ctrl_c_stops_the_run_and_keeps_what_is_done() {
    interrupt_the_driver(libc::SIGINT);
}

#[test]
fn sigterm_stops_the_run_and_keeps_what_is_done() {
    interrupt_the_driver(libc::SIGTERM);
}

#[test]
fn a_driver_killed_with_sigkill_leaves_a_whole_file_that_resume_finishes() {
    let t = RunTest::new("resume");
    let args = words(
        "run stream/16B stream-rtt/16B --lib fastipc,uds,pipe,posix-mq,iceoryx2 --runs 1 --warmup 30ms --duration 120ms",
    );
    let (mut driver, pid, _stderr) = start_until(&args, &t.out, "[3/10]");
    // In the fourth case's trial (posix-mq: queues no folder shows), or between two.
    std::thread::sleep(Duration::from_millis(60));
    // SAFETY: the driver's pid, which this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    driver.wait().unwrap();
    // The file is whole, as last written: the crate reads it, and its cases done stay as
    // written, key for key.
    assert_eq!(the_document(&t.out).status, RunStatus::Running, "the file as last written");
    let killed = the_json(&t.out);
    let done = killed["results"].as_array().unwrap().len();
    assert!((3..10).contains(&done), "{done} results kept");
    // The children die with their driver (PR_SET_PDEATHSIG).
    let deadline = Instant::now() + Duration::from_secs(3);
    while !children_of_run(pid).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(children_of_run(pid).is_empty(), "children outlived a killed driver");

    let file = the_json_path(&t.out);
    let resumed = bin()
        .args(["run", "--resume", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let resumed_pid = resumed.id();
    let output = resumed.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    // It says what it removed, the killed run's directory last.
    // (Its name less the random part.)
    let run_dir = std::env::temp_dir().join(tag_of_run(pid));
    let said = format!("killed before they could clean up left (pid {pid}): ");
    assert!(text.contains(&said) && text.contains(&format!("{}", run_dir.display())), "{text}");
    assert!(text.contains(&format!("resuming: {done} of 10 done before")), "{text}");
    let kept = the_json(&t.out);
    assert_eq!(
        kept["results"].as_array().unwrap()[..done],
        killed["results"].as_array().unwrap()[..],
        "the cases done are kept as they were"
    );
    let doc = the_document(&t.out);
    assert_eq!(doc.status, RunStatus::Complete);
    assert_eq!(doc.resumed.len(), 1);
    assert_eq!(doc.results.len(), 10);
    assert!(doc.results.iter().all(|r| r.status == Status::Ok), "{:?}", doc.results);
    assert_refused(&["run", "--resume", file.to_str().unwrap()], &["is complete", "nothing to resume"]);
    assert_nothing_left(resumed_pid, &t.shm_before);
    t.nothing_left(pid);
}

#[test]
fn two_runs_at_once_do_not_collide_and_each_warns_of_the_other() {
    let t = RunTest::new("concurrent");
    let (a_out, b_out) = (t.out.join("a"), t.out.join("b"));
    // Every library at once in both: no channel, file, directory or service may collide.
    let line = format!(
        "stream/16B stream-rtt/16B --lib {} --runs 1 --warmup 30ms --duration 100ms",
        LIBRARIES.join(",")
    );
    let mut a = start(&words(&format!("run {line} stream/1KiB")), &a_out);
    let mut a_err = BufReader::new(a.stderr.take().unwrap());
    // The first has its lock once it names its results file.
    let mut a_text = read_until(&mut a_err, "results in");
    let b = start(&words(&format!("run {line}")), &b_out);
    let (a_pid, b_pid) = (a.id(), b.id());
    let b_output = b.wait_with_output().unwrap();
    a_err.read_to_string(&mut a_text).unwrap();
    assert!(a.wait().unwrap().success(), "{a_text}");
    let b_text = String::from_utf8_lossy(&b_output.stderr);
    assert!(b_output.status.success(), "{b_text}");
    for (text, other, out) in [(&a_text[..], b_pid, &a_out), (&b_text[..], a_pid, &b_out)] {
        assert!(text.contains(&format!("another ipcbench run (pid {other}) is running")), "{text}");
        let doc = the_document(out);
        for r in &doc.results {
            assert_eq!(r.status, expected_status(&doc, r), "{} {}: {:?}", r.case, r.library, r.reason);
        }
        assert!(
            doc.results.iter().any(|r| r.concurrent_runs.contains(&other)),
            "the results record the other run"
        );
    }
    assert_nothing_left(b_pid, &t.shm_before);
    t.nothing_left(a_pid);
}

#[test]
fn more_runs_interleaved_alternate_the_libraries_and_record_their_spread() {
    let t = RunTest::new("interleaved");
    let args = words(
        "run stream/16B --lib fastipc,uds --runs 4 --order interleaved --warmup 20ms --duration 60ms -v",
    );
    let driver = start(&args, &t.out);
    let pid = driver.id();
    let output = driver.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    let trials: Vec<&str> = text.lines().filter(|l| l.starts_with("  stream/16B ")).map(str::trim).collect();
    let mut expected = Vec::new();
    for run in 1..=4 {
        for lib_mode in ["fastipc waiting", "fastipc polling", "uds waiting", "uds polling"] {
            expected.push(format!("stream/16B {lib_mode} run {run}/4"));
        }
    }
    assert_eq!(trials, expected, "round by round: A B A B");
    let doc = the_document(&t.out);
    assert_eq!(doc.settings.config.order, results::Order::Interleaved);
    for lib in ["fastipc", "uds"] {
        let r = result_in(&doc, "stream/16B", lib);
        assert!(r.modes.iter().all(|m| m.runs.len() == 4), "{r:?}");
        let best = r.best().expect("the better mode's runs");
        // The spread is of the runs in the result's host state, or of every run where the mode
        // has none in it (the host moved between the modes' runs).
        let state = r.state();
        let in_state = |x: &&RunRecord| state.is_none() || x.state.as_deref() == state;
        let counted: Vec<&RunRecord> = if best.runs.iter().any(|x| in_state(&x)) {
            best.runs.iter().filter(in_state).collect()
        } else {
            best.runs.iter().collect()
        };
        let rates: Vec<f64> = counted.iter().map(|x| x.figures.msgs_per_s).collect();
        let spread = r.spread.as_ref().expect("a spread of 4 runs");
        let (min, max) =
            (rates.iter().copied().fold(f64::MAX, f64::min), rates.iter().copied().fold(0.0, f64::max));
        let median = median_of(r).msgs_per_s;
        assert_eq!(spread.figure, results::Figure::MsgsPerS);
        assert_eq!((spread.min, spread.max), (min, max));
        assert!((spread.relative - (max - min) / median).abs() < 1e-9, "{spread:?}");
        let noisy = (max - min) / median > 0.10;
        let line =
            text.lines().find(|l| l.contains(&format!("stream/16B {lib}")) && l.starts_with('[')).unwrap();
        assert_eq!(line.contains("NOISY"), noisy, "flagged when noisy: {line}");
    }
    t.nothing_left(pid);
}

#[test]
fn an_iceoryx2_child_stops_on_sigterm_and_leaves_nothing() {
    let t = RunTest::new("sigterm");
    let default_root = Path::new("/tmp/iceoryx2");
    let had_default_root = default_root.exists();
    let line =
        "run broadcast/lossless/1sub/16B stream/16B --lib iceoryx2 --runs 1 --warmup 100ms --duration 1500ms";
    // The subscriber waits in iceoryx2's listener; iceoryx2 would catch SIGTERM by default.
    let (pid, status, stderr, doc) =
        t.run_and_signal(line, &["subscriber"], Duration::from_millis(600), libc::SIGTERM);
    assert_eq!(status.code(), Some(1), "{stderr}");
    let r = result_in(&doc, "broadcast/lossless/1sub/16B", "iceoryx2");
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.failure, Some(Failure::Killed { role: "subscriber 0".into(), signal: 15 }), "{r:?}");
    let reason = r.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("subscriber 0 was killed by signal 15"), "{reason}");
    assert_eq!(result_in(&doc, "stream/16B", "iceoryx2").status, Status::Ok);
    assert!(had_default_root || !default_root.exists(), "nothing in iceoryx2's default root");
    t.nothing_left(pid);
}

#[test]
fn an_interleaved_run_interrupted_mid_round_is_resumed_whole() {
    let t = RunTest::new("interleaved-resume");
    let args =
        words("run stream/16B --lib uds,pipe --runs 3 --order interleaved --warmup 20ms --duration 60ms -v");
    let (mut driver, pid, _stderr) = start_until(&args, &t.out, "stream/16B pipe waiting run 2/3");
    // SAFETY: the driver's pid, which this test started.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    assert_eq!(driver.wait().unwrap().code(), Some(130));
    let doc = the_document(&t.out);
    assert_eq!(doc.status, RunStatus::Interrupted);
    for lib in ["uds", "pipe"] {
        // Both had runs to go: neither median stands on fewer runs than asked for.
        assert_eq!(result_in(&doc, "stream/16B", lib).status, Status::Interrupted, "{lib}");
    }
    let file = the_json_path(&t.out);
    let out = ipcbench(&["run", "--resume", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = the_document(&t.out);
    assert_eq!(doc.status, RunStatus::Complete);
    assert_eq!(doc.settings.config.order, results::Order::Interleaved);
    for lib in ["uds", "pipe"] {
        let r = result_in(&doc, "stream/16B", lib);
        assert_eq!(r.status, Status::Ok, "{lib}: {r:?}");
        assert_eq!(r.modes[0].runs.len(), 3, "{lib}: every run, again");
    }
    t.nothing_left(pid);
}

/// The CPU each role ran on, per receive mode and run: (role, index, cpu).
fn cpus_of(result: &CaseResult) -> Vec<Vec<(Role, usize, Option<usize>)>> {
    runs_of(result).map(|run| run.roles.iter().map(|r| (r.role, r.index, r.cpu)).collect()).collect()
}

#[test]
fn pinned_roles_run_on_the_cpus_the_results_record() {
    let t = RunTest::new("pin");
    // Aeron's media driver and ZeroMQ's I/O thread start after the pin and share their role's CPU.
    let (pid, output, doc) =
        short(&t.out, &words("run stream-rtt/16B service/4c1s/16B --lib uds,aeron,zmq --pin"));
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    assert_eq!(doc.settings.config.pin, Some(results::Pin::Spread));
    let cpus = ipcbench::machine::allowed_cpus();
    let roles = |case: &str| ipcbench::matrix::find(case).unwrap().roles();
    for lib in ["uds", "aeron", "zmq"] {
        for case in ["stream-rtt/16B", "service/4c1s/16B"] {
            let r = result_in(&doc, case, lib);
            if r.status == Status::Unsupported {
                continue;
            }
            assert_eq!(r.status, Status::Ok, "{r:?}");
            for run in cpus_of(r) {
                for (i, (role, index)) in roles(case).iter().enumerate() {
                    let seen = run.iter().find(|x| x.0 == *role && x.1 == *index).unwrap();
                    assert_eq!(seen.2, Some(cpus[i % cpus.len()]), "{case} {lib} {seen:?}");
                }
            }
            let placement = r.placement.as_deref().unwrap();
            assert!(placement.contains(&format!("CPU {}: ", cpus[0])), "{placement}");
            if roles(case).len() > cpus.len() {
                assert!(placement.starts_with(&format!("5 roles on {} CPU", cpus.len())), "{placement}");
            }
        }
    }
    t.nothing_left(pid);

    let t = RunTest::new("pin-same-core");
    let (pid, output, doc) = short(&t.out, &words("run stream/16B --lib shm-ring,uds --pin=same-core"));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    for lib in ["shm-ring", "uds"] {
        let r = result_in(&doc, "stream/16B", lib);
        assert_eq!(r.status, Status::Ok, "{r:?}");
        assert!(cpus_of(r).iter().flatten().all(|x| x.2 == Some(cpus[0])), "{r:?}");
        assert_eq!(
            r.placement.as_deref(),
            Some(format!("2 roles on 1 CPU, shared; CPU {}: receiver 0, sender 0", cpus[0]).as_str())
        );
    }
    t.nothing_left(pid);
    assert_refused(&words("run stream/16B --pin=everywhere"), &["'everywhere' for '--pin", "=same-core"]);
}

#[test]
fn runs_auto_goes_on_until_each_figure_resolves_or_the_cap() {
    let t = RunTest::new("runs-auto");
    // 0.1% is finer than any two runs of 60 ms agree here: every result takes the cap.
    let line = "run stream/16B stream/1KiB --lib uds,shm-ring --runs auto --resolve 0.1% --max-runs 5 --verify sample --warmup 20ms --duration 60ms";
    let driver = start(&words(line), &t.out);
    let pid = driver.id();
    let output = driver.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    let doc = the_document(&t.out);
    let config = &doc.settings.config;
    assert_eq!(config.runs_auto, Some(results::AutoRuns { resolve: 0.001, max_runs: 5 }));
    assert_eq!(config.verify, results::Verify::Sample, "the check is recorded");
    for lib in ["uds", "shm-ring"] {
        // A sampled 1 KiB body arrives whole by its check, in every run.
        assert_eq!(result_in(&doc, "stream/1KiB", lib).status, Status::Ok);
        let r = result_in(&doc, "stream/16B", lib);
        assert_eq!(r.status, Status::Ok, "{r:?}");
        let taken = r.runs_taken.unwrap();
        // Each result records the smallest change it tells; it stops short of the cap only
        // once every mode's runs resolve 0.1 %.
        let resolution = r.resolution.unwrap();
        assert!(resolution >= 0.0, "{r:?}");
        assert!(taken == 5 || (3..5).contains(&taken) && resolution <= 0.001, "{r:?}");
        for m in &r.modes {
            assert_eq!(m.runs.len() as u32, taken, "{m:?}");
        }
        let line = text.lines().find(|l| l.contains(&format!("] stream/16B {lib} "))).unwrap();
        assert!(line.contains(&format!("(runs auto: {taken} runs)")), "{line}");
        assert!(line.contains("(±"), "the line says what its figure resolves: {line}");
    }
    t.nothing_left(pid);

    // At 99% the first 3 runs do, unless a mode's 3 runs spread wider than that resolves (on a
    // VM one run can halve): then the rule goes on.
    let t = RunTest::new("runs-auto-wide");
    let line = "run stream/16B --lib uds --runs auto --resolve 99% --warmup 20ms --duration 60ms";
    let driver = start(&words(line), &t.out);
    let pid = driver.id();
    assert!(driver.wait_with_output().unwrap().status.success());
    let doc = the_document(&t.out);
    let r = result_in(&doc, "stream/16B", "uds");
    let first_three_wide = r.modes.iter().any(|m| {
        let logs: Vec<f64> = m.runs[..3].iter().map(|x| x.figures.msgs_per_s.ln()).collect();
        let mean = logs.iter().sum::<f64>() / 3.0;
        let s = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        // t(4) 2.776 * s * sqrt(2/3) beyond ln(1.99).
        2.776 * s * (2.0f64 / 3.0).sqrt() > 1.99f64.ln()
    });
    assert!(r.runs_taken == Some(3) || first_three_wide, "{r:?}");
    t.nothing_left(pid);
    for (line, words_of) in [
        ("run stream/16B --resolve 5%", &["--resolve and --max-runs go with --runs auto, not --runs 3"][..]),
        ("run stream/16B --runs 5 --resolve 5%", &["not --runs 5"]),
        ("run stream/16B --runs auto --resolve 0%", &["--resolve 0%: give more than 0% and less than 100%"]),
        (
            "run stream/16B --runs auto --resolve 100%",
            &["--resolve 100%: give more than 0% and less than 100%"],
        ),
        ("run stream/16B --runs auto --resolve 150%", &["a percentage from 0% to 100%"]),
        ("run stream/16B --runs auto --max-runs 2", &["--max-runs 2: a whole number from 3 to 100"]),
        ("run stream/16B --runs many", &["'many' for '--runs", "or auto"]),
        ("run stream/16B --verify some", &["'some' for '--verify", "sample or full"]),
    ] {
        assert_refused(&words(line), words_of);
    }
}
