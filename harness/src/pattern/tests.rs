//! Each pattern's figures from hand-made reports: what its checks refuse and what they give.

use super::shows::{Scale, Title};
use super::*;
use crate::matrix::Role;
use crate::results::Measure::{CpuNsPerMsg, MsgsPerS};
use crate::results::{Receiving, Sending};

const ONE: Requests = Requests::ToOneServer;

/// A driving role that sent `sent` messages, `measured` of them in a window of one second.
fn sender(role: &str, index: usize, sent: u64, measured: u64) -> RoleReport {
    let counts = Sending { sent, measured, window_start_ns: 1_000, window_end_ns: 1_000_001_000 };
    RoleReport { sending: Some(counts), ..RoleReport::new(Role::parse(role).unwrap(), index) }
}

/// A receiving role's counts: received, received in the window, lost, lost in the window.
fn receiver(
    role: &str,
    index: usize,
    [received, received_measured, lost, lost_measured]: [u64; 4],
) -> RoleReport {
    let counts = Receiving { received, received_measured, lost, lost_measured, library_lost: 0 };
    RoleReport { receiving: Some(counts), ..RoleReport::new(Role::parse(role).unwrap(), index) }
}

fn case(name: &str) -> Case {
    crate::matrix::find(name).unwrap()
}

#[test]
fn a_lossless_stream_that_lost_a_message_is_broken() {
    let sender = sender("sender", 0, 100, 80);
    let whole = receiver("receiver", 0, [100, 80, 0, 0]);
    let f = figures(&case("stream/16B"), &[sender.clone(), whole], ONE).unwrap();
    assert_eq!(f.msgs_per_s, 80.0, "80 measured messages in one second");
    let short = receiver("receiver", 0, [99, 79, 0, 0]);
    let err = figures(&case("stream/16B"), &[sender, short], ONE).unwrap_err();
    assert_eq!(err.role, "receiver 0");
    assert!(err.reason.contains("received 99 messages (79 measured) of the 100 sent"), "{}", err.reason);
}

/// A duplex case's peers each send and receive: each way is checked on its own, the figures
/// are both ways together and the slower way; a way short of a message names the peer that
/// received it, and a peer without its receiving counts is broken.
#[test]
fn a_duplex_case_checks_each_way_and_gives_both_and_the_slower() {
    let duplex = case("duplex/16B");
    let peer = |i, sent: [u64; 2], got: [u64; 4]| RoleReport {
        receiving: receiver("peer", i, got).receiving,
        ..sender("peer", i, sent[0], sent[1])
    };
    let (a, b) = (peer(0, [100, 80], [50, 40, 0, 0]), peer(1, [50, 40], [100, 80, 0, 0]));
    let f = figures(&duplex, &[a.clone(), b], ONE).unwrap();
    assert_eq!((f.msgs_per_s, f.worst_msgs_per_s), (120.0, Some(40.0)));
    let short = peer(1, [50, 40], [99, 79, 0, 0]);
    let err = figures(&duplex, &[a.clone(), short], ONE).unwrap_err();
    assert_eq!(err.role, "peer 1");
    assert!(
        err.reason.contains("received 99 messages (79 measured) of the 100 peer 0 sent"),
        "{}",
        err.reason
    );
    let deaf = sender("peer", 1, 50, 40);
    let err = figures(&duplex, &[a, deaf], ONE).unwrap_err();
    assert_eq!(
        (err.role.as_str(), err.reason.as_str()),
        ("peer 1", "reported no counts of what it received")
    );
}

/// A role's report holds its side's counts; one without them is a child's defect, said.
#[test]
fn a_role_without_its_sides_counts_is_broken() {
    let stream = case("stream/16B");
    let mute = RoleReport::new(Role::Receiver, 0);
    let err = figures(&stream, &[sender("sender", 0, 10, 10), mute], ONE).unwrap_err();
    assert_eq!(
        (err.role.as_str(), err.reason.as_str()),
        ("receiver 0", "reported no counts of what it received")
    );
    let err = figures(&stream, &[RoleReport::new(Role::Sender, 0)], ONE).unwrap_err();
    assert_eq!(err.reason, "reported no counts of what it sent");
}

/// A latency sender whose send blocked from its warm-up past the window's end sent none of the
/// window's messages: the trial stands, all behind, with no latency to give.
#[test]
fn a_latency_sender_that_sent_nothing_in_its_window_is_all_behind() {
    let stuck = RoleReport { scheduled: Some(13_000), ..sender("sender", 0, 2_000, 0) };
    let receiver = receiver("receiver", 0, [2_000, 0, 0, 0]);
    let f = figures(&case("latency/100k/16B"), &[stuck, receiver], ONE).unwrap();
    assert_eq!((f.behind_share, f.p50_ns, f.msgs_per_s), (Some(1.0), None, 0.0));
}

#[test]
fn a_lossy_broadcast_takes_the_slowest_subscriber_and_the_share_lost() {
    let publisher = sender("publisher", 0, 1000, 1000);
    let a = receiver("subscriber", 0, [900, 900, 100, 100]);
    let b = receiver("subscriber", 1, [700, 700, 300, 300]);
    let f = figures(&case("broadcast/lossy/4sub/16B"), &[publisher.clone(), a, b.clone()], ONE).unwrap();
    assert_eq!(f.msgs_per_s, 700.0);
    // The slowest subscriber's loss, not the 20 % pooled over both.
    assert_eq!(f.lost_share, Some(0.3));
    let mut disagreeing = b;
    disagreeing.receiving.as_mut().unwrap().library_lost = 299;
    let err = figures(&case("broadcast/lossy/4sub/16B"), &[publisher, disagreeing], ONE).unwrap_err();
    assert!(err.reason.contains("the library says 299"), "{}", err.reason);
}

#[test]
fn cost_adds_up_the_processes_and_divides_by_the_rate() {
    use crate::results::Cost;
    let window = 1_000_000_000;
    let spent = |cpu: u64, rss: u64| {
        Some(Cost { window_ns: window, user_ns: cpu, peak_rss_bytes: rss, threads: 1, ..Cost::default() })
    };
    let sender = RoleReport { cost: spent(window, 4 << 20), ..sender("sender", 0, 1000, 1000) };
    let receiver =
        RoleReport { cost: spent(window / 2, 2 << 20), ..receiver("receiver", 0, [1000, 1000, 0, 0]) };
    let f = figures(&case("stream/16B"), &[sender.clone(), receiver.clone()], ONE).unwrap();
    assert_eq!(f.cores_busy, Some(1.5));
    assert_eq!(f.cpu_ns_per_msg, Some(1.5e6), "1.5 CPU seconds a second over 1000 messages a second");
    assert_eq!(f.peak_rss_bytes, Some((6 << 20) as f64));
    let unmetered = RoleReport { cost: None, ..receiver };
    let f = figures(&case("stream/16B"), &[sender, unmetered], ONE).unwrap();
    assert_eq!((f.cores_busy, f.cpu_ns_per_msg, f.peak_rss_bytes), (None, None, None));
}

#[test]
fn a_service_whose_servers_miss_a_request_is_broken() {
    let client = sender("client", 0, 10, 5);
    let server = receiver("server", 0, [9, 0, 0, 0]);
    let err = figures(&case("service/1c1s/16B"), &[client, server], ONE).unwrap_err();
    assert!(err.reason.contains("servers took 9 requests; clients sent 10"), "{}", err.reason);
}

#[test]
fn where_every_server_answers_every_request_each_must_take_it() {
    let case = case("service/4c4s/16B");
    let clients = (0..4).map(|i| sender("client", i, 10, 5));
    let servers = |took: u64| (0..4).map(move |i| receiver("server", i, [took, 0, 0, 0]));
    let all: Vec<RoleReport> = clients.clone().chain(servers(40)).collect();
    assert!(figures(&case, &all, Requests::ToEveryServer).is_ok());
    let err = figures(&case, &all, ONE).unwrap_err();
    assert!(err.reason.contains("servers took 160 requests; clients sent 40"), "{}", err.reason);
    let short: Vec<RoleReport> = clients.chain(servers(39)).collect();
    let err = figures(&case, &short, Requests::ToEveryServer).unwrap_err();
    assert!(
        err.reason.contains("took 156 requests; clients sent 40, each to all 4 servers"),
        "{}",
        err.reason
    );
}

/// The figure a pattern is ranked by heads its table and its chart, the floors cross a
/// panel it has, and what compare holds includes the ranked figure and the cost.
#[test]
fn each_pattern_shows_its_ranked_figure_first() {
    for pattern in Pattern::ALL {
        let s = spec(pattern).shows;
        let ranked = spec(pattern).counted.measure();
        assert_eq!(s.rows[0].0, ranked, "{pattern}");
        assert_eq!(s.panels[0].measure, ranked, "{pattern}");
        assert!(s.floors_on.is_none_or(|i| i < s.panels.len()), "{pattern}");
        assert_eq!(s.floors_on.is_some(), spec(pattern).timed(), "{pattern}: floors where it is timed");
        assert!(s.compared.contains(&ranked) && s.compared.contains(&CpuNsPerMsg), "{pattern}");
        assert_eq!(s.rows.iter().filter(|(m, _)| *m == ranked).count(), 1, "{pattern}");
    }
    assert_eq!(batch::SHOWS.rows[0].0, MsgsPerS);
}

/// A chart's title and axes agree: a rate's axis counts what the title counts (calls or
/// messages), a time panel's figure (p50, p99.99, greatest) is named in the title, and its
/// label carries no unit (its ticks do).
#[test]
fn titles_and_axes_agree() {
    for g in Gathered::all().chain([Gathered::Loans]) {
        let s = g.shows();
        let (Title::Own(title) | Title::AfterFamily(title)) = s.chart;
        for p in s.panels {
            match p.scale {
                Scale::Mega => {
                    assert!(p.label.ends_with("/s"), "{title}: {}", p.label);
                    assert_eq!(p.label.contains("calls"), title.contains("calls"), "{title}: {}", p.label);
                }
                Scale::Micros => {
                    let figure = p.label.split(' ').next().unwrap_or_default();
                    assert!(title.contains(figure), "{title} does not name {figure}");
                    assert!(!p.label.contains("µs") && !p.label.contains("ms"), "{}", p.label);
                }
                Scale::Percent => assert!(p.label.contains('%'), "{}", p.label),
            }
        }
    }
}

/// Each name a pattern gives a figure is a slot of `Figures` that no other figure's name is,
/// and reads back into that slot (as the figure a spread is about too, where it ranks).
#[test]
fn each_named_figure_reads_back_into_its_slot() {
    use serde_json::json;
    let slots: Vec<&str> =
        std::iter::once("msgs_per_s").chain(Figures::default().optional().map(|(k, _)| k)).collect();
    let mut named = 0;
    for pattern in Pattern::ALL {
        for &(slot, name) in spec(pattern).names {
            assert!(slots.contains(&slot), "{pattern}: {slot} is no figure");
            assert!(!slots.contains(&name), "{pattern}: {name} is another figure's name");
            let mut file = json!({ "msgs_per_s": 1.0 });
            file.as_object_mut().unwrap().remove(slot);
            file[name] = json!(5.0);
            let f: Figures = serde_json::from_value(file).unwrap_or_else(|e| panic!("{pattern} {name}: {e}"));
            let read = if slot == "msgs_per_s" {
                Some(f.msgs_per_s)
            } else {
                f.optional().into_iter().find(|(k, _)| *k == slot).and_then(|(_, v)| v)
            };
            assert_eq!(read, Some(5.0), "{pattern}: {name} reads into {slot}");
            let ranked = serde_json::to_value(crate::results::Figure::MsgsPerS).unwrap() == json!(slot)
                || serde_json::to_value(crate::results::Figure::P50Ns).unwrap() == json!(slot);
            if ranked {
                let figure: crate::results::Figure = serde_json::from_value(json!(name)).unwrap();
                assert_eq!(serde_json::to_value(figure).unwrap(), json!(slot), "{pattern}: {name}");
            }
            named += 1;
        }
    }
    assert!(named >= 5, "the slow subscriber's and the pairs' names: {named}");
}

/// The committed results files, written again as a run writes them: every result of a pattern
/// that names its figures has them under those names alone (its medians, each run's, each other
/// state's, its spread's figure), and the file reads back into what it was read from.
#[test]
fn committed_results_written_again_name_their_figures_and_read_back_the_same() {
    use crate::results::{load, named_as_results};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut renamed = 0;
    for entry in std::fs::read_dir(root.join("../results")).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        if !name.starts_with("run-") || !named_as_results(&path) {
            continue;
        }
        let doc = load(&path).unwrap();
        let again = std::env::temp_dir().join(format!("ipcbench-named-{}-{name}", std::process::id()));
        crate::results::write_atomically(&doc, &again, |p| spec(p).names).unwrap();
        let text = crate::results::read_text(&again).unwrap();
        let back = load(&again).unwrap();
        let _ = std::fs::remove_file(&again);
        assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&doc).unwrap(), "{name}");
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        for (r, j) in doc.results.iter().zip(json["results"].as_array().unwrap()) {
            let names = spec(r.pattern).names;
            if names.is_empty() || r.median.is_none() {
                continue;
            }
            let mut sets = vec![&j["median"]];
            for m in j["modes"].as_array().unwrap() {
                sets.push(&m["median"]);
                sets.extend(m["runs"].as_array().unwrap().iter().map(|run| &run["figures"]));
            }
            if let Some(others) = j.pointer("/host_state/others").and_then(|o| o.as_array()) {
                sets.extend(others.iter().map(|o| &o["median"]));
            }
            for set in sets.into_iter().filter(|s| !s.is_null()) {
                for &(slot, named) in names {
                    assert!(set.get(slot).is_none(), "{name} {} {}: {slot} unnamed", r.case, r.library);
                    if slot == "msgs_per_s" {
                        assert!(set.get(named).is_some(), "{name} {} {}: no {named}", r.case, r.library);
                    }
                }
            }
            if let Some(figure) = j.pointer("/spread/figure") {
                assert!(
                    !names.iter().any(|(slot, _)| figure == slot),
                    "{name} {}: the spread's figure",
                    r.case
                );
            }
            renamed += 1;
        }
    }
    assert!(renamed > 0, "the committed runs hold slow-subscriber and pairs results");
}
