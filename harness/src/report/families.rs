//! The report in sections, one per case family (streams and round trips, broadcasts, work
//! queues, services, batch calls, fixed-rate latency, connection set-up): each family's table
//! has a row per case and figure, its unit in the row's label, and each cell's figure with three
//! significant digits, its ratio to the best of its row (which colours it) and its marks.

use super::View;
use super::model::{self, Cell, marks};
use crate::analysis;
use crate::format::{percent, three_digits};
use crate::matrix::Pattern;
use crate::results::shows::Gathered;
use crate::results::{CaseResult, Measure, Status};

/// A family of cases: a section of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Streams,
    Broadcasts,
    Queues,
    Services,
    Batches,
    Latency,
    Connect,
    SlowSubscriber,
    Pairs,
    FanoutLatency,
    /// The loan cases: not a family table of their own (not in `ALL`), but "Copy against
    /// loan", each beside its copy (loans.rs).
    Loans,
}

impl Family {
    pub const ALL: [Family; 10] = [
        Family::Streams,
        Family::Broadcasts,
        Family::SlowSubscriber,
        Family::FanoutLatency,
        Family::Queues,
        Family::Services,
        Family::Pairs,
        Family::Batches,
        Family::Latency,
        Family::Connect,
    ];

    /// The family of a case's pattern; batch cases are a family of their own.
    pub fn of(gathered: Gathered) -> Family {
        let pattern = match gathered {
            Gathered::Batches => return Family::Batches,
            Gathered::Loans => return Family::Loans,
            Gathered::Pattern(p) => p,
        };
        match pattern {
            Pattern::Stream | Pattern::StreamRtt => Family::Streams,
            Pattern::Broadcast => Family::Broadcasts,
            Pattern::Queue => Family::Queues,
            Pattern::Service => Family::Services,
            Pattern::Latency => Family::Latency,
            Pattern::Connect => Family::Connect,
            Pattern::SlowSubscriber => Family::SlowSubscriber,
            Pattern::Pairs => Family::Pairs,
            Pattern::FanoutLatency => Family::FanoutLatency,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Family::Streams => "Streams and round trips",
            Family::Broadcasts => "Broadcasts",
            Family::Queues => "Work queues",
            Family::Services => "Services",
            Family::Batches => "Batch calls",
            Family::Latency => "Latency at a fixed rate",
            Family::Connect => "Connection set-up",
            Family::SlowSubscriber => "A slow subscriber",
            Family::Pairs => "Pairs side by side",
            Family::FanoutLatency => "Latency to many subscribers",
            Family::Loans => "Copy against loan",
        }
    }

    /// The section's anchor in the HTML page.
    pub fn anchor(self) -> &'static str {
        match self {
            Family::Streams => "streams",
            Family::Broadcasts => "broadcasts",
            Family::Queues => "queues",
            Family::Services => "services",
            Family::Batches => "batches",
            Family::Latency => "latency",
            Family::Connect => "connect",
            Family::SlowSubscriber => "slow",
            Family::Pairs => "pairs",
            Family::FanoutLatency => "fanout-latency",
            Family::Loans => "loans",
        }
    }

    /// What the family's cases measure, in a sentence or two (docs/METHOD.md says it whole).
    pub fn method(self) -> &'static str {
        match self {
            Family::Streams => {
                "One sender and one receiver, each a process of its own: messages per second one way, and \
                 the round trip (p50, p99) when the receiver answers each message at once. The sender writes \
                 each message from its own buffer and the receiver ends with it in its own."
            }
            Family::Broadcasts => {
                "One publisher and 1 to 32 subscribers, every subscriber receiving every message: the slowest \
                 subscriber's rate, and how much slower it was than the fastest (the subscribers' spread). \
                 Lossless: a subscriber behind holds the publisher back; lossy: it loses messages instead (the \
                 share lost beside the rate). Past one subscriber this machine's 2 cores are oversubscribed (*): \
                 subscribers take turns on the cores, and the waiting mode, where a subscriber sleeps until \
                 woken, is the one that means what it would on a machine with a core per process."
            }
            Family::SlowSubscriber => {
                "A broadcast to 4 subscribers, one of which spends a fixed time on each message (a busy wait, \
                 --slow-work, 10 µs by default). Lossless: how far the slow one holds back the publisher and \
                 the others (their rate falls to its); lossy: whether the others keep their rate and lose no \
                 more than it does, the isolation a lossy broadcast promises."
            }
            Family::Pairs => {
                "1, 2 or 4 independent sender-receiver pairs of one library at once, each on channels of its \
                 own: every pair's rate together, the worst pair's, and (round trips) the worst pair's p50. \
                 With more processes than cores (*) the pairs share them; on a machine with a core per process \
                 the total would grow with the pairs unless the library shares something between them."
            }
            Family::FanoutLatency => {
                "A publisher on a fixed schedule (10 k messages a second) and 1 to 32 subscribers, lossless: \
                 each subscriber times each message from its due time; the p50 and p99 are over every \
                 subscriber's messages together (each subscriber's own p50 and p99 are in the results file)."
            }
            Family::Queues => {
                "Producers and consumers, each message to exactly one consumer (1 × 1 and 4 × 4): every \
                 consumer's messages per second together."
            }
            Family::Services => {
                "Clients send a request and wait for its reply before the next (1 × 1, 4 clients × 1 server, \
                 4 × 4, the servers sharing the requests): every client's calls per second together, and the \
                 p50 of a call."
            }
            Family::Batches => {
                "Streams and lossless broadcasts whose every send and receive call moves a batch of 16 or 64 \
                 messages, for the libraries that have batch calls."
            }
            Family::Latency => {
                "A sender on a fixed schedule (1 k, 100 k or 1 M messages a second), as applications send: \
                 each message's one-way latency from its due time, as a whole spectrum. At 1 k/s the waiting \
                 mode is a sleeping receiver."
            }
            Family::Connect => {
                "A fresh sender process opens its endpoint and sends one message to a receiver already \
                 there: the time from its first call to the message's arrival (p50 and greatest), a new \
                 process each time."
            }
            Family::Loans => super::loans::LOANS,
        }
    }
}

/// One row: a figure of one case, every column's value of it.
#[derive(Clone, Debug)]
pub struct Row {
    pub case: String,
    /// The figure and its unit: `rate (M msg/s)`, `p50 (µs)`.
    pub figure: String,
    /// One cell per column of the view.
    pub cells: Vec<Cell>,
}

/// A family's table: its rows and the reasons its dashes and failures number (from 1).
#[derive(Clone, Debug)]
pub struct FamilyTable {
    pub family: Family,
    /// The columns' labels: a library's (and its machine's, where the view has several).
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

impl FamilyTable {
    fn note(&mut self, text: String) -> usize {
        model::note(&mut self.notes, text)
    }

    /// Whether row `i` is its case's first (the one that names the case).
    pub fn opens_case(&self, i: usize) -> bool {
        i == 0 || self.rows[i - 1].case != self.rows[i].case
    }

    /// Whether any figure of the table carries this mark.
    pub fn has_mark(&self, symbol: &str) -> bool {
        self.rows
            .iter()
            .flat_map(|r| &r.cells)
            .any(|c| matches!(c, Cell::Value { marks, .. } if marks.split(' ').any(|m| m == symbol)))
    }
}

/// The upper bounds of the colour steps of a ratio to the best of its row; beyond the last is
/// the last step.
pub const STEPS: [f64; 5] = [1.1, 1.5, 2.0, 4.0, 10.0];

/// The colour step of a ratio to the best (0: within 10 % of the best).
pub fn step(ratio: f64) -> usize {
    STEPS.iter().position(|b| ratio <= *b).unwrap_or(STEPS.len())
}

/// Each step's range in words, for the legend: `1–1.1×`, …, `over 10×`.
pub fn step_labels() -> Vec<String> {
    let mut out = Vec::new();
    let mut lo = 1.0;
    for b in STEPS {
        out.push(format!("{lo}–{b}×"));
        lo = b;
    }
    out.push(format!("over {lo}×"));
    out
}

/// The unit a row's values are written in, and its divisor: the largest in which the row's
/// middle value is at least 0.5 (so that most figures read as a few digits).
fn unit(time: bool, middle: f64, calls: bool) -> (&'static str, f64) {
    match (time, middle) {
        (true, m) if m >= 0.5e6 => ("ms", 1e6),
        (true, m) if m >= 0.5e3 => ("µs", 1e3),
        (true, _) => ("ns", 1.0),
        (false, m) if m >= 0.5e6 => (if calls { "M calls/s" } else { "M msg/s" }, 1e6),
        (false, m) if m >= 0.5e3 => (if calls { "k calls/s" } else { "k msg/s" }, 1e3),
        (false, _) => (if calls { "calls/s" } else { "msg/s" }, 1.0),
    }
}

/// A value in its row's unit; a time ten thousand times the row's unit or more (a latency that
/// fell seconds behind) in its own larger unit, named, so that it still reads in three digits.
fn value_text(v: f64, divisor: f64, time: bool) -> String {
    if !time || v / divisor < 1e4 {
        return three_digits(v / divisor);
    }
    let (name, d) = [("µs", 1e3), ("ms", 1e6), ("s", 1e9)]
        .into_iter()
        .rev()
        .find(|(_, d)| v >= *d)
        .unwrap_or(("ns", 1.0));
    format!("{} {name}", three_digits(v / d))
}

/// The family table of every case of the view in `family`, a column per view column.
pub fn table(view: &View, family: Family) -> FamilyTable {
    let columns = view.columns.iter().map(|c| view.column_label(c)).collect();
    let mut t = FamilyTable { family, columns, rows: Vec::new(), notes: Vec::new() };
    for case in &view.cases {
        let Some(gathered) = view.gathered(case) else { continue };
        if Family::of(gathered) != family {
            continue;
        }
        for (i, &(m, name)) in gathered.shows().rows.iter().enumerate() {
            let row = measure_row(view, &mut t, case, (m, name), i == 0);
            // A later figure no library has (an older file's) gets no row.
            if i == 0 || row.cells.iter().any(|c| matches!(c, Cell::Value { .. })) {
                t.rows.push(row);
            }
        }
    }
    t
}

/// One figure of one case: each column's value in the row's unit, with its ratio to the best
/// of its machine; the case's first row (the figure results are ranked by) carries the ranks,
/// marks and reasons.
fn measure_row(view: &View, t: &mut FamilyTable, case: &str, (m, name): (Measure, &str), first: bool) -> Row {
    let pattern = view.pattern(case).expect("the case is in the view");
    // A share (lost, a spread) reads in percent, none is a figure, and it ranks nothing.
    let share = m.is_share();
    let value = |lib: &str, s: usize| -> Option<(f64, &CaseResult)> {
        let r = view.result(case, lib, s).filter(|r| r.status == Status::Ok)?;
        m.get(r.median.as_ref()?).filter(|v| *v > 0.0 || share).map(|v| (v, r))
    };
    let values: Vec<f64> = view.columns.iter().filter_map(|(lib, s)| value(lib, *s).map(|x| x.0)).collect();
    let time = !m.higher_is_better();
    let (unit, divisor) = if share {
        ("%", 0.01)
    } else {
        unit(time, crate::noise::middle(values).unwrap_or(0.0), pattern == Pattern::Service)
    };
    // The best of each machine: the least time, the greatest rate.
    // The row's values on one machine: what each cell's ratio to the best is taken over.
    let row = |s: usize| {
        view.columns
            .iter()
            .filter(move |(_, x)| *x == s)
            .filter_map(move |(lib, _)| value(lib, s).map(|x| x.0))
    };
    let mut cells = Vec::new();
    for (lib, s) in &view.columns {
        let Some(r) = view.result(case, lib, *s) else {
            cells.push(Cell::Empty);
            continue;
        };
        let reason = r.reason.as_deref().unwrap_or("");
        cells.push(match (r.status, value(lib, *s)) {
            (Status::Ok, Some((v, r))) => {
                let mut text = value_text(v, divisor, time);
                // The ranked figure says the smallest change it tells (files that record it).
                if let (true, Some(x)) = (first, r.resolution) {
                    text.push_str(&format!(" {}", crate::format::resolution(x)));
                }
                if let (true, Some(lost)) = (first, r.median.and_then(|f| f.lost_share)) {
                    text.push_str(&format!(" ({} lost)", percent(lost)));
                }
                Cell::Value {
                    text,
                    ratio: if share { 1.0 } else { analysis::standings::ratio_to_best(v, row(*s), !time) },
                    rank: if first { analysis::rank(r, view.row(case, *s)) } else { None },
                    marks: if first { marks(r) } else { String::new() },
                }
            }
            // The figure results are ranked by, absent: said, as a dash is.
            (Status::Ok, None) if first => {
                Cell::Dash { note: t.note(format!("{lib}: {}", model::no_figure(pattern))) }
            }
            (Status::Ok, None) => Cell::Empty,
            (Status::Unsupported, _) => Cell::Dash { note: t.note(format!("{lib}: {reason}")) },
            (status, _) => {
                Cell::Status { status, note: t.note(format!("{lib} {case} {}: {reason}", status.as_str())) }
            }
        });
    }
    Row { case: case.to_string(), figure: format!("{name} ({unit})"), cells }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::analysis::Rank;
    use crate::report::Source;

    fn number(c: &Cell) -> (f64, f64, Option<Rank>) {
        let Cell::Value { text, ratio, rank, .. } = c else { panic!("{c:?}") };
        (text.split(' ').next().unwrap().parse().unwrap(), *ratio, *rank)
    }

    /// A row per case and figure; in each row the best has ratio 1 and the others more; the
    /// fastest is marked only where the row's figure is the one results are ranked by; a cell
    /// reads back its median within three significant digits; dashes number their reasons.
    #[test]
    fn a_family_table_has_a_row_per_case_and_figure_and_its_ratios_to_the_best() {
        let source = Source::committed("run-2026-12-02T01-50-18Z");
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let t = table(&view, Family::Streams);
        let rows: Vec<(&str, &str)> = t.rows.iter().map(|r| (r.case.as_str(), r.figure.as_str())).collect();
        assert_eq!(
            rows,
            [
                ("stream/16B", "rate (M msg/s)"),
                ("stream/1KiB", "rate (M msg/s)"),
                ("stream-rtt/16B", "p50 (µs)"),
                ("stream-rtt/16B", "p99 (µs)"),
                ("stream-rtt/1KiB", "p50 (µs)"),
                ("stream-rtt/1KiB", "p99 (µs)"),
            ]
        );
        for row in &t.rows {
            let values: Vec<(f64, f64, Option<Rank>)> =
                row.cells.iter().filter(|c| matches!(c, Cell::Value { .. })).map(number).collect();
            let least = values.iter().map(|v| v.1).fold(f64::MAX, f64::min);
            assert_eq!(least, 1.0, "{}", row.figure);
            assert!(values.iter().all(|v| v.1 >= 1.0));
            let counted = !row.figure.starts_with("p99");
            assert_eq!(values.iter().any(|v| v.2.is_some()), counted, "{} {}", row.case, row.figure);
            assert!(values.iter().filter(|v| v.2 == Some(Rank::Fastest)).all(|v| v.1 == 1.0));
        }
        // Every library's cell reads back its median (the libraries are the file's, not named).
        for (i, (lib, _)) in view.columns.iter().enumerate() {
            let Some(r) = view.result("stream/16B", lib, 0).filter(|r| r.status == Status::Ok) else {
                continue;
            };
            let rate = r.median.unwrap().msgs_per_s;
            let (shown, _, _) = number(&t.rows[0].cells[i]);
            assert!((shown * 1e6 - rate).abs() <= rate * 0.005, "{lib}: {shown} M against {rate}");
        }

        let b = table(&view, Family::Broadcasts);
        let lossy = b.rows.iter().find(|r| r.case == "broadcast/lossy/1sub/16B").unwrap();
        let values = lossy.cells.iter().filter(|c| matches!(c, Cell::Value { .. }));
        assert!(values.clone().count() > 0);
        assert!(values.clone().all(|c| matches!(c, Cell::Value { text, .. } if text.ends_with("% lost)"))));
        let lossless = b.rows.iter().find(|r| r.case == "broadcast/lossless/1sub/16B").unwrap();
        let dashed: Vec<usize> =
            (0..view.columns.len()).filter(|&i| matches!(lossless.cells[i], Cell::Dash { .. })).collect();
        assert!(!dashed.is_empty(), "some library has no lossless broadcast");
        for i in dashed {
            let Cell::Dash { note } = lossless.cells[i] else { unreachable!() };
            let lib = &view.columns[i].0;
            assert!(b.notes[note - 1].starts_with(&format!("{lib}: ")), "{}", b.notes[note - 1]);
        }
        assert!(b.has_mark("*"), "the 4-subscriber cases are oversubscribed on 2 cores");
    }

    #[test]
    fn ratios_fall_in_their_colour_steps() {
        assert_eq!([1.0, 1.1, 1.2, 1.5, 1.9, 3.0, 10.0, 11.0, 1e6].map(step), [0, 0, 1, 1, 2, 3, 4, 5, 5]);
        assert_eq!(step_labels().len(), STEPS.len() + 1);
        assert_eq!(step_labels()[0], "1–1.1×");
        assert_eq!(step_labels()[5], "over 10×");
        let digits = [0.07384, 4.6612, 62.84, 2052.4, 0.0].map(crate::format::three_digits);
        assert_eq!(digits, ["0.0738", "4.66", "62.8", "2052", "0"]);
        // A time far beyond its row's unit names its own.
        assert_eq!(value_text(697.3e6, 1e3, true), "697 ms");
        assert_eq!(value_text(1.135e9, 1e3, true), "1.14 s");
        assert_eq!(value_text(9.9e6, 1e3, true), "9900");
        assert_eq!(value_text(150e6, 1e6, false), "150");
    }
}
