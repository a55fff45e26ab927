//! The fault suite: a signal to one role in every pattern of every library (docs/FAULTS.md).

use super::*;

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

fn fault_suite(name: &str, fault: &str) {
    fault_suite_of(name, fault, &FAULTED, &[]);
}

/// One fault (`--fault`, docs/FAULTS.md) in the first trial of every listed 16 B case, for
/// every library: each such case fails with a reason naming the role, the run goes on, the 1 KiB
/// case after it passes, and the run leaves nothing behind.
fn fault_suite_of(name: &str, fault: &str, faulted: &[(&str, &str, &str, &str)], extra: &[&str]) {
    let t = RunTest::new(name);
    let mut cases: Vec<&str> = Vec::new();
    for &(faulted, _, _, clean) in faulted {
        cases.extend([faulted, clean]);
    }
    let (signal, stage, side) = {
        let f: Vec<&str> = fault.split(':').collect();
        (f[0], f[1], f[2])
    };
    let spec = format!("{fault}:*/16B");
    let (pid, output, doc) = short(
        &t.out,
        &[
            &["run"],
            &cases[..],
            &["--lib", &LIBRARIES.join(","), "--grace", "500ms", "--fault", &spec],
            extra,
        ]
        .concat(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "failed cases make the run exit 1:\n{stderr}");
    assert_eq!(doc["status"], "complete", "the run went on to its end");
    for &lib in LIBRARIES.iter() {
        for &(faulted, sending, receiving, clean) in faulted {
            let f = results_of(&doc, faulted, lib);
            let c = results_of(&doc, clean, lib);
            if f["status"] == "unsupported" {
                assert_eq!(
                    expected_status(&doc, f),
                    "unsupported",
                    "{faulted} {lib}: a dash its library has"
                );
                assert_eq!(c["status"], "unsupported", "{clean} {lib}: the same dash");
                continue;
            }
            let role = if side == "sending" { sending } else { receiving };
            let reason = f["reason"].as_str().unwrap_or_default();
            let failure = &f["failure"];
            let kind = failure["kind"].as_str().unwrap_or_default();
            let faulted_role = format!("{role} 0");
            let named = match signal {
                "kill" => {
                    let when = if stage == "setup" { "during set-up" } else { "before reporting" };
                    kind == "killed"
                        && failure["role"] == faulted_role.as_str()
                        && failure["signal"] == libc::SIGKILL
                        && reason.contains(&format!("{faulted_role} was killed by signal 9 (SIGKILL) {when}"))
                }
                // Past the deadline, waiting for it; or in set-up, where a peer may give up on it
                // first (and end).
                _ => {
                    let awaited = failure["waiting"]
                        .as_array()
                        .is_some_and(|w| w.contains(&faulted_role.clone().into()));
                    (kind == "deadline" && awaited
                        || stage == "setup" && ["killed", "exited"].contains(&kind))
                        && reason.contains(&format!("{faulted_role} (stopped"))
                }
            };
            assert!(f["status"] == "failed" && named, "{faulted} {lib} under {fault}: {f}");
            assert_eq!(
                c["status"], "ok",
                "{clean} {lib} after {fault}: the next case passes: {}",
                c["reason"]
            );
        }
    }
    t.nothing_left(pid);
}

#[test]
fn fault_kill_the_sending_side_in_set_up() {
    fault_suite("kill-setup-send", "kill:setup:sending");
}

#[test]
fn fault_kill_the_receiving_side_in_set_up() {
    fault_suite("kill-setup-recv", "kill:setup:receiving");
}

#[test]
fn fault_kill_the_sending_side_in_warm_up() {
    fault_suite("kill-warmup-send", "kill:warmup:sending");
}

#[test]
fn fault_kill_the_receiving_side_in_warm_up() {
    fault_suite("kill-warmup-recv", "kill:warmup:receiving");
}

#[test]
fn fault_kill_the_sending_side_in_the_window() {
    fault_suite("kill-window-send", "kill:window:sending");
}

#[test]
fn fault_kill_the_receiving_side_in_the_window() {
    fault_suite("kill-window-recv", "kill:window:receiving");
}

#[test]
fn fault_stop_the_receiving_side_past_the_deadline() {
    fault_suite("stop-window-recv", "stop:window:receiving");
}

#[test]
fn fault_kill_one_receiver_of_four_in_the_window() {
    fault_suite_of("kill-window-recv-of-4", "kill:window:receiving", &FAULTED_OF_FOUR, &[]);
}

#[test]
fn fault_stop_the_receiving_side_in_set_up() {
    // The set-up deadline is the set-up timeout and 5 s: a short timeout keeps the wait short.
    fault_suite_of("stop-setup-recv", "stop:setup:receiving", &FAULTED_IN_SET_UP, &["--setup-timeout", "1s"]);
}
