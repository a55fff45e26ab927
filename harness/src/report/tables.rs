//! The report's tables (Markdown), its head-to-head summaries and the CSV of the medians.

use std::collections::BTreeMap;

use super::charts::Chart;
use super::{Rank, View, goodness};
use crate::results::CaseResult;
use crate::table::{cell, nanos};

/// Markdown-safe: a `|` inside a cell would split it.
fn md(text: &str) -> String {
    text.replace('|', "\\|")
}

/// A table as Markdown; cells are plain text.
fn render(header: &[String], rows: &[Vec<String>]) -> String {
    let line = |cells: &[String]| cells.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | ");
    let mut out = format!("| {} |\n|{}|\n", line(header), vec!["---"; header.len()].join("|"));
    for r in rows {
        out.push_str(&format!("| {} |\n", line(r)));
    }
    out
}

/// A table's header and rows, plain text, for Markdown and HTML alike.
pub type Rows = (Vec<String>, Vec<Vec<String>>);

/// The footnotes of the dashes: each distinct reason once, numbered.
#[derive(Default)]
pub struct Footnotes(Vec<String>);

impl Footnotes {
    pub fn mark(&mut self, text: String) -> usize {
        match self.0.iter().position(|t| *t == text) {
            Some(i) => i + 1,
            None => {
                self.0.push(text);
                self.0.len()
            }
        }
    }

    pub fn list(&self) -> impl Iterator<Item = (usize, &String)> {
        self.0.iter().enumerate().map(|(i, t)| (i + 1, t))
    }
}

/// A result's cell, marked: **bold** the fastest of its row, `≈` level with it, `*`
/// oversubscribed, `†` a note, `—ⁿ` a dash with footnote n.
pub fn result_cell(view: &View, r: Option<&CaseResult>, source: usize, notes: &mut Footnotes) -> String {
    let Some(r) = r else { return String::new() };
    let marks = r.marks();
    match (r.status.as_str(), &r.median) {
        ("ok", Some(f)) => {
            let text = cell(&r.pattern, f);
            match view.rank(r, source) {
                Some(Rank::Fastest) => format!("**{text}**{marks}"),
                Some(Rank::Level) => format!("≈ {text}{marks}"),
                _ => format!("{text}{marks}"),
            }
        }
        ("unsupported", _) => {
            let n = notes.mark(format!("{}: {}", r.library, r.reason.as_deref().unwrap_or("")));
            format!("— [{n}]")
        }
        (status, _) => {
            let n = notes.mark(format!(
                "{} {} {status}: {}",
                r.library,
                r.case,
                r.reason.as_deref().unwrap_or("")
            ));
            format!("{} [{n}]", status.to_uppercase())
        }
    }
}

/// The case-by-case table's rows, and the footnotes of its dashes.
pub fn case_rows(view: &View) -> (Rows, Footnotes) {
    let mut notes = Footnotes::default();
    let header: Vec<String> = std::iter::once("case".to_string())
        .chain(view.columns.iter().map(|c| view.column_label(c)))
        .collect();
    let rows: Vec<Vec<String>> = view
        .cases
        .iter()
        .map(|case| {
            std::iter::once(case.clone())
                .chain(
                    view.columns
                        .iter()
                        .map(|(lib, s)| result_cell(view, view.result(case, lib, *s), *s, &mut notes)),
                )
                .collect()
        })
        .collect();
    ((header, rows), notes)
}

pub const LEGEND: &str = "bold: the fastest in its row (on its machine); ≈: level with the fastest (the two \
     results' runs overlap, see docs/METHOD.md); ~: noisy (its runs spread more than 10% of the median); !: \
     another ipcbench run was running; *: oversubscribed (more processes than cores); †: every \
     server answered every request (they do not share a load). Rates are messages (or calls) per second; a \
     round trip shows its p50 and p99.";

fn case_table(view: &View) -> String {
    let ((header, rows), notes) = case_rows(view);
    let mut out = render(&header, &rows);
    out.push_str(
        "\n**Bold**: the fastest in its row (on its machine); ≈: level with the fastest (the two results' \
         runs overlap, see docs/METHOD.md); ~: noisy (its runs spread more than 10% of the median); !: \
         another ipcbench run was running; \\*: oversubscribed (more processes than cores); †: every \
         server answered every request (they do not share a load). Rates are messages (or calls) per \
         second; a round trip shows its p50 and p99.\n\n",
    );
    for (n, text) in notes.list() {
        out.push_str(&format!("[{n}] {}  \n", md(text)));
    }
    out
}

pub fn capability_rows(view: &View) -> Rows {
    const PATTERNS: [(&str, &str); 7] = [
        ("stream", "stream"),
        ("stream-rtt", "round trip"),
        ("broadcast/lossless", "broadcast lossless"),
        ("broadcast/lossy", "broadcast lossy"),
        ("queue", "work queue"),
        ("service", "service"),
        ("batch", "batch calls"),
    ];
    let header: Vec<String> =
        std::iter::once("library".to_string()).chain(PATTERNS.map(|p| p.1.to_string())).collect();
    let mut rows = Vec::new();
    for id in &view.libraries {
        let Some((lib, _)) = view.library(id) else { continue };
        let mut row = vec![format!("{id}: {} {}", lib.name, lib.version)];
        for (key, _) in PATTERNS {
            row.push(match lib.capabilities.get(key) {
                Some(c) if c.supported => c.text.clone(),
                Some(c) => format!("— {}", c.text),
                None => String::new(),
            });
        }
        rows.push(row);
    }
    (header, rows)
}

/// The charted case of each pattern, whose shared mappings the buffers table shows.
const CHARTED: [(&str, &str); 4] = [
    ("stream/16B", "stream"),
    ("broadcast/lossless/4sub/16B", "broadcast to 4"),
    ("queue/4x4/16B", "work queue 4×4"),
    ("service/4c4s/16B", "service 4×4"),
];

/// The shared memory a library maps in a case: the largest of its processes', in its faster
/// receive mode's first run.
fn mapped(r: &CaseResult) -> Option<u64> {
    let mode = r.modes.iter().find(|m| Some(&m.mode) == r.best_mode.as_ref())?;
    mode.runs.first()?.roles.iter().filter_map(|x| x.shared_mapped_bytes).max()
}

fn bytes(n: u64) -> String {
    match n {
        0 => "none".into(),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n => format!("{:.0} KiB", n as f64 / 1024.0),
    }
}

pub fn mapped_rows(view: &View) -> Rows {
    let header = std::iter::once("library".to_string()).chain(CHARTED.map(|c| c.1.to_string())).collect();
    let rows = view
        .columns
        .iter()
        .map(|col @ (lib, s)| {
            std::iter::once(view.column_label(col))
                .chain(CHARTED.iter().map(|(case, _)| match view.result(case, lib, *s) {
                    Some(r) if r.status == "ok" => mapped(r).map_or("not recorded".into(), bytes),
                    Some(_) => "—".into(),
                    None => String::new(),
                }))
                .collect()
        })
        .collect();
    (header, rows)
}

fn buffers_table(view: &View) -> String {
    let (h, rows) = mapped_rows(view);
    let mut out = String::from(
        "Shared memory mapped by the library's largest process in each charted case (every shared \
         mapping in /proc/self/maps at the end of its loop; sockets and pipes keep their buffers in \
         the kernel, so none):\n\n",
    );
    out.push_str(&render(&h, &rows));
    out.push_str("\nEach library's buffers, rings and settings, as the run recorded them:\n\n");
    for id in &view.libraries {
        let Some((lib, _)) = view.library(id) else { continue };
        out.push_str(&format!("**{id}** (receive modes: {})  \n", lib.receive_modes.join(", ")));
        for (k, v) in &lib.configuration {
            out.push_str(&format!("- {}: {}\n", md(k), md(v)));
        }
        out.push('\n');
    }
    out
}

pub fn machine_rows(view: &View) -> Rows {
    let header: Vec<String> = [
        "machine",
        "CPU",
        "cores",
        "memory",
        "OS",
        "kernel",
        "hypervisor",
        "idle-core wake-up",
        "busy at start",
        "runs",
        "date",
        "toolchain",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = view
        .sources
        .iter()
        .map(|s| {
            let (d, m) = (&s.doc, &s.doc.machine);
            vec![
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
                d.conditions
                    .as_ref()
                    .and_then(|c| c.wake_up_us)
                    .map_or("not recorded".into(), |w| format!("{:.1} µs (median)", w.median_us)),
                d.conditions.as_ref().map_or("not recorded".into(), |c| format!("{:.2} cores", c.busy_cores)),
                format!(
                    "{} of {} s after {} s of warm-up",
                    d.settings.runs, d.settings.duration_s, d.settings.warmup_s
                ),
                d.started.chars().take(10).collect(),
                d.toolchain.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join("; "),
            ]
        })
        .collect();
    (header, rows)
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

/// Per library on one machine: (rows it ran in, rows where it was the fastest or level).
fn standings(view: &View) -> BTreeMap<(usize, String), (usize, usize)> {
    let mut out = BTreeMap::new();
    for (lib, s) in &view.columns {
        for case in &view.cases {
            let Some(r) = view.result(case, lib, *s) else { continue };
            let Some(rank) = view.rank(r, *s) else { continue };
            let e: &mut (usize, usize) = out.entry((*s, lib.clone())).or_default();
            e.0 += 1;
            if rank != Rank::Behind {
                e.1 += 1;
            }
        }
    }
    out
}

/// The head-to-head summaries, in the seed's form, computed from the results.
pub fn summaries(view: &View) -> Vec<String> {
    let standing = standings(view);
    let mut lines = Vec::new();
    for (i, s) in view.sources.iter().enumerate() {
        let on = if view.sources.len() > 1 { format!(" on {}", s.label) } else { String::new() };
        let mut ranked: Vec<(&String, (usize, usize))> =
            standing.iter().filter(|((src, _), _)| *src == i).map(|((_, l), v)| (l, *v)).collect();
        ranked.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        for (lib, (ran, top)) in &ranked {
            lines.push(format!("{lib} is the fastest, or level with the fastest, in {top} of the {ran} measurements where it ran{on}."));
        }
    }
    // Every pair against the library that leads most often, over every machine together.
    let mut lead: BTreeMap<&String, usize> = BTreeMap::new();
    for ((_, l), (_, top)) in &standing {
        *lead.entry(l).or_default() += top;
    }
    let Some(leader) = lead.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(l, _)| (*l).clone())
    else {
        return lines;
    };
    for other in view.libraries.iter().filter(|l| **l != leader) {
        let (mut both, mut wins) = (0, 0);
        let mut rtt: Vec<f64> = Vec::new();
        for (i, _) in view.sources.iter().enumerate() {
            for case in &view.cases {
                let (Some(a), Some(b)) = (view.result(case, &leader, i), view.result(case, other, i)) else {
                    continue;
                };
                let (Some(x), Some(y)) = (
                    a.median.as_ref().and_then(|f| goodness(&a.pattern, f)),
                    b.median.as_ref().and_then(|f| goodness(&b.pattern, f)),
                ) else {
                    continue;
                };
                if a.status != "ok" || b.status != "ok" {
                    continue;
                }
                both += 1;
                if x > y {
                    wins += 1;
                }
                if case == "stream-rtt/16B" {
                    rtt.push(x / y);
                }
            }
        }
        if both == 0 {
            continue;
        }
        let mut line =
            format!("{leader} is faster than {other} in {wins} of the {both} measurements where both ran");
        if !rtt.is_empty() {
            // Said of whichever is quicker, as "N times as quick".
            let (quick, slow, ratios): (&str, &str, Vec<f64>) = if rtt.iter().sum::<f64>() >= rtt.len() as f64
            {
                (&leader, other, rtt)
            } else {
                (other, &leader, rtt.iter().map(|x| 1.0 / x).collect())
            };
            let lo = ratios.iter().copied().fold(f64::MAX, f64::min);
            let hi = ratios.iter().copied().fold(f64::MIN, f64::max);
            let fmt = |x: f64| if x >= 10.0 { format!("{x:.0}") } else { format!("{x:.1}") };
            let span = if fmt(lo) == fmt(hi) { fmt(lo) } else { format!("{} to {}", fmt(lo), fmt(hi)) };
            line.push_str(&format!(
                "; a 16-byte round trip (p50) is {span} times as quick with {quick} as with {slow}"
            ));
        }
        line.push('.');
        lines.push(line);
    }
    lines
}

pub fn markdown(view: &View, charts: &[Chart]) -> String {
    let mut out = String::from("# ipcbench report\n\nRebuilt from ");
    let files: Vec<String> =
        view.sources.iter().map(|s| format!("`{}` ({})", s.path.display(), s.label)).collect();
    out.push_str(&files.join(", "));
    out.push_str(" by `ipcbench report`.\n\n## Summary\n\n");
    for line in summaries(view) {
        out.push_str(&format!("- {line}\n"));
    }
    out.push_str("\n## Case by case\n\n");
    out.push_str(&case_table(view));
    out.push_str("\n## Charts\n\n");
    for c in charts {
        out.push_str(&format!("![{}](charts/{}.png)\n\n", c.title, c.name));
    }
    out.push_str("## Capabilities\n\nWhich patterns each library has, and how its messages travel.\n\n");
    let (h, rows) = capability_rows(view);
    out.push_str(&render(&h, &rows));
    out.push_str("\n## Buffers and configuration\n\n");
    out.push_str(&buffers_table(view));
    out.push_str("## Machines\n\n");
    let (h, rows) = machine_rows(view);
    out.push_str(&render(&h, &rows));
    out.push_str(&format!("\n{}\n", md(&versions(view))));
    out
}

/// Every result as one CSV line (RFC 4180 quoting).
pub fn csv(view: &View) -> String {
    let q = |s: &str| {
        if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
    };
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let mut out = String::from(
        "machine,case,pattern,size,batch,library,status,best_mode,msgs_per_s,p50_ns,p99_ns,lost_share,spread_relative,processes,oversubscribed,reason\n",
    );
    for s in view.sources {
        for r in &s.doc.results {
            let f = r.median;
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                q(&s.label),
                q(&r.case),
                r.pattern,
                r.size,
                r.batch.map(|b| b.to_string()).unwrap_or_default(),
                q(&r.library),
                r.status,
                r.best_mode.as_deref().unwrap_or(""),
                num(f.map(|f| f.msgs_per_s)),
                num(f.and_then(|f| f.p50_ns)),
                num(f.and_then(|f| f.p99_ns)),
                num(f.and_then(|f| f.lost_share)),
                num(r.spread.as_ref().map(|s| s.relative)),
                r.processes,
                r.oversubscribed,
                q(r.reason.as_deref().unwrap_or("")),
            ));
        }
    }
    out
}

/// The figure of a cell as the HTML page's tooltip shows it: every run, and the configuration.
pub fn runs_text(r: &CaseResult) -> String {
    let mut lines = Vec::new();
    for m in &r.modes {
        let runs: Vec<String> = m.runs.iter().map(|run| cell(&r.pattern, &run.figures)).collect();
        lines.push(format!("{}: {}", m.mode, runs.join(" | ")));
    }
    if let Some(f) = &r.median
        && let Some(p99) = f.p99_ns
    {
        lines.push(format!("median p99 {}", nanos(p99)));
    }
    lines.join("\n")
}
