//! What a child reports (one JSON line), and what the driver makes of a trial's reports.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::cases::{Case, Role};
use ipcbench_api::Shape;

/// One producer's messages as one consumer saw them: how many, the sum of their sequence
/// numbers and the sum of their squares. Summed over consumers, they equal the producer's
/// 0..n exactly when every message arrived once (a loss and a duplicate can't both hide).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProducerSums {
    pub count: u64,
    pub sum: u64,
    pub sum_squares: u128,
}

impl ProducerSums {
    #[inline(always)]
    pub fn add(&mut self, seq: u64) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(seq);
        self.sum_squares = self.sum_squares.wrapping_add(seq as u128 * seq as u128);
    }

    /// What 0..n gives.
    pub fn expected(n: u64) -> ProducerSums {
        let n128 = n as u128;
        ProducerSums {
            count: n,
            sum: (n128 * n128.saturating_sub(1) / 2) as u64,
            sum_squares: if n == 0 {
                0
            } else {
                (n128 - 1) * n128 * (2 * n128 - 1) / 6
            },
        }
    }

    fn merge(&mut self, other: &ProducerSums) {
        self.count += other.count;
        self.sum = self.sum.wrapping_add(other.sum);
        self.sum_squares = self.sum_squares.wrapping_add(other.sum_squares);
    }
}

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
    /// A consumer's tally per producer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_producer: Vec<ProducerSums>,
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
    Broken {
        role: format!("{} {}", report.role, report.index),
        reason,
    }
}

fn of(reports: &[RoleReport], role: Role) -> Vec<&RoleReport> {
    reports.iter().filter(|r| r.role == role.as_str()).collect()
}

/// The latency histogram of these reports together.
fn latency(reports: &[&RoleReport]) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new(3).expect("3 significant figures is valid");
    for r in reports {
        for &(value, count) in &r.latency {
            h.record_n(value, count)
                .expect("an auto-resizing histogram takes any value");
        }
    }
    h
}

/// Checks the trial's reports against each other and computes its figures.
pub fn figures(case: &Case, reports: &[RoleReport]) -> Result<Figures, Broken> {
    let driving: Vec<&RoleReport> = reports
        .iter()
        .filter(|r| Role::parse(&r.role).is_some_and(Role::is_driving))
        .collect();
    let start = driving.iter().map(|r| r.window_start_ns).min().unwrap_or(0);
    let end = driving.iter().map(|r| r.window_end_ns).max().unwrap_or(0);
    let Some(first) = driving.first() else {
        return Err(Broken {
            role: "driver".into(),
            reason: "no sending role reported".into(),
        });
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
                if lossy && r.received + r.lost > sender.sent {
                    return Err(broken(
                        r,
                        format!(
                            "{} received and {} lost of {} sent",
                            r.received, r.lost, sender.sent
                        ),
                    ));
                }
            }
            let slowest = receivers
                .iter()
                .map(|r| r.received_measured)
                .min()
                .unwrap_or(0);
            out.msgs_per_s = rate(slowest);
            if lossy {
                let lost: u64 = receivers.iter().map(|r| r.lost_measured).sum();
                let got: u64 = receivers.iter().map(|r| r.received_measured).sum();
                out.lost_share = Some(if lost + got == 0 {
                    0.0
                } else {
                    lost as f64 / (lost + got) as f64
                });
            }
        }
        Shape::RoundTrip | Shape::Service { .. } => {
            let (callers, answerers) = match case.shape {
                Shape::RoundTrip => (of(reports, Role::Pinger), of(reports, Role::Echo)),
                _ => (of(reports, Role::Client), of(reports, Role::Server)),
            };
            let asked: u64 = callers.iter().map(|r| r.sent).sum();
            let answered: u64 = answerers.iter().map(|r| r.received).sum();
            if asked != answered {
                return Err(broken(
                    answerers[0],
                    format!("servers took {answered} requests; clients sent {asked}"),
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
            for p in &producers {
                let mut seen = ProducerSums::default();
                for c in &consumers {
                    if let Some(s) = c.per_producer.get(p.index) {
                        seen.merge(s);
                    }
                }
                let want = ProducerSums::expected(p.sent);
                if seen != want {
                    let how = if seen.count == want.count {
                        "as many arrived as were sent, but some twice and others never".to_string()
                    } else {
                        format!("{} of its {} messages arrived", seen.count, want.count)
                    };
                    return Err(broken(
                        p,
                        format!("not every message reached exactly one consumer: {how}"),
                    ));
                }
            }
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
        Some(if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        })
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

    #[test]
    fn sums_tell_exactly_once_from_a_loss_and_a_duplicate() {
        let mut once = ProducerSums::default();
        (0..100).for_each(|s| once.add(s));
        assert_eq!(once, ProducerSums::expected(100));
        let mut swapped = ProducerSums::default();
        (0..100)
            .filter(|&s| s != 40 && s != 60)
            .for_each(|s| swapped.add(s));
        swapped.add(30);
        swapped.add(70); // same count and sum as 40 + 60, other squares
        assert_ne!(swapped, ProducerSums::expected(100));
        assert_eq!(ProducerSums::expected(0), ProducerSums::default());
    }

    #[test]
    fn medians_take_the_middle_run() {
        let f = |r| Figures {
            msgs_per_s: r,
            ..Default::default()
        };
        assert_eq!(median(&[f(3.0), f(1.0), f(2.0)]).unwrap().msgs_per_s, 2.0);
        assert_eq!(median(&[f(1.0), f(2.0)]).unwrap().msgs_per_s, 1.5);
        assert!(median(&[]).is_none());
    }
}
