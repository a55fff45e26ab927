//! What a pattern shows, as its spec says it: the rows of its family's table (the ranked figure
//! first, each with its name), the figures `compare` holds, its chart's title and panels (and
//! which panel the machine's floors cross), how its figures read as one line, and what its
//! scaling chart draws against a count. The family tables, compare, the charts and the cells
//! read these; each pattern's file fills them in.

use crate::results::Measure;

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
