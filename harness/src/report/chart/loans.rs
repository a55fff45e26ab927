//! The loans' chart, where the loans span several sizes: the stream rate and the round trip
//! against the size, each library's copy solid and its loan dashed (the sweep's panels, `sizes`).

use anyhow::Result;
use ipcbench_api::Transfer;

use super::pieces::{Chart, Place};
use super::sizes::{self, Panel};
use super::{Drawing, Out};
use crate::matrix::Pattern;
use crate::pattern::Family;
use crate::report::View;
use crate::results::CaseResult;

/// `loans.svg` and `loans.png`, where the loans span two sizes or more.
pub struct Loans;

impl Drawing for Loans {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>> {
        Ok(draw(view, out)?.into_iter().collect())
    }
}

fn draw(view: &View, out: &Out) -> Result<Option<Chart>> {
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
        .filter(|k| crate::report::sizes::sizes(view, k.0, Transfer::Loan).len() >= 2)
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
    sizes::draw_panels(out.charts, chart, subtitle, &panels).map(Some)
}
