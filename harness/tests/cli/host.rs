//! The host's state: every run carries its probes before and after its window, every result
//! the state its figure comes from, rounds rotate, the report draws the probes across the run,
//! and `doctor --watch` samples the host.

use super::*;

/// The least `at_s` of a library's runs of one round in one case.
fn first_at(doc: &Document, case: &str, lib: &str, round: u32) -> f64 {
    result_in(doc, case, lib)
        .modes
        .iter()
        .flat_map(|m| &m.runs)
        .filter(|run| run.round == Some(round))
        .map(|run| run.host.as_ref().expect("every run carries its probes").at_s)
        .fold(f64::MAX, f64::min)
}

#[test]
fn every_run_carries_its_probes_and_every_result_its_state() {
    let t = RunTest::new("host-states");
    let line = "run stream/16B stream-rtt/16B --lib shm-ring,uds,pipe --runs 2 --warmup 20ms --duration 80ms";
    let (pid, output) = to_the_end(bin().args(words(line)).arg("--out").arg(&t.out));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc = the_document(&t.out);
    assert_eq!(doc.settings.config.order, results::Order::Rounds);
    let labels: Vec<&str> = doc.states.iter().map(|s| s.label.as_str()).collect();
    let runs: Vec<&results::RunRecord> =
        doc.results.iter().flat_map(|r| &r.modes).flat_map(|m| &m.runs).collect();
    let host = |run: &results::RunRecord| {
        run.host.clone().unwrap_or_else(|| panic!("a run without probes: {run:?}"))
    };
    // States come from the polling floors the probes measured; a floor can run out of its time
    // while other tests hold both cores, and a run none of whose probes has one has no state.
    let floors = runs
        .iter()
        .map(|run| host(run))
        .flat_map(|h| [h.before, h.after])
        .filter(|p| p.polling_ns.is_some())
        .count();
    assert_eq!(labels.is_empty(), floors == 0, "{floors} polling floors: {:?}", doc.states);
    let share: f64 = doc.states.iter().map(|s| s.share).sum();
    assert!(labels.is_empty() || (share - 1.0).abs() < 1e-9, "{:?}", doc.states);
    for r in &doc.results {
        assert_eq!(r.status, Status::Ok, "{r:?}");
        let hs = r.host_state.as_ref().unwrap_or_else(|| panic!("{} {}: no host state", r.case, r.library));
        assert!(labels.contains(&hs.state.as_str()) || hs.state == "moved", "{hs:?}");
        let best = r.best().expect("a measured result has its better mode's runs");
        assert_eq!(hs.of as usize, best.runs.len(), "{hs:?}");
        assert!(hs.runs <= hs.of, "{hs:?}");
        assert!(hs.ranked || hs.why.as_ref().is_some_and(|w| !w.is_empty()), "{hs:?}");
        for run in r.modes.iter().flat_map(|m| &m.runs) {
            let h = host(run);
            // A floor that ran out of its time is absent; the system call is always there.
            for probe in [&h.before, &h.after] {
                assert!(probe.syscall_ns > 0.0, "{h:?}");
                assert!(probe.waiting_ns.is_none_or(|w| w > 0.0), "{h:?}");
            }
            assert!(h.at_s >= 0.0 && run.round.is_some_and(|n| n >= 1), "{run:?}");
            assert!(run.state.as_deref().is_none_or(|s| labels.contains(&s)), "{run:?}");
            // A run still moved after its retakes is in no state.
            if h.moved {
                assert!(run.state.is_none(), "{run:?}");
            }
        }
    }
    // What watching the host cost is recorded, and adds up with the runs it counts.
    let cost = doc.host_cost.expect("what watching the host cost");
    assert!(cost.probes_s > 0.0 && cost.retakes_s >= 0.0 && cost.extra_s >= 0.0, "{cost:?}");
    assert!(cost.wall_s > cost.probes_s + cost.retakes_s, "{cost:?}");
    let retakes: u32 = runs.iter().map(|run| host(run).retakes).sum();
    assert_eq!(cost.retakes, retakes, "{cost:?}");
    let extra = runs.iter().filter(|run| run.round.is_some_and(|n| n > 2)).count() as u32;
    assert_eq!(cost.extra_runs, extra, "{cost:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("ipcbench: watching the host took probes "));
    // Each round's order turns by one: shm-ring, uds, pipe; then uds, pipe, shm-ring.
    for case in ["stream/16B", "stream-rtt/16B"] {
        let at = |lib, round| first_at(&doc, case, lib, round);
        assert!(at("shm-ring", 1) < at("uds", 1) && at("uds", 1) < at("pipe", 1), "{case}");
        assert!(at("uds", 2) < at("pipe", 2) && at("pipe", 2) < at("shm-ring", 2), "{case}");
    }
    // The report draws the probes across the run and lists the states.
    let report = the_json_path(&t.out).with_extension("");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("id=\"chart-timeline\""), "no timeline in the page");
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("charts/timeline.png"), "{md}");
    assert_eq!(md.contains("host states (runs' probes)"), !labels.is_empty(), "{md}");
    assert!(
        labels
            .first()
            .is_none_or(|l| md.contains(&format!("{l}: polling ")) || md.contains(&format!("{l}: waiting "))),
        "{md}"
    );
    t.nothing_left(pid);
}

#[test]
fn doctor_watch_samples_the_host_and_says_whether_it_held_still() {
    let _alone = serial();
    let out = ipcbench(&["doctor", "--watch", "2s"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.starts_with("ipcbench doctor: the host's probe once a second for 2s"), "{stderr}");
    let samples = stderr.lines().filter(|l| l.contains(" s  ") && l.contains("syscall")).count();
    assert!(samples >= 2, "{stderr}");
    assert!(
        stdout.starts_with(&format!("The host held still: one state over {samples} samples."))
            || stdout.starts_with("The host changed "),
        "{stdout}"
    );
    assert!(stdout.contains(" of the time ("), "{stdout}");
    assert_refused(&["doctor", "--watch", "soon"], &["'soon' for '--watch", "not a duration"]);
}
