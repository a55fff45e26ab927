//! Both ways at once: every library's peers each send a stream to the other, and each way is
//! whole.

use super::*;

/// `duplex/16B` for every library: a library with a round trip (a channel each way in one
/// process) runs it, the rest have their dash; each peer reports what it sent and what it
/// received, every message of each way arrived (its window's too), the figures are both ways
/// together and the slower way under their names, and the run leaves nothing behind.
#[test]
fn duplex_runs_both_ways_at_once_for_every_library() {
    let t = RunTest::new("duplex");
    let (pid, output, doc) = short_run(&t.out, &["duplex/16B", "--lib", &LIBRARIES.join(",")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    for &lib in LIBRARIES.iter() {
        let r = results_of(&doc, "duplex/16B", lib);
        assert_eq!(r["status"], expected_status(&doc, r), "{lib}: {}", r["reason"]);
        if r["status"] != "ok" {
            assert_eq!(r["reason"], capability_of(&doc, r)["text"], "{lib}: the dash carries its reason");
            continue;
        }
        assert_eq!(
            (&r["pattern"], &r["processes"], &r["params"]["duplex"]),
            (&"duplex".into(), &2.into(), &true.into())
        );
        let (total, slower) =
            (r["median"]["total_msgs_per_s"].as_f64(), r["median"]["slower_msgs_per_s"].as_f64());
        let (total, slower) = (total.unwrap_or_else(|| panic!("{lib}: {r}")), slower.unwrap());
        assert!(
            slower > 0.0 && total >= 2.0 * slower * 0.999,
            "{lib}: {total} both ways, {slower} the slower"
        );
        assert!(
            r["median"].get("msgs_per_s").is_none() && r["median"].get("worst_msgs_per_s").is_none(),
            "{lib}"
        );
        for m in r["modes"].as_array().unwrap() {
            for run in m["runs"].as_array().unwrap() {
                let roles = run["roles"].as_array().unwrap();
                assert_eq!(roles.len(), 2, "{lib}: two peers");
                for (me, other) in [(0, 1), (1, 0)] {
                    let (from, to) = (&roles[me], &roles[other]);
                    assert_eq!((&from["role"], &from["index"]), (&"peer".into(), &me.into()), "{lib}");
                    // A report holds its sending and its receiving counts side by side.
                    assert!(from["sent"].as_u64().unwrap_or(0) > 0, "{lib}: peer {me} sent: {from}");
                    assert_eq!(to["received"], from["sent"], "{lib}: peer {other} got all peer {me} sent");
                    assert_eq!(to["received_measured"], from["measured"], "{lib}: the window's too");
                }
            }
        }
    }
    t.nothing_left(pid);
}
