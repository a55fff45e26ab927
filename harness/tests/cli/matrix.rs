//! Every library through every case it has, the dashes of the rest, `list`, sweeps and skips.

use ipcbench_api::RecvMode;

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
    let known: Vec<String> = doc
        .results
        .iter()
        .filter(|r| is_fastipcs_failed_reply(r))
        .map(|r| format!("{} fastipc: {:?}", r.case, r.reason))
        .collect();
    for k in &known {
        eprintln!("FastIPC's known failed reply (adapters/fastipc/README.md): {k}");
    }
    assert!(result.status.success() || !known.is_empty(), "the run failed:\n{stderr}");
    assert_eq!(doc.schema_version, 1);
    assert_eq!(doc.status, results::RunStatus::Complete);
    assert!(doc.machine.cores >= 1);
    assert!(!doc.machine.kernel.is_empty());
    assert!(doc.toolchain["rustc"].starts_with("rustc "), "{:?}", doc.toolchain);
    let cores = doc.machine.cores;
    let results = &doc.results;
    let ids: Vec<&str> = doc.libraries.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, *LIBRARIES, "every library, in order");
    assert_eq!(
        results.len(),
        (22 + 8 + 3 + 1) * ids.len(),
        "every case (22, 8 batch cases, 3 latency cases and a connect case) for every library"
    );
    for r in results.iter().filter(|r| !is_fastipcs_failed_reply(r)) {
        let (case, lib) = (r.case.as_str(), r.library.as_str());
        let lib_record = doc.libraries.iter().find(|l| l.id == lib).unwrap();
        let batch = r.batch.is_some();
        assert_eq!(batch, case.starts_with("batch/"), "{case}: the batch is recorded");
        let capability = capability_of(&doc, r);
        assert_eq!(r.oversubscribed, r.processes > cores, "{case} {lib}");
        if !capability.supported {
            assert_eq!(r.status, Status::Unsupported, "{case} {lib}");
            assert_eq!(
                r.reason.as_ref(),
                Some(&capability.text),
                "{case} {lib}: the dash carries its reason"
            );
            continue;
        }
        let median = median_of(r);
        if r.pattern == Pattern::Connect {
            latency::figures_of_a_connect_result(r, 3, &format!("{case} {lib}"));
            continue;
        }
        assert!(median.msgs_per_s > 0.0, "{case} {lib}");
        let modes: Vec<RecvMode> = r.modes.iter().map(|m| m.mode).collect();
        assert_eq!(modes, lib_record.receive_modes, "{case} {lib}: both receive modes are kept");
        assert_eq!(
            modes,
            [RecvMode::Waiting, RecvMode::Polling],
            "{case} {lib}: every library is measured both ways"
        );
        for m in &r.modes {
            let median = m.median.as_ref().unwrap_or_else(|| panic!("{case} {lib} {}: no median", m.mode));
            let cost = |k: &str, v: Option<f64>| v.unwrap_or_else(|| panic!("{case} {lib} {}: {k}", m.mode));
            // A latency sender that sent none of its window's messages moved none to divide by.
            let all_behind = r.pattern == Pattern::Latency && median.msgs_per_s == 0.0;
            assert!(
                cost("cores_busy", median.cores_busy) > 0.0
                    && (all_behind || cost("cpu_ns_per_msg", median.cpu_ns_per_msg) > 0.0),
                "{case} {lib}"
            );
            assert!(cost("peak_rss_bytes", median.peak_rss_bytes) > 1e6, "{case} {lib}");
            for run in &m.runs {
                for role in &run.roles {
                    plausible_cost(role, &format!("{case} {lib} {}", m.mode));
                }
            }
        }
        match r.pattern {
            Pattern::StreamRtt | Pattern::Service => {
                let (p50, p99) = (median.p50_ns.unwrap(), median.p99_ns.unwrap());
                assert!(p50 > 0.0 && p99 >= p50, "{case} {lib}: {p50} {p99}");
                latency::histograms_give_the_figures(r, &format!("{case} {lib}"));
            }
            Pattern::Latency => latency::figures_of_a_latency_result(r, &format!("{case} {lib}")),
            Pattern::Broadcast if case.contains("/lossy/") => {
                let lost = median.lost_share.unwrap();
                assert!((0.0..1.0).contains(&lost), "{case} {lib}: {lost}");
            }
            _ => assert!(median.p50_ns.is_none(), "{case} {lib}"),
        }
        // The raw counts agree with the figures: every process reported.
        for run in runs_of(r) {
            assert_eq!(run.roles.len(), r.processes, "{case} {lib}");
            if matches!(r.pattern, Pattern::Stream | Pattern::Latency)
                || (batch && r.pattern == Pattern::Broadcast)
            {
                let sender = run.roles.iter().find(|x| matches!(x.role, Role::Sender | Role::Publisher));
                let sent = sender.unwrap().sent().sent;
                for receiver in
                    run.roles.iter().filter(|x| matches!(x.role, Role::Receiver | Role::Subscriber))
                {
                    let got = receiver.got().received;
                    assert_eq!(sent, got, "{case} {lib}: a lossless stream delivers every message");
                }
                assert!(sent > 0);
                if let Some(n) = r.batch {
                    assert_eq!(sent % n as u64, 0, "{case} {lib}: the sender sent whole batches");
                }
            }
        }
    }
    for dash in ["broadcast/lossless/1sub/16B", "broadcast/lossy/4sub/1KiB", "queue/4x4/16B"] {
        assert_eq!(result_in(&doc, dash, "uds").status, Status::Unsupported);
    }
    let status = |has: bool| if has { Status::Ok } else { Status::Unsupported };
    // NNG's pub0 has no lossless mode; everything else of ZeroMQ and NNG but the batches runs.
    for lib in ["zmq", "nng"] {
        for r in results.iter().filter(|r| r.library == lib) {
            let case = r.case.as_str();
            let dash =
                (lib == "nng" && case.starts_with("broadcast/lossless/")) || case.starts_with("batch/");
            assert_eq!(r.status, status(!dash), "{case} {lib}");
        }
    }
    let nng = result_in(&doc, "broadcast/lossless/4sub/16B", "nng");
    assert!(nng.reason.as_deref().unwrap().contains("pub0 always drops"), "{:?}", nng.reason);
    // ipc-channel, pipes, FIFOs and the control: streams and round trips only.
    let two = |r: &&CaseResult| matches!(r.library.as_str(), "ipc-channel" | "pipe" | "fifo" | "shm-ring");
    for r in results.iter().filter(two) {
        let has = matches!(family(r), Pattern::Stream | Pattern::StreamRtt) && r.batch.is_none();
        assert_eq!(r.status, status(has), "{} {}", r.case, r.library);
    }
    // iceoryx2 has no work queue; its services run, each request answered by every server,
    // which the cases of several servers say beside the figure.
    for r in results.iter().filter(|r| r.library == "iceoryx2") {
        let case = r.case.as_str();
        let dash = r.pattern == Pattern::Queue || r.batch.is_some();
        assert_eq!(r.status, status(!dash), "{case} iceoryx2");
        let shared = case.starts_with("service/4c4s");
        assert_eq!(r.note.as_deref().is_some_and(|n| n.contains("do not share a load")), shared, "{case}");
    }
    assert!(results.iter().filter(|r| r.library != "iceoryx2").all(|r| r.note.is_none()));
    let stdout_text = String::from_utf8_lossy(&result.stdout);
    assert!(stdout_text.contains("† every server answered every request"), "{stdout_text}");
    // Aeron: streams, round trips and the lossless broadcasts; the rest are dashes.
    for r in results.iter().filter(|r| r.library == "aeron") {
        let has = matches!(family(r), Pattern::Stream | Pattern::StreamRtt) || r.case.contains("/lossless/");
        assert_eq!(r.status, status(has), "{} aeron", r.case);
    }
    // The batch cases run for the two libraries with batch calls, and are dashes for the rest.
    for r in results.iter().filter(|r| r.batch.is_some()) {
        let has = matches!(r.library.as_str(), "fastipc" | "aeron");
        assert_eq!(r.status, status(has), "{} {}", r.case, r.library);
    }
    // Unix sockets (stream and seqpacket) and TCP: streams, round trips and services.
    let sockets = |r: &&CaseResult| matches!(r.library.as_str(), "uds" | "uds-seqpacket" | "tcp");
    for r in results.iter().filter(sockets) {
        let has =
            matches!(family(r), Pattern::Stream | Pattern::StreamRtt | Pattern::Service) && r.batch.is_none();
        assert_eq!(r.status, status(has), "{} {}", r.case, r.library);
    }
    // Boost's message_queue and POSIX message queues: streams, round trips and work queues.
    for r in results.iter().filter(|r| r.library == "posix-mq" || r.library == "boost") {
        let has =
            matches!(family(r), Pattern::Stream | Pattern::StreamRtt | Pattern::Queue) && r.batch.is_none();
        assert_eq!(r.status, status(has), "{} {}", r.case, r.library);
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

/// The pattern whose capability a result's case needs: a latency or connect case is a stream.
fn family(r: &CaseResult) -> Pattern {
    match r.pattern {
        Pattern::Latency | Pattern::Connect => Pattern::Stream,
        p => p,
    }
}

/// A role's cost, if it measured one: some CPU time, at most its window times its threads (and
/// a scheduler tick), its peak memory and threads.
fn plausible_cost(role: &RoleReport, what: &str) {
    let Some(cost) = role.cost else {
        return;
    };
    let (window, threads) = (cost.window_ns, cost.threads);
    let cpu = cost.user_ns + cost.system_ns;
    let who = role.role.as_str();
    assert!(window > 0 && threads >= 1, "{what}: {cost:?}");
    assert!(cpu > 0, "{what} {who}: a role that ran cost some CPU time: {cost:?}");
    assert!(cpu <= window * threads + 10_000_000, "{what} {who}: {cpu} ns of CPU in {cost:?}");
    assert!(cost.peak_rss_bytes > 1 << 20, "{what}: {cost:?}");
}

/// A spinning receiver keeps its core busy, a sleeping one does not: the control's round trip,
/// polling then waiting, each role's cores busy.
#[test]
fn a_spinning_role_keeps_a_core_busy_and_a_sleeping_one_does_not() {
    let t = RunTest::new("spin");
    let (pid, output, doc) = short_run(&t.out, &["stream-rtt/16B", "--lib", "shm-ring"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let r = result_in(&doc, "stream-rtt/16B", "shm-ring");
    let busy = |mode: RecvMode| -> Vec<f64> {
        let m = r.modes.iter().find(|m| m.mode == mode).unwrap();
        m.runs[0]
            .roles
            .iter()
            .map(|role| {
                plausible_cost(role, mode.as_str());
                let c = role.cost.unwrap_or_else(|| panic!("{mode}: {role:?} measured no cost"));
                (c.user_ns + c.system_ns) as f64 / c.window_ns as f64
            })
            .collect()
    };
    // Two processes on two cores: each spins on a core of its own, near one core busy.
    for b in busy(RecvMode::Polling) {
        assert!(b > 0.6, "a polling role: {b:.2} cores");
    }
    // Waiting, each side sleeps while the other works: together at most a little over one core.
    let waiting: f64 = busy(RecvMode::Waiting).iter().sum();
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
    assert_eq!(doc.settings.config.buffer, Some(65536));
    let msg_max: usize =
        std::fs::read_to_string("/proc/sys/fs/mqueue/msg_max").unwrap().trim().parse().unwrap();
    for &lib in LIBRARIES.iter() {
        let r = result_in(&doc, "stream/16B", lib);
        if lib == "cpp-ipc" && !ipcbench_cpp_ipc::BUILT {
            assert_not_built(r);
            continue;
        }
        assert_eq!(r.status, Status::Ok, "{lib}: {:?}", r.reason);
        for m in &r.modes {
            let receiver = report_of(&m.runs[0], Role::Receiver);
            let b = receiver.buffer.as_ref().unwrap_or_else(|| panic!("{lib}: no buffer reported"));
            let (messages, bytes, how) = (b.messages, b.bytes, b.how.as_str());
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
            assert_eq!((messages, bytes), expected, "{lib} {}: {how}", m.mode);
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
    assert_not_built(result_in(&doc, "stream/16B", "cpp-ipc"));
    assert_not_built(result_in(&doc, "stream-rtt/16B", "cpp-ipc"));
    assert_eq!(result_in(&doc, "stream-rtt/16B", "uds").status, Status::Ok);
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
    // 16 MiB: larger than every ring these libraries set by default (so windows that hold it).
    let (pid, output, doc) =
        windowed(&t.out, &["sweep", "--sizes", "8,1KiB,64KiB,16MiB", "--lib", &libs.join(",")], LONG);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let results = &doc.results;
    let mut cases: Vec<&str> = results.iter().map(|r| r.case.as_str()).collect();
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
        let (case, lib, size) = (r.case.as_str(), r.library.as_str(), r.size);
        assert!(case.ends_with(&format!("/{}", ipcbench::matrix::size_label(size))), "{case}");
        if lib == "posix-mq" && size > 8192 {
            // Above the system's msgsize_max: a dash that says so.
            assert_eq!(r.status, Status::Unsupported, "{case} {lib}");
            let reason = r.reason.as_deref().unwrap();
            assert!(
                reason.contains(&format!("messages of {size} bytes")) && reason.contains("msgsize_max"),
                "{reason}"
            );
            continue;
        }
        assert_eq!(r.status, Status::Ok, "{case} {lib}: {:?}", r.reason);
        for run in runs_of(r) {
            if r.pattern == Pattern::Stream {
                the_stream_delivered_all(run, &format!("{case} {lib}"));
            } else {
                assert!(report_of(run, Role::Pinger).sent().sent > 0, "{case} {lib}");
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
    let doc = the_document(&out);
    let result = result_in(&doc, "queue/4x4/16B", "fastipc");
    if doc.machine.cores < 8 {
        assert_eq!(result.status, Status::Skipped);
        assert!(result.reason.as_deref().unwrap().contains("8 processes"), "{:?}", result.reason);
    } else {
        assert_eq!(result.status, Status::Ok);
    }
    let _ = std::fs::remove_dir_all(&out);
}
