//! What every pattern's figures are made with: a broken trial's words, each role's side of the
//! counts, the measured window, a one-to-many trial's deliveries checked against what was sent,
//! calls checked against their answers, a latency spectrum, and the cost.

use hdrhistogram::Histogram;
use ipcbench_api::{Requests, Shape};

use crate::histogram::{self, Spectrum};
use crate::matrix::{Case, Role};
use crate::results::{Figures, Receiving, RoleReport};

/// A trial that can't give figures: which role, and why.
#[derive(Clone, Debug)]
pub struct Broken {
    pub role: String,
    pub reason: String,
}

pub fn broken(report: &RoleReport, reason: String) -> Broken {
    Broken { role: report.label(), reason }
}

pub fn of(reports: &[RoleReport], role: Role) -> Vec<&RoleReport> {
    reports.iter().filter(|r| r.role == role).collect()
}

/// The latency histogram of these reports together.
pub fn latency(reports: &[&RoleReport]) -> Histogram<u64> {
    histogram::from_buckets(reports.iter().map(|r| r.latency.as_slice()))
}

/// The latency senders' own lateness together.
pub fn lateness(reports: &[&RoleReport]) -> Histogram<u64> {
    histogram::from_buckets(reports.iter().map(|r| r.lateness.as_slice()))
}

/// Each role's counts are its side's: a driving role's of what it sent, any other's of what it
/// received. From here, a side's counts are read without a check.
pub fn sides(reports: &[RoleReport]) -> Result<(), Broken> {
    for r in reports {
        match (r.role.is_driving(), r.sending.is_some(), r.receiving.is_some()) {
            (true, true, _) | (false, _, true) => {}
            (true, false, _) => return Err(broken(r, "reported no counts of what it sent".into())),
            (false, ..) => return Err(broken(r, "reported no counts of what it received".into())),
        }
    }
    Ok(())
}

/// Why a trial whose senders sent nothing in the window failed (the driver adds what ran in it).
pub const EMPTY: &str = "the measured window is empty";

/// The measured window of every driving role together, in seconds.
pub fn window(reports: &[RoleReport]) -> Result<f64, Broken> {
    let driving: Vec<&RoleReport> = reports.iter().filter(|r| r.role.is_driving()).collect();
    let start = driving.iter().map(|r| r.sent().window_start_ns).min().unwrap_or(0);
    let end = driving.iter().map(|r| r.sent().window_end_ns).max().unwrap_or(0);
    let Some(first) = driving.first() else {
        return Err(Broken { role: "driver".into(), reason: "no sending role reported".into() });
    };
    if end <= start {
        return Err(broken(first, EMPTY.into()));
    }
    Ok((end - start) as f64 / 1e9)
}

/// A latency result's spectrum into its figures.
pub fn spectrum(h: &Histogram<u64>, out: &mut Figures) {
    if let Some(s) = Spectrum::of(h) {
        out.min_ns = Some(s.min);
        out.p50_ns = Some(s.p50);
        out.p90_ns = Some(s.p90);
        out.p99_ns = Some(s.p99);
        out.p999_ns = Some(s.p999);
        out.p9999_ns = Some(s.p9999);
        out.max_ns = Some(s.max);
    }
}

/// A one-to-many trial (a stream, a broadcast) whose every receiver's counts agree with what
/// its sender sent: all of it, lossless; no more than it, lossy.
pub struct Delivered<'a> {
    pub sender: &'a RoleReport,
    pub receivers: Vec<&'a RoleReport>,
    pub lossy: bool,
    /// The measured window, in seconds.
    pub seconds: f64,
}

impl<'a> Delivered<'a> {
    /// Checks every receiver of `reports` against the (first) sender: `roles` is (sender,
    /// receiver).
    pub fn check(case: &Case, reports: &'a [RoleReport], roles: (Role, Role)) -> Result<Self, Broken> {
        let seconds = window(reports)?;
        let (sender, receivers) = (of(reports, roles.0), of(reports, roles.1));
        let Some(&sender) = sender.first() else {
            return Err(Broken { role: "driver".into(), reason: "no sending role reported".into() });
        };
        let sent = sender.sent();
        let lossy = matches!(case.shape, Shape::Broadcast { lossy: true, .. });
        for r in &receivers {
            let got = r.got();
            if !lossy && (got.received != sent.sent || got.received_measured != sent.measured) {
                return Err(broken(
                    r,
                    format!(
                        "received {} messages ({} measured) of the {} sent ({} measured)",
                        got.received, got.received_measured, sent.sent, sent.measured
                    ),
                ));
            }
            if got.library_lost > 0 && got.library_lost != got.lost {
                return Err(broken(
                    r,
                    format!(
                        "the library says {} messages were lost; the sequence numbers say {}",
                        got.library_lost, got.lost
                    ),
                ));
            }
            if lossy && got.received + got.lost > sent.sent {
                return Err(broken(
                    r,
                    format!("{} received and {} lost of {} sent", got.received, got.lost, sent.sent),
                ));
            }
        }
        Ok(Delivered { sender, receivers, lossy, seconds })
    }

    /// A count over the measured window.
    pub fn rate(&self, n: u64) -> f64 {
        n as f64 / self.seconds
    }

    /// The counts of the receiver of these that received least in the window: the slowest.
    pub fn slowest(receivers: &[&RoleReport]) -> Option<Receiving> {
        receivers.iter().map(|r| r.got()).min_by_key(|g| g.received_measured)
    }

    /// The slowest of these receivers, whose rate is the figure; an error naming the sender when
    /// there is none.
    pub fn slowest_of(&self, receivers: &[&RoleReport]) -> Result<Receiving, Broken> {
        Self::slowest(receivers).ok_or_else(|| broken(self.sender, "no receiving role reported".into()))
    }

    /// A lossy broadcast to several of these receivers: how much slower the slowest was than the
    /// fastest, as a share of the fastest's rate.
    pub fn spread(&self, receivers: &[&RoleReport], slowest: Receiving) -> Option<f64> {
        (self.lossy && receivers.len() > 1).then(|| {
            let fastest = receivers.iter().map(|r| r.got().received_measured).max().unwrap_or(0);
            if fastest == 0 { 0.0 } else { 1.0 - slowest.received_measured as f64 / fastest as f64 }
        })
    }

    /// A lossy receiver's share of its window's messages lost.
    pub fn lost_share(&self, g: Receiving) -> Option<f64> {
        let (lost, got) = (g.lost_measured, g.received_measured);
        self.lossy.then(|| if lost + got == 0 { 0.0 } else { lost as f64 / (lost + got) as f64 })
    }

    /// A fixed-rate trial: every receiver's latency spectrum together, the sender's lateness,
    /// and the share of its schedule it had not sent when the window ended.
    pub fn paced(&self, out: &mut Figures) {
        spectrum(&latency(&self.receivers), out);
        let late = Spectrum::of(&lateness(&[self.sender]));
        out.late_p50_ns = late.map(|s| s.p50);
        out.late_p99_ns = late.map(|s| s.p99);
        let scheduled = self.sender.scheduled.unwrap_or(0);
        if scheduled > 0 {
            let sent = self.sender.sent().measured;
            out.behind_share = Some(1.0 - sent.min(scheduled) as f64 / scheduled as f64);
        }
    }
}

/// A one-way trial's checked deliveries and its figures: the slowest receiver's rate and, a
/// lossy broadcast's, its share lost and the receivers' spread (`roles`: sender, receiver).
pub fn one_way<'a>(
    case: &Case,
    reports: &'a [RoleReport],
    roles: (Role, Role),
) -> Result<(Delivered<'a>, Figures), Broken> {
    let d = Delivered::check(case, reports, roles)?;
    let slowest = d.slowest_of(&d.receivers)?;
    let out = Figures {
        msgs_per_s: d.rate(slowest.received_measured),
        subscribers_spread: d.spread(&d.receivers, slowest),
        lost_share: d.lost_share(slowest),
        ..Figures::default()
    };
    Ok((d, out))
}

/// Calls (a round trip's, a service's): every request answered, each by one server or (a library
/// without load sharing) by every one; the figures are the calls a second and their spectrum.
pub fn calls(reports: &[RoleReport], roles: (Role, Role), requests: Requests) -> Result<Figures, Broken> {
    let seconds = window(reports)?;
    let (callers, answerers) = (of(reports, roles.0), of(reports, roles.1));
    let asked: u64 = callers.iter().map(|r| r.sent().sent).sum();
    let answered: u64 = answerers.iter().map(|r| r.got().received).sum();
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
    let mut out = Figures {
        msgs_per_s: callers.iter().map(|r| r.sent().measured).sum::<u64>() as f64 / seconds,
        ..Figures::default()
    };
    spectrum(&latency(&callers), &mut out);
    Ok(out)
}

/// What the trial cost, from every role's own window: cores busy added up over the processes,
/// that over the rate as CPU time per message, and the processes' peak memory added up. Left
/// out unless every role measured its window.
pub fn cost(reports: &[RoleReport], out: &mut Figures) {
    let costs: Option<Vec<_>> = reports.iter().map(|r| r.cost).collect();
    let Some(costs) = costs.filter(|c| !c.is_empty()) else { return };
    let busy: Option<f64> = costs.iter().map(|c| c.cores_busy()).sum();
    out.cores_busy = busy;
    out.cpu_ns_per_msg = busy.filter(|_| out.msgs_per_s > 0.0).map(|b| b / out.msgs_per_s * 1e9);
    out.peak_rss_bytes = Some(costs.iter().map(|c| c.peak_rss_bytes as f64).sum());
}
