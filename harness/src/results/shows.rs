//! What each pattern shows, decided once: the rows of its family's table (the ranked figure
//! first, each with its name), the figures `compare` holds, its chart's title and panels (and
//! which panel the machine's floors cross), and how its figures read as one line. The family
//! tables, compare, the charts and the cells read this; no other `match` on a pattern decides
//! what it shows.

use super::Measure;
use crate::matrix::Pattern;

/// A chart's panel: a figure, in the panel's unit, under its label.
#[derive(Clone, Copy)]
pub struct Panel {
    pub measure: Measure,
    pub label: &'static str,
    /// The figure in the panel's unit.
    pub unit: fn(f64) -> f64,
}

/// How a pattern's figures read as one line (a progress line, a cell of the wide table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// A rate, with a p50 and a share lost where there are.
    Rate,
    /// A round trip's p50 and p99.
    RoundTrip,
    /// p50, p99, p99.99 and the greatest.
    Spectrum,
    /// p50 and the greatest, and the open call's p50.
    Connect,
}

/// A chart's title: whole, or after its family's title.
#[derive(Clone, Copy)]
pub enum Title {
    Own(&'static str),
    AfterFamily(&'static str),
}

/// Everything a pattern (or the batch cases, `BATCHES`) shows.
#[derive(Clone, Copy)]
pub struct Shows {
    /// The family table's rows: the ranked figure first, each with its name.
    pub rows: &'static [(Measure, &'static str)],
    /// The figures `compare` holds.
    pub compared: &'static [Measure],
    pub chart: Title,
    /// The first panel always, the others where some result has their figure.
    pub panels: &'static [Panel],
    /// The panel the machine's round-trip floors cross, where they apply.
    pub floors_on: Option<usize>,
    /// Whether the copy floor stands over each case (a stream's).
    pub copy_floor: bool,
    pub line: Line,
}

fn mega(v: f64) -> f64 {
    v / 1e6
}

fn micro(v: f64) -> f64 {
    v / 1e3
}

fn percent(v: f64) -> f64 {
    v * 100.0
}

use Measure::*;

const RATE: Panel = Panel { measure: MsgsPerS, label: "M msg/s", unit: mega };

/// The batch cases: a family of their own, charted by rate.
pub const BATCHES: Shows = Shows {
    rows: &[(MsgsPerS, "rate")],
    compared: &[MsgsPerS, CpuNsPerMsg],
    chart: Title::AfterFamily("messages per second"),
    panels: &[RATE],
    floors_on: None,
    copy_floor: false,
    line: Line::Rate,
};

/// The loan cases, in "Copy against loan": what `compare` holds of them (their table and chart
/// are loans.rs's, each beside its copy).
pub const LOANS: Shows = Shows {
    rows: &[(MsgsPerS, "rate"), (P50Ns, "p50")],
    compared: &[MsgsPerS, P50Ns, CpuNsPerMsg],
    chart: Title::AfterFamily("loan against copy"),
    panels: &[RATE],
    floors_on: None,
    copy_floor: false,
    line: Line::Rate,
};

/// What a table or chart gathers a case under: its pattern, the batch cases of every pattern
/// together, or the loan cases (shown in "Copy against loan" beside their copies, in no family
/// table or chart of their own). The family tables and the charts both group by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gathered {
    Pattern(Pattern),
    Batches,
    Loans,
}

impl Gathered {
    /// Each pattern in its order, then the batch cases.
    pub fn all() -> impl Iterator<Item = Gathered> {
        Pattern::ALL.into_iter().map(Gathered::Pattern).chain([Gathered::Batches])
    }

    /// A result's: its pattern's, the batches' for a batch case, the loans' for a loan case.
    pub fn of(r: &super::CaseResult) -> Gathered {
        if r.transfer == ipcbench_api::Transfer::Loan {
            Gathered::Loans
        } else if r.batch.is_some() {
            Gathered::Batches
        } else {
            Gathered::Pattern(r.pattern)
        }
    }

    pub fn shows(self) -> Shows {
        match self {
            Gathered::Pattern(p) => shows(p),
            Gathered::Batches => BATCHES,
            Gathered::Loans => LOANS,
        }
    }

    /// A chart's file name: `stream`, `batch`, `loan`.
    pub fn name(self) -> &'static str {
        match self {
            Gathered::Pattern(p) => p.as_str(),
            Gathered::Batches => "batch",
            Gathered::Loans => "loan",
        }
    }
}

/// What a pattern shows.
pub fn shows(pattern: Pattern) -> Shows {
    let rate_only = |chart| Shows {
        rows: &[(MsgsPerS, "rate")],
        compared: &[MsgsPerS, CpuNsPerMsg],
        chart,
        panels: &[RATE],
        floors_on: None,
        copy_floor: false,
        line: Line::Rate,
    };
    match pattern {
        Pattern::Stream => {
            Shows { copy_floor: true, ..rate_only(Title::Own("Streams: messages per second one way")) }
        }
        Pattern::StreamRtt => Shows {
            rows: &[(P50Ns, "p50"), (P99Ns, "p99")],
            compared: &[P50Ns, P99Ns, CpuNsPerMsg],
            chart: Title::Own("Round trips: p50 (lower is better)"),
            panels: &[Panel { measure: P50Ns, label: "p50 round trip (µs)", unit: micro }],
            floors_on: Some(0),
            copy_floor: false,
            line: Line::RoundTrip,
        },
        Pattern::Broadcast => Shows {
            rows: &[(MsgsPerS, "rate"), (SubscribersSpread, "subscribers' spread")],
            panels: &[RATE, Panel { measure: LostShare, label: "lossy: share lost (%)", unit: percent }],
            ..rate_only(Title::AfterFamily("the slowest subscriber's messages per second"))
        },
        Pattern::SlowSubscriber => Shows {
            rows: &[
                (MsgsPerS, "the others' rate"),
                (SlowMsgsPerS, "the slow one's rate"),
                (SlowLostShare, "the slow one's loss"),
            ],
            compared: &[MsgsPerS, SlowMsgsPerS, CpuNsPerMsg],
            panels: &[
                Panel { measure: MsgsPerS, label: "the others' M msg/s", unit: mega },
                Panel { measure: SlowMsgsPerS, label: "the slow one's M msg/s", unit: mega },
            ],
            ..rate_only(Title::AfterFamily(
                "the other subscribers' messages per second, beside the slow one's",
            ))
        },
        Pattern::Pairs => Shows {
            rows: &[
                (MsgsPerS, "total rate"),
                (WorstMsgsPerS, "worst pair's rate"),
                (P50Ns, "worst pair's p50"),
            ],
            compared: &[MsgsPerS, WorstMsgsPerS, CpuNsPerMsg],
            panels: &[RATE, Panel { measure: WorstMsgsPerS, label: "worst pair's M msg/s", unit: mega }],
            ..rate_only(Title::AfterFamily("every pair's messages per second together"))
        },
        Pattern::FanoutLatency => Shows {
            rows: &[(P50Ns, "p50"), (P99Ns, "p99"), (MaxNs, "max")],
            compared: &[P50Ns, P99Ns, CpuNsPerMsg],
            chart: Title::AfterFamily(
                "p50 one way to every subscriber, from each message's due time (lower is better)",
            ),
            panels: &[
                Panel { measure: P50Ns, label: "p50 one way (µs)", unit: micro },
                Panel { measure: P99Ns, label: "p99 one way (µs)", unit: micro },
            ],
            floors_on: Some(0),
            copy_floor: false,
            line: Line::Spectrum,
        },
        Pattern::Queue => rate_only(Title::AfterFamily("every consumer's messages per second together")),
        Pattern::Service => Shows {
            rows: &[(MsgsPerS, "rate"), (P50Ns, "p50 call")],
            compared: &[MsgsPerS, P50Ns, P99Ns, CpuNsPerMsg],
            chart: Title::AfterFamily("every client's calls per second together"),
            panels: &[RATE, Panel { measure: P50Ns, label: "p50 call (µs)", unit: micro }],
            floors_on: Some(1),
            copy_floor: false,
            line: Line::Rate,
        },
        Pattern::Latency => Shows {
            rows: &[(P50Ns, "p50"), (P99Ns, "p99"), (P9999Ns, "p99.99"), (MaxNs, "max")],
            compared: &[P50Ns, P99Ns, CpuNsPerMsg],
            chart: Title::AfterFamily("p50 one way, from each message's due time (lower is better)"),
            panels: &[
                Panel { measure: P50Ns, label: "p50 one way (µs)", unit: micro },
                Panel { measure: P9999Ns, label: "p99.99 one way (µs)", unit: micro },
            ],
            floors_on: Some(0),
            copy_floor: false,
            line: Line::Spectrum,
        },
        Pattern::Connect => Shows {
            rows: &[(P50Ns, "p50"), (MaxNs, "max")],
            compared: &[P50Ns, CpuNsPerMsg],
            chart: Title::AfterFamily("a fresh sender's open and first message (lower is better)"),
            panels: &[
                Panel { measure: P50Ns, label: "p50 set-up (µs)", unit: micro },
                Panel { measure: MaxNs, label: "greatest set-up (µs)", unit: micro },
            ],
            floors_on: None,
            copy_floor: false,
            line: Line::Connect,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figure a pattern is ranked by heads its table and its chart, the floors cross a
    /// panel it has, and what compare holds includes the ranked figure and the cost.
    #[test]
    fn each_pattern_shows_its_ranked_figure_first() {
        for pattern in Pattern::ALL {
            let s = shows(pattern);
            let ranked = crate::analysis::counted(pattern).measure();
            assert_eq!(s.rows[0].0, ranked, "{pattern}");
            assert_eq!(s.panels[0].measure, ranked, "{pattern}");
            assert!(s.floors_on.is_none_or(|i| i < s.panels.len()), "{pattern}");
            assert_eq!(s.floors_on.is_some(), pattern.timed(), "{pattern}: floors where it is timed");
            assert!(s.compared.contains(&ranked) && s.compared.contains(&CpuNsPerMsg), "{pattern}");
            assert_eq!(s.rows.iter().filter(|(m, _)| *m == ranked).count(), 1, "{pattern}");
        }
        assert_eq!(BATCHES.rows[0].0, MsgsPerS);
    }
}
