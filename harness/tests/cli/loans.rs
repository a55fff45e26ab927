//! The loan mode: streams and round trips written and read in the library's own memory, beside
//! their copies. Counts, dashes and the report's section; never a speed.

use ipcbench_api::Transfer;

use super::*;

#[test]
fn loans_run_beside_their_copies_and_dash_past_what_a_library_lends() {
    let t = RunTest::new("loans");
    let run = ["run", "--transfer", "copy,loan", "--lib", "iceoryx2,fastipc,aeron,uds"];
    let cases = ["stream/1KiB", "stream/64KiB", "stream-rtt/1KiB"];
    let (pid, output, doc) = short(&t.out, &[&run[..], &cases[..]].concat());
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // 16 MiB in windows long enough to hold its sends on a stalled host, in a folder of its own.
    let large = t.out.join("large");
    let (large_pid, output, large_doc) = windowed(&large, &[&run[..], &["stream/16MiB"]].concat(), LONG);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let names = |doc: &Document| {
        let mut names: Vec<String> = doc.results.iter().map(|r| r.case.clone()).collect();
        names.dedup();
        names
    };
    assert_eq!(
        names(&doc),
        [
            "stream/1KiB",
            "loan/stream/1KiB",
            "stream/64KiB",
            "loan/stream/64KiB",
            "stream-rtt/1KiB",
            "loan/stream-rtt/1KiB"
        ]
    );
    assert_eq!(names(&large_doc), ["stream/16MiB", "loan/stream/16MiB"]);
    // The file as written: a loan result says so; a copy's carries no transfer (the default).
    for json in [the_json(&t.out), the_json(&large)] {
        for r in json["results"].as_array().unwrap() {
            let loan = r["case"].as_str().unwrap().starts_with("loan/");
            assert_eq!(r.get("transfer").and_then(Value::as_str), loan.then_some("loan"), "{}", r["case"]);
        }
    }
    for r in doc.results.iter().chain(&large_doc.results) {
        let (case, lib) = (r.case.as_str(), r.library.as_str());
        let loan = case.starts_with("loan/");
        assert_eq!(r.transfer == Transfer::Loan, loan, "{case} {lib}");
        let dash = |words: &[&str]| {
            assert_eq!(r.status, Status::Unsupported, "{case} {lib}");
            let reason = r.reason.as_deref().unwrap();
            assert!(words.iter().all(|w| reason.contains(w)), "{case} {lib}: {reason}");
        };
        match (loan, lib, r.size) {
            (true, "uds", _) => dash(&["kernel copies"]),
            // Aeron lends one frame: the MTU less its header; FastIPC one piece of its ring.
            (true, "aeron", size) if size > 1376 => dash(&["try_claim", "at most 1376"]),
            (true, "fastipc", size) if size > 262080 => {
                dash(&["at most 262080", "max_piece", "never copied"])
            }
            _ => assert_eq!(r.status, Status::Ok, "{case} {lib}: {:?}", r.reason),
        }
        if r.status != Status::Ok {
            continue;
        }
        for run in runs_of(r) {
            if r.pattern == Pattern::Stream {
                the_stream_delivered_all(run, &format!("{case} {lib}"));
            } else {
                let (sent, received) =
                    (report_of(run, Role::Pinger).sent().sent, report_of(run, Role::Echo).got());
                assert_eq!(sent, received.received, "{case} {lib}: every request answered");
            }
        }
    }
    // The report holds the loans in their own section, beside their copies, and nowhere else.
    let report = the_json_path(&t.out).with_extension("");
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    let section = md.split("## Copy against loan").nth(1).expect("a section of the loans");
    let section = section.split("\n## ").next().unwrap();
    assert!(section.contains("(charts/loans.png)"), "{section}");
    let row = section.lines().find(|l| l.starts_with("| stream/1KiB |")).unwrap();
    assert_eq!(row.matches(" → ").count(), 3, "iceoryx2, fastipc and aeron copied and lent: {row}");
    assert!(section.contains("uds: the kernel copies"), "{section}");
    let streams = md.split("## Streams and round trips").nth(1).unwrap().split("\n## ").next().unwrap();
    assert!(!streams.contains("loan/"), "the loans are not ranked with the copies: {streams}");
    let svg = std::fs::read_to_string(report.join("charts/loans.svg")).unwrap();
    for line in ["fastipc copy", "fastipc loan", "iceoryx2 loan"] {
        assert!(svg.lines().any(|l| l.trim() == line), "{line} in loans.svg");
    }
    assert!(!svg.lines().any(|l| l.trim() == "uds copy"), "a library with no loan has no line");
    assert_nothing_left(pid, &t.shm_before);
    t.nothing_left(large_pid);
}

#[test]
fn the_loan_mode_alone_of_cases_without_one_is_refused() {
    let out = out_dir("loan-refused");
    let o = out.to_str().unwrap();
    assert_refused(
        &["run", "queue/1x1/16B", "--transfer", "loan", "--out", o],
        &["--transfer loan", "streams and round trips"],
    );
    assert_refused(&["run", "stream/16B", "--transfer", "lend", "--out", o], &["--transfer", "copy, loan"]);
}
