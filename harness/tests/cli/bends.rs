//! Where the libraries bend: fan-out to many subscribers, a slow subscriber, pairs side by side,
//! latency to many subscribers and against the offered load, each for three libraries with short
//! windows. Counts, checks and dashes; never a speed.

use super::*;

/// The three libraries: each has lossless and lossy broadcasts and a stream.
const THREE: &str = "fastipc,iceoryx2,zmq";

fn median<'a>(doc: &'a Document, case: &str, lib: &str) -> &'a Figures {
    median_of(result_in(doc, case, lib))
}

/// A figure a result must have.
fn need(figure: Option<f64>, name: &str, case: &str, lib: &str) -> f64 {
    figure.unwrap_or_else(|| panic!("{case} {lib}: no {name}"))
}

/// Every subscriber of every run received every message of a lossless broadcast; each pair's
/// receiver every message of its own sender.
fn every_message_arrived(doc: &Document) {
    for r in doc.results.iter().filter(|r| r.status == Status::Ok) {
        let case = r.case.as_str();
        let lossless = case.contains("/lossless/") || case.starts_with("fanout-latency/");
        for run in runs_of(r) {
            assert_eq!(run.roles.len(), r.processes, "{case}: every process reported");
            for got in run.roles.iter().filter(|x| matches!(x.role, Role::Subscriber | Role::Receiver)) {
                let index = got.index;
                let sender = run
                    .roles
                    .iter()
                    .find(|x| x.role == Role::Publisher || (x.role == Role::Sender && x.index == index))
                    .unwrap();
                let (sent, counts) = (sender.sent().sent, got.got());
                let who = got.role.as_str();
                if lossless || got.role == Role::Receiver {
                    assert_eq!(counts.received, sent, "{case} {}: {who} {index}", r.library);
                } else {
                    assert!(counts.received + counts.lost <= sent, "{case}");
                }
            }
        }
    }
}

/// The figures a pattern names in the results file are there under their names (the typed
/// reads above see each in its slot).
fn named_in_the_file(out: &Path, case: &str, names: &[&str]) {
    let json = the_json(out);
    let results = json["results"].as_array().unwrap();
    for r in results.iter().filter(|r| r["case"] == case && r["status"] == "ok") {
        for name in names {
            assert!(r["median"][name].is_number(), "{case} {}: {name} in {}", r["library"], r["median"]);
        }
    }
}

#[test]
fn fan_out_slow_subscriber_pairs_and_latency_to_many() {
    let t = RunTest::new("bends");
    let cases = [
        "broadcast/*/2sub/16B",
        "broadcast/*/8sub/16B",
        "broadcast/*/32sub/16B",
        "fanout-latency/10k/2sub/16B",
        "fanout-latency/10k/8sub/16B",
        "pairs/*/stream/16B",
        "pairs/2/stream-rtt/16B",
    ];
    let (pid, out, doc) = short(&t.out, &[&["run"], &cases[..], &["--lib", THREE]].concat());
    // The one failure a run may have here: a lossless publisher held back to nothing by
    // subscribers that outnumber the cores. Any other fails the test.
    let failed: Vec<&CaseResult> = doc.results.iter().filter(|r| r.status == Status::Failed).collect();
    for r in &failed {
        assert!(is_a_held_back_publisher(r), "{} {}: {:?}", r.case, r.library, r.reason);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() || (!failed.is_empty() && out.status.code() == Some(1)), "{stderr}");
    every_message_arrived(&doc);
    for lib in THREE.split(',') {
        for n in [2, 8, 32] {
            let case = format!("broadcast/lossless/{n}sub/16B");
            if !is_a_held_back_publisher(result_in(&doc, &case, lib)) {
                assert!(median(&doc, &case, lib).msgs_per_s > 0.0, "{case} {lib}");
            }
            let case = format!("broadcast/lossy/{n}sub/16B");
            let spread = need(median(&doc, &case, lib).subscribers_spread, "spread", &case, lib);
            assert!((0.0..=1.0).contains(&spread), "{case} {lib}: {spread}");
            assert_eq!(result_in(&doc, &case, lib).processes, n + 1);
        }
        for n in [2, 8] {
            let case = format!("fanout-latency/10k/{n}sub/16B");
            let m = median(&doc, &case, lib);
            let (p50, p99) = (need(m.p50_ns, "p50", &case, lib), need(m.p99_ns, "p99", &case, lib));
            assert!(p99 >= p50, "{case} {lib}");
            // Each subscriber's own p50 is kept beside the whole histogram.
            let run = &result_in(&doc, &case, lib).modes[0].runs[0];
            let subs: Vec<&RoleReport> = reports(run, Role::Subscriber).collect();
            assert_eq!(subs.len(), n, "{case} {lib}");
            assert!(subs.iter().all(|s| s.p50_ns.is_some() && s.p99_ns.is_some()), "{case} {lib}");
        }
        for n in [1, 2, 4] {
            let case = format!("pairs/{n}/stream/16B");
            // Every pair's rate together, in the rate's slot (`total_msgs_per_s` in the file).
            let m = median(&doc, &case, lib);
            let (total, worst) = (m.msgs_per_s, need(m.worst_msgs_per_s, "worst", &case, lib));
            // The total is every pair's rate added up, so at least n times the worst pair's.
            assert!(worst > 0.0 && total >= worst * n as f64 * 0.999, "{case} {lib}: {total} {worst}");
            assert_eq!(result_in(&doc, &case, lib).processes, 2 * n);
        }
        // The worst pair's round trip, in the p50's slot (`worst_p50_ns` in the file).
        let case = "pairs/2/stream-rtt/16B";
        assert!(need(median(&doc, case, lib).p50_ns, "worst p50", case, lib) > 0.0);
    }
    for n in [1, 2, 4] {
        named_in_the_file(
            &t.out,
            &format!("pairs/{n}/stream/16B"),
            &["total_msgs_per_s", "worst_msgs_per_s"],
        );
    }
    named_in_the_file(&t.out, "pairs/2/stream-rtt/16B", &["worst_p50_ns"]);
    // The report draws each group against its count, and has the families' sections.
    let report = std::fs::read_to_string(the_json_path(&t.out).with_extension("").join("report.md")).unwrap();
    for chart in ["scaling-broadcast-lossless-sub-16B.png", "scaling-pairs-stream-16B.png"] {
        assert!(report.contains(chart), "{chart} in the report");
    }
    for title in ["## Broadcasts", "## Latency to many subscribers", "## Pairs side by side"] {
        assert!(report.contains(title), "{title}");
    }
    t.nothing_left(pid);
}

/// A slow subscriber (200 µs a message, five thousand a second at most): lossless, it holds back
/// the publisher and the others to its pace; lossy, it loses more than the others. (Not slower:
/// after the window it still drains what its queue holds, within the trial's grace.)
/// The most messages a second the slow subscriber can take at 200 µs each.
const PACE: f64 = 5_000.0;

#[test]
fn a_slow_subscriber_holds_back_a_lossless_broadcast_and_loses_alone_in_a_lossy_one() {
    let t = RunTest::new("slow");
    let mut c = bin();
    c.args(["run", "broadcast/*/4sub-1slow/16B", "--lib", THREE, "--slow-work", "200us", "--runs", "1"])
        // A second's window: ZeroMQ's publisher, once its queues are full, is let go only when a
        // subscriber has read half of its queue (its low-water mark), a tenth of a second here
        // on an idle machine, the whole window on a busy one (`is_a_held_back_publisher`).
        .args(["--duration", "1s", "--warmup", "300ms", "--out"])
        .arg(&t.out);
    let (pid, out) = to_the_end(&mut c);
    let doc = the_document(&t.out);
    // The one failure a run may have here: a lossless publisher held back to nothing in its
    // window. Any other fails the test.
    let mut held = 0;
    for r in doc.results.iter().filter(|r| r.status == Status::Failed) {
        assert!(is_a_held_back_publisher(r), "{} {}: {:?}", r.case, r.library, r.reason);
        eprintln!("{} {}: held back to nothing: {:?}", r.case, r.library, r.reason);
        held += 1;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() || (held > 0 && out.status.code() == Some(1)), "{stderr}");
    every_message_arrived(&doc);
    assert_eq!(doc.settings.config.slow_work, Duration::from_micros(200));
    for lib in THREE.split(',') {
        let case = "broadcast/lossless/4sub-1slow/16B";
        if !is_a_held_back_publisher(result_in(&doc, case, lib)) {
            // The others' rate is in the rate's slot (`others_msgs_per_s` in the file).
            let m = median(&doc, case, lib);
            let (others, slow) = (m.msgs_per_s, need(m.slow_msgs_per_s, "slow rate", case, lib));
            // Every subscriber gets every message and the queues are full from the warm-up, so
            // the publisher sends no faster than the slow one takes them (a window's edges aside).
            assert!(others <= PACE * 1.25 && slow <= PACE * 1.25, "{case} {lib}: {others} {slow}");
        }
        let case = "broadcast/lossy/4sub-1slow/16B";
        let m = median(&doc, case, lib);
        let (lost, slow_lost) =
            (need(m.lost_share, "others' loss", case, lib), need(m.slow_lost_share, "slow loss", case, lib));
        assert!(slow_lost > lost, "{case} {lib}: the slow one lost {slow_lost}, the others {lost}");
        assert!(need(m.slow_msgs_per_s, "slow rate", case, lib) <= PACE * 1.25, "{case} {lib}");
        // Only the slow subscriber was told to be slow.
        assert_eq!(result_in(&doc, case, lib).modes[0].runs[0].roles.len(), 5);
    }
    named_in_the_file(&t.out, "broadcast/lossless/4sub-1slow/16B", &["others_msgs_per_s", "slow_msgs_per_s"]);
    named_in_the_file(&t.out, "broadcast/lossy/4sub-1slow/16B", &["others_lost_share", "slow_lost_share"]);
    t.nothing_left(pid);
}

/// `sweep --rates`: the latency family at each rate, the load chart, and each library's
/// sustainable rate in the summary, below any rate at which its sender fell behind.
#[test]
fn a_rate_sweep_finds_each_librarys_sustainable_rate() {
    let t = RunTest::new("rates");
    let (pid, out, doc) = short(&t.out, &["sweep", "--rates", "1k,100k,10M", "--lib", "uds,shm-ring"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cases: Vec<&str> = doc.results.iter().map(|r| r.case.as_str()).collect();
    assert_eq!(
        cases,
        [
            "latency/1k/16B",
            "latency/1k/16B",
            "latency/100k/16B",
            "latency/100k/16B",
            "latency/10M/16B",
            "latency/10M/16B"
        ]
    );
    let report = std::fs::read_to_string(the_json_path(&t.out).with_extension("").join("report.md")).unwrap();
    assert!(report.contains("scaling-latency-16B.png"), "the load chart");
    let header = report.lines().find(|l| l.starts_with("| library |")).unwrap();
    let column = header.split('|').map(str::trim).position(|c| c == "sustainable rate").expect("the column");
    for lib in ["uds", "shm-ring"] {
        // The control's row names it as such: `| shm-ring (the control, for reference) |`.
        let row = report.lines().find(|l| l.starts_with(&format!("| {lib} "))).unwrap();
        let cell = row.split('|').map(str::trim).nth(column).unwrap();
        // The rates each of its modes fell behind at: the sustainable rate is below every one.
        let behind: Vec<u64> = ["1k", "100k", "10M"]
            .into_iter()
            .zip([1_000, 100_000, 10_000_000])
            .filter(|(label, _)| {
                let r = result_in(&doc, &format!("latency/{label}/16B"), lib);
                r.modes.iter().all(|m| m.median.and_then(|f| f.behind_share).unwrap() > 0.01)
            })
            .map(|(_, rate)| rate)
            .collect();
        let rate = match cell.split('/').next().unwrap() {
            "—" => 0,
            label => {
                [("1k", 1_000), ("100k", 100_000), ("10M", 10_000_000)]
                    .into_iter()
                    .find(|(l, _)| *l == label)
                    .unwrap_or_else(|| panic!("{lib}: {cell}"))
                    .1
            }
        };
        assert!(behind.iter().all(|&b| rate < b), "{lib}: sustainable {cell}, behind at {behind:?}");
    }
    // A Unix socket moves about a million messages a second here: ten million is past it.
    let case = "latency/10M/16B";
    assert!(need(median(&doc, case, "uds").behind_share, "behind", case, "uds") > 0.01);
    t.nothing_left(pid);
}
