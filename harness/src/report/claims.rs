//! The comparison page beside this run: each library's version here and on the page with what
//! changed between them (`docs/claims.toml`), and each of the page's quantitative claims with
//! this run's figure for the same comparison and a verdict (`analysis::claims` computes them;
//! this words them). Of the view's first file: the page has one machine column to hold it to.

use super::View;
use super::faq::name;
use super::model::{Cell, Table};
use crate::analysis::claims::{self, Claim, ClaimKind, Measured, Outcome, PageData, Ratio, Reason, Verdict};
use crate::format::{ratio, whole_percent};

/// What the claims table holds, under it.
pub const CLAIMS: &str = "Each claim in the comparison page's words, its figure there, and this run's figure for \
     the same comparison: the tables' figures (each library in its better receive mode, in the case's host \
     state), then both libraries in the same receive mode. A range is the page's over its four platforms; a \
     figure for a platform is its Linux x86-64 column's. A count of the cases both ran is the one the \
     questions give (the oversubscribed set apart); a count of the fastest is over the page's own cases. \
     Reproduced: the claim holds here (a lead the same way and told apart, a count at least the page's \
     share). Within the page's range: a range claim's figure falls inside it. Where a claim does not hold, \
     the last column says what this run measured that would turn it (another receive mode or host state, \
     the page's own way of running, more processes than cores, the machine's wake-up), or that none of \
     these does.";

/// The version a library's record gives, up to its first space: `1.54.0`, `4.3.5`.
fn version_here<'a>(view: &View<'a>, id: &str) -> Option<&'a str> {
    let (l, _) = view.library(id)?;
    l.version.split(' ').next()
}

/// A row per library of the page's Versions line that the view has: its version here, the
/// page's, and what changed between them. None when the view has none of them.
pub fn versions_table(view: &View) -> Option<(Table, String)> {
    let data = claims::page_data().ok()?;
    let header = ["library", "here", "the page", "what changed between them that could matter"];
    let mut t = Table { header: header.map(String::from).to_vec(), ..Table::default() };
    for v in &data.versions {
        let Some(here) = version_here(view, &v.library) else { continue };
        t.rows.push(vec![
            Cell::Text(name(view, &v.library).to_string()),
            Cell::Text(here.to_string()),
            Cell::Text(v.page.clone()),
            Cell::Text(
                v.against(here)
                    .unwrap_or("Not looked into: no change log was read for this version.")
                    .to_string(),
            ),
        ]);
    }
    let note = format!(
        "The versions of the libraries {} compares, as this run's files record them and as its Versions \
         line gives them ({}). The libraries' own change logs say what changed.",
        data.page.name, data.page.cited
    );
    (!t.rows.is_empty()).then_some((t, note))
}

/// The claims table of the view's first file; None when it holds none of the claims' libraries.
pub fn claims_table(view: &View) -> Option<(Table, String)> {
    let data = claims::page_data().ok()?;
    let doc = &view.sources.first()?.doc;
    let outcomes = claims::outcomes(&data, doc);
    if outcomes.is_empty() {
        return None;
    }
    let header = ["the page says", "its figure", "here", "verdict", "why"];
    let mut t = Table { header: header.map(String::from).to_vec(), ..Table::default() };
    for o in &outcomes {
        t.rows.push(vec![
            Cell::Text(o.claim.said.clone()),
            Cell::Text(page_figure(view, o.claim)),
            Cell::Text(here(view, o)),
            Cell::Text(verdict(o.verdict).into()),
            Cell::Text(why(view, &data, doc, o)),
        ]);
    }
    let note = format!("Against {}: {}. {}", data.page.name, data.page.cited, CLAIMS);
    Some((t, note))
}

/// The most readings in another receive mode or host state a claim's reasons give.
const TURNS: usize = 3;

fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Reproduced => "reproduced",
        Verdict::Within => "within the page's range",
        Verdict::NotReproduced => "not reproduced",
    }
}

/// The page's figure for a claim, short.
fn page_figure(view: &View, c: &Claim) -> String {
    match c.kind {
        ClaimKind::Top => format!("{} of {}", c.top.unwrap_or(0), c.of.unwrap_or(0)),
        ClaimKind::Every => format!("faster in all {}", c.of.unwrap_or(0)),
        ClaimKind::Range => format!("{}–{}×", ratio(c.low.unwrap_or(0.0)), ratio(c.high.unwrap_or(0.0))),
        ClaimKind::Lead => {
            let by = c.by.map(|b| format!(" by {}", whole_percent(b))).unwrap_or_default();
            format!("{}{by}", name(view, &c.a))
        }
    }
}

/// One ratio as the claim reads it: `204×`, or for a lead, who leads and by how much.
fn reading(view: &View, c: &Claim, x: f64) -> String {
    if c.kind == ClaimKind::Range {
        return format!("{}×", ratio(x));
    }
    let b = c.b.as_deref().unwrap_or_default();
    if x >= 1.0 {
        format!("{} by {}", name(view, &c.a), whole_percent(x - 1.0))
    } else {
        format!("{} by {}", name(view, b), whole_percent(1.0 / x - 1.0))
    }
}

/// A case's ratio here: the judged figure, then each same-mode reading.
fn ratio_text(view: &View, c: &Claim, r: &Ratio, named: bool) -> String {
    let mut text = if named { format!("{}: ", r.case) } else { String::new() };
    text.push_str(&reading(view, c, r.judged()));
    if let (Some(_), Some(m)) = (r.page_method, c.b_mode()) {
        let b = c.b.as_deref().unwrap_or_default();
        text.push_str(&format!(
            " against {} {}, as the page ran it ({} against its better mode)",
            name(view, b),
            m.as_str(),
            reading(view, c, r.counted)
        ));
    }
    if r.level && c.kind != ClaimKind::Range {
        text.push_str(", level (within noise)");
    }
    let modes: Vec<String> =
        r.modes.iter().map(|(m, x)| format!("both {} {}", m.as_str(), reading(view, c, *x))).collect();
    if !modes.is_empty() {
        text.push_str(&format!(" ({})", modes.join(", ")));
    }
    text
}

/// This run's figure for a claim.
fn here(view: &View, o: &Outcome) -> String {
    let c = o.claim;
    match &o.measured {
        // Its scope is the page's own table, and says so: not the cases both ran.
        Measured::Top { top, ran, oversubscribed } => {
            format!("{top} of {ran} of the page's cases{}", left_out(oversubscribed.len()))
        }
        Measured::Ratios { ratios, oversubscribed } if c.kind == ClaimKind::Every => {
            let wins = ratios.iter().filter(|r| r.counted > 1.0 && !r.level).count();
            let level: Vec<&str> = ratios.iter().filter(|r| r.level).map(|r| r.case.as_str()).collect();
            let slower: Vec<&str> =
                ratios.iter().filter(|r| r.counted <= 1.0 && !r.level).map(|r| r.case.as_str()).collect();
            let mut text = format!("faster in {wins} of the {} cases both ran", ratios.len());
            if !level.is_empty() {
                text.push_str(&format!("; level in {}", level.join(", ")));
            }
            if !slower.is_empty() {
                text.push_str(&format!("; slower in {}", slower.join(", ")));
            }
            text.push_str(&left_out(oversubscribed.len()));
            text
        }
        Measured::Ratios { ratios, .. } => {
            let named = ratios.len() > 1;
            ratios.iter().map(|r| ratio_text(view, c, r, named)).collect::<Vec<_>>().join("; ")
        }
    }
}

fn left_out(n: usize) -> String {
    if n == 0 { String::new() } else { format!(" ({n} oversubscribed left out)") }
}

/// A state's probe in words: its polling floor.
fn state_words(doc: &crate::results::Document, state: &str) -> String {
    let floor = doc.states.iter().find(|s| s.label == state).and_then(|s| s.probe.polling_ns);
    match floor {
        Some(ns) => format!("state {state} (polling floor {})", crate::format::nanos(ns)),
        None => format!("state {state}"),
    }
}

/// What the run measured that bears on a claim that did not hold, in words.
fn why(view: &View, data: &PageData, doc: &crate::results::Document, o: &Outcome) -> String {
    if o.verdict != Verdict::NotReproduced {
        return String::new();
    }
    let c = o.claim;
    let b = c.b.as_deref().unwrap_or_default();
    // Another mode or state per failing case: the first few, then how many more.
    let turned = |r: &&Reason| matches!(r, Reason::Mode { .. } | Reason::State { .. });
    let many = o.reasons.iter().filter(turned).count();
    let mut seen = 0;
    let shown = o.reasons.iter().filter(|r| {
        seen += usize::from(turned(r));
        !turned(r) || seen <= TURNS
    });
    let mut said: Vec<String> = shown
        .map(|r| match r {
            Reason::Mode { case, mode, value } => {
                format!("receive mode: with both {}, {case} reads {}", mode.as_str(), reading(view, c, *value))
            }
            Reason::State { case, state, value } => {
                let counted = match &o.measured {
                    Measured::Ratios { ratios, .. } => {
                        ratios.iter().find(|x| &x.case == case).and_then(|x| x.state.clone())
                    }
                    Measured::Top { .. } => None,
                };
                let from = counted.map(|s| format!(", where the table's figure is from {}", state_words(doc, &s)));
                format!(
                    "host state: in {}, {case} reads {}{}",
                    state_words(doc, state),
                    reading(view, c, *value),
                    from.unwrap_or_default()
                )
            }
            Reason::Method { case, value } => format!(
                "method: against {}'s better receive mode rather than the page's, {case} reads {}",
                name(view, b),
                reading(view, c, *value)
            ),
            Reason::Cores { cases } => format!(
                "core count: {} need more processes than this machine's {} cores",
                cases.join(", "),
                doc.machine.cores
            ),
            Reason::Level { cases } => {
                format!("noise: {} can't be told apart from its rival here", cases.join(", "))
            }
            Reason::WakeUp { here_us, page_us } => format!(
                "wake-up: an idle core woke in {here_us:.1} µs here (at the run's start), about {page_us:.0} µs \
                 on the page's machine, which the page says costs most the libraries that hand each message \
                 between threads"
            ),
            Reason::Leaders(leaders) => {
                let led: Vec<String> = leaders.iter().map(|(l, n)| format!("{} in {n}", name(view, l))).collect();
                format!("led instead by {}", led.join(", "))
            }
        })
        .collect();
    if many > TURNS {
        said.push(format!("and {} more cases turn in another receive mode or host state", many - TURNS));
    }
    let measured = o.reasons.iter().any(|r| !matches!(r, Reason::Leaders(_)));
    if !measured {
        let mut versions = Vec::new();
        for id in [Some(c.a.as_str()), c.b.as_deref()].into_iter().flatten() {
            let page = data.versions.iter().find(|v| v.library == id).map(|v| v.page.as_str());
            if let (Some(here), Some(page)) = (version_here(view, id), page)
                && here != page
            {
                versions.push(format!("{} {here} here, {page} there", name(view, id)));
            }
        }
        let versions = if versions.is_empty() {
            "the same versions".to_string()
        } else {
            format!("versions differ ({}), not measured apart", versions.join("; "))
        };
        said.push(format!(
            "no receive mode, host state or core count of this run turns it: the machines differ (the page's: {}), \
             {versions}",
            data.page.column
        ));
    }
    said.join("; ")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::report::Source;

    /// Over the reference run: a row per claim whose libraries it has, each with a verdict; a
    /// claim that did not hold says why, one that held says nothing; the versions table has a
    /// row per library of the page's Versions line that the run has, each with what changed.
    #[test]
    fn each_claim_has_a_verdict_and_a_failed_one_a_reason() {
        let source = Source::committed(crate::report::readme::REFERENCE);
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let data = claims::page_data().unwrap();
        let (t, _) = claims_table(&view).unwrap();
        assert_eq!(t.rows.len(), data.claims.len());
        for row in &t.rows {
            let text = |i: usize| match &row[i] {
                Cell::Text(t) => t.clone(),
                _ => panic!("a text cell"),
            };
            let v = text(3);
            assert!(["reproduced", "within the page's range", "not reproduced"].contains(&v.as_str()), "{v}");
            assert_eq!(v == "not reproduced", !text(4).is_empty(), "{}: {}", text(0), text(4));
            assert!(!text(2).is_empty());
        }
        // Every library of the reference run has its version's change log read.
        let (v, _) = versions_table(&view).unwrap();
        assert_eq!(v.rows.len(), data.versions.len());
        for row in &v.rows {
            assert!(matches!(&row[3], Cell::Text(t) if !t.starts_with("Not looked into")), "{:?}", row[0]);
        }
    }
}
