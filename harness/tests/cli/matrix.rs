//! Every library through every case it has, the dashes of the rest, `list`, sweeps and skips.

use super::*;

#[test]
fn every_library_runs_every_case_it_has_and_dashes_the_rest() {
    let t = RunTest::new("matrix");
    let out = &t.out;
    // The seed's comparison: the families beyond it (fan-out past 4, a slow subscriber, pairs,
    // latency to many) run in `bends` for three libraries.
    let comparison = [
        "stream/*",
        "stream-rtt/*",
        "broadcast/*/1sub/*",
        "broadcast/*/4sub/*",
        "queue/*",
        "service/*",
        "batch/*",
        "latency/*",
        "connect/*",
    ];
    let (pid, result, doc) = short_run(out, &[&comparison[..], &["--connects", "3"]].concat());
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    // The library's known defect (above) is the one failure expected, as documented; any other
    // fails the suite.
    let known: Vec<String> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| is_fastipcs_failed_reply(r))
        .map(|r| format!("{} fastipc: {}", r["case"], r["reason"]))
        .collect();
    for k in &known {
        eprintln!("FastIPC's known failed reply (adapters/fastipc/README.md): {k}");
    }
    assert!(result.status.success() || !known.is_empty(), "the run failed:\n{stderr}");
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["status"], "complete");
    assert!(doc["machine"]["cores"].as_u64().unwrap() >= 1);
    assert!(!doc["machine"]["kernel"].as_str().unwrap().is_empty());
    assert!(doc["toolchain"]["rustc"].as_str().unwrap().starts_with("rustc "));
    let cores = doc["machine"]["cores"].as_u64().unwrap();
    let results = doc["results"].as_array().unwrap();
    let libs = doc["libraries"].as_array().unwrap();
    let ids: Vec<&str> = libs.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, *LIBRARIES, "every library, in order");
    assert_eq!(
        results.len(),
        (22 + 8 + 3 + 1) * ids.len(),
        "every case (22, 8 batch cases, 3 latency cases and a connect case) for every library"
    );
    for r in results.iter().filter(|r| !is_fastipcs_failed_reply(r)) {
        let (case, lib) = (r["case"].as_str().unwrap(), r["library"].as_str().unwrap());
        let pattern = r["pattern"].as_str().unwrap();
        let lib_record = libs.iter().find(|l| l["id"] == lib).unwrap();
        let batch = r.get("batch").is_some();
        assert_eq!(batch, case.starts_with("batch/"), "{case}: the batch is recorded");
        let capability = capability_of(&doc, r);
        assert_eq!(r["oversubscribed"], r["processes"].as_u64().unwrap() > cores, "{case} {lib}");
        if capability["supported"] == false {
            assert_eq!(r["status"], "unsupported", "{case} {lib}");
            assert_eq!(r["reason"], capability["text"], "{case} {lib}: the dash carries its reason");
            continue;
        }
        assert_eq!(r["status"], "ok", "{case} {lib}: {}", r["reason"]);
        let median = &r["median"];
        if pattern == "connect" {
            latency::figures_of_a_connect_result(r, 3, &format!("{case} {lib}"));
            continue;
        }
        assert!(median["msgs_per_s"].as_f64().unwrap() > 0.0, "{case} {lib}");
        let modes: Vec<&str> =
            r["modes"].as_array().unwrap().iter().map(|m| m["mode"].as_str().unwrap()).collect();
        let expected: Vec<&str> =
            lib_record["receive_modes"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        assert_eq!(modes, expected, "{case} {lib}: both receive modes are kept");
        assert_eq!(modes, ["waiting", "polling"], "{case} {lib}: every library is measured both ways");
        for m in r["modes"].as_array().unwrap() {
            let median = &m["median"];
            let cost =
                |k: &str| median[k].as_f64().unwrap_or_else(|| panic!("{case} {lib} {}: {k}", m["mode"]));
            // A latency sender that sent none of its window's messages moved none to divide by.
            let all_behind = pattern == "latency" && median["msgs_per_s"] == 0.0;
            assert!(cost("cores_busy") > 0.0 && (all_behind || cost("cpu_ns_per_msg") > 0.0), "{case} {lib}");
            assert!(cost("peak_rss_bytes") > 1e6, "{case} {lib}");
            for run in m["runs"].as_array().unwrap() {
                for role in run["roles"].as_array().unwrap() {
                    plausible_cost(role, &format!("{case} {lib} {}", m["mode"]));
                }
            }
        }
        match pattern {
            "stream-rtt" | "service" => {
                assert!(median["p50_ns"].as_f64().unwrap() > 0.0, "{case} {lib}");
                assert!(median["p99_ns"].as_f64().unwrap() >= median["p50_ns"].as_f64().unwrap());
                latency::histograms_give_the_figures(r, &format!("{case} {lib}"));
            }
            "latency" => latency::figures_of_a_latency_result(r, &format!("{case} {lib}")),
            "broadcast" if case.contains("/lossy/") => {
                let lost = median["lost_share"].as_f64().unwrap();
                assert!((0.0..1.0).contains(&lost), "{case} {lib}: {lost}");
            }
            _ => assert!(median.get("p50_ns").is_none(), "{case} {lib}"),
        }
        // The raw counts agree with the figures: every process reported.
        for m in r["modes"].as_array().unwrap() {
            for run in m["runs"].as_array().unwrap() {
                assert_eq!(run["roles"].as_array().unwrap().len() as u64, r["processes"].as_u64().unwrap());
                if pattern == "stream" || pattern == "latency" || (batch && pattern == "broadcast") {
                    let roles = run["roles"].as_array().unwrap();
                    let sender = roles.iter().find(|x| x["role"] == "sender" || x["role"] == "publisher");
                    let sent = sender.unwrap()["sent"].as_u64().unwrap();
                    for receiver in
                        roles.iter().filter(|x| x["role"] == "receiver" || x["role"] == "subscriber")
                    {
                        let got = receiver["received"].as_u64().unwrap();
                        assert_eq!(sent, got, "{case} {lib}: a lossless stream delivers every message");
                    }
                    assert!(sent > 0);
                    if let Some(n) = r["batch"].as_u64() {
                        assert_eq!(sent % n, 0, "{case} {lib}: the sender sent whole batches");
                    }
                }
            }
        }
    }
    for dash in ["broadcast/lossless/1sub/16B", "broadcast/lossy/4sub/1KiB", "queue/4x4/16B"] {
        assert_eq!(results_of(&doc, dash, "uds")["status"], "unsupported");
    }
    // NNG's pub0 has no lossless mode; everything else of ZeroMQ and NNG but the batches runs.
    for lib in ["zmq", "nng"] {
        for r in results.iter().filter(|r| r["library"] == lib) {
            let case = r["case"].as_str().unwrap();
            let dash =
                (lib == "nng" && case.starts_with("broadcast/lossless/")) || case.starts_with("batch/");
            assert_eq!(r["status"], if dash { "unsupported" } else { "ok" }, "{} {lib}", r["case"]);
        }
    }
    let nng = results_of(&doc, "broadcast/lossless/4sub/16B", "nng");
    assert!(nng["reason"].as_str().unwrap().contains("pub0 always drops"), "{}", nng["reason"]);
    // ipc-channel, pipes, FIFOs and the control: streams and round trips only.
    let two =
        |r: &&Value| matches!(r["library"].as_str().unwrap(), "ipc-channel" | "pipe" | "fifo" | "shm-ring");
    for r in results.iter().filter(two) {
        let has = matches!(family(r), "stream" | "stream-rtt") && r.get("batch").is_none();
        assert_eq!(r["status"], if has { "ok" } else { "unsupported" }, "{} {}", r["case"], r["library"]);
    }
    // iceoryx2 has no work queue; its services run, each request answered by every server,
    // which the cases of several servers say beside the figure.
    for r in results.iter().filter(|r| r["library"] == "iceoryx2") {
        let case = r["case"].as_str().unwrap();
        let dash = r["pattern"] == "queue" || r.get("batch").is_some();
        assert_eq!(r["status"], if dash { "unsupported" } else { "ok" }, "{case} iceoryx2");
        let shared = case.starts_with("service/4c4s");
        assert_eq!(r["note"].as_str().is_some_and(|n| n.contains("do not share a load")), shared, "{case}");
    }
    assert!(results.iter().filter(|r| r["library"] != "iceoryx2").all(|r| r.get("note").is_none()));
    let stdout_text = String::from_utf8_lossy(&result.stdout);
    assert!(stdout_text.contains("† every server answered every request"), "{stdout_text}");
    // Aeron: streams, round trips and the lossless broadcasts; the rest are dashes.
    for r in results.iter().filter(|r| r["library"] == "aeron") {
        let case = r["case"].as_str().unwrap();
        let has = matches!(family(r), "stream" | "stream-rtt") || case.contains("/lossless/");
        assert_eq!(r["status"], if has { "ok" } else { "unsupported" }, "{case} aeron");
    }
    // The batch cases run for the two libraries with batch calls, and are dashes for the rest.
    for r in results.iter().filter(|r| r.get("batch").is_some()) {
        let has = matches!(r["library"].as_str().unwrap(), "fastipc" | "aeron");
        assert_eq!(r["status"], if has { "ok" } else { "unsupported" }, "{} {}", r["case"], r["library"]);
    }
    // Unix sockets (stream and seqpacket) and TCP: streams, round trips and services.
    let sockets = |r: &&Value| matches!(r["library"].as_str().unwrap(), "uds" | "uds-seqpacket" | "tcp");
    for r in results.iter().filter(sockets) {
        let has = matches!(family(r), "stream" | "stream-rtt" | "service") && r.get("batch").is_none();
        assert_eq!(r["status"], if has { "ok" } else { "unsupported" }, "{} {}", r["case"], r["library"]);
    }
    // Boost's message_queue and POSIX message queues: streams, round trips and work queues.
    for r in results.iter().filter(|r| r["library"] == "posix-mq" || r["library"] == "boost") {
        let has = matches!(family(r), "stream" | "stream-rtt" | "queue") && r.get("batch").is_none();
        assert_eq!(r["status"], if has { "ok" } else { "unsupported" }, "{} {}", r["case"], r["library"]);
    }
    let last = format!("[{n}/{n}]", n = results.len());
    assert!(stderr.contains(&last), "progress is shown:\n{stderr}");
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        stdout.contains("| case") && stdout.contains("stream-rtt/1KiB"),
        "the table of medians:\n{stdout}"
    );
    t.nothing_left(pid);
}

/// A role's cost, if it measured one: some CPU time, at most its window times its threads (and
/// a scheduler tick), context switches counted, its peak memory and threads.
/// The pattern whose capability a result's case needs: a latency or connect case is a stream.
fn family(r: &Value) -> &str {
    match r["pattern"].as_str().unwrap() {
        "latency" | "connect" => "stream",
        p => p,
    }
}

fn plausible_cost(role: &Value, what: &str) {
    let Some(cost) = role.get("cost") else {
        return;
    };
    let get = |k: &str| cost[k].as_u64().unwrap_or_else(|| panic!("{what}: {k} in {cost}"));
    let (window, threads) = (get("window_ns"), get("threads"));
    let cpu = get("user_ns") + get("system_ns");
    assert!(window > 0 && threads >= 1, "{what}: {cost}");
    assert!(cpu > 0, "{what} {}: a role that ran cost some CPU time: {cost}", role["role"]);
    assert!(cpu <= window * threads + 10_000_000, "{what} {}: {cpu} ns of CPU in {cost}", role["role"]);
    assert!(get("peak_rss_bytes") > 1 << 20, "{what}: {cost}");
    let _ = (get("voluntary_switches"), get("involuntary_switches"));
}

/// A spinning receiver keeps its core busy, a sleeping one does not: the control's round trip,
/// polling then waiting, each role's cores busy.
#[test]
fn a_spinning_role_keeps_a_core_busy_and_a_sleeping_one_does_not() {
    let t = RunTest::new("spin");
    let (pid, output, doc) = short_run(&t.out, &["stream-rtt/16B", "--lib", "shm-ring"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let r = results_of(&doc, "stream-rtt/16B", "shm-ring");
    let busy = |mode: &str| -> Vec<f64> {
        let m = r["modes"].as_array().unwrap().iter().find(|m| m["mode"] == mode).unwrap();
        let roles = m["runs"][0]["roles"].as_array().unwrap();
        roles
            .iter()
            .map(|role| {
                plausible_cost(role, mode);
                let c = &role["cost"];
                let cpu = c["user_ns"].as_u64().unwrap() + c["system_ns"].as_u64().unwrap();
                cpu as f64 / c["window_ns"].as_u64().unwrap() as f64
            })
            .collect()
    };
    // Two processes on two cores: each spins on a core of its own, near one core busy.
    for b in busy("polling") {
        assert!(b > 0.6, "a polling role: {b:.2} cores");
    }
    // Waiting, each side sleeps while the other works: together at most a little over one core.
    let waiting: f64 = busy("waiting").iter().sum();
    assert!(waiting < 1.5, "two waiting roles: {waiting:.2} cores");
    t.nothing_left(pid);
}

/// `--buffer 64KiB` reaches every library that lets one set a depth, as each adapter read it
/// back, and says where it cannot.
#[test]
fn the_buffer_reaches_every_library() {
    let t = RunTest::new("buffer");
    let (pid, output, doc) = short_run(&t.out, &["stream/16B", "--buffer", "64KiB"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(doc["settings"]["buffer_bytes"], 65536);
    let msg_max: u64 =
        std::fs::read_to_string("/proc/sys/fs/mqueue/msg_max").unwrap().trim().parse().unwrap();
    for &lib in LIBRARIES.iter() {
        let r = results_of(&doc, "stream/16B", lib);
        if lib == "cpp-ipc" && !ipcbench_cpp_ipc::BUILT {
            assert_not_built(r);
            continue;
        }
        assert_eq!(r["status"], "ok", "{lib}: {}", r["reason"]);
        for m in r["modes"].as_array().unwrap() {
            let roles = m["runs"][0]["roles"].as_array().unwrap();
            let receiver = roles.iter().find(|x| x["role"] == "receiver").unwrap();
            let b = &receiver["buffer"];
            let (messages, bytes, how) =
                (b["messages"].as_u64(), b["bytes"].as_u64(), b["how"].as_str().unwrap());
            let expected = match lib {
                "zmq" | "nng" | "iceoryx2" | "boost" | "shm-ring" => (Some(4096), Some(65536)),
                "posix-mq" => (Some(msg_max.min(4096)), Some(msg_max.min(4096) * 16)),
                "pipe" | "fifo" => (Some(4096), Some(65536)),
                "aeron" => (Some(32768 / 64), Some(32768)),
                "fastipc" => (None, Some(65536)),
                "uds" | "uds-seqpacket" | "tcp" => (None, bytes.filter(|&n| n >= 65536)),
                "ipc-channel" => (None, None),
                "cpp-ipc" => (Some(256), Some(256 * 64)),
                other => panic!("{other}: which depth does it have?"),
            };
            assert_eq!((messages, bytes), expected, "{lib} {}: {how}", m["mode"]);
            let reached = !matches!(lib, "ipc-channel" | "cpp-ipc");
            assert!(how.contains("--buffer"), "{lib}: says what set it: {how}");
            assert_eq!(how.contains("does not reach"), !reached, "{lib}: {how}");
        }
    }
    let report = std::fs::read_to_string(the_json_path(&t.out).with_extension("").join("report.md")).unwrap();
    assert!(report.contains("--buffer 64 KiB"), "the report says what was asked");
    assert!(report.contains("| zmq | 4096 messages (64 KiB) |"), "the depth table:\n{report}");
    t.nothing_left(pid);
}

/// cpp-ipc is built exactly when its source is named (scripts/setup.sh names the copy beside the
/// project when there is one): built, the matrix test runs its cases; not built, `list` and each
/// of its cases say how to build it, and the run goes on.
#[test]
fn cpp_ipc_is_built_when_its_source_is_named_and_says_how_when_not() {
    let named = std::env::var_os("CPP_IPC_SRC").is_some_and(|s| !s.is_empty());
    assert_eq!(
        ipcbench_cpp_ipc::BUILT,
        named,
        "CPP_IPC_SRC set: {named}; cpp-ipc built: {}",
        ipcbench_cpp_ipc::BUILT
    );
    let list = String::from_utf8_lossy(&ipcbench(&["list"]).stdout).into_owned();
    let line = list.lines().find(|l| l.starts_with("  cpp-ipc ")).expect("cpp-ipc in the list");
    assert_eq!(line.contains("not built"), !named, "{line}");
    if named {
        return;
    }
    assert!(list.contains(&format!("cpp-ipc stream: — {}", ipcbench_cpp_ipc::NOT_BUILT)), "{list}");
    let t = RunTest::new("cpp-ipc-absent");
    let (pid, output, doc) = short_run(&t.out, &["stream/16B", "stream-rtt/16B", "--lib", "cpp-ipc,uds"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_not_built(results_of(&doc, "stream/16B", "cpp-ipc"));
    assert_not_built(results_of(&doc, "stream-rtt/16B", "cpp-ipc"));
    assert_eq!(results_of(&doc, "stream-rtt/16B", "uds")["status"], "ok");
    t.nothing_left(pid);
}

#[test]
fn list_shows_cases_libraries_and_dashes_with_reasons() {
    let out = ipcbench(&["list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in
        ["stream/16B", "stream-rtt/1KiB", "broadcast/lossless/4sub/16B", "queue/4x4/16B", "service/4c1s/16B"]
    {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    for &lib in LIBRARIES.iter() {
        assert!(text.contains(&format!("\n  {lib} ")), "{lib} missing:\n{text}");
    }
    assert!(text.contains("uds work queue: — "), "a dash with its reason:\n{text}");
    assert!(text.contains("nng broadcast lossless: — pub0 always drops"), "{text}");
    assert!(text.contains("zmq broadcast lossless: XPUB with ZMQ_XPUB_NODROP"), "the mapping:\n{text}");
    assert!(text.contains("zmq service: REQ clients, each connected to every REP server"), "{text}");
    assert!(text.contains("naming no case runs @page"), "{text}");
    for set in ["@page ", "@bends ", "@latency ", "@loans ", "@all "] {
        assert!(text.contains(&format!("\n  {set}")), "{set} missing:\n{text}");
    }
}

#[test]
fn a_sweep_runs_streams_and_round_trips_draws_them_against_size_and_dashes_what_does_not_fit() {
    let t = RunTest::new("sweep");
    let libs = ["fastipc", "aeron", "zmq", "boost", "uds", "posix-mq", "shm-ring"];
    // 16 MiB: larger than every ring these libraries set by default.
    let (pid, output, doc) =
        short(&t.out, &["sweep", "--sizes", "8,1KiB,64KiB,16MiB", "--lib", &libs.join(",")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let results = doc["results"].as_array().unwrap();
    let mut cases: Vec<&str> = results.iter().map(|r| r["case"].as_str().unwrap()).collect();
    cases.dedup();
    assert_eq!(
        cases,
        [
            "stream/8B",
            "stream/1KiB",
            "stream/64KiB",
            "stream/16MiB",
            "stream-rtt/8B",
            "stream-rtt/1KiB",
            "stream-rtt/64KiB",
            "stream-rtt/16MiB"
        ]
    );
    assert_eq!(results.len(), 8 * libs.len());
    for r in results.iter().filter(|r| !is_fastipcs_failed_reply(r)) {
        let (case, lib) = (r["case"].as_str().unwrap(), r["library"].as_str().unwrap());
        let size = r["size"].as_u64().unwrap();
        assert!(case.ends_with(&format!("/{}", ipcbench::matrix::size_label(size as usize))), "{case}");
        if lib == "posix-mq" && size > 8192 {
            // Above the system's msgsize_max: a dash that says so.
            assert_eq!(r["status"], "unsupported", "{case} {lib}");
            let reason = r["reason"].as_str().unwrap();
            assert!(
                reason.contains(&format!("messages of {size} bytes")) && reason.contains("msgsize_max"),
                "{reason}"
            );
            continue;
        }
        assert_eq!(r["status"], "ok", "{case} {lib}: {}", r["reason"]);
        for m in r["modes"].as_array().unwrap() {
            for run in m["runs"].as_array().unwrap() {
                let roles = run["roles"].as_array().unwrap();
                let count = |role: &str, key: &str| {
                    roles.iter().find(|x| x["role"] == role).unwrap()[key].as_u64().unwrap()
                };
                if r["pattern"] == "stream" {
                    let sent = count("sender", "sent");
                    assert!(sent > 0, "{case} {lib}");
                    assert_eq!(sent, count("receiver", "received"), "{case} {lib}: every message arrived");
                } else {
                    assert!(count("pinger", "sent") > 0, "{case} {lib}");
                }
            }
        }
    }
    // The report draws the sweep against size and gives each stream's bandwidth.
    let report = the_json_path(&t.out).with_extension("");
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("## Across message sizes") && md.contains("(charts/sizes.png)"), "{md}");
    let svg = std::fs::read_to_string(report.join("charts/sizes.svg")).unwrap();
    for lib in libs {
        assert!(
            svg.lines().filter(|l| l.trim() == lib).count() >= 3,
            "{lib} has a line in each panel of sizes.svg"
        );
    }
    let row = md.lines().find(|l| l.starts_with("| 64KiB |")).unwrap();
    let posix_mq = 1 + libs.iter().position(|l| *l == "posix-mq").unwrap();
    assert_eq!(row.split(" | ").nth(posix_mq).unwrap(), "—", "{row}");
    let csv = std::fs::read_to_string(report.join("medians.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut streams = 0;
    for line in csv.lines().skip(1) {
        let f = csv_fields(line);
        let (rate, bytes) = (f[col("msgs_per_s")].as_str(), f[col("bytes_per_s")].as_str());
        if f[col("pattern")] == "stream" && f[col("status")] == "ok" {
            let size: f64 = f[col("size")].parse().unwrap();
            let rate: f64 = rate.parse().unwrap();
            assert!((bytes.parse::<f64>().unwrap() - rate * size).abs() <= 1e-6 * rate * size, "{line}");
            streams += 1;
        } else {
            assert_eq!(bytes, "", "a round trip has no bandwidth: {line}");
        }
    }
    assert_eq!(streams, 4 * libs.len() - 2);
    t.nothing_left(pid);
}

#[test]
fn skip_oversubscribed_leaves_those_cases_out() {
    let _one = serial();
    let out = out_dir("skip");
    let o = out.to_str().unwrap();
    let r = ipcbench(&words(&format!(
        "run queue/4x4/16B --lib fastipc --runs 1 --duration 50ms --warmup 10ms --skip-oversubscribed --out {o}"
    )));
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc = the_json(&out);
    let result = results_of(&doc, "queue/4x4/16B", "fastipc");
    let cores = doc["machine"]["cores"].as_u64().unwrap();
    if cores < 8 {
        assert_eq!(result["status"], "skipped");
        assert!(result["reason"].as_str().unwrap().contains("8 processes"));
    } else {
        assert_eq!(result["status"], "ok");
    }
    let _ = std::fs::remove_dir_all(&out);
}
