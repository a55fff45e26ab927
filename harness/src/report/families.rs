//! The report in sections, one per case family (streams and round trips, broadcasts, work
//! queues, services, batch calls, fixed-rate latency, connection set-up): each family's table
//! has a row per case and figure, its unit in the row's label, and each cell's figure with three
//! significant digits, its ratio to the best of its row (which colours it) and its marks.

use super::View;
use super::model::{self, Cell, marks};
use crate::analysis;
use crate::format::{percent, three_digits};
use crate::matrix::Case;
use crate::pattern::{Family, spec};
use crate::results::{CaseResult, Measure, Status};

/// What the view's cases of `family` measure (`Family::method` of them).
pub fn method(view: &View, family: Family) -> String {
    let cases: Vec<&Case> = view
        .cases
        .iter()
        .filter(|c| view.gathered(c).map(Family::of) == Some(family))
        .filter_map(|c| view.case(c))
        .collect();
    family.method(&cases)
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
/// middle value is at least 0.5 (so that most figures read as a few digits), stepped down while
/// its least value would read below 0.001 there (`0.000377` ms reads `0.377` µs).
fn unit(time: bool, (middle, least): (f64, f64), calls: bool) -> (&'static str, f64) {
    let units: [(&'static str, f64); 3] = match (time, calls) {
        (true, _) => [("ns", 1.0), ("µs", 1e3), ("ms", 1e6)],
        (false, true) => [("calls/s", 1.0), ("k calls/s", 1e3), ("M calls/s", 1e6)],
        (false, false) => [("msg/s", 1.0), ("k msg/s", 1e3), ("M msg/s", 1e6)],
    };
    let mut i = units.iter().rposition(|(_, d)| middle >= 0.5 * d).unwrap_or(0);
    while i > 0 && least / units[i].1 < 0.001 {
        i -= 1;
    }
    units[i]
}

/// A value in its row's unit; one ten thousand times the row's unit or more (a latency that fell
/// seconds behind, a rate far above the row's least) in its own larger unit, named, so that every
/// value reads in at most four digits.
fn value_text(v: f64, divisor: f64, time: bool) -> String {
    // Rounded as it reads: 9999.7 would read 10000.
    if (v / divisor).round() < 1e4 {
        return three_digits(v / divisor);
    }
    let larger: &[(&str, f64)] =
        if time { &[("µs", 1e3), ("ms", 1e6), ("s", 1e9)] } else { &[("k", 1e3), ("M", 1e6), ("G", 1e9)] };
    match larger.iter().rev().find(|(_, d)| v >= *d) {
        Some((name, d)) => format!("{} {name}", three_digits(v / d)),
        None => three_digits(v / divisor),
    }
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
    let least = values.iter().copied().reduce(f64::min).unwrap_or(0.0);
    let (unit, divisor) = if share {
        ("%", 0.01)
    } else {
        unit(time, (crate::noise::middle(values).unwrap_or(0.0), least), spec(pattern).calls)
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

    /// The latency table of a file that ran eight rates: rows in the order of the rates, no
    /// value that leads with 0.000 (a row whose least value would is written in a smaller unit),
    /// and the text under it names the eight rates.
    #[test]
    fn a_latency_table_reads_its_rates_in_order_in_units_that_fit() {
        let source = Source::committed(crate::report::readme::REFERENCE);
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let t = table(&view, Family::Latency);
        let mut cases: Vec<&str> = t.rows.iter().map(|r| r.case.as_str()).collect();
        cases.dedup();
        let rates = ["1k", "3k", "10k", "100k", "300k", "1M", "3M", "10M"];
        assert_eq!(cases, rates.map(|r| format!("latency/{r}/16B")));
        for row in &t.rows {
            for c in &row.cells {
                if let Cell::Value { text, .. } = c {
                    assert!(!text.starts_with("0.000"), "{} {}: {text}", row.case, row.figure);
                    let number = text.split(' ').next().unwrap();
                    let digits = number.chars().filter(char::is_ascii_digit).skip_while(|d| *d == '0');
                    assert!(digits.count() <= 4, "{} {}: {text}", row.case, row.figure);
                }
            }
        }
        let text = method(&view, Family::Latency);
        let rates = "(1 k, 3 k, 10 k, 100 k, 300 k, 1 M, 3 M or 10 M messages a second)";
        assert!(text.starts_with(&format!("A sender on a fixed schedule {rates}")), "{text}");
        // A file of three rates and broadcasts to 1 and 4 subscribers says those.
        let source = Source::committed("run-2026-12-02T01-50-18Z");
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        assert!(method(&view, Family::Latency).contains("(1 k, 100 k or 1 M messages a second)"));
        assert!(method(&view, Family::Broadcasts).starts_with("One publisher and 1 or 4 subscribers,"));
        assert!(method(&view, Family::Queues).contains("(1 × 1 and 4 × 4)"));
        assert!(method(&view, Family::Batches).contains("a batch of 16 or 64 messages"));
    }

    /// A row's unit is the largest its middle value reads at least 0.5 in, stepped down while its
    /// least value would read below 0.001; a value far above the row's unit names its own.
    #[test]
    fn a_rows_unit_fits_its_least_value() {
        assert_eq!(unit(true, (365e6, 161.0), false), ("µs", 1e3));
        assert_eq!(unit(true, (365e6, 2e6), false), ("ms", 1e6));
        assert_eq!(unit(true, (0.2, 0.1), false), ("ns", 1.0));
        assert_eq!(unit(false, (1.17e6, 21_974.0), false), ("M msg/s", 1e6));
        assert_eq!(unit(false, (1.17e6, 500.0), true), ("k calls/s", 1e3));
        assert_eq!(value_text(2.26e6, 1.0, false), "2.26 M");
        assert_eq!(value_text(793.25e6, 1e3, true), "793 ms");
        assert_eq!(value_text(161.0, 1e3, true), "0.161");
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
