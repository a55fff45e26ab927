//! Figures against a count: a broadcast's rate and cores busy against its subscribers, pairs'
//! total against their number, fan-out latency against the subscribers, and fixed-rate latency
//! against the offered rate (the load curve a library's knee is read from): the groups of cases
//! that differ only in that count (a chart each: `chart::scaling`), and each library's
//! sustainable rate over the load curve.

use super::View;
use crate::matrix::{Case, Pattern};
use crate::pattern::shows::Over;
use crate::pattern::spec;
use crate::results::{Figures, Status};
use ipcbench_api::RecvMode;

pub const SCALING: &str = "One line per library, in its better receive mode at each count (a filled \
mark: polling; hollow: waiting), both axes logarithmic; a point is the median of that mode's runs, and a \
line joins two counts both measured. Where more than eight libraries share a chart, each has a panel of \
its own, the others faint behind it.";

/// A group's chart needs this many counts at least.
const LEAST_POINTS: usize = 3;

/// A case's group (its name with the count as `*`) and its count, for a pattern that scales.
pub fn placed(case: &Case) -> Option<(String, f64)> {
    if case.batch > 1 {
        return None;
    }
    let mut parts: Vec<&str> = case.name.split('/').collect();
    let (at, star, x) = (spec(case.pattern()).scaling?.place)(case)?;
    *parts.get_mut(at)? = star;
    Some((parts.join("/"), x))
}

/// A group of cases that differ in one count: its name (the count as `*`), its pattern, and
/// each (count, case), by count.
type Group = (String, Pattern, Vec<(f64, String)>);

/// The view's groups of scaling cases with enough counts.
pub fn groups(view: &View) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for case in view.cases.iter().filter_map(|name| view.case(name)) {
        let Some((group, x)) = placed(case) else { continue };
        match out.iter_mut().find(|g| g.0 == group) {
            Some(g) => g.2.push((x, case.name.clone())),
            None => out.push((group, case.pattern(), vec![(x, case.name.clone())])),
        }
    }
    for g in &mut out {
        g.2.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out.retain(|g| g.2.len() >= LEAST_POINTS);
    out
}

/// Each column's sustainable rate (`analysis::sustainable`) over the view's latency cases at the
/// smallest size with enough rates: the better of its receive modes', with that mode. None
/// where the view has no such cases.
pub fn sustainable(view: &View) -> Option<Vec<Option<(u64, RecvMode)>>> {
    let over_rate = |p| spec(p).scaling.is_some_and(|s| s.over == Over::Rate);
    let (_, _, cases) = groups(view).into_iter().find(|g| over_rate(g.1))?;
    let per_column = view
        .columns
        .iter()
        .map(|col| {
            RecvMode::ALL
                .into_iter()
                .filter_map(|mode| {
                    let points: Vec<(u64, Figures)> = cases
                        .iter()
                        .filter_map(|(rate, case)| {
                            let r = view.result(case, &col.0, col.1).filter(|r| r.status == Status::Ok)?;
                            Some((*rate as u64, r.modes.iter().find(|m| m.mode == mode)?.median?))
                        })
                        .collect();
                    crate::analysis::sustainable(&points).map(|rate| (rate, mode))
                })
                .max_by_key(|x| x.0)
        })
        .collect();
    Some(per_column)
}
