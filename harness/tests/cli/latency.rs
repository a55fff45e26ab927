//! The latency cases: a fixed-rate schedule, whole histograms, and a stall charged to every
//! message it delays.

use hdrhistogram::Histogram;
use ipcbench::floors::Floors;
use ipcbench::histogram;
use ipcbench_api::RecvMode;

use super::*;

/// A run's histogram, as the results file keeps it.
fn histogram_of(run: &RunRecord, what: &str) -> Histogram<u64> {
    let text = run.histogram.as_deref().unwrap_or_else(|| panic!("{what}: no histogram"));
    histogram::decode(text).unwrap_or_else(|e| panic!("{what}: {e:#}"))
}

/// A figure a result must have.
fn need(figure: Option<f64>, name: &str, what: &str) -> f64 {
    figure.unwrap_or_else(|| panic!("{what}: no {name}"))
}

/// Every run of a latency result keeps its histogram, and the histogram gives back the run's
/// p50 and p99 (the report recomputes any percentile from the results file alone).
pub fn histograms_give_the_figures(r: &CaseResult, what: &str) {
    for run in runs_of(r).filter(|run| !sent_nothing(run)) {
        let h = histogram_of(run, what);
        let f = &run.figures;
        assert_eq!(h.value_at_quantile(0.99) as f64, need(f.p99_ns, "p99", what), "{what}: p99");
        assert_eq!(h.value_at_quantile(0.5) as f64, need(f.p50_ns, "p50", what), "{what}: p50");
        assert!(run.roles.iter().all(|x| x.latency.is_empty()), "{what}: buckets live in the histogram");
    }
}

/// Whether a latency run's sender sent none of its window's messages (a library far slower than
/// the schedule, its send blocked from the warm-up past the window's end).
fn sent_nothing(run: &RunRecord) -> bool {
    reports(run, Role::Sender).any(|x| x.sent().measured == 0)
}

/// A latency result's spectrum, rate and schedule.
pub fn figures_of_a_latency_result(r: &CaseResult, what: &str) {
    histograms_give_the_figures(r, what);
    let rate: f64 = match r.case.split('/').nth(1).unwrap() {
        "1k" => 1e3,
        "100k" => 1e5,
        "1M" => 1e6,
        other => panic!("{what}: rate {other}"),
    };
    for run in runs_of(r) {
        let f = &run.figures;
        let at = |name: &str, figure: Option<f64>| need(figure, name, what);
        if sent_nothing(run) {
            // All behind, with no latency to give, and no histogram: said, not broken.
            assert_eq!((at("behind_share", f.behind_share), f.msgs_per_s), (1.0, 0.0), "{what}: {f:?}");
            assert!(f.p50_ns.is_none() && run.histogram.is_none(), "{what}: {run:?}");
            continue;
        }
        let spectrum = [f.min_ns, f.p50_ns, f.p90_ns, f.p99_ns, f.p999_ns, f.p9999_ns, f.max_ns]
            .map(|p| at("a percentile", p));
        assert!(spectrum.windows(2).all(|w| w[0] <= w[1]), "{what}: {spectrum:?}");
        let behind = at("behind_share", f.behind_share);
        assert!((0.0..=1.0).contains(&behind), "{what}: behind {behind}");
        // The rate achieved: a sender that sent its whole schedule kept at least its rate (more,
        // when it caught up in the window with a backlog from its warm-up).
        let achieved = f.msgs_per_s;
        assert!(achieved > 0.0, "{what}: {achieved}");
        if behind == 0.0 {
            assert!(achieved >= rate * 0.99 - 1.0, "{what}: on time, {achieved} of {rate}");
        }
        assert!(at("late_p99_ns", f.late_p99_ns) >= at("late_p50_ns", f.late_p50_ns), "{what}");
        let sender = report_of(run, Role::Sender);
        let scheduled = sender.scheduled.unwrap_or_else(|| panic!("{what}: no schedule"));
        assert!(sender.sent().measured <= scheduled, "{what}");
        assert!(sender.spin_margin_ns.unwrap() >= 20_000, "{what}");
        let lateness = histogram::decode(run.lateness.as_deref().unwrap()).unwrap();
        assert_eq!(lateness.len(), sender.sent().measured, "{what}: one lateness per message");
        assert_eq!(histogram_of(run, what).len(), sender.sent().measured, "{what}");
    }
}

/// A connect result: `connects` fresh senders per run, each one message, and the set-up times.
pub fn figures_of_a_connect_result(r: &CaseResult, connects: u64, what: &str) {
    assert_eq!(r.status, Status::Ok, "{what}: {:?}", r.reason);
    assert_eq!(r.modes.len(), 2, "{what}: both receive modes");
    for run in runs_of(r) {
        let senders: Vec<&RoleReport> = reports(run, Role::Sender).collect();
        assert_eq!(senders.len() as u64, connects, "{what}: a fresh sender per attempt");
        assert!(senders.iter().all(|s| s.sent().sent == 1 && s.open_ns.is_some()), "{what}");
        assert_eq!(report_of(run, Role::Receiver).got().received, connects, "{what}");
        let h = histogram_of(run, what);
        assert_eq!(h.len(), connects, "{what}: one set-up time per sender");
        let f = &run.figures;
        let at = |name: &str, figure: Option<f64>| need(figure, name, what);
        let (p50, max) = (at("p50_ns", f.p50_ns), at("max_ns", f.max_ns));
        assert_eq!(p50, h.value_at_quantile(0.5) as f64, "{what}");
        assert!(at("min_ns", f.min_ns) > 0.0 && max >= p50, "{what}");
        // The open is part of the set-up: its p50 is at most the set-up's greatest.
        assert!(at("open_p50_ns", f.open_p50_ns) <= max, "{what}");
    }
}

/// The issue's own command: every latency case for three libraries, each with its spectrum, its
/// rate and a histogram; the report draws a spectrum per case and writes a `.hgrm` per result.
#[test]
fn latency_cases_run_and_report_their_spectra() {
    let t = RunTest::new("latency");
    let (pid, output, doc) = short(&t.out, &words("run latency/* --lib fastipc,uds,aeron"));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(doc.results.len(), 9);
    for r in &doc.results {
        let what = format!("{} {}", r.case, r.library);
        assert_eq!(r.status, Status::Ok, "{what}: {:?}", r.reason);
        figures_of_a_latency_result(r, &what);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = progress_line(&stderr, "latency/1k/16B", "uds");
    assert!(line.contains(": p50 ") && line.contains(" p99.99 "), "{stderr}");
    let report = the_json_path(&t.out).with_extension("");
    every_latency_is_held_against_its_floor(&doc, &report);
    for case in ["latency-1k-16B", "latency-100k-16B", "latency-1M-16B"] {
        assert!(report.join(format!("charts/spectrum-{case}.svg")).is_file(), "{case}");
        for lib in ["fastipc", "uds", "aeron"] {
            let hgrm = std::fs::read_to_string(report.join(format!("hgrm/{case}/{lib}.hgrm"))).unwrap();
            assert!(hgrm.contains("1/(1-Percentile)") && hgrm.contains("#[Max     ="), "{case} {lib}");
        }
    }
    t.nothing_left(pid);
}

/// The run's floors, at its start and its end, are in its conditions; the CSV's `floor_multiple`
/// of each result is its p50 over half the lower of its counted mode's two round-trip floors (one
/// way); the report's floors table has a multiple in each cell but one whose sender fell behind
/// (its p50 is its backlog), and the latency chart draws both floors.
fn every_latency_is_held_against_its_floor(doc: &Document, report: &std::path::Path) {
    let conditions = doc.conditions.as_ref().expect("the run's conditions");
    let (start, end) = (conditions.floors.as_ref().unwrap(), conditions.floors_after.as_ref().unwrap());
    let csv = std::fs::read_to_string(report.join("medians.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (case_at, lib_at, multiple_at) = (at("case"), at("library"), at("floor_multiple"));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    let section = md.split("## Against the machine's floors").nth(1).unwrap().split("\n## ").next().unwrap();
    for r in &doc.results {
        let (case, lib) = (r.case.as_str(), r.library.as_str());
        let mode = r.best_mode.expect("a measured result's better mode");
        let p50 = |floors: &Floors| {
            let floor = match mode {
                RecvMode::Polling => floors.polling,
                RecvMode::Waiting => floors.waiting,
            };
            floor.unwrap_or_else(|| panic!("no {mode} floor: {floors:?}")).p50_ns
        };
        let floor = p50(start).min(p50(end));
        let median = median_of(r);
        let want = need(median.p50_ns, "p50_ns", case) / (floor / 2.0);
        let line = csv.lines().map(csv_fields).find(|f| f[case_at] == case && f[lib_at] == lib).unwrap();
        let got: f64 = line[multiple_at].parse().unwrap();
        assert!((got - want).abs() <= want * 1e-9, "{case} {lib}: {got} against {want}");
        let row = section.lines().find(|l| l.starts_with(&format!("| {case} |"))).unwrap();
        let behind = median.behind_share.is_some_and(|b| b > 0.01);
        let said = if behind { "no multiple: its sender fell behind".into() } else { format!("× {mode}") };
        assert!(row.contains(&said), "{case} {lib}: {row}");
        let cells = row.matches("× ").count() + row.matches("fell behind").count();
        assert!(cells >= 3, "a multiple per library: {row}");
    }
    let chart = std::fs::read_to_string(report.join("charts/latency.svg")).unwrap();
    assert!(chart.contains("polling floor") && chart.contains("waiting floor"), "the floors' lines");
}

/// Connection set-up: a fresh sender process per attempt for three libraries of different
/// kinds (a socket, shared memory with a media driver, shared memory with discovery).
#[test]
fn connect_cases_time_fresh_senders() {
    let t = RunTest::new("connect");
    let (pid, output, doc) = short(&t.out, &words("run connect/16B --lib uds,aeron,iceoryx2 --connects 4"));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    for lib in ["uds", "aeron", "iceoryx2"] {
        figures_of_a_connect_result(result_in(&doc, "connect/16B", lib), 4, &format!("connect/16B {lib}"));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The line gives the set-up's p50 and the open's.
    let line = progress_line(&stderr, "connect/16B", "uds");
    assert!(line.contains(": p50 ") && line.contains("(open p50 "), "{stderr}");
    t.nothing_left(pid);
}

/// No coordinated omission: the receiver stopped for 100 ms inside the window at 1 k/s. The
/// sender keeps its schedule, so about 100 messages wait, each timed from its due time: the
/// stall shows in the percentiles of the messages scheduled during it, not in one sample.
#[test]
fn a_stalled_receiver_delays_every_message_scheduled_during_the_stall() {
    let t = RunTest::new("stall");
    let args = [
        "run",
        "latency/1k/16B",
        "--lib",
        "uds",
        "--runs",
        "1",
        "--warmup",
        "200ms",
        "--duration",
        "1s",
        "--fault",
        "stall=100ms:window:receiving",
        "--out",
        t.out(),
    ];
    let child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc = the_document(&t.out);
    let modes = &result_in(&doc, "latency/1k/16B", "uds").modes;
    // The fault goes to the first run of the first receive mode.
    let stalled = histogram_of(&modes[0].runs[0], "the stalled run");
    let long = stalled.count_between(20_000_000, u64::MAX);
    assert!((50..=120).contains(&long), "{long} messages waited 20 ms or more: about 80 should");
    assert!(stalled.value_at_quantile(0.95) >= 20_000_000, "p95 {}", stalled.value_at_quantile(0.95));
    assert!((80_000_000..1_000_000_000).contains(&stalled.max()), "max {}", stalled.max());
    assert!(stalled.value_at_quantile(0.5) < 5_000_000, "p50 {}", stalled.value_at_quantile(0.5));
    let calm = histogram_of(&modes[1].runs[0], "the other mode's run");
    assert!(calm.count_between(20_000_000, u64::MAX) < 5, "no stall, no long waits");
    t.nothing_left(pid);
}
