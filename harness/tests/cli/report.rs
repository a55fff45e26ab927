//! Reports rebuilt from results files alone, merged across machines; bad files refused.

use super::*;

/// The line of a Markdown table whose first cell is `case`.
fn row_of<'a>(md: &'a str, case: &str) -> &'a str {
    let start = format!("| {case} |");
    md.lines().find(|l| l.starts_with(&start)).unwrap_or_else(|| panic!("no row {case} in\n{md}"))
}

#[test]
fn a_report_is_rebuilt_from_json_alone_and_machines_merge() {
    let t = RunTest::new("report");
    let cases = ["stream/16B", "stream-rtt/16B", "queue/1x1/16B"];
    let (pid, output, doc) =
        short(&t.out, &[&["run"], &cases[..], &["--lib", "fastipc,uds,posix-mq"]].concat());
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let json = the_json_path(&t.out);
    // `run` built its report beside its JSON.
    let beside = json.with_extension("");
    for f in ["report.md", "medians.csv", "index.html", "charts/stream.svg", "charts/stream.png"] {
        assert!(beside.join(f).is_file(), "{f} missing beside {}", json.display());
    }
    // And `report` rebuilds it from the JSON alone.
    let again = t.out.join("again");
    let out = ipcbench(&["report", json.to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(again.join("report.md")).unwrap();
    let header = md.lines().find(|l| l.starts_with("| case |")).unwrap();
    assert_eq!(header, "| case | fastipc | uds | posix-mq |");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 9);
    let csv = std::fs::read_to_string(again.join("medians.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + results.len(), "a line per result:\n{csv}");
    for r in results {
        let (case, lib) = (r["case"].as_str().unwrap(), r["library"].as_str().unwrap());
        let column = ["fastipc", "uds", "posix-mq"].iter().position(|l| *l == lib).unwrap();
        let cell = row_of(&md, case).split(" | ").nth(column + 1).unwrap().trim_end_matches(" |");
        let line = csv
            .lines()
            .find(|l| l.contains(&format!(",{case},")) && l.contains(&format!(",{lib},")))
            .unwrap();
        if r["status"] == "unsupported" {
            assert!(cell.starts_with("— ["), "{case} {lib}: a dash with its footnote, not {cell:?}");
            assert!(line.contains(",unsupported,"), "{line}");
            continue;
        }
        assert_eq!(r["status"], "ok", "{case} {lib}");
        let median = &r["median"];
        // The CSV carries the JSON's medians exactly; the table, as the terminal prints them.
        // The first field, the machine's name, is quoted (it holds commas).
        let rest = line.strip_prefix('"').and_then(|l| l.split_once("\",")).map_or(line, |(_, r)| r);
        let rate: f64 = rest.split(',').nth(7).unwrap().parse().unwrap();
        assert_eq!(rate, median["msgs_per_s"].as_f64().unwrap(), "{line}");
        if case.starts_with("stream-rtt") {
            assert!(cell.contains("p50 ") && cell.contains(" p99 "), "{cell}");
        } else {
            assert!(
                cell.contains(&ipcbench::format::rate(rate)),
                "{case} {lib}: {cell:?} lacks {}",
                ipcbench::format::rate(rate)
            );
        }
    }
    assert!(row_of(&md, "queue/1x1/16B").contains("— ["), "uds has no work queue");
    assert!(md.contains("is the fastest, or level with the fastest, in"), "the summaries");
    assert!(md.contains("fastipc is faster than uds in"), "a head-to-head:\n{md}");
    // The shared memory each library mapped in the charted stream: FastIPC's rings, no socket's.
    let mapped = |lib: &str| {
        let mut lines = md.lines().skip_while(|l| !l.starts_with("Shared memory mapped"));
        let row = lines.find(|l| l.starts_with(&format!("| {lib} |")) && l.ends_with(" |")).unwrap();
        row.split(" | ").nth(1).unwrap().to_string()
    };
    assert!(
        mapped("fastipc").ends_with("KiB") || mapped("fastipc").ends_with("MiB"),
        "{}",
        mapped("fastipc")
    );
    assert_eq!(mapped("uds"), "none");
    let png = std::fs::read(again.join("charts/stream-rtt.png")).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    let html = std::fs::read_to_string(again.join("index.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("title=\"stream/16B"),
        "charts inline, cells with tooltips"
    );
    assert!(!html.contains("<script src") && !html.contains("<link"), "nothing fetched from elsewhere");

    // A second machine: the same results, said to come from another machine, merge into one
    // table with a column per machine.
    let mut other = doc.clone();
    other["machine"]["os"] = "Ubuntu 24.04 LTS".into();
    other["machine"]["cores"] = 8.into();
    other["machine"]["hypervisor"] = Value::Null;
    let other_path = t.out.join("other.json");
    std::fs::write(&other_path, serde_json::to_string(&other).unwrap()).unwrap();
    let merged = t.out.join("merged");
    let out = ipcbench(&[
        "report",
        json.to_str().unwrap(),
        other_path.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(merged.join("report.md")).unwrap();
    let header = md.lines().find(|l| l.starts_with("| case |")).unwrap();
    assert!(
        header.contains("| fastipc (Debian") && header.contains("| fastipc (Ubuntu 24.04 LTS, 8 cores) |"),
        "{header}"
    );
    assert_eq!(header.matches(" | ").count() + 1, 1 + 3 * 2, "a column per library and machine: {header}");
    let csv = std::fs::read_to_string(merged.join("medians.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * results.len());
    t.nothing_left(pid);
}

#[test]
fn a_corrupt_or_foreign_results_file_is_refused() {
    let dir = out_dir("refused");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let cut = file("cut.json", "{\"schema_version\": 1, \"tool\": \"ipcb");
    assert_refused(&["report", cut.as_str()], &["cut.json is not JSON", "cut short"]);
    let future = file("future.json", "{\"schema_version\": 99, \"results\": []}");
    assert_refused(&["report", future.as_str()], &["schema version 99", "reads version 1"]);
    let foreign = file("foreign.json", "{\"name\": \"something else\"}");
    assert_refused(&["report", foreign.as_str()], &["no schema_version", "not an ipcbench results file"]);
    let hollow = file("hollow.json", "{\"schema_version\": 1}");
    assert_refused(&["report", hollow.as_str()], &["hollow.json is corrupt"]);
    let absent = dir.join("absent.json").to_string_lossy().into_owned();
    assert_refused(&["report", absent.as_str()], &["reading", "absent.json"]);
    assert_refused(&["report"], &["name at least one results file"]);
    let _ = std::fs::remove_dir_all(&dir);
}
