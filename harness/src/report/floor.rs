//! Every latency figure beside its machine's floor (`crate::floors`, in each results file's
//! conditions): a round trip's or a call's p50 as a multiple of the round-trip floor of the mode
//! it was measured in, a one-way latency's p50 as a multiple of half of it; and the floors as
//! lines for the charts.

use ipcbench_api::RecvMode;

use super::View;
use super::model::{self, Cell, Table};
use crate::floors::{self, Floors};
use crate::format::nanos;
use crate::matrix::Pattern;
use crate::pattern::{Floor, spec};
use crate::results::{CaseResult, Status};

/// What the floors table shows.
pub const FLOORS: &str = "Each round trip, service call and one-way latency (p50, in the receive mode its \
     figure was counted in) as a multiple of the machine's floor in that mode, the lower of those measured \
     at the start and at the end of the run: a polling figure against one cache line bounced between two \
     processes, a waiting one against two processes waking each other through a futex; a one-way latency \
     against half of that round trip. Near 1 a library leaves little to win on this machine. A waiting \
     figure below the waiting floor cites a note under the table that says why, and gives its multiple of \
     the polling floor too; any other multiple below 1 means the two did not measure the same thing \
     (docs/METHOD.md, \"Floors\"). A latency whose sender fell behind its schedule has no multiple: its \
     p50 is the backlog the sender built up, not a crossing of the channel.";

/// What the section says when no results file recorded its floors.
pub const NO_FLOORS: &str = "Not recorded: these results files are older than the floors.";

/// Whether a pattern's p50 is held against a floor (its spec's `floor`).
fn held(pattern: Pattern) -> bool {
    spec(pattern).floor != Floor::None
}

/// The floor, in nanoseconds, a p50 of `pattern` measured in `mode` is held against.
pub fn floor_ns(floors: &Floors, pattern: Pattern, mode: RecvMode) -> Option<f64> {
    let trip = floors.of(mode)?.p50_ns;
    match spec(pattern).floor {
        Floor::RoundTrip => Some(trip),
        // One way is half a round trip: the line crosses once.
        Floor::OneWay => Some(trip / 2.0),
        Floor::None => None,
    }
}

/// A source's floors, where its conditions recorded them: the lower of those measured at the
/// run's start and at its end.
pub fn floors(view: &View, source: usize) -> Option<Floors> {
    view.sources[source].doc.conditions.as_ref()?.lowest_floors()
}

/// A result's counted p50 over its mode's floor, and that mode.
pub fn multiple(floors: &Floors, r: &CaseResult) -> Option<(f64, RecvMode)> {
    let mode = r.best_mode?;
    Some((multiple_in(floors, r, mode)?, mode))
}

/// A result's counted p50 over the floor of `mode`.
fn multiple_in(floors: &Floors, r: &CaseResult, mode: RecvMode) -> Option<f64> {
    let floor = floor_ns(floors, r.pattern, mode).filter(|f| *f > 0.0)?;
    Some(r.median?.p50_ns? / floor)
}

/// A result's multiple where it means something: none for a latency whose sender fell behind its
/// schedule (`analysis::behind`), whose p50 is the backlog the sender built up, not a crossing of
/// the channel, and reads millions of times a floor of a hundred nanoseconds. (`multiple` keeps
/// the plain ratio, for the CSV.)
pub fn shown(floors: &Floors, r: &CaseResult) -> Option<(f64, RecvMode)> {
    multiple(floors, r).filter(|_| !crate::analysis::behind(r))
}

/// Why a library's waiting figure can be below the waiting floor: the note its cells cite.
fn spins(lib: &str) -> String {
    format!(
        "{lib}: its waiting receive spins (polls) before it sleeps, so a message that arrives during the \
         spin is taken without a wake-up; the waiting floor wakes a sleeping process every time, so such a \
         figure can be below it. Its multiple of the polling floor is beside it."
    )
}

/// A result's multiples as its cell says them (`shown`): of its mode's floor, and where a waiting
/// figure is below the waiting floor (the library spun, not slept), the note numbered among
/// `notes` that says so and its multiple of the polling floor too.
fn multiples_text(floors: &Floors, r: &CaseResult, notes: &mut Vec<String>) -> Option<String> {
    let (x, mode) = shown(floors, r)?;
    let mut text = multiple_text((x, mode));
    if mode == RecvMode::Waiting && x < 1.0 {
        text.push_str(&format!(" [{}]", model::note(notes, spins(&r.library))));
        if let Some(p) = multiple_in(floors, r, RecvMode::Polling) {
            text.push_str(&format!(", {}", multiple_text((p, RecvMode::Polling))));
        }
    }
    Some(text)
}

/// A passed result's cell: its p50 and its multiples, or why it has none.
fn cell_text(floors: Option<&Floors>, r: &CaseResult, notes: &mut Vec<String>) -> String {
    let p50 = r.median.and_then(|f| f.p50_ns).map_or("—".to_string(), nanos);
    let times = match floors {
        _ if crate::analysis::behind(r) => "no multiple: its sender fell behind".to_string(),
        Some(f) => multiples_text(f, r, notes).unwrap_or_else(|| "no floor".into()),
        None => "no floor".into(),
    };
    format!("p50 {p50}, {times}")
}

/// `3.42× polling`.
pub fn multiple_text((x, mode): (f64, RecvMode)) -> String {
    let digits = if x < 10.0 {
        2
    } else if x < 100.0 {
        1
    } else {
        0
    };
    format!("{x:.digits$}× {mode}")
}

/// A row per round-trip, service and latency case: the floors it is held against, then each
/// library's p50 and its multiple; the notes its cells cite.
pub fn table(view: &View) -> Table {
    let mut header = vec!["case".to_string(), "floor p50 (polling / waiting)".to_string()];
    header.extend(view.columns.iter().map(|c| view.column_label(c)));
    let per_source: Vec<Option<Floors>> = (0..view.sources.len()).map(|s| floors(view, s)).collect();
    let mut t = Table { header, rows: Vec::new(), notes: Vec::new() };
    for case in &view.cases {
        let Some(pattern) = view.pattern(case).filter(|p| held(*p)) else { continue };
        let of_source = |f: &Floors| {
            let text = |mode| floor_ns(f, pattern, mode).map_or("—".to_string(), nanos);
            format!("{} / {}", text(RecvMode::Polling), text(RecvMode::Waiting))
        };
        let floor: Vec<String> = per_source.iter().flatten().map(of_source).collect();
        let mut row = vec![
            Cell::Text(case.clone()),
            Cell::Text(if floor.is_empty() { "not recorded".into() } else { floor.join("; ") }),
        ];
        for (lib, s) in &view.columns {
            row.push(match view.result(case, lib, *s) {
                Some(r) if r.status == Status::Ok => {
                    Cell::Text(cell_text(per_source[*s].as_ref(), r, &mut t.notes))
                }
                Some(_) => Cell::Text("—".into()),
                None => Cell::Empty,
            });
        }
        t.rows.push(row);
    }
    t
}

/// A sentence per source whose round-trip floors moved (`floors::moved`) between the run's
/// start and its end: the host changed under it, and its figures may come from either state.
pub fn drift(view: &View) -> Vec<String> {
    let mut out = Vec::new();
    for (i, s) in view.sources.iter().enumerate() {
        let Some(c) = &s.doc.conditions else { continue };
        let (Some(start), Some(end)) = (&c.floors, &c.floors_after) else { continue };
        for mode in RecvMode::ALL {
            let (Some(a), Some(b)) = (start.of(mode), end.of(mode)) else { continue };
            if floors::moved(a.p50_ns, b.p50_ns) {
                let whose = view.source_suffix(i);
                out.push(format!(
                    "The {mode} floor moved from {} at the start of the run to {} at its end{whose}: the host \
                     changed under the run, and each figure may come from either state; the multiples are \
                     against the lower.",
                    nanos(a.p50_ns),
                    nanos(b.p50_ns)
                ));
            }
        }
    }
    out
}

/// Whether any source recorded its floors.
pub fn recorded(view: &View) -> bool {
    (0..view.sources.len()).any(|s| floors(view, s).is_some())
}

/// A floor drawn across a chart's panel: its label and its value in the panel's unit.
pub struct Line {
    pub label: String,
    pub value: f64,
    pub mode: RecvMode,
}

/// The round-trip floors of a chart of `pattern`, in microseconds: one line per mode and source.
pub fn lines(view: &View, pattern: Pattern) -> Vec<Line> {
    let mut out = Vec::new();
    for s in 0..view.sources.len() {
        let Some(f) = floors(view, s) else { continue };
        for mode in RecvMode::ALL {
            let Some(ns) = floor_ns(&f, pattern, mode) else { continue };
            let label = format!("{mode} floor {}{}", nanos(ns), view.source_suffix(s));
            out.push(Line { label, value: ns / 1e3, mode });
        }
    }
    out
}

/// The copy floor of each case of a stream chart, in millions of messages per second (the first
/// source that measured the case's size).
pub fn copy_rates(view: &View, sizes: &[usize]) -> Vec<Option<f64>> {
    sizes
        .iter()
        .map(|&size| (0..view.sources.len()).find_map(|s| floors(view, s)?.copy_rate(size)).map(|r| r / 1e6))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::floors::{CopyFloor, RoundTrip};

    fn floors() -> Floors {
        let trip = |p50_ns| Some(RoundTrip { p50_ns, p99_ns: p50_ns * 2.0, round_trips: 100 });
        Floors {
            polling: trip(400.0),
            waiting: trip(2000.0),
            copy: vec![CopyFloor { size: 16, bytes_per_s: 8e9 }],
        }
    }

    #[test]
    fn each_pattern_is_held_against_its_modes_floor() {
        let f = floors();
        assert_eq!(floor_ns(&f, Pattern::StreamRtt, RecvMode::Polling), Some(400.0));
        assert_eq!(floor_ns(&f, Pattern::Service, RecvMode::Waiting), Some(2000.0));
        assert_eq!(floor_ns(&f, Pattern::Latency, RecvMode::Polling), Some(200.0), "one way: half");
        assert_eq!(floor_ns(&f, Pattern::Stream, RecvMode::Polling), None, "a rate has no latency floor");
        assert_eq!(floor_ns(&Floors::default(), Pattern::StreamRtt, RecvMode::Polling), None);
        assert_eq!(f.copy_rate(16), Some(5e8));
        assert_eq!(f.copy_rate(1024), None, "a size the run did not measure");
    }

    /// A waiting round trip below the waiting floor (a receive that spun) cites the note that says
    /// why and is also held against the polling floor; one above it is not. A latency whose sender
    /// fell behind has no multiple in the table (the CSV keeps the ratio).
    #[test]
    fn a_waiting_figure_below_its_floor_says_why_and_a_late_sender_has_no_multiple() {
        let f = floors();
        let lib = crate::registry::select(None).unwrap().remove(0);
        let result = |case: &str, mode, p50| {
            let median = Some(crate::results::Figures { p50_ns: Some(p50), ..Default::default() });
            let case = crate::matrix::find(case).unwrap();
            let begun = crate::run::ledger::begin(&case, &lib, 2, false, None);
            CaseResult { best_mode: Some(mode), median, ..begun }
        };
        let rtt = |mode, p50| result("stream-rtt/16B", mode, p50);
        let mut notes = Vec::new();
        let below = rtt(RecvMode::Waiting, 1000.0);
        assert_eq!(multiples_text(&f, &below, &mut notes).unwrap(), "0.50× waiting [1], 2.50× polling");
        assert_eq!(notes.len(), 1);
        let why = format!("{}: its waiting receive spins", below.library);
        assert!(notes[0].starts_with(&why), "{}", notes[0]);
        assert_eq!(multiples_text(&f, &rtt(RecvMode::Waiting, 3000.0), &mut notes).unwrap(), "1.50× waiting");
        assert_eq!(multiples_text(&f, &rtt(RecvMode::Polling, 600.0), &mut notes).unwrap(), "1.50× polling");
        assert_eq!(multiples_text(&Floors::default(), &rtt(RecvMode::Polling, 600.0), &mut notes), None);
        assert_eq!(notes.len(), 1, "one note for the library, however many cells cite it");
        // 713.56 ms against a one-way floor of 200 ns: the sender's backlog, not a crossing.
        let mut late = result("latency/300k/16B", RecvMode::Polling, 713.56e6);
        late.median.as_mut().unwrap().behind_share = Some(0.6);
        assert_eq!(multiples_text(&f, &late, &mut notes), None);
        let text = cell_text(Some(&f), &late, &mut notes);
        assert_eq!(text, "p50 713.56 ms, no multiple: its sender fell behind");
        assert!(multiple(&f, &late).is_some(), "the CSV keeps the plain ratio");
        let kept = result("latency/300k/16B", RecvMode::Polling, 400.0);
        assert_eq!(cell_text(Some(&f), &kept, &mut notes), "p50 400 ns, 2.00× polling");
    }

    /// A floor that moved by more than a quarter between the run's two ends is said; one that
    /// stayed is not.
    #[test]
    fn a_floor_that_moved_under_the_run_is_said() {
        // A committed run's document, its floors set here.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut doc =
            crate::results::load(&root.join("harness/tests/data/run-2026-12-02T01-50-18Z.json.gz")).unwrap();
        let trip = |p50_ns| Some(RoundTrip { p50_ns, p99_ns: p50_ns, round_trips: 1 });
        let c = doc.conditions.as_mut().unwrap();
        c.floors = Some(Floors { polling: trip(381.0), waiting: trip(1560.0), copy: Vec::new() });
        c.floors_after = Some(Floors { polling: trip(100.0), waiting: trip(1580.0), copy: Vec::new() });
        let sources = [super::super::Source::new(doc, "run.json".into())];
        let view = View::new(&sources, std::path::Path::new("out"));
        let said = drift(&view);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("The polling floor moved from 381 ns at the start of the run to 100 ns"),
            "{}",
            said[0]
        );
    }

    #[test]
    fn a_multiple_reads_with_its_mode() {
        assert_eq!(multiple_text((1.4249, RecvMode::Polling)), "1.42× polling");
        assert_eq!(multiple_text((37.26, RecvMode::Waiting)), "37.3× waiting");
        assert_eq!(multiple_text((412.6, RecvMode::Waiting)), "413× waiting");
    }
}
