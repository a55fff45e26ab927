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
    // The file names both figures: both ways together and the slower way, never their slots.
    let json = the_json(&t.out);
    for &lib in LIBRARIES.iter() {
        let r = result_in(&doc, "duplex/16B", lib);
        assert_eq!(r.status, expected_status(&doc, r), "{lib}: {:?}", r.reason);
        if r.status != Status::Ok {
            assert_eq!(
                r.reason.as_ref(),
                Some(&capability_of(&doc, r).text),
                "{lib}: the dash carries its reason"
            );
            continue;
        }
        let duplex = r.params.as_ref().is_some_and(|p| p.duplex);
        assert_eq!((r.pattern, r.processes, duplex), (Pattern::Duplex, 2, true), "{lib}");
        let named = &json["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["case"] == "duplex/16B" && j["library"] == lib)
            .unwrap()["median"];
        assert!(
            named["total_msgs_per_s"].is_number() && named["slower_msgs_per_s"].is_number(),
            "{lib}: {named}"
        );
        assert!(
            named.get("msgs_per_s").is_none() && named.get("worst_msgs_per_s").is_none(),
            "{lib}: {named}"
        );
        let m = median_of(r);
        let (total, slower) = (m.msgs_per_s, m.worst_msgs_per_s.unwrap_or_else(|| panic!("{lib}: {m:?}")));
        assert!(
            slower > 0.0 && total >= 2.0 * slower * 0.999,
            "{lib}: {total} both ways, {slower} the slower"
        );
        for run in runs_of(r) {
            assert_eq!(run.roles.len(), 2, "{lib}: two peers");
            for (me, other) in [(0, 1), (1, 0)] {
                let (from, to) = (&run.roles[me], &run.roles[other]);
                assert_eq!((from.role, from.index), (Role::Peer, me), "{lib}");
                // A report holds its sending and its receiving counts side by side.
                let (sending, got) = (from.sent(), to.got());
                assert!(sending.sent > 0, "{lib}: peer {me} sent: {from:?}");
                assert_eq!(got.received, sending.sent, "{lib}: peer {other} got all peer {me} sent");
                assert_eq!(got.received_measured, sending.measured, "{lib}: the window's too");
            }
        }
    }
    t.nothing_left(pid);
}
