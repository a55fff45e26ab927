//! Bad input refused with a clear message; the doctor and the conditions a run records.

use super::*;

#[test]
fn bad_input_is_refused_with_a_clear_message() {
    let out = out_dir("bad");
    let o = out.to_str().unwrap();
    assert_refused(
        &["run", "stream/16", "--out", o],
        &["unknown case \"stream/16\"", "did you mean", "stream/16B"],
    );
    assert_refused(&["run", "strem-rtt/16B", "--out", o], &["stream-rtt/16B"]);
    assert_refused(
        &["run", "--lib", "fastpic", "--out", o],
        &["unknown library \"fastpic\"", "did you mean fastipc"],
    );
    let all = format!("the libraries built in are {}", LIBRARIES.join(", "));
    assert_refused(&["run", "--lib", "zeromq3", "--out", o], &["unknown library \"zeromq3\"", &all]);
    assert_refused(&["run", "--runs", "0", "--out", o], &["--runs 0"]);
    assert_refused(
        &["run", "--runs", "three", "--out", o],
        &["'three' for '--runs", "a whole number, or auto"],
    );
    assert_refused(
        &["run", "--duration", "1 fortnight", "--out", o],
        &["'1 fortnight' for '--duration", "not a duration", "write it as 1s"],
    );
    assert_refused(
        &["run", "--duration", "0s", "--out", o],
        &["too short a window to measure; give at least 10ms"],
    );
    assert_refused(&["run", "--warmup", "abc", "--out", o], &["'abc' for '--warmup", "not a duration"]);
    assert_refused(&["sweep", "--sizes", "4,16", "--out", o], &["--sizes", "message size 4", "from 8 bytes"]);
    assert_refused(&["sweep", "--sizes", "4kb", "--out", o], &["--sizes", "4KiB"]);
    assert_refused(&["sweep", "--sizes", "128MiB", "--out", o], &["to 64MiB"]);
    assert_refused(&["run", "queue/1x1/4KiB", "--out", o], &["unknown case"]);
    assert_refused(
        &["run", "--order", "random", "--out", o],
        &["'random' for '--order", "rounds, interleaved or sequential"],
    );
    assert_refused(&["run", "--fault", "kill:later:sending", "--out", o], &["unknown stage \"later\""]);
    assert_refused(&["run", "stream/16B", "--resume", "x.json"], &["--resume", "cannot be used with"]);
    assert_refused(&["run", "--resume", "/nonexistent/r.json"], &["--resume: reading /nonexistent/r.json"]);
    assert!(!out.exists(), "refused input starts no run");
}

#[test]
fn doctor_names_what_bends_the_figures_and_a_run_records_it() {
    let t = RunTest::new("doctor");
    // As a user's shell runs it, without the tests' IPCBENCH_VERIFY.
    let out = bin().arg("doctor").env_remove("IPCBENCH_VERIFY").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for fact in [
        "cores",
        "load",
        "other runs",
        "CPU governor",
        "hypervisor",
        "idle-core wake-up",
        "idle driver",
        "huge pages",
        "/dev/shm",
        "POSIX queues",
        "run defaults",
    ] {
        assert!(
            text.lines().any(|l| l.get(1..).is_some_and(|l| l.trim_start().starts_with(fact))),
            "{fact} missing:\n{text}"
        );
    }
    let msg_max = std::fs::read_to_string("/proc/sys/fs/mqueue/msg_max").unwrap();
    assert!(text.contains(&format!("msg_max {}", msg_max.trim())), "{text}");
    // The defaults are the parser's own: what a bare `run` records in its file.
    assert!(text.contains("3 runs of 1 s after 0.3 s of warm-up, order rounds, --verify sample"), "{text}");
    // What the kernel says of its huge pages, as it says it.
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok();
    if let Some(mode) = thp.as_deref().and_then(|t| t.split_whitespace().find(|w| w.starts_with('['))) {
        assert!(text.contains(&format!("anonymous {}", mode.trim_matches(['[', ']']))), "{text}");
    }
    for &lib in LIBRARIES.iter() {
        assert!(text.split_whitespace().any(|w| w == lib), "{lib} missing:\n{text}");
    }
    let cores = std::thread::available_parallelism().unwrap().get();
    if cores >= 2 {
        assert!(text.contains("µs median"), "the wake-up is measured:\n{text}");
    }

    // Every core kept busy by others: the run warns, and records what it saw.
    let spin = Hogs::one_per_core();
    std::thread::sleep(Duration::from_millis(100));
    let (pid, output, doc) = short_run(&t.out, &["stream/16B", "--lib", "pipe"]);
    drop(spin);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("warning: the machine is busy"), "{stderr}");
    let c = doc.conditions.as_ref().expect("the run's conditions");
    assert!(c.busy_cores > 0.2, "{c:?}");
    assert_eq!(c.mq_msg_max.map(|n| n.to_string()).as_deref(), Some(msg_max.trim()), "{c:?}");
    if thp.is_some() {
        assert!(c.huge_pages.as_deref().unwrap().starts_with("anonymous "), "{c:?}");
    }
    // The tests' runs check every byte: a file says so by leaving `verify` out, as files did
    // before the sample.
    assert_eq!(doc.settings.config.verify, results::Verify::Full);
    let settings = &the_json(&t.out)["settings"];
    assert!(settings.get("verify").is_none(), "{settings}");
    if cores >= 2 {
        assert!(c.wake_up_us.unwrap().median_us > 0.0, "{c:?}");
    }
    t.nothing_left(pid);
}

/// The table of docs/FAULTS.md's "Bad input", row by row: each command exits 2 within 10 s,
/// says every quoted fragment, never panics, and starts no run.
#[test]
fn bad_input_from_faults_md_is_refused() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/FAULTS.md")).unwrap();
    let table = doc.split("\n## Bad input\n").nth(1).expect("FAULTS.md has a Bad input section");
    let table = table.split("\n## ").next().unwrap();
    let fixtures = out_dir("bad-input-fixtures");
    std::fs::create_dir_all(&fixtures).unwrap();
    let at = |name: &str| fixtures.join(name).to_str().unwrap().to_string();
    let fifo = std::ffi::CString::new(at("fifo")).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("/dev/zero", at("zero")).unwrap();
    std::fs::create_dir(at("dir")).unwrap();
    std::fs::write(at("empty"), "").unwrap();
    std::fs::write(at("text"), "hello\n").unwrap();
    std::fs::write(at("other.json"), "{\"a\": 1}").unwrap();
    std::fs::write(at("v99.json"), "{\"schema_version\": 99}").unwrap();
    std::fs::write(at("binary"), [0xff, 0xfe, 0x00, 0x80, 0xc3]).unwrap();
    std::fs::File::create(at("huge")).unwrap().set_len(300 << 20).unwrap();
    let long = fixtures.join("l".repeat(100));
    std::fs::create_dir(&long).unwrap();
    let vars = [
        ("$FIFO", at("fifo")),
        ("$ZERO", at("zero")),
        ("$DIR", at("dir")),
        ("$EMPTY", at("empty")),
        ("$TEXT", at("text")),
        ("$OTHER", at("other.json")),
        ("$V99", at("v99.json")),
        ("$BINARY", at("binary")),
        ("$HUGE", at("huge")),
        ("$OUT", at("out")),
        ("$LONG", long.to_str().unwrap().to_string()),
    ];
    let mut rows = 0;
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let command = cells[0].trim_start_matches("| ").trim_matches('`');
        let expect: Vec<&str> = cells[1].split('`').skip(1).step_by(2).collect();
        assert!(!expect.is_empty(), "{line}: no fragment to look for");
        let mut words: Vec<String> = command
            .split(' ')
            .map(|w| {
                let w = if w == "\"\"" { "" } else { w };
                vars.iter().fold(w.to_string(), |w, (k, v)| w.replace(k, v))
            })
            .collect();
        let mut c = bin();
        while words[0].contains('=') {
            let w = words.remove(0);
            let (k, v) = w.split_once('=').unwrap();
            c.env(k, v);
        }
        assert_eq!(words.remove(0), "ipcbench", "{line}");
        let mut child = c.args(&words).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{command}: still running after 10 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(!stderr.contains("panicked"), "{command}: {stderr}");
        for e in &expect {
            let e = vars.iter().fold(e.to_string(), |e, (k, v)| e.replace(k, v));
            assert!(stderr.contains(&e), "{command}: {e:?} not in {stderr}");
        }
        let started = std::fs::read_dir(at("out")).map_or(0, |d| d.count());
        assert_eq!(started, 0, "{command}: a run was started");
        rows += 1;
    }
    assert!(rows >= 50, "{rows} rows read");
    let _ = std::fs::remove_dir_all(&fixtures);
}
