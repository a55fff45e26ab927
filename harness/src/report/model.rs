//! One model of every table the tool prints: structured cells (a figure with its rank and
//! marks, a dash with its numbered reason, a status, a capability, a library), the marks and
//! the legend built from the same constants. The terminal, Markdown and HTML renderers only say
//! how a cell and a row look.

use ipcbench_api::LibraryInfo;

use super::View;
use crate::analysis::{self, NOISY, Rank};
use crate::format::{nanos, percent, rate, whole_percent};
use crate::matrix::{Column, Pattern};
use crate::pattern::shows::Line;
use crate::pattern::spec;
use crate::results::{CaseResult, Figure, Figures, LibraryRecord, Status};

/// One cell of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    /// A measured result: its figure as text, where it stands in its row, and its marks.
    Figure {
        text: String,
        rank: Option<Rank>,
        marks: String,
    },
    /// A figure of a family table, in its row's unit: its ratio to the best of its row (1 for
    /// the best, the better way round for times and rates alike), its rank where the row's
    /// figure is the one results are ranked by, and its marks.
    Value {
        text: String,
        ratio: f64,
        rank: Option<Rank>,
        marks: String,
    },
    /// No figure: the library lacks the pattern, or (rarely) measured none; footnote `note`
    /// says why.
    Dash {
        note: usize,
    },
    /// The result failed, was skipped or interrupted: footnote `note` says why.
    Status {
        status: Status,
        note: usize,
    },
    /// Whether a library has a pattern, and how (or why not).
    Support {
        supported: bool,
        text: String,
    },
    /// A library, as a row's label.
    Library {
        id: String,
        name: String,
        version: String,
    },
    Empty,
}

/// A table: its header, its rows (the first cell of each is the row's label) and the
/// footnotes its cells number (from 1).
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub notes: Vec<String>,
}

impl Table {
    fn note(&mut self, text: String) -> usize {
        note(&mut self.notes, text)
    }
}

/// The number (from 1) of this footnote among `notes`, each distinct text numbered once.
pub fn note(notes: &mut Vec<String>, text: String) -> usize {
    match notes.iter().position(|t| *t == text) {
        Some(i) => i + 1,
        None => {
            notes.push(text);
            notes.len()
        }
    }
}

/// A mark beside a figure, in the order the cells show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Note,
    Noisy,
    Concurrent,
    Oversubscribed,
    /// Other processes took a share of its CPUs beside most of its runs.
    Loaded,
    /// Some of its runs were taken loaded, some not.
    MixedLoad,
    Behind,
    LateSender,
    /// Shown, not ranked: too few runs in its case's host state.
    Unranked,
    /// Its runs split into clusters apart while the host held.
    Split,
}

impl Mark {
    pub const ALL: [Mark; 10] = [
        Mark::Note,
        Mark::Noisy,
        Mark::Concurrent,
        Mark::Oversubscribed,
        Mark::Loaded,
        Mark::MixedLoad,
        Mark::Behind,
        Mark::LateSender,
        Mark::Unranked,
        Mark::Split,
    ];

    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Note => "†",
            Mark::Noisy => "~",
            Mark::Concurrent => "!",
            Mark::Oversubscribed => "*",
            Mark::Loaded => "^",
            Mark::MixedLoad => "≠",
            Mark::Behind => "»",
            Mark::LateSender => "°",
            Mark::Unranked => "‡",
            Mark::Split => "÷",
        }
    }

    pub fn meaning(self) -> String {
        match self {
            Mark::Note => "every server answered every request (they do not share a load)".into(),
            Mark::Noisy => {
                format!("noisy (its runs spread more than {} of the median)", whole_percent(NOISY))
            }
            Mark::Concurrent => "another ipcbench run was running".into(),
            Mark::Oversubscribed => "oversubscribed (more processes than cores)".into(),
            Mark::Loaded => format!(
                "loaded: other processes took more than {:.1} of a core of its CPUs beside most of its runs",
                crate::results::LOADED
            ),
            Mark::MixedLoad => "its runs were taken under different loads: some loaded, some not".into(),
            Mark::Behind => format!(
                "latency: the sender fell behind its schedule by more than {} (the rate was not kept)",
                whole_percent(analysis::BEHIND)
            ),
            Mark::LateSender => "latency: the sender's own lateness (p50) exceeded the latency's p50: the \
                                 figure shows the sender's sleep more than the library"
                .into(),
            Mark::Unranked => {
                "shown, not ranked: too few of its runs were in the host state its case's runs \
                               share most (docs/METHOD.md, \"Host states\")"
                    .into()
            }
            Mark::Split => {
                "its runs split into clusters apart while the host held: the results file gives each \
                            cluster's median and share"
                    .into()
            }
        }
    }

    pub fn on(self, r: &CaseResult) -> bool {
        match self {
            Mark::Note => r.note.is_some(),
            Mark::Noisy => analysis::noisy(r),
            Mark::Concurrent => !r.concurrent_runs.is_empty(),
            Mark::Oversubscribed => r.oversubscribed,
            Mark::Loaded => r.load.is_some_and(|l| l.loaded()),
            Mark::MixedLoad => r.load.is_some_and(|l| l.mixed()),
            Mark::Behind => analysis::behind(r),
            Mark::LateSender => analysis::late_sender(r),
            Mark::Unranked => {
                r.status == crate::results::Status::Ok && r.host_state.as_ref().is_some_and(|s| !s.ranked)
            }
            Mark::Split => r.host_state.as_ref().is_some_and(|s| !s.clusters.is_empty()),
        }
    }
}

/// The marks beside a result's figure: ` † ~ ! *`, those that apply.
pub fn marks(r: &CaseResult) -> String {
    Mark::ALL.into_iter().filter(|m| m.on(r)).map(|m| format!(" {}", m.symbol())).collect()
}

pub const LEVEL: &str = "≈";

/// The legend under a table: how its fastest (`fastest`: "Bold") and level figures are shown,
/// then what each mark that `present` says stands in it means, `mark` writing a mark's symbol
/// as the output needs it.
pub fn legend_line(fastest: &str, present: impl Fn(Mark) -> bool, mark: impl Fn(Mark) -> String) -> String {
    let mut items = vec![
        format!("{fastest}: the fastest in its row (on its machine)"),
        format!(
            "{LEVEL}: level with the fastest (the intervals of their medians overlap, see docs/METHOD.md)"
        ),
    ];
    items.extend(
        Mark::ALL.into_iter().filter(|m| present(*m)).map(|m| format!("{}: {}", mark(m), m.meaning())),
    );
    format!("{}.", items.join("; "))
}

/// A latency result without a latency: its sender sent none of its window's messages.
const NONE_SENT: &str = "no message of the window sent: its sender's send blocked from the warm-up to past the \
                         window's end (all behind its schedule)";

/// Why an ok result of `pattern` lacks the figure it is ranked by.
pub fn no_figure(pattern: Pattern) -> &'static str {
    if spec(pattern).shows.line == Line::Spectrum { NONE_SENT } else { "no such figure was measured" }
}

/// Figures as one short text: a round trip's p50 and p99; a rate, with a service's p50 and a
/// lossy broadcast's share lost.
pub fn figure_text(pattern: Pattern, f: &Figures) -> String {
    let line = spec(pattern).shows.line;
    if line == Line::Spectrum && f.p50_ns.is_none() {
        return no_figure(pattern).into();
    }
    let mut s = rate(f.msgs_per_s);
    if let (Line::Spectrum, Some(p50), Some(p99), Some(p9999), Some(max)) =
        (line, f.p50_ns, f.p99_ns, f.p9999_ns, f.max_ns)
    {
        return format!("p50 {} p99 {} p99.99 {} max {}", nanos(p50), nanos(p99), nanos(p9999), nanos(max));
    }
    if let (Line::Connect, Some(p50), Some(max)) = (line, f.p50_ns, f.max_ns) {
        let open = f.open_p50_ns.map(|o| format!(" (open p50 {})", nanos(o))).unwrap_or_default();
        return format!("p50 {} max {}{open}", nanos(p50), nanos(max));
    }
    if let Some(p50) = f.p50_ns {
        s = match (line, f.p99_ns) {
            (Line::RoundTrip, Some(p99)) => format!("p50 {} p99 {}", nanos(p50), nanos(p99)),
            _ => format!("{s}, p50 {}", nanos(p50)),
        };
    }
    if let Some(lost) = f.lost_share {
        s = format!("{s}, {} lost", percent(lost));
    }
    s
}

/// One value of a figure (a spread's least or greatest).
pub fn value_text(figure: Figure, v: f64) -> String {
    match figure {
        Figure::P50Ns => nanos(v),
        Figure::MsgsPerS => rate(v),
    }
}

/// A result as the case table shows it; `row` is its case's results on its machine.
fn result_cell<'a>(
    table: &mut Table,
    r: Option<&CaseResult>,
    row: impl IntoIterator<Item = &'a CaseResult>,
) -> Cell {
    let Some(r) = r else { return Cell::Empty };
    let reason = r.reason.as_deref().unwrap_or("");
    match (r.status, &r.median) {
        (Status::Ok, Some(f)) => {
            Cell::Figure { text: figure_text(r.pattern, f), rank: analysis::rank(r, row), marks: marks(r) }
        }
        (Status::Unsupported, _) => Cell::Dash { note: table.note(format!("{}: {reason}", r.library)) },
        (status, _) => Cell::Status {
            status,
            note: table.note(format!("{} {} {}: {reason}", r.library, r.case, status.as_str())),
        },
    }
}

/// Cases as rows, a column per library and machine: each cell the figure of the better receive
/// mode, ranked in its row.
pub fn case_table(view: &View) -> Table {
    let header = std::iter::once("case".to_string()).chain(view.columns.iter().map(|c| view.column_label(c)));
    let mut table = Table { header: header.collect(), ..Table::default() };
    for case in &view.cases {
        let mut row = vec![Cell::Text(case.clone())];
        for (lib, s) in &view.columns {
            row.push(result_cell(&mut table, view.result(case, lib, *s), view.row(case, *s)));
        }
        table.rows.push(row);
    }
    table
}

/// A row per library, a column per pattern: whether it has it, and how.
pub fn capability_table(libraries: &[LibraryRecord]) -> Table {
    // A column no library's record holds (the loans, in a file from before them) is left out.
    let columns: Vec<Column> =
        Column::ALL.into_iter().filter(|&c| libraries.iter().any(|l| l.capability(c).is_some())).collect();
    let header =
        std::iter::once("library".to_string()).chain(columns.iter().map(|c| c.title().to_string())).collect();
    let rows = libraries
        .iter()
        .map(|lib| {
            let label =
                Cell::Library { id: lib.id.clone(), name: lib.name.clone(), version: lib.version.clone() };
            std::iter::once(label)
                .chain(columns.iter().map(|&c| match lib.capability(c) {
                    Some(c) => Cell::Support { supported: c.supported, text: c.text.clone() },
                    None => Cell::Empty,
                }))
                .collect()
        })
        .collect();
    Table { header, rows, notes: Vec::new() }
}

/// The capability table of the libraries built in.
pub fn capabilities_of(libs: &[LibraryInfo]) -> Table {
    capability_table(&libs.iter().map(LibraryRecord::new).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_states_the_noise_threshold_it_marks_by_and_only_the_marks_present() {
        let all = legend_line("Bold", |_| true, |m| m.symbol().to_string());
        assert!(all.starts_with("Bold: the fastest in its row"), "{all}");
        assert!(all.contains(&format!("~: noisy (its runs spread more than {:.0}%", NOISY * 100.0)), "{all}");
        let some = legend_line("Bold", |m| m == Mark::Oversubscribed, |m| m.symbol().to_string());
        assert!(some.ends_with("*: oversubscribed (more processes than cores)."), "{some}");
        assert!(!some.contains("noisy"), "{some}");
    }

    #[test]
    fn figures_read_as_the_tables_print_them() {
        let f =
            Figures { msgs_per_s: 1.17e6, p50_ns: Some(830.0), p99_ns: Some(1200.0), ..Default::default() };
        assert_eq!(figure_text(Pattern::StreamRtt, &f), "p50 830 ns p99 1.20 µs");
        let spectrum = Figures { p9999_ns: Some(45e3), max_ns: Some(2.5e6), ..f };
        assert_eq!(
            figure_text(Pattern::Latency, &spectrum),
            "p50 830 ns p99 1.20 µs p99.99 45.00 µs max 2.50 ms"
        );
        let connect = Figures { open_p50_ns: Some(400.0), ..spectrum };
        assert_eq!(figure_text(Pattern::Connect, &connect), "p50 830 ns max 2.50 ms (open p50 400 ns)");
        assert_eq!(figure_text(Pattern::Service, &f), "1.17 M msg/s, p50 830 ns");
        let lossy = Figures { msgs_per_s: 765e3, lost_share: Some(0.919), ..Default::default() };
        assert_eq!(figure_text(Pattern::Broadcast, &lossy), "765.0 k msg/s, 91.9% lost");
    }

    /// The case table of a committed run: a row per case, a column per library, the fastest
    /// ranked, the dashes numbered once per reason, the marks from the results.
    #[test]
    fn the_case_table_of_a_committed_run() {
        let sources = [super::super::Source::committed("run-2026-12-02T01-50-18Z")];
        let view = View::new(&sources, std::path::Path::new("unused"));
        let t = case_table(&view);
        assert_eq!(t.header.len(), 1 + view.libraries.len());
        assert_eq!(t.rows.len(), view.cases.len());
        let stream = &t.rows[0];
        assert_eq!(stream[0], Cell::Text("stream/16B".into()));
        // The library of the highest rate is the fastest, shown as its figure reads; the slowest
        // is behind (the libraries are the file's, not named).
        let rate = |i: usize| {
            view.result("stream/16B", &view.libraries[i - 1], 0).unwrap().median.unwrap().msgs_per_s
        };
        let by_rate = |a: &usize, b: &usize| rate(*a).total_cmp(&rate(*b));
        let (best, worst) =
            ((1..t.header.len()).max_by(by_rate).unwrap(), (1..t.header.len()).min_by(by_rate).unwrap());
        let Cell::Figure { text, rank, .. } = &stream[best] else { panic!("{:?}", stream[best]) };
        assert_eq!((text.as_str(), *rank), (crate::format::rate(rate(best)).as_str(), Some(Rank::Fastest)));
        assert!(matches!(&stream[worst], Cell::Figure { rank: Some(Rank::Behind), .. }));
        let lossless =
            t.rows.iter().find(|r| r[0] == Cell::Text("broadcast/lossless/1sub/16B".into())).unwrap();
        let lossy = t.rows.iter().find(|r| r[0] == Cell::Text("broadcast/lossy/4sub/16B".into())).unwrap();
        let mut dashes = 0;
        for (i, cell) in lossless.iter().enumerate().skip(1) {
            let Cell::Dash { note } = cell else { continue };
            dashes += 1;
            let lib = &view.libraries[i - 1];
            assert!(t.notes[*note - 1].starts_with(&format!("{lib}: ")), "{}", t.notes[*note - 1]);
            // The same reason is one footnote wherever it stands.
            let reason = &t.notes[*note - 1];
            if let Cell::Dash { note: other } = lossy[i] {
                assert_eq!(&t.notes[other - 1] == reason, other == *note, "{lib}");
            }
        }
        assert!(dashes > 0);
        let oversubscribed = t.rows.iter().find(|r| r[0] == Cell::Text("queue/4x4/16B".into())).unwrap();
        let figures = oversubscribed.iter().filter(|c| matches!(c, Cell::Figure { .. }));
        assert!(figures.clone().count() > 0);
        assert!(figures.clone().all(|c| matches!(c, Cell::Figure { marks, .. } if marks.ends_with(" *"))));
    }
}
