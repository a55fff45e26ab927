//! Reports rebuilt from results files alone, merged across machines; bad files refused.

use super::*;

/// The first line of a Markdown table whose first cell is `case`: in a family's table, the row
/// of the case's first figure.
fn row_of<'a>(md: &'a str, case: &str) -> &'a str {
    let start = format!("| {case} |");
    md.lines().find(|l| l.starts_with(&start)).unwrap_or_else(|| panic!("no row {case} in\n{md}"))
}

/// What a unit (`M`, `µs`) multiplies a number written in it by, into msg/s or ns.
fn multiplier(unit: &str) -> Option<f64> {
    match unit {
        "k" | "µs" => Some(1e3),
        "M" | "ms" => Some(1e6),
        "G" | "s" => Some(1e9),
        _ => None,
    }
}

/// A figure cell's value in msg/s or ns, without its bold, level sign and marks: its number in
/// the unit it names where it names one (`10.8 M`: a value far above the row's least is written
/// in its own larger unit), else in its row's (`rate (k msg/s)`, `p50 (µs)`).
fn value(cell: &str, figure: &str) -> f64 {
    let bare = cell.replace("**", "").replace('≈', "");
    let mut words = bare.split_whitespace();
    let n: f64 = words.next().and_then(|w| w.parse().ok()).unwrap_or_else(|| panic!("{cell:?}"));
    let row = figure.split_once('(').unwrap().1.split_whitespace().next().unwrap().trim_end_matches(')');
    n * words.next().and_then(multiplier).or(multiplier(row)).unwrap_or(1.0)
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
    assert_eq!(header, "| case | figure | fastipc | uds | posix-mq |");
    let results = &doc.results;
    assert_eq!(results.len(), 9);
    let csv = std::fs::read_to_string(again.join("medians.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + results.len(), "a line per result:\n{csv}");
    for r in results {
        let (case, lib) = (r.case.as_str(), r.library.as_str());
        let column = ["fastipc", "uds", "posix-mq"].iter().position(|l| *l == lib).unwrap();
        let row: Vec<&str> = row_of(&md, case).split(" | ").collect();
        let cell = row[column + 2].trim_end_matches(" |");
        let line = csv
            .lines()
            .find(|l| l.contains(&format!(",{case},")) && l.contains(&format!(",{lib},")))
            .unwrap();
        if r.status == Status::Unsupported {
            assert!(cell.starts_with("— ["), "{case} {lib}: a dash with its footnote, not {cell:?}");
            assert!(line.contains(",unsupported,"), "{line}");
            continue;
        }
        let median = median_of(r);
        // The CSV carries the JSON's medians exactly; the table, as the terminal prints them.
        // The first field, the machine's name, is quoted (it holds commas).
        let rest = line.strip_prefix('"').and_then(|l| l.split_once("\",")).map_or(line, |(_, r)| r);
        let rate: f64 = rest.split(',').nth(7).unwrap().parse().unwrap();
        assert_eq!(rate, median.msgs_per_s, "{line}");
        // Three significant digits of the figure the row names, in the row's unit.
        let raw = if case.starts_with("stream-rtt") { median.p50_ns.unwrap() } else { rate };
        assert!(
            (value(cell, row[1]) - raw).abs() <= raw * 0.005,
            "{case} {lib}: {cell:?} is not {raw} in {}",
            row[1]
        );
    }
    assert!(row_of(&md, "queue/1x1/16B").contains("— ["), "uds has no work queue");
    assert!(md.contains("| library | cases passed | fastest or level |"), "the summary table:\n{md}");
    assert!(
        md.contains("**Is FastIPC faster than Unix domain sockets (SOCK_STREAM)?**"),
        "the questions:\n{md}"
    );
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
        html.contains("<svg") && html.contains("<span class=\"tip\">stream/16B · "),
        "charts inline, cells with tooltips"
    );
    assert!(!html.contains("<script src") && !html.contains("<link"), "nothing fetched from elsewhere");

    // A second machine: the same results, said to come from another machine, merge into one
    // table with a column per machine.
    let mut other = the_json(&t.out);
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
    assert_eq!(header.matches(" | ").count() + 1, 2 + 3 * 2, "a column per library and machine: {header}");
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

/// `report FILE --readme README.md`: every block of the README naming FILE holds that section
/// of FILE's report, the text around it untouched; a block naming a section the report lacks,
/// or `--readme` with two files, is refused, and a README with no block naming FILE is refused
/// before the report is written.
#[test]
fn a_readmes_blocks_are_written_from_the_report() {
    let dir = out_dir("readme");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("run.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-2026-12-02T16-28-14Z.json"),
        &json,
    )
    .unwrap();
    let readme = dir.join("README.md");
    let (open, end) = ("<!-- ipcbench report run.json: standing -->\n", "<!-- end of ipcbench report -->\n");
    std::fs::write(&readme, format!("intro\n{open}old\n{end}outro\n")).unwrap();
    let (j, r) = (json.to_str().unwrap(), readme.to_str().unwrap());
    let out = ipcbench(&["report", j, "--readme", r]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(&readme).unwrap();
    let body = written
        .strip_prefix(&format!("intro\n{open}"))
        .and_then(|w| w.strip_suffix(&format!("{end}outro\n")))
        .unwrap_or_else(|| panic!("the text around the block moved:\n{written}"));
    assert!(body.starts_with("| library |"), "{body}");
    let md = std::fs::read_to_string(dir.join("run/report.md")).unwrap();
    assert!(
        md.contains(&format!("## Where each library stands\n\n{body}")),
        "not report.md's section:\n{body}"
    );
    std::fs::write(&readme, "<!-- ipcbench report run.json: nothing -->\n<!-- end of ipcbench report -->\n")
        .unwrap();
    assert_refused(&["report", j, "--readme", r], &["names the section \"nothing\"", "standing"]);
    assert_refused(&["report", j, j, "--readme", r], &["--readme takes one results file"]);
    // Two files at once: RESULTS.md holds the whole page under its run line and contents, and
    // the README's sentences link to its sections there.
    let whole = dir.join("RESULTS.md");
    let block = |section: &str| format!("<!-- ipcbench report run.json: {section} -->\n{end}");
    std::fs::write(&whole, block("page")).unwrap();
    std::fs::write(&readme, format!("{}{}", block("run"), block("first-look"))).unwrap();
    let out = ipcbench(&["report", j, "--readme", r, "--readme", whole.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(&whole).unwrap();
    assert!(page.contains("\n*From `run.json`: 2026-12-02, 16:28 to "), "{page}");
    assert!(
        page.contains("- [First look](#first-look)\n") && page.contains("\n## Where each library stands\n"),
        "{page}"
    );
    assert!(page.contains("](#streams-and-round-trips))") && page.contains("(run/charts/"), "{page}");
    let front = std::fs::read_to_string(&readme).unwrap();
    assert!(
        front.contains("*From `run.json`: ") && front.contains("](RESULTS.md#streams-and-round-trips))"),
        "{front}"
    );
    // A README with no block naming the file is refused before the report is written again.
    std::fs::remove_dir_all(dir.join("run")).unwrap();
    std::fs::write(&readme, "no blocks here\n").unwrap();
    assert_refused(&["report", j, "--readme", r], &["has no block naming run.json", "nothing was written"]);
    assert!(!dir.join("run").exists(), "the report was written before the README was refused");
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "no blocks here\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A results file kept compressed (`.json.gz`) reads as the plain one: `report` writes its
/// folder named without both suffixes, and `compare` of it against the plain file finds no
/// change.
#[test]
fn a_compressed_results_file_reads_as_the_plain_one() {
    use std::io::Write;
    let dir = out_dir("gz");
    std::fs::create_dir_all(&dir).unwrap();
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run-2026-12-02T16-28-14Z.json");
    let packed = dir.join("run.json.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(&plain).unwrap()).unwrap();
    std::fs::write(&packed, gz.finish().unwrap()).unwrap();
    let p = packed.to_str().unwrap();
    let out = ipcbench(&["report", p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("run/report.md").is_file(), "no report in {}", dir.join("run").display());
    let out = ipcbench(&["compare", plain.to_str().unwrap(), p, "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `COLUMNS=100`: no line a run prints is wider (its result lines wrap, its closing tables are
/// a table per family with a row per library, split to fit); `--wide` prints one table with a
/// column per library; without COLUMNS and a terminal the width is 80.
#[test]
fn a_run_fits_the_terminal_it_is_told_of() {
    let t = RunTest::new("narrow");
    let line = "run stream/16B stream-rtt/16B broadcast/lossy/4sub/16B --lib uds,zmq,shm-ring --runs 1 \
                --duration 60ms --warmup 20ms --out";
    let mut narrow = bin();
    narrow.env("COLUMNS", "100").args(words(line)).arg(&t.out).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = narrow.spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    for l in stdout.lines().chain(stderr.lines()) {
        assert!(l.chars().count() <= 100, "{} columns: {l}", l.chars().count());
    }
    // A wrapped result line goes on indented.
    assert!(stderr.lines().any(|l| l.starts_with("    ")), "{stderr}");
    for family in ["Streams and round trips", "Broadcasts"] {
        assert!(stdout.lines().any(|l| l.starts_with(family)), "{family}:\n{stdout}");
    }
    for lib in ["uds", "zmq", "shm-ring"] {
        let rows = stdout.lines().filter(|l| l.starts_with(&format!("| {lib} "))).count();
        assert!(rows >= 2, "{lib}: a row in each family's table:\n{stdout}");
    }
    assert!(stdout.contains("| p50 (µs)") || stdout.contains("| p50 (ns)"), "{stdout}");
    t.nothing_left(pid);

    let t = RunTest::new("wide");
    let line = "run stream/16B --lib uds,shm-ring --runs 1 --duration 60ms --warmup 20ms --wide --out";
    let child =
        bin().args(words(line)).arg(&t.out).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header = stdout.lines().find(|l| l.starts_with("| case ")).unwrap();
    assert!(header.contains("| uds ") && header.contains("| shm-ring "), "{header}");
    assert!(stdout.contains("| stream/16B ") && stdout.contains(" msg/s"), "{stdout}");
    t.nothing_left(pid);

    let out =
        Command::new(BIN).env_remove("COLUMNS").args(["run", "no-such-case/at-all/16B"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.lines().all(|l| l.chars().count() <= 80), "{stderr}");
    assert!(stderr.replace("\n    ", " ").contains("no-such-case/at-all/16B"), "{stderr}");
}
