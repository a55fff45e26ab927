//! The matrix and the names of its cases.

use super::file::parse;
use super::*;

#[test]
fn the_matrix_holds_every_case_of_the_seed() {
    let names: Vec<String> = matrix().into_iter().map(|c| c.name).collect();
    for expected in [
        "stream/16B",
        "stream/1KiB",
        "stream-rtt/16B",
        "stream-rtt/1KiB",
        "broadcast/lossless/1sub/16B",
        "broadcast/lossless/4sub/1KiB",
        "broadcast/lossy/1sub/1KiB",
        "broadcast/lossy/4sub/16B",
        "queue/1x1/16B",
        "queue/4x4/1KiB",
        "service/1c1s/16B",
        "service/4c1s/16B",
        "service/4c4s/1KiB",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
    let batches: Vec<&String> = names.iter().filter(|n| n.starts_with("batch/")).collect();
    assert_eq!(
        batches,
        [
            "batch/stream/16B/x16",
            "batch/stream/16B/x64",
            "batch/stream/1KiB/x16",
            "batch/stream/1KiB/x64",
            "batch/broadcast/lossless/1sub/16B/x16",
            "batch/broadcast/lossless/1sub/16B/x64",
            "batch/broadcast/lossless/4sub/16B/x16",
            "batch/broadcast/lossless/4sub/16B/x64",
        ]
    );
    let latency: Vec<&String> = names.iter().filter(|n| n.starts_with("latency/")).collect();
    assert_eq!(latency, ["latency/1k/16B", "latency/100k/16B", "latency/1M/16B"]);
    assert!(names.iter().any(|n| n == "connect/16B"));
    assert!(names.iter().any(|n| n == "broadcast/lossy/32sub/1KiB"));
    assert_eq!(names.last().unwrap(), "fanout-latency/10k/32sub/16B");
    assert_eq!(find("connect/16B").unwrap().pattern(), Pattern::Connect);
    assert_eq!(names.len(), 38 + 8 + 3 + 1 + 2 + 6 + 6);
    let l = find("latency/100k/16B").unwrap();
    assert_eq!(
        (l.shape, l.pace, l.pattern(), l.column()),
        (Shape::Stream, Pace::Rate(100_000), Pattern::Latency, Column::Stream)
    );
    assert_eq!(
        [rate_label(1000), rate_label(2500), rate_label(3_000_000), rate_label(7)],
        ["1k", "2500", "3M", "7"]
    );
    let b = find("batch/stream/1KiB/x64").unwrap();
    assert_eq!((b.size, b.batch, b.shape), (1024, 64, Shape::Stream));
    assert_eq!(find("stream/16B").unwrap().batch, 1);
}

#[test]
fn globs_and_near_matches() {
    let all = matrix();
    assert_eq!(select(&all, &["stream/*".into()]).unwrap().len(), 2);
    assert_eq!(select(&all, &["broadcast/*/4sub/16B".into()]).unwrap().len(), 2);
    let err = select(&all, &["stream/16".into()]).unwrap_err().to_string();
    assert!(err.contains("stream/16B"), "{err}");
}

/// No case named: the comparison page's 30 cases. Every set expands to cases, `@all` holds every
/// case of the matrix and the rest of the families at their names, and an unknown set is named.
#[test]
fn named_sets_expand_and_the_page_is_the_default() {
    let all = matrix();
    let page = select(&all, &[]).unwrap();
    let names: Vec<&str> = page.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(page.len(), 30, "{names:?}");
    assert_eq!(select(&all, &["@page".into()]).unwrap(), page);
    assert!(names.contains(&"service/4c4s/1KiB") && names.contains(&"batch/broadcast/lossless/4sub/16B/x64"));
    assert!(
        !names.iter().any(|n| n.contains("2sub") || n.contains("slow") || n.starts_with("latency")),
        "{names:?}"
    );
    for set in sets() {
        let cases = select(&all, &[format!("@{}", set.name)]).unwrap();
        assert!(!cases.is_empty() && !set.about.is_empty(), "{}", set.name);
    }
    let every = select(&all, &["@all".into()]).unwrap();
    for case in &all {
        assert!(every.contains(case), "@all lacks {}", case.name);
    }
    let latency: Vec<String> = select(&all, &["@latency".into()])
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .filter(|n| n.starts_with("latency/"))
        .collect();
    assert_eq!(latency.len(), 8, "{latency:?}");
    assert!(every.iter().any(|c| c.name == "loan/stream-rtt/64KiB"));
    let e = select(&all, &["@bend".into()]).unwrap_err().to_string();
    assert!(e.contains("unknown set \"@bend\"") && e.contains("@bends"), "{e}");
}

#[test]
fn a_sweep_names_streams_and_round_trips_of_any_size() {
    let sizes = sweep_sizes();
    assert_eq!((sizes[0], sizes[13], *sizes.last().unwrap(), sizes.len()), (8, 65536, 16 << 20, 17));
    let cases = sweep(&[8, 65536, 8]).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["stream/8B", "stream/64KiB", "stream-rtt/8B", "stream-rtt/64KiB"]);
    assert_eq!(
        named("stream-rtt/24B").unwrap(),
        Case {
            name: "stream-rtt/24B".into(),
            shape: Shape::RoundTrip,
            size: 24,
            batch: 1,
            pace: Pace::Free,
            pairs: None,
            slow: 0,
            duplex: false,
            transfer: Transfer::Copy,
        }
    );
    assert_eq!(find("stream/4KiB").unwrap().size, 4096);
    assert_eq!(find("stream/16B").unwrap(), matrix()[0]);
    for bad in ["stream/4096B", "stream/4B", "queue/1x1/4KiB", "stream/128MiB", "stream/4kb"] {
        assert!(named(bad).is_none(), "{bad}");
    }
    assert!(select(&matrix(), &["stream/4B".into()]).is_err());
    assert_eq!(parse_size(" 4KiB").unwrap(), 4096);
    assert_eq!(parse_size("24").unwrap(), 24);
    assert!(parse_size("7").unwrap_err().to_string().contains("from 8 bytes"));
    assert!(parse_size("4kb").unwrap_err().to_string().contains("4KiB"));
    assert!(parse_size("1GiB").is_err());
}

/// The open families take any count, size or rate by name, each name built as the matrix
/// builds its own; a count out of bounds, a name not canonical, a mistyped one are refused,
/// the last with a near match.
#[test]
fn the_open_families_take_any_count_by_name() {
    let c = find("broadcast/lossy/64sub/4KiB").unwrap();
    assert_eq!(
        (c.shape, c.size, c.pattern()),
        (Shape::Broadcast { lossy: true, subscribers: 64 }, 4096, Pattern::Broadcast)
    );
    let slow = find("broadcast/lossless/8sub-2slow/16B").unwrap();
    assert_eq!(
        (slow.slow, slow.pattern(), slow.column()),
        (2, Pattern::SlowSubscriber, Column::BroadcastLossless)
    );
    assert_eq!((0..8).filter(|&i| slow.is_slow(i)).collect::<Vec<_>>(), [6, 7]);
    let d = named("duplex/4KiB").unwrap();
    assert_eq!(
        (d.duplex, d.shape, d.pattern(), d.channels()),
        (true, Shape::RoundTrip, Pattern::Duplex, Some(2))
    );
    assert_eq!(d.roles(), [(Role::Peer, 0), (Role::Peer, 1)]);
    assert!(d.loaned().is_none(), "a duplex case has no loan form");
    let p = find("pairs/3/stream-rtt/1KiB").unwrap();
    assert_eq!((p.pairs, p.shape, p.pattern()), (Some(3), Shape::RoundTrip, Pattern::Pairs));
    assert_eq!(
        p.roles(),
        [
            (Role::Echo, 0),
            (Role::Pinger, 0),
            (Role::Echo, 1),
            (Role::Pinger, 1),
            (Role::Echo, 2),
            (Role::Pinger, 2)
        ]
    );
    let l = find("latency/300k/16B").unwrap();
    assert_eq!((l.pace, l.pattern()), (Pace::Rate(300_000), Pattern::Latency));
    let f = find("fanout-latency/1k/8sub/16B").unwrap();
    assert_eq!(
        (f.pace, f.shape, f.pattern(), f.column()),
        (
            Pace::Rate(1000),
            Shape::Broadcast { lossy: false, subscribers: 8 },
            Pattern::FanoutLatency,
            Column::BroadcastLossless
        )
    );
    // Each family's matrix cases read back by name as the same case.
    for case in matrix().into_iter().filter(|c| c.batch == 1 && c.pace != Pace::Connect) {
        assert!(
            case.name.starts_with("queue/")
                || case.name.starts_with("service/")
                || named(&case.name) == Some(case.clone()),
            "{}",
            case.name
        );
    }
    for bad in [
        "broadcast/lossy/0sub/16B",
        "broadcast/lossy/257sub/16B",
        "broadcast/lossy/08sub/16B",
        "broadcast/lossless/4sub-4slow/16B",
        "broadcast/lossless/4sub-0slow/16B",
        "broadcast/sometimes/4sub/16B",
        "pairs/0/stream/16B",
        "pairs/65/stream/16B",
        "pairs/2/queue/16B",
        "latency/1000/16B",
        "latency/1k/8B",
        "latency/20M/16B",
        "fanout-latency/1k/8sub/8B",
    ] {
        assert!(named(bad).is_none(), "{bad}");
    }
    for (typo, near) in [
        ("broadcast/lossless/4sub-1slw/16B", "broadcast/lossless/4sub-1slow/16B"),
        ("pairs/2/streem/16B", "pairs/2/stream/16B"),
        ("fanout-latncy/10k/8sub/16B", "fanout-latency/10k/8sub/16B"),
        ("broadcast/losless/32sub/16B", "broadcast/lossless/32sub/16B"),
    ] {
        let e = select(&matrix(), &[typo.into()]).unwrap_err().to_string();
        assert!(
            e.contains(&format!("did you mean {near}")) || e.contains(&format!(", {near}")),
            "{typo}: {e}"
        );
    }
    assert_eq!(parse_rate("300k").unwrap(), 300_000);
    assert_eq!(parse_rate("3M").unwrap(), 3_000_000);
    assert!(parse_rate("20M").unwrap_err().to_string().contains("from 1 to 10M"));
    assert!(parse_rate("fast").unwrap_err().to_string().contains("1k, 300k or 1M"));
    let sweep: Vec<String> = rate_sweep(&SWEEP_RATES, &[16]).unwrap().into_iter().map(|c| c.name).collect();
    assert_eq!(sweep.first().unwrap(), "latency/1k/16B");
    assert_eq!(sweep.last().unwrap(), "latency/10M/16B");
}

#[test]
fn sizes_are_labelled_in_binary_units() {
    assert_eq!(size_label(16), "16B");
    assert_eq!(size_label(1024), "1KiB");
    assert_eq!(size_label(1536), "1536B");
    assert_eq!(size_label(1 << 20), "1MiB");
}

#[test]
fn a_bad_matrix_is_refused() {
    assert!(parse("sizes = [7]\n[[case]]\npattern = \"stream\"\n").is_err());
    assert!(parse("sizes = [16]\n[[case]]\npattern = \"gossip\"\n").is_err());
    let batch =
        |body: &str| parse(&format!("sizes = [16]\n[[case]]\npattern = \"stream\"\n[[batch]]\n{body}"));
    assert!(batch("pattern = \"stream\"\nbatches = [16]\n").is_ok());
    let e = batch("pattern = \"stream\"\nbatches = [1]\n").unwrap_err().to_string();
    assert!(e.contains("batches of 2 or more"), "{e}");
    let e = batch("pattern = \"stream-rtt\"\nbatches = [16]\n").unwrap_err().to_string();
    assert!(e.contains("not stream-rtt"), "{e}");
    let e = parse("sizes = [16]\n[[case]]\npattern = \"stream\"\nbatches = [16]\n").unwrap_err().to_string();
    assert!(e.contains("belong to [[batch]]"), "{e}");
    let latency =
        |body: &str| parse(&format!("sizes = [16]\n[[case]]\npattern = \"stream\"\n[[latency]]\n{body}"));
    assert!(latency("rates = [1000]\nsizes = [16]\n").is_ok());
    let e = latency("rates = [1000]\nsizes = [8]\n").unwrap_err().to_string();
    assert!(e.contains("16 bytes or more"), "{e}");
    let e = latency("rates = [0]\nsizes = [16]\n").unwrap_err().to_string();
    assert!(e.contains("rates from 1"), "{e}");
}

#[test]
fn a_stream_or_round_trip_has_a_loan_form_and_nothing_else_does() {
    let loan = named("loan/stream/64KiB").unwrap();
    assert_eq!(
        (loan.transfer, loan.shape, loan.size, loan.pattern()),
        (Transfer::Loan, Shape::Stream, 65536, Pattern::Stream)
    );
    assert_eq!(named("loan/stream-rtt/1KiB").unwrap().shape, Shape::RoundTrip);
    for bad in [
        "loan/broadcast/lossless/4sub/16B",
        "loan/loan/stream/16B",
        "loan/batch/stream/16B/x16",
        "loan/pairs/2/stream/16B",
    ] {
        assert!(named(bad).is_none(), "{bad}");
    }
    let cases = || select(&matrix(), &["stream/16B".into(), "broadcast/lossy/1sub/16B".into()]).unwrap();
    let names = |cases: Vec<Case>| cases.into_iter().map(|c| c.name).collect::<Vec<_>>();
    assert_eq!(
        names(with_transfers(cases(), &[Transfer::Copy, Transfer::Loan]).unwrap()),
        ["stream/16B", "loan/stream/16B", "broadcast/lossy/1sub/16B"]
    );
    assert_eq!(names(with_transfers(cases(), &[Transfer::Loan]).unwrap()), ["loan/stream/16B"]);
    assert_eq!(names(with_transfers(cases(), &[Transfer::Copy]).unwrap()), names(cases()));
    let none = select(&matrix(), &["queue/1x1/16B".into()]).unwrap();
    let e = with_transfers(none, &[Transfer::Loan]).unwrap_err().to_string();
    assert!(e.contains("streams and round trips"), "{e}");
    // A library without loans shows a dash with its reason.
    let caps = <ipcbench_uds::Uds as ipcbench_api::Library>::info().capabilities;
    assert!(!loan.support(&caps).is_yes() && loan.support(&caps).text().contains("kernel copies"));
}
