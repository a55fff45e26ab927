//! `run --against OTHER`: the other binary checked before any trial (a missing file, a folder,
//! a file that cannot run, a binary that is not ipcbench, one of another role protocol), the
//! flags that go with it, and an A/B run of this binary against itself under another name: both
//! sides and the sentinel in the same rounds, each figure paired, the exit code its verdicts make.

use std::os::unix::fs::PermissionsExt;

use ipcbench::results::ab::{AbVerdict, Side};
use ipcbench_api::RecvMode;

use super::*;

/// An executable shell script at `path` that prints `line` whatever it is asked.
fn script(path: &Path, line: &str) {
    std::fs::write(path, format!("#!/bin/sh\necho '{line}'\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A run of uds against `other`.
fn run(other: &str) -> Vec<&str> {
    vec!["run", "stream/16B", "--lib", "uds", "--against", other]
}

#[test]
fn another_binary_that_cannot_be_driven_is_refused_before_any_trial() {
    let dir = out_dir("ab-refusals");
    std::fs::create_dir_all(&dir).unwrap();
    let at = |name: &str| dir.join(name).to_str().unwrap().to_string();
    assert_refused(&run(&at("missing")), &["--against", "missing: no such file to run"]);
    assert_refused(&run(dir.to_str().unwrap()), &["is a folder: name the other ipcbench binary"]);
    std::fs::write(dir.join("plain"), "not a program").unwrap();
    assert_refused(&run(&at("plain")), &["plain is not executable"]);
    // A program that is not ipcbench: `true` says nothing, a script says something else.
    assert_refused(
        &run("/bin/true"),
        &["/bin/true is not an ipcbench binary this driver can run", "said \"\""],
    );
    script(&dir.join("other"), "hello");
    assert_refused(&run(&at("other")), &["is not an ipcbench binary", "said \"hello"]);
    // An ipcbench of another role protocol: both named.
    let them = r#"{"tool":"ipcbench","version":"0.0.1","protocol":99,"child_flags":["lib"],"libraries":[["uds","1"]]}"#;
    script(&dir.join("older"), them);
    assert_refused(
        &run(&at("older")),
        &[
            "is ipcbench 0.0.1 (role protocol 99; child flags lib), this driver is ipcbench",
            "role protocol 1;",
        ],
    );
    // One of this protocol that lacks the library asked for.
    let mine: Value = serde_json::from_slice(&ipcbench(&["identify"]).stdout).unwrap();
    let mut lacking = mine.clone();
    lacking["libraries"] = serde_json::json!([["zmq", "4.3.5"]]);
    script(&dir.join("lacking"), &lacking.to_string());
    assert_refused(&run(&at("lacking")), &["has no library uds built in (it has zmq)"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_flags_of_an_ab_run_are_checked() {
    let against = ["run", "stream/16B", "--against", BIN];
    for (flag, value, expect) in [
        ("--threshold", "0%", "--threshold 0%: give more than 0% and less than 100%"),
        ("--threshold", "100%", "--threshold 100%: give more than 0% and less than 100%"),
        ("--resolve", "0%", "--resolve 0%: give more than 0% and less than 100%"),
        ("--max-rounds", "7", "--max-rounds 7: a whole number from 8 to 100"),
        ("--budget", "0s", "--budget 0s"),
    ] {
        assert_refused(&[&against[..], &[flag, value]].concat(), &[expect]);
    }
    // They go with --against alone, which goes with no fixed count of runs or order.
    assert_refused(&["run", "stream/16B", "--threshold", "5%"], &["--against"]);
    assert_refused(&["run", "stream/16B", "--allow-unresolved"], &["--against"]);
    assert_refused(&[&against[..], &["--runs", "5"]].concat(), &["cannot be used with"]);
    assert_refused(&[&against[..], &["--order", "sequential"]].concat(), &["cannot be used with"]);
    // The calibration's weight is no flag of run's.
    assert_refused(&["run", "stream/16B", "--handicap-ns", "100"], &["unexpected argument '--handicap-ns'"]);
    // `identify` says what the driver checks.
    let mine: Value = serde_json::from_slice(&ipcbench(&["identify"]).stdout).unwrap();
    assert_eq!(mine["tool"], "ipcbench");
    assert_eq!(mine["protocol"], ipcbench::ab::binary::PROTOCOL);
    assert!(mine["child_flags"].as_array().unwrap().iter().any(|f| f == "handicap-ns"), "{mine}");
}

/// This binary against itself under another name (a link): allowed, as the sentinel's case is.
/// Every round runs base, candidate and sentinel; each figure is paired over the rounds; the
/// exit code is what the verdicts say; the report has the A/B's section; nothing is left.
#[test]
fn an_ab_run_of_one_binary_against_itself_pairs_every_round() {
    let t = RunTest::new("ab-self");
    std::fs::create_dir_all(&t.out).unwrap();
    let other = t.out.join("ipcbench-other");
    std::os::unix::fs::symlink(BIN, &other).unwrap();
    let mut c = bin();
    c.args([
        "run",
        "stream/16B",
        "--lib",
        "shm-ring",
        "--duration",
        "40ms",
        "--warmup",
        "20ms",
        "--max-rounds",
        "9",
    ])
    .arg("--against")
    .arg(&other)
    .arg("--out")
    .arg(&t.out);
    let (pid, out) = to_the_end(&mut c);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stderr.contains("is this very binary (the same bytes)"), "{stderr}");
    let doc = the_document(&t.out);
    let ab = doc.ab.as_ref().expect("an A/B run's record");
    let binaries = &ab.binaries;
    assert_eq!(binaries.len(), 2);
    assert_eq!((binaries[0].side, binaries[1].side), (Side::Base, Side::Candidate));
    assert_eq!(binaries[0].build, binaries[1].build, "one build on both sides");
    // The control is the case's one library and its sentinel: three results, one per side.
    let sides: Vec<Option<Side>> = doc.results.iter().map(|r| r.side).collect();
    assert_eq!(sides, [Some(Side::Base), Some(Side::Candidate), Some(Side::Sentinel)]);
    let rounds_of = |r: &CaseResult, mode: RecvMode| -> Vec<u32> {
        let m = r.modes.iter().find(|m| m.mode == mode).unwrap();
        m.runs.iter().map(|x| x.round.expect("a run's round")).collect()
    };
    for r in &doc.results {
        assert_eq!(r.status, Status::Ok, "{:?}", r.reason);
        for mode in [RecvMode::Polling, RecvMode::Waiting] {
            let rounds = rounds_of(r, mode);
            // Every side ran in every round, 8 at least, 9 at most, in order.
            assert!((8..=9).contains(&rounds.len()), "{mode}: {rounds:?}");
            assert_eq!(rounds, (1..=rounds.len() as u32).collect::<Vec<_>>());
            assert_eq!(rounds, rounds_of(&doc.results[0], mode), "each side runs the base's rounds");
        }
    }
    let figures = &ab.figures;
    assert_eq!(figures.len(), 4, "two modes, candidate and sentinel: {figures:?}");
    let verdicts: Vec<AbVerdict> = figures.iter().map(|f| f.verdict).collect();
    for f in figures {
        assert!(f.low <= f.ratio && f.ratio <= f.high && f.low > 0.0, "{f:?}");
        // The rounds run, 8 or 9; those the host moved in are left out of the ratio, counted.
        assert!((8..=9).contains(&(f.rounds + f.unheld)), "{f:?}");
        assert_eq!(f.figure, results::Figure::MsgsPerS);
    }
    // The exit code is what the verdicts make (this host decides which: short windows are noisy).
    let sentinel_changed = figures
        .iter()
        .any(|f| f.side == Side::Sentinel && matches!(f.verdict, AbVerdict::Slower | AbVerdict::Faster));
    let expected = if sentinel_changed {
        3
    } else if figures.iter().any(|f| f.side == Side::Candidate && f.verdict == AbVerdict::Slower) {
        1
    } else if verdicts.contains(&AbVerdict::Unresolved) {
        3
    } else {
        0
    };
    assert_eq!(out.status.code(), Some(expected), "{verdicts:?}\n{stderr}");
    assert!(stdout.contains("ratio") && stdout.contains("shm-ring (sentinel)"), "{stdout}");
    assert!(stderr.contains("the A/B took") && stderr.contains("a plain run of these cases"), "{stderr}");
    let report = std::fs::read_to_string(the_json_path(&t.out).with_extension("").join("report.md")).unwrap();
    assert!(report.contains("## A/B: "), "the report has no A/B section");
    // An A/B run is never resumed: its pairs are one sitting's.
    let copy = t.out.join("copy.json");
    let mut interrupted = the_json(&t.out);
    interrupted["status"] = "interrupted".into();
    std::fs::write(&copy, interrupted.to_string()).unwrap();
    let resumed = ipcbench(&["run", "--resume", copy.to_str().unwrap()]);
    assert_eq!(resumed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("is an A/B run (--against)"));
    t.nothing_left(pid);
}
