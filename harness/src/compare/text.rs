//! A comparison as the terminal, Markdown and JSON show it: both files, the method and the
//! notes above a table of every row, the counts under it.

use anyhow::Result;

use super::{Comparison, Side, VERDICT_RUNS, Verdict, value_text};
use crate::format::{nanos, whole_percent};
use crate::report::markdown;
use crate::report::model::{Cell, Table};
use crate::report::terminal;

/// A side's figure and the smallest change it tells: `1.20 M ±4%`.
fn resolved(value: String, resolution: Option<f64>) -> String {
    match resolution {
        Some(x) => format!("{value} {}", crate::format::resolution(x)),
        None => value,
    }
}

/// `+4.1%`, `-30.0%`.
fn signed(share: f64) -> String {
    format!("{:+.1}%", share * 100.0)
}

impl Comparison {
    /// Whether anything got slower (or costlier) beyond the threshold and the noise.
    pub fn slower(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == Verdict::Slower)
    }

    fn table(&self) -> Table {
        let header = [
            "case", "library", "mode", "figure", "OLD", "NEW", "change", "interval", "drift", "vs drift",
            "verdict",
        ];
        Table {
            header: header.map(String::from).to_vec(),
            rows: self
                .rows
                .iter()
                .map(|r| {
                    [
                        r.case.clone(),
                        r.library.clone(),
                        r.mode.clone(),
                        r.figure.name().into(),
                        resolved(value_text(r.figure, r.old), r.old_resolution),
                        resolved(value_text(r.figure, r.new), r.new_resolution),
                        signed(r.change),
                        format!("{} to {}", signed(r.low), signed(r.high)),
                        r.drift.map_or("-".into(), signed),
                        r.relative.map_or("-".into(), signed),
                        match r.verdict {
                            Verdict::WithinDrift => format!(
                                "within the sittings' drift ({}): use run --against",
                                crate::format::resolution(super::drift::margin(r))
                            ),
                            v => v.text(r.figure).into(),
                        },
                    ]
                    .map(Cell::Text)
                    .to_vec()
                })
                .collect(),
            notes: Vec::new(),
        }
    }

    /// The lines above the table: both files, the method, and the notes on noise.
    fn preamble(&self) -> Vec<String> {
        let file = |name: &str, s: &Side| {
            let floors = match (s.polling_floor_ns, s.waiting_floor_ns) {
                (Some(p), Some(w)) => format!("; floors {} polling, {} waiting", nanos(p), nanos(w)),
                _ => String::new(),
            };
            format!(
                "{name}: {} (started {}; {}; {} runs per case{floors})",
                s.path.display(),
                s.started,
                s.machine,
                s.runs
            )
        };
        let mut out = vec![file("OLD", &self.old), file("NEW", &self.new)];
        out.push(format!(
            "Each change is NEW against OLD with its {} interval ({}). A change beyond {} whose interval \
             leaves out zero is faster or slower; a smaller one is no change; a larger one whose interval \
             holds zero is no change within noise. Beside OLD and NEW, the smallest change each side's \
             figure tells on its own (±, docs/METHOD.md).",
            whole_percent(self.confidence),
            self.method,
            whole_percent(self.threshold)
        ));
        out.extend(self.notes.iter().cloned());
        out
    }

    /// The counts under the table.
    fn summary(&self) -> String {
        let count = |v: Verdict| self.rows.iter().filter(|r| r.verdict == v).count();
        let mut out = format!(
            "{} figures compared: {} faster (or cheaper), {} slower (or costlier), {} no change, {} no change within noise.",
            self.rows.len(),
            count(Verdict::Faster),
            count(Verdict::Slower),
            count(Verdict::NoChange),
            count(Verdict::WithinNoise)
        );
        if count(Verdict::WithinDrift) > 0 {
            out.push_str(&format!(
                " {} beyond the threshold but within the two sittings' drift: run --against tells them.",
                count(Verdict::WithinDrift)
            ));
        }
        if count(Verdict::TooFewRuns) > 0 {
            out.push_str(&format!(
                " {} beyond the threshold on fewer than {VERDICT_RUNS} runs a side (in their state): too few to tell.",
                count(Verdict::TooFewRuns)
            ));
        }
        if count(Verdict::NoSharedState) > 0 {
            out.push_str(&format!(
                " {} measured in no host state common to both files: no verdict.",
                count(Verdict::NoSharedState)
            ));
        }
        if !self.left_out.is_empty() {
            let shown: Vec<String> =
                self.left_out.iter().take(8).map(|(c, l, why)| format!("{c} {l} ({why})")).collect();
            let more = self.left_out.len().saturating_sub(shown.len());
            out.push_str(&format!(
                " Not compared, {}: {}{}.",
                self.left_out.len(),
                shown.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            ));
        }
        out
    }

    /// The sentence on the changes most libraries of a case share, if any.
    fn shared_text(&self) -> Option<String> {
        if self.shared.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .shared
            .iter()
            .map(|s| {
                format!(
                    "{} {} {} in {} of {} (median {})",
                    s.case,
                    s.figure.name(),
                    s.verdict.text(s.figure),
                    s.rows,
                    s.of,
                    signed(s.median_change)
                )
            })
            .collect();
        Some(format!(
            "Moved alike for most libraries, so more likely the machine's change than the libraries': {}.",
            each.join("; ")
        ))
    }

    pub fn terminal(&self) -> String {
        let mut out = self.preamble().join("\n");
        out.push_str("\n\n");
        out.push_str(&terminal::render(&self.table()));
        out.push_str("\n\n");
        out.push_str(&self.summary());
        if let Some(shared) = self.shared_text() {
            out.push_str(&format!("\n\n{shared}"));
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = String::from("# ipcbench compare\n\n");
        for line in self.preamble() {
            out.push_str(&format!("- {line}\n"));
        }
        out.push('\n');
        out.push_str(&markdown::render(&self.table()));
        out.push('\n');
        out.push_str(&self.summary());
        out.push('\n');
        if let Some(shared) = self.shared_text() {
            out.push_str(&format!("\n{shared}\n"));
        }
        out
    }

    pub fn json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}
