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
    assert_refused(&["run", "--runs", "three", "--out", o], &["--runs \"three\": a whole number, or auto"]);
    assert_refused(
        &["run", "--duration", "1 fortnight", "--out", o],
        &["--duration \"1 fortnight\" is not a duration"],
    );
    assert_refused(&["run", "--duration", "0s", "--out", o], &["longer than zero"]);
    assert_refused(&["run", "--warmup", "abc", "--out", o], &["--warmup \"abc\""]);
    assert_refused(&["sweep", "--sizes", "4,16", "--out", o], &["--sizes", "message size 4", "from 8 bytes"]);
    assert_refused(&["sweep", "--sizes", "4kb", "--out", o], &["--sizes", "4KiB"]);
    assert_refused(&["sweep", "--sizes", "128MiB", "--out", o], &["to 64MiB"]);
    assert_refused(&["run", "queue/1x1/4KiB", "--out", o], &["unknown case"]);
    assert_refused(
        &["run", "--order", "random", "--out", o],
        &["--order \"random\": sequential or interleaved"],
    );
    assert_refused(&["run", "--fault", "kill:later:sending", "--out", o], &["unknown stage \"later\""]);
    assert_refused(&["run", "stream/16B", "--resume", "x.json"], &["--resume", "cannot be used with"]);
    assert_refused(&["run", "--resume", "/nonexistent/r.json"], &["--resume: reading /nonexistent/r.json"]);
    assert!(!out.exists(), "refused input starts no run");
}

/// Two shell loops that keep this machine's cores busy until dropped.
struct Spinners(Vec<std::process::Child>);

impl Drop for Spinners {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn doctor_names_what_bends_the_figures_and_a_run_records_it() {
    let t = RunTest::new("doctor");
    let out = ipcbench(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for fact in [
        "cores",
        "load",
        "other runs",
        "CPU governor",
        "hypervisor",
        "idle-core wake-up",
        "/dev/shm",
        "POSIX queues",
    ] {
        assert!(
            text.lines().any(|l| l.get(1..).is_some_and(|l| l.trim_start().starts_with(fact))),
            "{fact} missing:\n{text}"
        );
    }
    let msg_max = std::fs::read_to_string("/proc/sys/fs/mqueue/msg_max").unwrap();
    assert!(text.contains(&format!("msg_max {}", msg_max.trim())), "{text}");
    for &lib in LIBRARIES.iter() {
        assert!(text.split_whitespace().any(|w| w == lib), "{lib} missing:\n{text}");
    }
    let cores = std::thread::available_parallelism().unwrap().get();
    if cores >= 2 {
        assert!(text.contains("µs median"), "the wake-up is measured:\n{text}");
    }

    // Every core kept busy by others: the run warns, and records what it saw.
    let spin = Spinners(
        (0..cores).map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap()).collect(),
    );
    std::thread::sleep(Duration::from_millis(100));
    let (pid, output, doc) = short_run(&t.out, &["stream/16B", "--lib", "pipe"]);
    drop(spin);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("warning: the machine is busy"), "{stderr}");
    let c = &doc["conditions"];
    assert!(c["busy_cores"].as_f64().unwrap() > 0.2, "{c}");
    assert_eq!(c["mq_msg_max"].as_u64().unwrap().to_string(), msg_max.trim());
    if cores >= 2 {
        assert!(c["wake_up_us"]["median_us"].as_f64().unwrap() > 0.0, "{c}");
    }
    t.nothing_left(pid);
}
