//! What each pattern shows, decided once: the rows of its family's table (the ranked figure
//! first, each with its name), the figures `compare` holds, its chart's title and panels (and
//! which panel the machine's floors cross), and how its figures read as one line. The family
//! tables, compare, the charts and the cells read this; no other `match` on a pattern decides
//! what it shows.

use super::Measure;
use crate::matrix::Pattern;

/// A chart's panel: a figure, on its axis, under its label.
#[derive(Clone, Copy)]
pub struct Panel {
    pub measure: Measure,
    /// The axis's words: a rate's unit names what it counts (`M calls/s`); a time's unit is on
    /// its ticks (`1 µs`, `10 ms`), so its label has none.
    pub label: &'static str,
    pub scale: Scale,
}

/// How a panel's axis reads its figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Millions a second.
    Mega,
    /// A time, in microseconds on the axis; its ticks carry their unit.
    Micros,
    /// A share, in percent.
    Percent,
}

impl Panel {
    /// A figure in the axis's unit.
    pub fn value(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Mega => v / 1e6,
            Scale::Micros => v / 1e3,
            Scale::Percent => v * 100.0,
        }
    }
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

use Measure::*;

const RATE: Panel = Panel { measure: MsgsPerS, label: "M msg/s", scale: Scale::Mega };
const CALLS: Panel = Panel { measure: MsgsPerS, label: "M calls/s", scale: Scale::Mega };

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
            panels: &[Panel { measure: P50Ns, label: "p50 round trip", scale: Scale::Micros }],
            floors_on: Some(0),
            copy_floor: false,
            line: Line::RoundTrip,
        },
        Pattern::Broadcast => Shows {
            rows: &[(MsgsPerS, "rate"), (SubscribersSpread, "subscribers' spread")],
            panels: &[
                RATE,
                Panel { measure: LostShare, label: "lossy: share lost (%)", scale: Scale::Percent },
            ],
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
                Panel { measure: MsgsPerS, label: "the others' M msg/s", scale: Scale::Mega },
                Panel { measure: SlowMsgsPerS, label: "the slow one's M msg/s", scale: Scale::Mega },
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
            panels: &[
                RATE,
                Panel { measure: WorstMsgsPerS, label: "worst pair's M msg/s", scale: Scale::Mega },
            ],
            ..rate_only(Title::AfterFamily("every pair's messages per second together"))
        },
        Pattern::FanoutLatency => Shows {
            rows: &[(P50Ns, "p50"), (P99Ns, "p99"), (MaxNs, "max")],
            compared: &[P50Ns, P99Ns, CpuNsPerMsg],
            chart: Title::AfterFamily(
                "p50 and p99 one way to every subscriber, from each message's due time (lower is better)",
            ),
            panels: &[
                Panel { measure: P50Ns, label: "p50 one way", scale: Scale::Micros },
                Panel { measure: P99Ns, label: "p99 one way", scale: Scale::Micros },
            ],
            floors_on: Some(0),
            copy_floor: false,
            line: Line::Spectrum,
        },
        Pattern::Queue => rate_only(Title::AfterFamily("every consumer's messages per second together")),
        Pattern::Service => Shows {
            rows: &[(MsgsPerS, "rate"), (P50Ns, "p50 call")],
            compared: &[MsgsPerS, P50Ns, P99Ns, CpuNsPerMsg],
            chart: Title::AfterFamily("every client's calls per second together, and the p50 call"),
            panels: &[CALLS, Panel { measure: P50Ns, label: "p50 call", scale: Scale::Micros }],
            floors_on: Some(1),
            copy_floor: false,
            line: Line::Rate,
        },
        Pattern::Latency => Shows {
            rows: &[(P50Ns, "p50"), (P99Ns, "p99"), (P9999Ns, "p99.99"), (MaxNs, "max")],
            compared: &[P50Ns, P99Ns, CpuNsPerMsg],
            chart: Title::AfterFamily(
                "p50 and p99.99 one way, from each message's due time (lower is better)",
            ),
            panels: &[
                Panel { measure: P50Ns, label: "p50 one way", scale: Scale::Micros },
                Panel { measure: P9999Ns, label: "p99.99 one way", scale: Scale::Micros },
            ],
            floors_on: Some(0),
            copy_floor: false,
            line: Line::Spectrum,
        },
        Pattern::Connect => Shows {
            rows: &[(P50Ns, "p50"), (MaxNs, "max")],
            compared: &[P50Ns, CpuNsPerMsg],
            chart: Title::AfterFamily(
                "a fresh sender's open and first message, p50 and greatest (lower is better)",
            ),
            panels: &[
                Panel { measure: P50Ns, label: "p50 set-up", scale: Scale::Micros },
                Panel { measure: MaxNs, label: "greatest set-up", scale: Scale::Micros },
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
                        assert_eq!(
                            p.label.contains("calls"),
                            title.contains("calls"),
                            "{title}: {}",
                            p.label
                        );
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
}
