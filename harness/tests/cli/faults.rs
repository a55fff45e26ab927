//! The fault suite: a signal to one role in every pattern of every library (docs/FAULTS.md).

use super::*;
use ipcbench::results::Failure;

/// The fault suite's cases: one of each pattern at 16 B, where the fault goes, each followed by
/// its 1 KiB twin, which must pass: (faulted case, sending role, receiving role, clean case).
const FAULTED: [(&str, &str, &str, &str); 6] = [
    ("stream/16B", "sender", "receiver", "stream/1KiB"),
    ("stream-rtt/16B", "pinger", "echo", "stream-rtt/1KiB"),
    ("broadcast/lossless/1sub/16B", "publisher", "subscriber", "broadcast/lossless/1sub/1KiB"),
    ("broadcast/lossy/1sub/16B", "publisher", "subscriber", "broadcast/lossy/1sub/1KiB"),
    ("queue/1x1/16B", "producer", "consumer", "queue/1x1/1KiB"),
    ("service/1c1s/16B", "client", "server", "service/1c1s/1KiB"),
];

/// The 4-process variants: a subscriber of four, a consumer of four, a server of four.
const FAULTED_OF_FOUR: [(&str, &str, &str, &str); 3] = [
    ("broadcast/lossless/4sub/16B", "publisher", "subscriber", "broadcast/lossless/4sub/1KiB"),
    ("queue/4x4/16B", "producer", "consumer", "queue/4x4/1KiB"),
    ("service/4c4s/16B", "client", "server", "service/4c4s/1KiB"),
];

/// SIGSTOP in set-up: one case per library, each waits out the set-up deadline.
const FAULTED_IN_SET_UP: [(&str, &str, &str, &str); 1] =
    [("stream/16B", "sender", "receiver", "stream/1KiB")];

/// How a fault suite's run goes, with the short windows every test has (shorter ones leave a
/// clean case's window empty now and then on two busy cores: nng's producer, at 30 ms).
#[derive(Clone, Copy)]
enum Run {
    /// Alone: a kill's suite is busy, every trial dying at once or running its windows.
    Alone,
    /// Beside the other tests (`RunTest::beside`): a stopped role's suite mostly waits for the
    /// deadline that finds it.
    Beside,
}

fn fault_suite(name: &str, fault: &str, run: Run) {
    fault_suite_of(name, fault, &FAULTED, &[], run);
}

/// One fault (`--fault`, docs/FAULTS.md) in the first trial of every listed 16 B case, for
/// every library: each such case fails with a reason naming the role, the run goes on, the 1 KiB
/// case after it passes, and the run leaves nothing behind.
fn fault_suite_of(name: &str, fault: &str, faulted: &[(&str, &str, &str, &str)], extra: &[&str], run: Run) {
    let t = if matches!(run, Run::Beside) { RunTest::beside(name) } else { RunTest::new(name) };
    let mut cases: Vec<&str> = Vec::new();
    for &(faulted, _, _, clean) in faulted {
        cases.extend([faulted, clean]);
    }
    let (signal, stage, side) = {
        let f: Vec<&str> = fault.split(':').collect();
        (f[0], f[1], f[2])
    };
    let spec = format!("{fault}:*/16B");
    let libraries = LIBRARIES.join(",");
    let args = [
        &["run"],
        &cases[..],
        &["--lib", &libraries, "--grace", "500ms", "--fault", &spec],
        &["--runs", "1", "--duration", "120ms", "--warmup", "30ms"],
        extra,
    ]
    .concat();
    let (pid, output) = match run {
        Run::Alone => to_the_end(bin().args(&args).arg("--out").arg(&t.out)),
        Run::Beside => t.run_beside(&args),
    };
    let doc = the_document(&t.out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "failed cases make the run exit 1:\n{stderr}");
    assert_eq!(doc.status, results::RunStatus::Complete, "the run went on to its end");
    for &lib in LIBRARIES.iter() {
        for &(faulted, sending, receiving, clean) in faulted {
            let f = result_in(&doc, faulted, lib);
            let c = result_in(&doc, clean, lib);
            if f.status == Status::Unsupported {
                assert_eq!(
                    expected_status(&doc, f),
                    Status::Unsupported,
                    "{faulted} {lib}: a dash its library has"
                );
                assert_eq!(c.status, Status::Unsupported, "{clean} {lib}: the same dash");
                continue;
            }
            let role = if side == "sending" { sending } else { receiving };
            let reason = f.reason.as_deref().unwrap_or_default();
            let faulted_role = format!("{role} 0");
            let named = match (signal, &f.failure) {
                ("kill", Some(Failure::Killed { role, signal })) => {
                    let when = if stage == "setup" { "during set-up" } else { "before reporting" };
                    *role == faulted_role
                        && *signal == libc::SIGKILL
                        && reason.contains(&format!("{faulted_role} was killed by signal 9 (SIGKILL) {when}"))
                }
                ("kill", _) => false,
                // Past the deadline, waiting for it; or in set-up, where a peer may give up on it
                // first (and end).
                (_, failure) => {
                    let awaited = matches!(failure, Some(Failure::Deadline { waiting }) if waiting.contains(&faulted_role));
                    let ended = matches!(failure, Some(Failure::Killed { .. } | Failure::Exited { .. }));
                    (awaited || stage == "setup" && ended)
                        && reason.contains(&format!("{faulted_role} (stopped"))
                }
            };
            assert!(f.status == Status::Failed && named, "{faulted} {lib} under {fault}: {f:?}");
            assert_eq!(
                c.status,
                Status::Ok,
                "{clean} {lib} after {fault}: the next case passes: {:?}",
                c.reason
            );
        }
    }
    match run {
        Run::Alone => t.nothing_left(pid),
        Run::Beside => t.nothing_left_beside(pid, &output),
    }
}

#[test]
fn fault_kill_the_sending_side_in_set_up() {
    fault_suite("kill-setup-send", "kill:setup:sending", Run::Alone);
}

#[test]
fn fault_kill_the_receiving_side_in_set_up() {
    fault_suite("kill-setup-recv", "kill:setup:receiving", Run::Alone);
}

#[test]
fn fault_kill_the_sending_side_in_warm_up() {
    fault_suite("kill-warmup-send", "kill:warmup:sending", Run::Alone);
}

#[test]
fn fault_kill_the_receiving_side_in_warm_up() {
    fault_suite("kill-warmup-recv", "kill:warmup:receiving", Run::Alone);
}

#[test]
fn fault_kill_the_sending_side_in_the_window() {
    fault_suite("kill-window-send", "kill:window:sending", Run::Alone);
}

#[test]
fn fault_kill_the_receiving_side_in_the_window() {
    fault_suite("kill-window-recv", "kill:window:receiving", Run::Alone);
}

#[test]
fn fault_stop_the_receiving_side_past_the_deadline() {
    fault_suite("stop-window-recv", "stop:window:receiving", Run::Beside);
}

#[test]
fn fault_kill_one_receiver_of_four_in_the_window() {
    fault_suite_of("kill-window-recv-of-4", "kill:window:receiving", &FAULTED_OF_FOUR, &[], Run::Alone);
}

#[test]
fn fault_stop_the_receiving_side_in_set_up() {
    // The set-up deadline is the set-up timeout and 5 s: a short timeout keeps the wait short.
    fault_suite_of(
        "stop-setup-recv",
        "stop:setup:receiving",
        &FAULTED_IN_SET_UP,
        &["--setup-timeout", "1s"],
        Run::Beside,
    );
}
