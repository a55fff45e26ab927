//! "Copy against loan": each loan case (`loan/stream/64KiB`: the library's in-place calls on
//! both ends) beside the copy it answers (`stream/64KiB`), library by library: both figures and
//! what the loan bought; and, where the loans span several sizes, the stream rate and the round
//! trip against the size, each library's copy solid and its loan dashed (`chart::loans`). The loans are ranked
//! nowhere else: every other table, chart and count holds the copies alone.

use ipcbench_api::Transfer;

use super::View;
use super::model::{self, Cell, Table};
use crate::format::{nanos, rate};
use crate::matrix::{LOAN_PREFIX, Pattern};
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
