//! The report's other tables, built into the model: the shared memory each library mapped, the
//! machines, the versions; and the runs behind a cell, as the HTML page's tooltip shows them.

use ipcbench_api::Shape;

use super::View;
use super::model::{Cell, Table, figure_text};
use crate::format::{bytes, nanos};
use crate::matrix::Pattern;
use crate::results::{BufferRecord, CaseResult, Document, Status, Verify};

/// What the buffers table shows.
pub const MAPPED: &str = "Shared memory mapped by the library's largest process in each charted case (every \
     shared mapping in /proc/self/maps at the end of its loop; sockets and pipes keep their buffers in the \
     kernel, so none)";

/// The case of each pattern whose buffers the table shows: of the report's cases of that
/// pattern (batch cases aside), the smallest messages with the most processes.
fn charted(view: &View) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for pattern in [Pattern::Stream, Pattern::Broadcast, Pattern::Queue, Pattern::Service] {
        let best = view.cases_of(pattern).min_by_key(|c| (c.size, std::cmp::Reverse(c.roles().len())));
        if let Some(c) = best {
            let title = match c.shape {
                Shape::Broadcast { subscribers, .. } => format!("broadcast to {subscribers}"),
                Shape::Queue { producers, consumers } => format!("work queue {producers}×{consumers}"),
                Shape::Service { clients, servers } => format!("service {clients}×{servers}"),
                _ => pattern.as_str().to_string(),
            };
            out.push((c.name, title));
        }
    }
    out
}

/// The shared memory a library maps in a case: the largest of its processes', in its better
/// receive mode's first run.
fn mapped(r: &CaseResult) -> Option<u64> {
    r.best()?.runs.first()?.roles.iter().filter_map(|x| x.shared_mapped_bytes).max()
}

pub fn mapped_table(view: &View) -> Table {
    let charted = charted(view);
    let header = std::iter::once("library".to_string()).chain(charted.iter().map(|c| c.1.clone())).collect();
    let rows = view
        .columns
        .iter()
        .map(|col @ (lib, s)| {
            std::iter::once(Cell::Text(view.column_label(col)))
                .chain(charted.iter().map(|(case, _)| match view.result(case, lib, *s) {
                    Some(r) if r.status == Status::Ok => {
                        Cell::Text(mapped(r).map_or("not recorded".into(), bytes))
                    }
                    Some(_) => Cell::Text("—".into()),
                    None => Cell::Empty,
                }))
                .collect()
        })
        .collect();
    Table { header, rows, notes: Vec::new() }
}

/// The host's idle driver and policy and its huge pages, as the run recorded them at its start.
fn host_policy(d: &Document) -> String {
    let Some(c) = d.conditions.as_ref() else { return "not recorded".into() };
    let idle = c.idle.clone().unwrap_or_else(|| "idle driver not exposed".into());
    let policy = c.idle_policy.as_ref().map_or(String::new(), |p| format!("; {p}"));
    let pages = c.huge_pages.as_ref().map_or(String::new(), |h| format!("; huge pages: {h}"));
    format!("idle driver {idle}{policy}{pages}")
}

/// What else ran beside a file's runs: over every run whose load was read, the others' cores
/// (median and most) and how many runs were loaded.
fn load_beside(d: &Document) -> String {
    let loads: Vec<crate::results::Load> =
        d.results.iter().flat_map(|r| &r.modes).flat_map(|m| &m.runs).filter_map(|run| run.load).collect();
    let Some(all) = crate::results::LoadSummary::of(loads.iter().copied()) else {
        return "not recorded".into();
    };
    let cpus = loads.iter().map(|l| l.cpus).max().unwrap_or(0);
    format!(
        "others took {:.2} of {cpus} cores (median; most {:.2}); {} of {} runs loaded (over {:.1} of a core)",
        all.others_cores,
        all.most,
        all.loaded,
        all.of,
        crate::results::LOADED
    )
}

pub fn machine_table(view: &View) -> Table {
    let header: Vec<String> = [
        "machine",
        "CPU",
        "cores",
        "memory",
        "OS",
        "kernel",
        "hypervisor",
        "topology",
        "clock source",
        "idle-core wake-up",
        "floors",
        "busy at start",
        "runs",
        "date",
        "toolchain",
    ]
    .map(String::from)
    .to_vec();
    // Files whose runs carry the host's probes: the states they showed (older files keep their
    // table as it was).
    let states = view.sources.iter().any(|s| !s.doc.states.is_empty());
    let mut header = header;
    // Files that record the host's idle policy and huge pages (older files keep their table).
    let host = view.sources.iter().any(|s| s.doc.conditions.as_ref().is_some_and(|c| c.huge_pages.is_some()));
    if host {
        header.push("idle and huge pages (the host's)".into());
    }
    if states {
        header.push("host states (runs' probes)".into());
    }
    // Files whose runs read the load beside their windows (older files keep their table).
    let loads = view.sources.iter().any(|s| s.doc.results.iter().any(|r| r.load.is_some()));
    if loads {
        header.push("load beside the runs".into());
    }
    let rows = view
        .sources
        .iter()
        .map(|s| {
            let (d, m) = (&s.doc, &s.doc.machine);
            [
                s.label.clone(),
                m.cpu_model.clone(),
                m.cores.to_string(),
                format!("{:.1} GiB", m.memory_bytes as f64 / (1u64 << 30) as f64),
                m.os.clone(),
                m.kernel.clone(),
                [m.hypervisor.clone(), m.container.clone()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(", "),
                m.topology.as_ref().map_or("not recorded".into(), |t| t.summary()),
                m.clocksource.clone().unwrap_or_else(|| "not recorded".into()),
                d.conditions
                    .as_ref()
                    .and_then(|c| c.wake_up_us)
                    .map_or("not recorded".into(), |w| format!("{:.1} µs (median)", w.median_us)),
                d.conditions.as_ref().and_then(|c| c.floors.as_ref()).map_or(
                    "not recorded".into(),
                    |start| match d.conditions.as_ref().and_then(|c| c.floors_after.as_ref()) {
                        Some(end) => {
                            format!("at the start: {}; at the end: {}", start.summary(), end.summary())
                        }
                        None => start.summary(),
                    },
                ),
                d.conditions.as_ref().map_or("not recorded".into(), |c| format!("{:.2} cores", c.busy_cores)),
                format!(
                    "{} of {} s after {} s of warm-up{}{}",
                    d.settings.config.runs_text(),
                    d.settings.config.duration.as_secs_f64(),
                    d.settings.config.warmup.as_secs_f64(),
                    d.settings.config.pin.map_or(String::new(), |p| format!("; {}", p.meaning())),
                    match d.settings.config.verify {
                        Verify::Sample => "; each message's header, last word and a rotating window checked",
                        Verify::Full => "",
                    }
                ),
                d.started.chars().take(10).collect(),
                d.toolchain.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join("; "),
            ]
            .into_iter()
            .chain(host.then(|| host_policy(d)))
            .chain(states.then(|| host_states(d)))
            .chain(loads.then(|| load_beside(d)))
            .map(Cell::Text)
            .collect()
        })
        .collect();
    Table { header, rows, notes: Vec::new() }
}

/// The host states a file's runs showed: each with its probe and its share of the runs.
pub fn host_states(d: &crate::results::Document) -> String {
    if d.states.is_empty() {
        return "not recorded".into();
    }
    d.states
        .iter()
        .map(|s| {
            format!(
                "{}: {} ({} runs, {})",
                s.label,
                s.probe.text(),
                s.runs,
                crate::format::whole_percent(s.share)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What the report says when no result recorded its channel's depth.
pub const NO_DEPTHS: &str = "Not recorded: this results file is older than the buffer records.";

/// What the depth table shows.
pub fn depth_note(view: &View) -> String {
    let asked: Vec<String> = view
        .sources
        .iter()
        .map(|s| match s.doc.settings.config.buffer {
            Some(b) => format!("{}: --buffer {}", s.label, bytes(b as u64)),
            None => format!("{}: each library's own defaults", s.label),
        })
        .collect();
    format!(
        "How much each library's channel holds between a sender and its receiver in the streams, as its \
         adapter set it up and read it back where the library lets one ({}). Messages where the library \
         counts them or they follow from the bytes; the kernel's sockets charge each write more than its \
         bytes.",
        asked.join("; ")
    )
}

/// The depth a result's channel had: the receiving role's report (or any role's), of the
/// better mode's first run.
fn depth(r: &CaseResult) -> Option<&BufferRecord> {
    let roles = &r.best()?.runs.first()?.roles;
    let receiving = roles.iter().filter(|x| !x.role.is_driving());
    receiving.chain(roles.iter()).find_map(|x| x.buffer.as_ref())
}

/// A row per library, a column per stream case: its depth in messages and bytes, and how it was
/// set (in the smallest case).
pub fn depth_table(view: &View) -> Table {
    let cases: Vec<String> = view.cases_of(Pattern::Stream).map(|c| c.name).collect();
    let header = std::iter::once("library".to_string())
        .chain(cases.iter().cloned())
        .chain(["how".to_string()])
        .collect();
    let mut rows = Vec::new();
    for col @ (lib, s) in &view.columns {
        let records: Vec<Option<&BufferRecord>> = cases
            .iter()
            .map(|c| view.result(c, lib, *s).filter(|r| r.status == Status::Ok).and_then(depth))
            .collect();
        let Some(how) = records.iter().flatten().next().map(|b| b.how.clone()) else { continue };
        let cells = records.iter().map(|b| {
            Cell::Text(match b {
                Some(b) => match (b.messages, b.bytes) {
                    (Some(m), Some(n)) => format!("{m} messages ({})", bytes(n as u64)),
                    (None, Some(n)) => bytes(n as u64),
                    (Some(m), None) => format!("{m} messages"),
                    (None, None) => "not set".into(),
                },
                None => "—".into(),
            })
        });
        let row = std::iter::once(Cell::Text(view.column_label(col))).chain(cells).chain([Cell::Text(how)]);
        rows.push(row.collect());
    }
    Table { header, rows, notes: Vec::new() }
}

/// Every library's name and version, in one line.
pub fn versions(view: &View) -> String {
    let versions: Vec<String> = view
        .libraries
        .iter()
        .filter_map(|id| view.library(id).map(|(l, _)| format!("{} {}", l.name, l.version)))
        .collect();
    format!("Versions: {}.", versions.join("; "))
}

/// Every run behind a result, each receive mode's on a line, and the median p99.
pub fn runs_text(r: &CaseResult) -> String {
    let mut lines = Vec::new();
    for m in &r.modes {
        let runs: Vec<String> = m.runs.iter().map(|run| figure_text(r.pattern, &run.figures)).collect();
        lines.push(format!("{}: {}", m.mode, runs.join(" | ")));
    }
    if let Some(p99) = r.median.as_ref().and_then(|f| f.p99_ns) {
        lines.push(format!("median p99 {}", nanos(p99)));
    }
    lines.join("\n")
}
