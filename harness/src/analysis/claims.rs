//! The comparison page's claims held against a run: each claim's figure here, from the results
//! alone (the tables' figures, each receive mode both sides ran, each other host state both
//! sides ran in), its verdict, and where it does not hold, what the run measured that would
//! make it hold. The page's own figures are `docs/claims.toml`'s (compiled in); nothing here
//! words anything: report/claims.rs does.

use anyhow::{Context, Result, bail};
use ipcbench_api::{RecvMode, Transfer};
use serde::Deserialize;

use super::{Rank, goodness, level, median_goodness, rank, standings};
use crate::results::{CaseResult, Document, Status};

/// The page's figures, as `docs/claims.toml` holds them.
const DATA: &str = include_str!("../../../docs/claims.toml");

#[derive(Debug, Deserialize)]
pub struct PageData {
    pub page: PageFacts,
    pub versions: Vec<PageVersion>,
    /// The cases of the page's case-by-case table.
    pub page_cases: Vec<String>,
    /// The page's libraries: the rivals a `top` claim counts among.
    pub page_libraries: Vec<String>,
    pub claims: Vec<Claim>,
}

#[derive(Debug, Deserialize)]
pub struct PageFacts {
    pub name: String,
    pub cited: String,
    pub column: String,
    /// The thread wake-up the page states for its Linux x86-64 machine.
    pub wake_up_us: f64,
}

#[derive(Debug, Deserialize)]
pub struct PageVersion {
    pub library: String,
    pub page: String,
    /// What to say when the run has the page's version.
    #[serde(default)]
    pub same: Option<String>,
    /// For each other version this project has run, what changed between it and the page's.
    #[serde(default)]
    pub changes: std::collections::BTreeMap<String, String>,
}

impl PageVersion {
    /// What changed between `here` and the page's version, as the data says; None where it
    /// says nothing of `here`.
    pub fn against(&self, here: &str) -> Option<&str> {
        match self.same.as_deref() {
            Some(same) if here == self.page => Some(same),
            _ => self.changes.get(here).map(String::as_str),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    Top,
    Every,
    Range,
    Lead,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Factor {
    WakeUp,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub kind: ClaimKind,
    pub said: String,
    pub a: String,
    pub b: Option<String>,
    #[serde(default)]
    pub cases: Vec<String>,
    pub top: Option<usize>,
    pub of: Option<usize>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub by: Option<f64>,
    pub b_mode: Option<String>,
    pub factor: Option<Factor>,
}

impl Claim {
    /// The receive mode the page ran `b` in, where it says.
    pub fn b_mode(&self) -> Option<RecvMode> {
        self.b_mode.as_deref().and_then(RecvMode::parse)
    }
}

/// The page's data, checked: every claim has what its kind needs.
pub fn page_data() -> Result<PageData> {
    let data: PageData = toml::from_str(DATA).context("docs/claims.toml (compiled in) does not parse")?;
    for c in &data.claims {
        let ok = match c.kind {
            ClaimKind::Top => c.top.is_some() && c.of.is_some(),
            ClaimKind::Every => c.b.is_some() && c.of.is_some(),
            ClaimKind::Range => c.b.is_some() && c.low.is_some() && c.high.is_some() && !c.cases.is_empty(),
            ClaimKind::Lead => c.b.is_some() && !c.cases.is_empty(),
        };
        if !ok || (c.b_mode.is_some() && c.b_mode().is_none()) {
            bail!("docs/claims.toml: the claim {:?} lacks what a {:?} claim needs", c.said, c.kind);
        }
    }
    Ok(data)
}

/// `a`'s goodness over `b`'s in one case (a rate over a rate, a time's inverse).
#[derive(Clone, Debug)]
pub struct Ratio {
    pub case: String,
    /// The tables' figures: each side's counted receive mode, in its host state.
    pub counted: f64,
    /// `a`'s counted figure against `b` in the mode the page ran it in, where the claim says.
    pub page_method: Option<f64>,
    /// Both sides in the same receive mode, each mode both ran.
    pub modes: Vec<(RecvMode, f64)>,
    /// The counted figures' host state, and the ratio in every other state both ran in.
    pub state: Option<String>,
    pub states: Vec<(String, f64)>,
    /// More processes than cores, for either side.
    pub oversubscribed: bool,
    /// The two can't be told apart (`analysis::level`).
    pub level: bool,
}

impl Ratio {
    /// The figure a verdict is on: the page's way of running where the claim gives one.
    pub fn judged(&self) -> f64 {
        self.page_method.unwrap_or(self.counted)
    }
}

/// A passed copy result of a case and library in the file.
fn find<'a>(doc: &'a Document, case: &str, lib: &str) -> Option<&'a CaseResult> {
    doc.results.iter().find(|r| {
        r.case == case && r.library == lib && r.transfer == Transfer::Copy && r.status == Status::Ok
    })
}

fn mode_goodness(r: &CaseResult, mode: RecvMode) -> Option<f64> {
    goodness(r.pattern, r.modes.iter().find(|m| m.mode == mode)?.median.as_ref()?)
}

fn state_goodness(r: &CaseResult, state: &str) -> Option<f64> {
    let s = r.host_state.as_ref()?.others.iter().find(|o| o.state == state)?;
    goodness(r.pattern, &s.median)
}

/// `a` against `b` in `case`, or None when either lacks a passed result there.
pub fn ratio(doc: &Document, case: &str, a: &str, b: &str, b_mode: Option<RecvMode>) -> Option<Ratio> {
    ratio_of(find(doc, case, a)?, find(doc, case, b)?, b_mode)
}

/// One case's ratio of two passed results, `a`'s and `b`'s.
fn ratio_of(ra: &CaseResult, rb: &CaseResult, b_mode: Option<RecvMode>) -> Option<Ratio> {
    let (ga, gb) = (median_goodness(ra)?, median_goodness(rb)?.max(f64::MIN_POSITIVE));
    let over = |x: Option<f64>, y: Option<f64>| Some(x? / y.filter(|y| *y > 0.0)?);
    let modes = RecvMode::ALL
        .into_iter()
        .filter_map(|m| Some((m, over(mode_goodness(ra, m), mode_goodness(rb, m))?)))
        .collect();
    let others: Vec<String> = ra
        .host_state
        .iter()
        .flat_map(|s| &s.others)
        .map(|o| o.state.clone())
        .filter(|s| s != super::states::MOVED)
        .collect();
    let states = others
        .into_iter()
        .filter_map(|s| {
            let x = over(state_goodness(ra, &s), state_goodness(rb, &s))?;
            Some((s, x))
        })
        .collect();
    Some(Ratio {
        case: ra.case.clone(),
        counted: ga / gb,
        page_method: b_mode.and_then(|m| over(Some(ga), mode_goodness(rb, m))),
        modes,
        state: ra.state().map(str::to_string),
        states,
        oversubscribed: ra.oversubscribed || rb.oversubscribed,
        level: level(ra, rb),
    })
}

/// How a claim came out here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// What the page says holds here (a count at least the page's share, a lead the same way).
    Reproduced,
    /// A range claim's figure falls within the page's range.
    Within,
    NotReproduced,
}

/// What the run measured that bears on a claim that did not hold.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// With both sides in this receive mode, the claim holds in `case` (the ratio).
    Mode { case: String, mode: RecvMode, value: f64 },
    /// In this other host state, the claim holds in `case`.
    State { case: String, state: String, value: f64 },
    /// With `b` run in its better mode, not the page's, the claim holds in `case`.
    Method { case: String, value: f64 },
    /// These cases need more processes than this machine has cores.
    Cores { cases: Vec<String> },
    /// The two can't be told apart in these cases.
    Level { cases: Vec<String> },
    /// The page says its machine's thread wake-up weighs on this figure: here and there.
    WakeUp { here_us: f64, page_us: f64 },
    /// Who led the measurements `a` did not: each library and how many.
    Leaders(Vec<(String, usize)>),
}

/// A claim's figure here.
#[derive(Clone, Debug)]
pub enum Measured {
    /// `top` of `ran` of the page's cases fastest or level among the page's libraries; the
    /// oversubscribed ones left out.
    Top { top: usize, ran: usize, oversubscribed: Vec<String> },
    /// A ratio per case: for `every`, per case both ran as the questions count them
    /// (`standings::both_ran`), the oversubscribed ones set apart; for the others, per case the
    /// claim names.
    Ratios { ratios: Vec<Ratio>, oversubscribed: Vec<String> },
}

#[derive(Clone, Debug)]
pub struct Outcome<'c> {
    pub claim: &'c Claim,
    pub measured: Measured,
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
}

/// Whether a ratio says what the claim does (a range claim: within it; any other: `a` ahead and
/// told apart from `b`).
fn holds(claim: &Claim, x: f64, told_apart: bool) -> bool {
    match (claim.kind, claim.low, claim.high) {
        (ClaimKind::Range, Some(lo), Some(hi)) => (lo..=hi).contains(&x),
        _ => x > 1.0 && told_apart,
    }
}

/// Every claim whose libraries both are in the file, held against it.
pub fn outcomes<'c>(data: &'c PageData, doc: &Document) -> Vec<Outcome<'c>> {
    let has = |id: &str| doc.libraries.iter().any(|l| l.id == id);
    let wake = doc.conditions.as_ref().and_then(|c| c.wake_up_us.as_ref()).map(|w| w.median_us);
    data.claims
        .iter()
        .filter(|c| has(&c.a) && c.b.as_deref().is_none_or(has))
        .filter_map(|c| match c.kind {
            ClaimKind::Top => top(data, doc, c),
            _ => ratios(data, doc, c, wake),
        })
        .collect()
}

/// A `top` claim: `a` ranked among the page's libraries in each of the page's cases.
fn top<'c>(data: &'c PageData, doc: &Document, claim: &'c Claim) -> Option<Outcome<'c>> {
    let (mut won, mut ran, mut over) = (0, 0, Vec::new());
    let mut leaders: Vec<(String, usize)> = Vec::new();
    for case in &data.page_cases {
        let Some(mine) = find(doc, case, &claim.a) else { continue };
        if mine.oversubscribed {
            over.push(case.clone());
            continue;
        }
        let row: Vec<&CaseResult> = data.page_libraries.iter().filter_map(|l| find(doc, case, l)).collect();
        let Some(place) = rank(mine, row.iter().copied()) else { continue };
        ran += 1;
        if place != Rank::Behind {
            won += 1;
            continue;
        }
        let best = row
            .iter()
            .filter_map(|r| Some((*r, median_goodness(r)?)))
            .reduce(|x, y| if y.1 > x.1 { y } else { x });
        if let Some((best, _)) = best {
            match leaders.iter_mut().find(|(l, _)| *l == best.library) {
                Some(l) => l.1 += 1,
                None => leaders.push((best.library.clone(), 1)),
            }
        }
    }
    if ran == 0 {
        return None;
    }
    let (page_top, page_of) = (claim.top?, claim.of?);
    let verdict = if won * page_of >= page_top * ran { Verdict::Reproduced } else { Verdict::NotReproduced };
    let mut reasons = Vec::new();
    if verdict == Verdict::NotReproduced {
        leaders.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        reasons.push(Reason::Leaders(leaders));
        if !over.is_empty() {
            reasons.push(Reason::Cores { cases: over.clone() });
        }
    }
    Some(Outcome { claim, measured: Measured::Top { top: won, ran, oversubscribed: over }, verdict, reasons })
}

/// An `every`, `range` or `lead` claim: `a` against `b` case by case.
fn ratios<'c>(
    data: &'c PageData,
    doc: &Document,
    claim: &'c Claim,
    wake: Option<f64>,
) -> Option<Outcome<'c>> {
    let b = claim.b.as_deref()?;
    // An `every` claim is over every case both ran, counted once for it and the questions (the
    // page's words: "every one of the 72 measurements where both ran"); the others are over the
    // cases they name.
    let (ratios, over): (Vec<Ratio>, Vec<String>) = if claim.kind == ClaimKind::Every {
        let both = standings::both_ran(&doc.results, &claim.a, b);
        let ratios: Vec<Ratio> =
            both.cases.into_iter().filter_map(|(ra, rb)| ratio_of(ra, rb, claim.b_mode())).collect();
        (ratios, both.oversubscribed.into_iter().map(String::from).collect())
    } else {
        let named = claim.cases.iter().filter_map(|c| ratio(doc, c, &claim.a, b, claim.b_mode()));
        (named.collect(), Vec::new())
    };
    if ratios.is_empty() {
        return None;
    }
    let failing: Vec<&Ratio> = ratios.iter().filter(|r| !holds(claim, r.judged(), !r.level)).collect();
    let verdict = match (failing.is_empty(), claim.kind) {
        (true, ClaimKind::Range) => Verdict::Within,
        (true, _) => Verdict::Reproduced,
        (false, _) => Verdict::NotReproduced,
    };
    let mut reasons = Vec::new();
    for r in &failing {
        // Told apart or not, another mode or state is read by its ratio alone.
        for (mode, x) in &r.modes {
            if holds(claim, *x, true) {
                reasons.push(Reason::Mode { case: r.case.clone(), mode: *mode, value: *x });
            }
        }
        for (state, x) in &r.states {
            if holds(claim, *x, true) {
                reasons.push(Reason::State { case: r.case.clone(), state: state.clone(), value: *x });
            }
        }
        if r.page_method.is_some() && holds(claim, r.counted, !r.level) {
            reasons.push(Reason::Method { case: r.case.clone(), value: r.counted });
        }
    }
    let named = |pick: &dyn Fn(&Ratio) -> bool| -> Vec<String> {
        failing.iter().filter(|r| pick(r)).map(|r| r.case.clone()).collect()
    };
    let crowded = named(&|r: &Ratio| r.oversubscribed);
    if !crowded.is_empty() {
        reasons.push(Reason::Cores { cases: crowded });
    }
    let level = named(&|r: &Ratio| r.level && claim.kind != ClaimKind::Range);
    if !level.is_empty() {
        reasons.push(Reason::Level { cases: level });
    }
    let below = failing.iter().any(|r| claim.low.is_some_and(|lo| r.judged() < lo));
    if let (true, Some(Factor::WakeUp), Some(here)) = (below, claim.factor, wake) {
        reasons.push(Reason::WakeUp { here_us: here, page_us: data.page.wake_up_us });
    }
    Some(Outcome { claim, measured: Measured::Ratios { ratios, oversubscribed: over }, verdict, reasons })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page's data parses, each claim has what its kind needs, and every case it names is
    /// one the matrix knows.
    #[test]
    fn the_page_data_parses_and_names_known_cases() {
        let data = page_data().unwrap();
        assert_eq!(data.page_cases.len(), 30);
        assert!(data.claims.len() >= 14);
        for case in data.page_cases.iter().chain(data.claims.iter().flat_map(|c| &c.cases)) {
            crate::matrix::find(case).unwrap_or_else(|e| panic!("{case}: {e}"));
        }
        for v in &data.versions {
            assert!(v.same.is_some() || !v.changes.is_empty(), "{}", v.library);
            assert_eq!(v.against(&v.page), v.same.as_deref());
        }
        for id in data.claims.iter().flat_map(|c| [Some(&c.a), c.b.as_ref()]).flatten() {
            assert!(crate::registry::find(id).is_ok(), "{id}");
        }
    }

    /// A range claim holds within its range only; a lead needs `a` ahead and told apart.
    #[test]
    fn a_claim_holds_as_its_kind_says() {
        let data = page_data().unwrap();
        let range = data.claims.iter().find(|c| c.kind == ClaimKind::Range).unwrap();
        let (lo, hi) = (range.low.unwrap(), range.high.unwrap());
        assert!(holds(range, lo, true) && holds(range, hi, false));
        assert!(!holds(range, lo * 0.99, true) && !holds(range, hi * 1.01, true));
        let lead = data.claims.iter().find(|c| c.kind == ClaimKind::Lead).unwrap();
        assert!(holds(lead, 1.2, true));
        assert!(!holds(lead, 1.2, false) && !holds(lead, 0.9, true));
    }
}
