//! "Copy against loan": each loan case (`loan/stream/64KiB`: the library's in-place calls on
//! both ends) beside the copy it answers (`stream/64KiB`), library by library: both figures and
//! what the loan bought; and, where the loans span several sizes, the stream rate and the round
//! trip against the size, each library's copy solid and its loan dashed. The loans are ranked
//! nowhere else: every other table, chart and count holds the copies alone.

use std::path::Path;

use anyhow::Result;
use ipcbench_api::Transfer;

use super::View;
use super::model::{self, Cell, Table};
use super::plot::{Chart, Place};
use super::sizes::{self, Panel};
use crate::format::{nanos, rate};
use crate::matrix::{LOAN_PREFIX, Pattern};
use crate::pattern::Family;
use crate::pattern::Gathered;
use crate::pattern::spec;
use crate::results::{CaseResult, Measure, Status};

/// Whether the view holds a loan case.
pub fn present(view: &View) -> bool {
    view.sources.iter().flat_map(|s| &s.doc.results).any(|r| r.transfer == Transfer::Loan)
}

/// A result's figure of `m` (its pattern's ranked one), if it has it.
fn figure(r: &CaseResult, m: Measure) -> Option<f64> {
    m.get(r.median.as_ref()?)
}

/// A rate without its unit (the row's figure names it), or a time.
fn text(v: f64, m: Measure) -> String {
    if m.higher_is_better() { rate(v).trim_end_matches(" msg/s").to_string() } else { nanos(v) }
}

/// A row per loan case, a column per library: copy → loan (what the loan bought).
pub fn table(view: &View) -> Table {
    let mut header = vec!["case".to_string(), "figure".to_string()];
    header.extend(view.columns.iter().map(|c| view.column_label(c)));
    let mut t = Table { header, rows: Vec::new(), notes: Vec::new() };
    let loans = view.cases.iter().filter(|c| view.gathered(c) == Some(Gathered::Loans));
    for case in loans {
        let copy = case.strip_prefix(LOAN_PREFIX).unwrap_or(case);
        // The figure the copy is ranked by: a stream's rate, a round trip's p50.
        let (m, name) = spec(view.pattern(case).unwrap_or(Pattern::Stream)).shows.rows[0];
        let label = if m.higher_is_better() { format!("{name} (msg/s)") } else { name.to_string() };
        let mut row = vec![Cell::Text(copy.to_string()), Cell::Text(label)];
        for (lib, s) in &view.columns {
            let (c, l) = (view.result(copy, lib, *s), view.result(case, lib, *s));
            row.push(match l {
                None => Cell::Empty,
                Some(l) if l.status == Status::Unsupported => Cell::Dash {
                    note: model::note(&mut t.notes, format!("{lib}: {}", l.reason.as_deref().unwrap_or(""))),
                },
                Some(l) if l.status != Status::Ok => Cell::Text(format!(
                    "{} ({})",
                    l.status.as_str(),
                    model::note(&mut t.notes, format!("{lib} {case}: {}", l.reason.as_deref().unwrap_or("")))
                )),
                Some(l) => {
                    cell(c.filter(|c| c.status == Status::Ok).and_then(|c| figure(c, m)), figure(l, m), m)
                }
            });
        }
        t.rows.push(row);
    }
    t
}

/// Copy → loan (×what the loan bought), or the loan alone where the copy is missing.
fn cell(copy: Option<f64>, loan: Option<f64>, m: Measure) -> Cell {
    match (copy, loan) {
        (Some(c), Some(l)) if c > 0.0 && l > 0.0 => {
            let bought = if m.higher_is_better() { l / c } else { c / l };
            Cell::Text(format!("{} → {} ({bought:.2}×)", text(c, m), text(l, m)))
        }
        (None, Some(l)) => Cell::Text(format!("loan {}", text(l, m))),
        _ => Cell::Empty,
    }
}

/// `loans.svg` and `loans.png`, where the loans span two sizes or more.
pub fn draw(view: &View, dir: &Path) -> Result<Option<Chart>> {
    type Value = fn(&CaseResult) -> Option<f64>;
    let stream: Value = |r| Some(r.median?.msgs_per_s / 1e6);
    let round_trip: Value = |r| Some(r.median?.p50_ns? / 1e3);
    // Each kind: its pattern, panel title, axis words, whether a time, and its figure.
    let kinds = [
        (Pattern::Stream, "Stream rate", "M msg/s", false, stream),
        (Pattern::StreamRtt, "Round trip p50", "p50", true, round_trip),
    ];
    let panels: Vec<Panel> = kinds
        .into_iter()
        .filter(|k| sizes::sizes(view, k.0, Transfer::Loan).len() >= 2)
        .map(|(pattern, title, unit, time, value)| {
            let loans = sizes::lines(view, (pattern, Transfer::Loan), " loan", value);
            // Each library with a loan line has its copy beside it; no other library's copy.
            let lent = |label: &str| {
                loans.iter().any(|d| d.label.strip_suffix(" loan") == label.strip_suffix(" copy"))
            };
            let mut lines: Vec<_> = sizes::lines(view, (pattern, Transfer::Copy), " copy", value)
                .into_iter()
                .filter(|l| lent(&l.label))
                .collect();
            lines.extend(loans);
            Panel { title, unit, time, lines, floor: None }
        })
        .collect();
    if panels.is_empty() {
        return Ok(None);
    }
    let chart = Chart {
        name: "loans".into(),
        title: format!("{}: in place against copied", Family::Loans.title()),
        place: Place::Family(Family::Loans),
    };
    let subtitle = "each library copied (solid, filled marks) and in its own memory (dashed, hollow marks), its \
                    better receive mode; both axes logarithmic";
    sizes::draw_panels(dir, chart, subtitle, &panels).map(Some)
}
