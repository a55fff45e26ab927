//! What a pattern shows, as its spec says it: the rows of its family's table (the ranked figure
//! first, each with its name), the figures `compare` holds, its chart's title and panels (and
//! which panel the machine's floors cross), how its figures read as one line, and what its
//! scaling chart draws against a count. The family tables, compare, the charts and the cells
//! read these; each pattern's file fills them in.

use crate::matrix::Pattern;
use crate::results::{CaseResult, Measure};

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

/// A rate's panel.
pub const RATE: Panel = Panel { measure: MsgsPerS, label: "M msg/s", scale: Scale::Mega };
/// A rate of calls' panel.
pub const CALLS: Panel = Panel { measure: MsgsPerS, label: "M calls/s", scale: Scale::Mega };

/// What a pattern whose table and chart show its rate alone shows, under `chart`.
pub const fn rate_only(chart: Title) -> Shows {
    Shows {
        rows: &[(MsgsPerS, "rate")],
        compared: &[MsgsPerS, CpuNsPerMsg],
        chart,
        panels: &[RATE],
        floors_on: None,
        copy_floor: false,
        line: Line::Rate,
    }
}

/// What a pattern's scaling chart draws: its panels against a count its case names carry.
#[derive(Clone, Copy)]
pub struct Scaling {
    pub over: Over,
    pub panels: &'static [CountPanel],
    /// Where a case's count is in its name (which part of it, and what replaces it in the
    /// group's name, `*sub`), and the count; None for a case that does not scale.
    pub place: fn(&crate::matrix::Case) -> Option<(usize, &'static str, f64)>,
}

/// What a scaling chart is drawn against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    Subscribers,
    Pairs,
    Rate,
}

impl Over {
    pub fn desc(self) -> &'static str {
        match self {
            Over::Subscribers => "subscribers",
            Over::Pairs => "pairs",
            Over::Rate => "offered rate (messages per second)",
        }
    }

    pub fn label(self, v: f64) -> String {
        match self {
            Over::Rate => crate::matrix::rate_label(v.round() as u64),
            _ => format!("{}", v.round() as u64),
        }
    }
}

/// A scaling chart's panel: a figure, its title, its axis's words and the divisor into its unit
/// (a time's is µs, its ticks naming their unit).
#[derive(Clone, Copy)]
pub struct CountPanel {
    pub measure: Measure,
    pub title: &'static str,
    pub unit: &'static str,
    pub divisor: f64,
    pub time: bool,
}

impl CountPanel {
    pub const fn rate(title: &'static str) -> CountPanel {
        CountPanel { measure: MsgsPerS, title, unit: "M msg/s", divisor: 1e6, time: false }
    }

    pub const fn latency(measure: Measure, title: &'static str, unit: &'static str) -> CountPanel {
        CountPanel { measure, title, unit, divisor: 1e3, time: true }
    }
}

/// Cores busy against a count.
pub const CORES: CountPanel = CountPanel {
    measure: CoresBusy,
    title: "cores busy (every process together)",
    unit: "cores",
    divisor: 1.0,
    time: false,
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
    pub fn of(r: &CaseResult) -> Gathered {
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
            Gathered::Pattern(p) => super::spec(p).shows,
            Gathered::Batches => super::batch::SHOWS,
            Gathered::Loans => super::loans::SHOWS,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The figure a pattern is ranked by heads its table and its chart, the floors cross a
    /// panel it has, and what compare holds includes the ranked figure and the cost.
    #[test]
    fn each_pattern_shows_its_ranked_figure_first() {
        for pattern in Pattern::ALL {
            let s = super::super::spec(pattern).shows;
            let ranked = super::super::spec(pattern).counted.measure();
            assert_eq!(s.rows[0].0, ranked, "{pattern}");
            assert_eq!(s.panels[0].measure, ranked, "{pattern}");
            assert!(s.floors_on.is_none_or(|i| i < s.panels.len()), "{pattern}");
            assert_eq!(
                s.floors_on.is_some(),
                super::super::spec(pattern).timed,
                "{pattern}: floors where it is timed"
            );
            assert!(s.compared.contains(&ranked) && s.compared.contains(&CpuNsPerMsg), "{pattern}");
            assert_eq!(s.rows.iter().filter(|(m, _)| *m == ranked).count(), 1, "{pattern}");
        }
        assert_eq!(super::super::batch::SHOWS.rows[0].0, MsgsPerS);
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
