//! What a child reports (one JSON line), and what the driver makes of a trial's reports.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use std::path::Path;

use crate::cases::{Case, Role};
use crate::taken::{self, Taken};
use ipcbench_api::{Requests, Shape};

/// One child's figures for one trial. Driving roles fill the first group, receiving roles the
/// second; zeros where a field doesn't apply.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RoleReport {
    pub role: String,
    pub index: usize,
    /// Messages (or requests) sent in all, warm-up included.
    pub sent: u64,
    /// Messages sent, or round trips completed, in the measured window.
    pub measured: u64,
    pub window_start_ns: u64,
    pub window_end_ns: u64,
    /// Messages (or requests) received in all, and those sent in the measured window.
    pub received: u64,
    pub received_measured: u64,
    /// Messages a lossy receiver missed (sequence gaps), in all and in the measured window.
    pub lost: u64,
    pub lost_measured: u64,
    /// What the library itself said was lost, beside the gaps.
    pub library_lost: u64,
    /// Round trips of the measured window: (nanoseconds, count) of each recorded bucket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<u64>,
    /// A work queue's consumer: the file of the sequence numbers it took, per producer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_file: Option<String>,
    /// Bytes of shared mappings (shared memory, memfds, shared files) the process had at the end
    /// of its loop: what the library maps for this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_mapped_bytes: Option<u64>,
}

/// The figures of one trial (one run of one case, one library, one receive mode).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    /// Messages per second one way; round trips (calls) per second for round trips and services;
    /// the slowest subscriber's for a broadcast; all consumers' or clients' together.
    pub msgs_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<f64>,
    /// A lossy broadcast: the share of the measured window's messages its subscribers lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_share: Option<f64>,
}

/// A trial that can't give figures: which role, and why.
#[derive(Clone, Debug)]
pub struct Broken {
    pub role: String,
    pub reason: String,
}

fn broken(report: &RoleReport, reason: String) -> Broken {
    Broken { role: format!("{} {}", report.role, report.index), reason }
}

fn of(reports: &[RoleReport], role: Role) -> Vec<&RoleReport> {
    reports.iter().filter(|r| r.role == role.as_str()).collect()
}

/// The latency histogram of these reports together.
fn latency(reports: &[&RoleReport]) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new(3).expect("3 significant figures is valid");
    for r in reports {
        for &(value, count) in &r.latency {
            h.record_n(value, count).expect("an auto-resizing histogram takes any value");
        }
    }
    h
}

/// Checks the trial's reports against each other and computes its figures. `requests` says
/// whether a service's request reaches one server or every server.
pub fn figures(case: &Case, reports: &[RoleReport], requests: Requests) -> Result<Figures, Broken> {
    let driving: Vec<&RoleReport> =
        reports.iter().filter(|r| Role::parse(&r.role).is_some_and(Role::is_driving)).collect();
    let start = driving.iter().map(|r| r.window_start_ns).min().unwrap_or(0);
    let end = driving.iter().map(|r| r.window_end_ns).max().unwrap_or(0);
    let Some(first) = driving.first() else {
        return Err(Broken { role: "driver".into(), reason: "no sending role reported".into() });
    };
    if end <= start {
        return Err(broken(first, "the measured window is empty".into()));
    }
    let seconds = (end - start) as f64 / 1e9;
    let rate = |n: u64| n as f64 / seconds;
    let mut out = Figures::default();
    match case.shape {
        Shape::Stream | Shape::Broadcast { .. } => {
            let (sender, receivers) = match case.shape {
                Shape::Stream => (of(reports, Role::Sender), of(reports, Role::Receiver)),
                _ => (of(reports, Role::Publisher), of(reports, Role::Subscriber)),
            };
            let sender = sender[0];
            let lossy = matches!(case.shape, Shape::Broadcast { lossy: true, .. });
            for r in &receivers {
                if !lossy && (r.received != sender.sent || r.received_measured != sender.measured) {
                    return Err(broken(
                        r,
                        format!(
                            "received {} messages ({} measured) of the {} sent ({} measured)",
                            r.received, r.received_measured, sender.sent, sender.measured
                        ),
                    ));
                }
                if r.library_lost > 0 && r.library_lost != r.lost {
                    return Err(broken(
                        r,
                        format!(
                            "the library says {} messages were lost; the sequence numbers say {}",
                            r.library_lost, r.lost
                        ),
                    ));
                }
                if lossy && r.received + r.lost > sender.sent {
                    return Err(broken(
                        r,
                        format!("{} received and {} lost of {} sent", r.received, r.lost, sender.sent),
                    ));
                }
            }
            let slowest = receivers.iter().map(|r| r.received_measured).min().unwrap_or(0);
            out.msgs_per_s = rate(slowest);
            if lossy {
                let lost: u64 = receivers.iter().map(|r| r.lost_measured).sum();
                let got: u64 = receivers.iter().map(|r| r.received_measured).sum();
                out.lost_share = Some(if lost + got == 0 { 0.0 } else { lost as f64 / (lost + got) as f64 });
            }
        }
        Shape::RoundTrip | Shape::Service { .. } => {
            let (callers, answerers) = match case.shape {
                Shape::RoundTrip => (of(reports, Role::Pinger), of(reports, Role::Echo)),
                _ => (of(reports, Role::Client), of(reports, Role::Server)),
            };
            let asked: u64 = callers.iter().map(|r| r.sent).sum();
            let answered: u64 = answerers.iter().map(|r| r.received).sum();
            // Each request reaches one server, or (a library without load sharing) every one.
            let copies = match requests {
                Requests::ToEveryServer => answerers.len() as u64,
                Requests::ToOneServer => 1,
            };
            if answered != asked * copies {
                let each = if copies > 1 { format!(", each to all {copies} servers") } else { String::new() };
                return Err(broken(
                    answerers[0],
                    format!("servers took {answered} requests; clients sent {asked}{each}"),
                ));
            }
            out.msgs_per_s = rate(callers.iter().map(|r| r.measured).sum());
            let h = latency(&callers);
            if !h.is_empty() {
                out.p50_ns = Some(h.value_at_quantile(0.5) as f64);
                out.p99_ns = Some(h.value_at_quantile(0.99) as f64);
            }
        }
        Shape::Queue { .. } => {
            let producers = of(reports, Role::Producer);
            let consumers = of(reports, Role::Consumer);
            let mut sent = vec![0; producers.len()];
            for p in &producers {
                match sent.get_mut(p.index) {
                    Some(n) => *n = p.sent,
                    None => {
                        return Err(broken(p, format!("producer {} of {}", p.index, producers.len())));
                    }
                }
            }
            let mut taken = Vec::new();
            for c in &consumers {
                let file = c
                    .taken_file
                    .as_deref()
                    .ok_or_else(|| broken(c, "no record of the messages taken".into()))?;
                taken.push(Taken::load(Path::new(file)).map_err(|e| broken(c, format!("{e:#}")))?);
            }
            taken::prove(&taken, &sent).map_err(|e| {
                broken(consumers[0], format!("not every message reached exactly one consumer: {e}"))
            })?;
            let measured_sent: u64 = producers.iter().map(|p| p.measured).sum();
            let measured_got: u64 = consumers.iter().map(|c| c.received_measured).sum();
            if measured_got != measured_sent {
                return Err(broken(
                    consumers[0],
                    format!("{measured_got} measured messages consumed of {measured_sent}"),
                ));
            }
            out.msgs_per_s = rate(measured_got);
        }
    }
    Ok(out)
}

/// The median of each figure over runs (each figure on its own).
pub fn median(runs: &[Figures]) -> Option<Figures> {
    fn med(mut v: Vec<f64>) -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
    }
    Some(Figures {
        msgs_per_s: med(runs.iter().map(|f| f.msgs_per_s).collect())?,
        p50_ns: med(runs.iter().filter_map(|f| f.p50_ns).collect()),
        p99_ns: med(runs.iter().filter_map(|f| f.p99_ns).collect()),
        lost_share: med(runs.iter().filter_map(|f| f.lost_share).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: Requests = Requests::ToOneServer;

    fn role(role: &str, f: impl FnOnce(&mut RoleReport)) -> RoleReport {
        let mut r = RoleReport {
            role: role.into(),
            window_start_ns: 1_000,
            window_end_ns: 1_000_001_000,
            ..Default::default()
        };
        f(&mut r);
        r
    }

    fn case(name: &str) -> Case {
        crate::cases::find(name).unwrap()
    }

    #[test]
    fn a_lossless_stream_that_lost_a_message_is_broken() {
        let sender = role("sender", |r| (r.sent, r.measured) = (100, 80));
        let whole = role("receiver", |r| (r.received, r.received_measured) = (100, 80));
        let f = figures(&case("stream/16B"), &[sender.clone(), whole], ONE).unwrap();
        assert_eq!(f.msgs_per_s, 80.0, "80 measured messages in one second");
        let short = role("receiver", |r| (r.received, r.received_measured) = (99, 79));
        let err = figures(&case("stream/16B"), &[sender, short], ONE).unwrap_err();
        assert_eq!(err.role, "receiver 0");
        assert!(err.reason.contains("received 99 messages (79 measured) of the 100 sent"), "{}", err.reason);
    }

    #[test]
    fn a_lossy_broadcast_takes_the_slowest_subscriber_and_the_share_lost() {
        let publisher = role("publisher", |r| (r.sent, r.measured) = (1000, 1000));
        let a = role("subscriber", |r| {
            (r.received, r.received_measured, r.lost, r.lost_measured) = (900, 900, 100, 100)
        });
        let b = role("subscriber", |r| {
            (r.received, r.received_measured, r.lost, r.lost_measured) = (700, 700, 300, 300)
        });
        let f = figures(&case("broadcast/lossy/4sub/16B"), &[publisher.clone(), a, b.clone()], ONE).unwrap();
        assert_eq!(f.msgs_per_s, 700.0);
        assert_eq!(f.lost_share, Some(0.2));
        let disagreeing = RoleReport { library_lost: 299, ..b };
        let err = figures(&case("broadcast/lossy/4sub/16B"), &[publisher, disagreeing], ONE).unwrap_err();
        assert!(err.reason.contains("the library says 299"), "{}", err.reason);
    }

    #[test]
    fn a_service_whose_servers_miss_a_request_is_broken() {
        let client = role("client", |r| (r.sent, r.measured) = (10, 5));
        let server = role("server", |r| r.received = 9);
        let err = figures(&case("service/1c1s/16B"), &[client, server], ONE).unwrap_err();
        assert!(err.reason.contains("servers took 9 requests; clients sent 10"), "{}", err.reason);
    }

    #[test]
    fn where_every_server_answers_every_request_each_must_take_it() {
        let case = case("service/4c4s/16B");
        let clients = (0..4).map(|i| role("client", |r| (r.index, r.sent, r.measured) = (i, 10, 5)));
        let servers = |took: u64| (0..4).map(move |i| role("server", |r| (r.index, r.received) = (i, took)));
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

    #[test]
    fn medians_take_the_middle_run() {
        let f = |r| Figures { msgs_per_s: r, ..Default::default() };
        assert_eq!(median(&[f(3.0), f(1.0), f(2.0)]).unwrap().msgs_per_s, 2.0);
        assert_eq!(median(&[f(1.0), f(2.0)]).unwrap().msgs_per_s, 1.5);
        assert!(median(&[]).is_none());
    }
}
