//! The host's state: every run carries its probes before and after its window, every result
//! the state its figure comes from, rounds rotate, the report draws the probes across the run,
//! and `doctor --watch` samples the host.

use super::*;

/// The least `at_s` of a library's runs of one round in one case.
fn first_at(doc: &Value, case: &str, lib: &str, round: u64) -> f64 {
    results_of(doc, case, lib)["modes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["runs"].as_array().unwrap())
        .filter(|run| run["round"] == round)
        .map(|run| run["host"]["at_s"].as_f64().unwrap())
        .fold(f64::MAX, f64::min)
}

#[test]
fn every_run_carries_its_probes_and_every_result_its_state() {
    let t = RunTest::new("host-states");
    let line = "run stream/16B stream-rtt/16B --lib shm-ring,uds,pipe --runs 2 --warmup 20ms --duration 80ms";
    let (pid, output) = to_the_end(bin().args(words(line)).arg("--out").arg(&t.out));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc = the_json(&t.out);
    assert_eq!(doc["settings"]["order"], "rounds");
    let states = doc["states"].as_array().unwrap();
    let labels: Vec<&str> = states.iter().map(|s| s["label"].as_str().unwrap()).collect();
    let runs: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["modes"].as_array().unwrap())
        .flat_map(|m| m["runs"].as_array().unwrap())
        .collect();
    // States come from the polling floors the probes measured; a floor can run out of its time
    // while other tests hold both cores, and a run none of whose probes has one has no state.
    let floors = runs
        .iter()
        .flat_map(|run| [&run["host"]["before"], &run["host"]["after"]])
        .filter(|p| p["polling_ns"].as_f64().is_some())
        .count();
    assert_eq!(labels.is_empty(), floors == 0, "{floors} polling floors: {states:?}");
    let share: f64 = states.iter().map(|s| s["share"].as_f64().unwrap()).sum();
    assert!(labels.is_empty() || (share - 1.0).abs() < 1e-9, "{states:?}");
    for r in doc["results"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
        let hs = &r["host_state"];
        let state = hs["state"].as_str().unwrap();
        assert!(labels.contains(&state) || state == "moved", "{hs}");
        let best = r["modes"].as_array().unwrap().iter().find(|m| m["mode"] == r["best_mode"]).unwrap();
        assert_eq!(hs["of"].as_u64().unwrap() as usize, best["runs"].as_array().unwrap().len(), "{hs}");
        assert!(hs["runs"].as_u64() <= hs["of"].as_u64(), "{hs}");
        assert!(hs["ranked"].as_bool().unwrap() || hs["why"].as_str().is_some_and(|w| !w.is_empty()), "{hs}");
        for run in r["modes"].as_array().unwrap().iter().flat_map(|m| m["runs"].as_array().unwrap()) {
            let host = &run["host"];
            // A floor that ran out of its time is absent; the system call is always there.
            for probe in [&host["before"], &host["after"]] {
                assert!(probe["syscall_ns"].as_f64().unwrap() > 0.0, "{host}");
                assert!(probe["waiting_ns"].as_f64().is_none_or(|w| w > 0.0), "{host}");
            }
            assert!(host["at_s"].as_f64().unwrap() >= 0.0 && run["round"].as_u64().unwrap() >= 1, "{run}");
            assert!(run["state"].as_str().is_none_or(|s| labels.contains(&s)), "{run}");
            // A run still moved after its retakes is in no state.
            if host["moved"] == true {
                assert!(run["state"].is_null(), "{run}");
            }
        }
    }
    // What watching the host cost is recorded, and adds up with the runs it counts.
    let cost = &doc["host_cost"];
    let secs = |k: &str| cost[k].as_f64().unwrap_or_else(|| panic!("host_cost.{k}: {cost}"));
    assert!(secs("probes_s") > 0.0 && secs("retakes_s") >= 0.0 && secs("extra_s") >= 0.0, "{cost}");
    assert!(secs("wall_s") > secs("probes_s") + secs("retakes_s"), "{cost}");
    let retakes: u64 = runs.iter().map(|run| run["host"]["retakes"].as_u64().unwrap_or(0)).sum();
    assert_eq!(cost["retakes"].as_u64(), Some(retakes), "{cost}");
    let extra = runs.iter().filter(|run| run["round"].as_u64().unwrap() > 2).count() as u64;
    assert_eq!(cost["extra_runs"].as_u64(), Some(extra), "{cost}");
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
