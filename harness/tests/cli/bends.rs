//! Where the libraries bend: fan-out to many subscribers, a slow subscriber, pairs side by side,
//! latency to many subscribers and against the offered load, each for three libraries with short
//! windows. Counts, checks and dashes; never a speed.

use super::*;

/// The three libraries: each has lossless and lossy broadcasts and a stream.
const THREE: &str = "fastipc,iceoryx2,zmq";

fn median<'a>(doc: &'a Value, case: &str, lib: &str) -> &'a Value {
    let r = results_of(doc, case, lib);
    assert_eq!(r["status"], "ok", "{case} {lib}: {}", r["reason"]);
    &r["median"]
}

fn figure(doc: &Value, case: &str, lib: &str, key: &str) -> f64 {
    median(doc, case, lib)[key].as_f64().unwrap_or_else(|| panic!("{case} {lib}: {key}"))
}

/// Every subscriber of every run received every message of a lossless broadcast; each pair's
/// receiver every message of its own sender.
fn every_message_arrived(doc: &Value) {
    for r in doc["results"].as_array().unwrap().iter().filter(|r| r["status"] == "ok") {
        let case = r["case"].as_str().unwrap();
        let lossless = case.contains("/lossless/") || case.starts_with("fanout-latency/");
        for run in r["modes"].as_array().unwrap().iter().flat_map(|m| m["runs"].as_array().unwrap()) {
            let roles = run["roles"].as_array().unwrap();
            assert_eq!(
                roles.len() as u64,
                r["processes"].as_u64().unwrap(),
                "{case}: every process reported"
            );
            for got in roles.iter().filter(|x| x["role"] == "subscriber" || x["role"] == "receiver") {
                let index = &got["index"];
                let sender = roles
                    .iter()
                    .find(|x| (x["role"] == "publisher") || (x["role"] == "sender" && &x["index"] == index))
                    .unwrap();
                let (sent, received) = (sender["sent"].as_u64().unwrap(), got["received"].as_u64().unwrap());
                if lossless || got["role"] == "receiver" {
                    assert_eq!(received, sent, "{case} {}: {} {index}", r["library"], got["role"]);
                } else {
                    assert!(received + got["lost"].as_u64().unwrap() <= sent, "{case}");
                }
            }
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
    let failed: Vec<&Value> =
        doc["results"].as_array().unwrap().iter().filter(|r| r["status"] == "failed").collect();
    for r in &failed {
        assert!(is_a_held_back_publisher(r), "{} {}: {}", r["case"], r["library"], r["reason"]);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() || (!failed.is_empty() && out.status.code() == Some(1)), "{stderr}");
    every_message_arrived(&doc);
    for lib in THREE.split(',') {
        for n in [2, 8, 32] {
            let case = format!("broadcast/lossless/{n}sub/16B");
            if !is_a_held_back_publisher(results_of(&doc, &case, lib)) {
                assert!(figure(&doc, &case, lib, "msgs_per_s") > 0.0, "{case} {lib}");
            }
            let case = format!("broadcast/lossy/{n}sub/16B");
            let spread = figure(&doc, &case, lib, "subscribers_spread");
            assert!((0.0..=1.0).contains(&spread), "{case} {lib}: {spread}");
            assert_eq!(results_of(&doc, &case, lib)["processes"], n + 1);
        }
        for n in [2, 8] {
            let case = format!("fanout-latency/10k/{n}sub/16B");
            assert!(figure(&doc, &case, lib, "p99_ns") >= figure(&doc, &case, lib, "p50_ns"), "{case} {lib}");
            // Each subscriber's own p50 is kept beside the whole histogram.
            let r = results_of(&doc, &case, lib);
            let run = &r["modes"][0]["runs"][0];
            let subs: Vec<&Value> =
                run["roles"].as_array().unwrap().iter().filter(|x| x["role"] == "subscriber").collect();
            assert_eq!(subs.len(), n, "{case} {lib}");
            assert!(subs.iter().all(|s| s["p50_ns"].as_u64().is_some() && s["p99_ns"].as_u64().is_some()));
        }
        for n in [1, 2, 4] {
            let case = format!("pairs/{n}/stream/16B");
            let (total, worst) =
                (figure(&doc, &case, lib, "total_msgs_per_s"), figure(&doc, &case, lib, "worst_msgs_per_s"));
            // The total is every pair's rate added up, so at least n times the worst pair's.
            assert!(worst > 0.0 && total >= worst * n as f64 * 0.999, "{case} {lib}: {total} {worst}");
            assert_eq!(results_of(&doc, &case, lib)["processes"], 2 * n);
        }
        assert!(figure(&doc, "pairs/2/stream-rtt/16B", lib, "worst_p50_ns") > 0.0);
    }
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
    let doc = the_json(&t.out);
    // The one failure a run may have here: a lossless publisher held back to nothing in its
    // window. Any other fails the test.
    let mut held = 0;
    for r in doc["results"].as_array().unwrap().iter().filter(|r| r["status"] == "failed") {
        assert!(is_a_held_back_publisher(r), "{} {}: {}", r["case"], r["library"], r["reason"]);
        eprintln!("{} {}: held back to nothing: {}", r["case"], r["library"], r["reason"]);
        held += 1;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() || (held > 0 && out.status.code() == Some(1)), "{stderr}");
    every_message_arrived(&doc);
    assert_eq!(doc["settings"]["slow_work_s"], 0.0002);
    for lib in THREE.split(',') {
        let case = "broadcast/lossless/4sub-1slow/16B";
        if !is_a_held_back_publisher(results_of(&doc, case, lib)) {
            let (others, slow) =
                (figure(&doc, case, lib, "others_msgs_per_s"), figure(&doc, case, lib, "slow_msgs_per_s"));
            // Every subscriber gets every message and the queues are full from the warm-up, so
            // the publisher sends no faster than the slow one takes them (a window's edges aside).
            assert!(others <= PACE * 1.25 && slow <= PACE * 1.25, "{case} {lib}: {others} {slow}");
        }
        let case = "broadcast/lossy/4sub-1slow/16B";
        let (lost, slow_lost) =
            (figure(&doc, case, lib, "others_lost_share"), figure(&doc, case, lib, "slow_lost_share"));
        assert!(slow_lost > lost, "{case} {lib}: the slow one lost {slow_lost}, the others {lost}");
        assert!(figure(&doc, case, lib, "slow_msgs_per_s") <= PACE * 1.25, "{case} {lib}");
        // Only the slow subscriber was told to be slow.
        let run = &results_of(&doc, case, lib)["modes"][0]["runs"][0];
        assert_eq!(run["roles"].as_array().unwrap().len(), 5);
    }
    t.nothing_left(pid);
}

/// `sweep --rates`: the latency family at each rate, the load chart, and each library's
/// sustainable rate in the summary, below any rate at which its sender fell behind.
#[test]
fn a_rate_sweep_finds_each_librarys_sustainable_rate() {
    let t = RunTest::new("rates");
    let (pid, out, doc) = short(&t.out, &["sweep", "--rates", "1k,100k,10M", "--lib", "uds,shm-ring"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cases: Vec<&str> =
        doc["results"].as_array().unwrap().iter().map(|r| r["case"].as_str().unwrap()).collect();
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
                let r = results_of(&doc, &format!("latency/{label}/16B"), lib);
                r["modes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|m| m["median"]["behind_share"].as_f64().unwrap() > 0.01)
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
    assert!(figure(&doc, "latency/10M/16B", "uds", "behind_share") > 0.01);
    t.nothing_left(pid);
}
