//! An A/B run as the terminal and the report show it: each library's figure on both sides, their
//! paired ratio with its interval, the rounds it took and its verdict; the sentinel's rows last
//! (its chart: `chart::ab`).

use super::View;
use crate::format::{nanos, rate, resolution, whole_percent};
use crate::report::model::{Cell, Table};
use crate::results::ab::{AbFigure, AbRecord, AbSettings, AbVerdict, Side};
use crate::results::{Document, Figure};

/// The first file of the report that is an A/B run: its record and settings.
pub fn of<'a>(view: &'a View) -> Option<(&'a Document, &'a AbRecord, &'a AbSettings)> {
    view.sources.iter().find_map(|s| Some((&s.doc, s.doc.ab.as_ref()?, s.doc.settings.config.ab.as_ref()?)))
}

fn value(figure: Figure, v: f64) -> String {
    match figure {
        Figure::MsgsPerS => rate(v),
        Figure::P50Ns => nanos(v),
    }
}

/// The rows of every figure: the candidate's first, in the run's order, then the sentinels'.
pub fn table(record: &AbRecord) -> Table {
    let header = [
        "case",
        "library",
        "mode",
        "figure",
        "base",
        "other",
        "ratio",
        "95% interval",
        "tells",
        "rounds",
        "verdict",
    ];
    let rows = record
        .figures
        .iter()
        .filter(|f| f.side == Side::Candidate)
        .chain(record.figures.iter().filter(|f| f.side == Side::Sentinel))
        .map(|f: &AbFigure| {
            let library = if f.side == Side::Sentinel {
                format!("{} (sentinel)", f.library)
            } else {
                f.library.clone()
            };
            [
                f.case.clone(),
                library,
                f.mode.as_str().into(),
                f.figure.measure().name().into(),
                value(f.figure, f.base),
                value(f.figure, f.other),
                format!("{:.3}", f.ratio),
                format!("{:.3} to {:.3}", f.low, f.high),
                f.resolution.map_or("-".into(), resolution),
                match f.unheld {
                    0 => f.rounds.to_string(),
                    n => format!("{} (+{n} moved)", f.rounds),
                },
                f.verdict.as_str().into(),
            ]
            .map(Cell::Text)
            .to_vec()
        })
        .collect();
    Table { header: header.map(String::from).to_vec(), rows, notes: Vec::new() }
}

/// What the table's numbers mean, and what the run found, in sentences.
pub fn preamble(record: &AbRecord, settings: &AbSettings) -> Vec<String> {
    let mut out: Vec<String> = record
        .binaries
        .iter()
        .map(|b| format!("{}: {} (ipcbench {}; {})", b.side.as_str(), b.path.display(), b.version, b.build))
        .collect();
    if let Some(h) = settings.handicap_ns {
        out.push(format!(
            "The other side is the base binary with a calibration weight of {} before each message it sends.",
            nanos(h)
        ));
    }
    out.push(format!(
        "Each ratio is the other side's figure over the base's, the geometric mean of the rounds' ratios (each of \
         two runs back to back) with its 95% interval; \"tells\" is the interval's half-width. A round whose two \
         runs' host probes after their windows saw different placements is left out (\"moved\"). A figure is \
         slower or faster when its change lies beyond {} and its one-sided test survives a Benjamini-Hochberg \
         correction at 5% over the run's figures; no change when its whole interval lies within ±{}; unresolved \
         otherwise. The sentinel is the base binary held against itself.",
        whole_percent(settings.threshold),
        whole_percent(settings.threshold)
    ));
    out
}

/// The counts of each verdict of the candidate's figures, and the sentinels'.
pub fn summary(record: &AbRecord) -> String {
    let count =
        |side: Side, v: AbVerdict| record.figures.iter().filter(|f| f.side == side && f.verdict == v).count();
    let of = |side: Side| {
        format!(
            "{} slower, {} faster, {} no change, {} unresolved",
            count(side, AbVerdict::Slower),
            count(side, AbVerdict::Faster),
            count(side, AbVerdict::NoChange),
            count(side, AbVerdict::Unresolved)
        )
    };
    let rounds: Vec<u32> = record.figures.iter().map(|f| f.rounds).collect();
    let (lo, hi) = (rounds.iter().min().copied().unwrap_or(0), rounds.iter().max().copied().unwrap_or(0));
    format!(
        "{} figures of the candidate: {}. Sentinel: {}. Rounds taken: {lo} to {hi}.",
        record.figures.iter().filter(|f| f.side == Side::Candidate).count(),
        of(Side::Candidate),
        of(Side::Sentinel)
    )
}
