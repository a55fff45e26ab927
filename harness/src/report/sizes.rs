//! A size sweep as a reader wants it (`ipcbench sweep`, or any report with streams at three
//! sizes or more): which sizes a view holds, the section's method, and a table of each stream's
//! rate and bandwidth by size (its chart: `chart::sizes`).

use super::View;
use super::model::{Cell, Table};
use crate::format::{bandwidth, rate};
use crate::matrix::{Pattern, size_label};
use crate::results::{CaseResult, Status};
use ipcbench_api::Transfer;

/// What the section's chart and table show: the round trips' panel and floor only where the
/// view has round trips at enough sizes for one.
pub fn method(view: &View) -> String {
    let rtt = sizes(view, Pattern::StreamRtt, Transfer::Copy).len() >= SWEEP;
    let (figures, floors) = if rtt {
        (
            "stream rate, its bandwidth (rate × size) and its round trip's p50",
            "copy floor (one buffer copied into another at that size), the blue one its polling round-trip floor",
        )
    } else {
        (
            "stream rate and its bandwidth (rate × size)",
            "copy floor (one buffer copied into another at that size)",
        )
    };
    format!(
        "Each library's {figures} against the message size, in its better receive mode (log axes). The dashed \
         black line is the machine's {floors}. A line joins two sizes both measured: a size a library did not \
         carry leaves a gap. Past eight libraries, each has a panel of its own, the others faint behind it."
    )
}

/// Streams at fewer sizes than this are cases, not a sweep.
pub(super) const SWEEP: usize = 3;

/// The sizes the view's unbatched results of `pattern` moved by `transfer` have, smallest first.
pub(super) fn sizes(view: &View, pattern: Pattern, transfer: Transfer) -> Vec<usize> {
    let mut out: Vec<usize> = view
        .sources
        .iter()
        .flat_map(|s| &s.doc.results)
        .filter(|r| r.pattern == pattern && r.batch.is_none() && r.transfer == transfer)
        .map(|r| r.size)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether the view holds a sweep.
pub fn present(view: &View) -> bool {
    sizes(view, Pattern::Stream, Transfer::Copy).len() >= SWEEP
}

/// The view's result of `pattern` moved by `transfer` at `size` in column `col`.
pub(super) fn at<'a>(
    view: &View<'a>,
    (pattern, transfer): (Pattern, Transfer),
    size: usize,
    (lib, s): &(String, usize),
) -> Option<&'a CaseResult> {
    view.sources[*s].doc.results.iter().find(|r| {
        r.pattern == pattern
            && r.batch.is_none()
            && r.transfer == transfer
            && r.size == size
            && &r.library == lib
    })
}

/// A stream's bandwidth: its rate times its size.
pub(super) fn bytes_per_s(r: &CaseResult) -> Option<f64> {
    Some(r.median?.msgs_per_s * r.size as f64)
}

/// Rows of stream sizes, a column per library: rate and bandwidth.
pub fn table(view: &View) -> Table {
    let mut header = vec!["stream size".to_string()];
    header.extend(view.columns.iter().map(|c| view.column_label(c)));
    let rows = sizes(view, Pattern::Stream, Transfer::Copy)
        .into_iter()
        .map(|size| {
            let mut row = vec![Cell::Text(size_label(size))];
            for col in &view.columns {
                row.push(match at(view, (Pattern::Stream, Transfer::Copy), size, col) {
                    Some(r) if r.status == Status::Ok => match (r.median, bytes_per_s(r)) {
                        (Some(f), Some(b)) => Cell::Text(format!("{}, {}", rate(f.msgs_per_s), bandwidth(b))),
                        _ => Cell::Empty,
                    },
                    Some(r) if r.status == Status::Unsupported => Cell::Text("—".into()),
                    Some(r) => Cell::Text(r.status.as_str().into()),
                    None => Cell::Empty,
                });
            }
            row
        })
        .collect();
    Table { header, rows, notes: Vec::new() }
}
