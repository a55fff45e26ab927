//! Two sittings' drift: each row of a comparison of two files held to the change its case's
//! other libraries shared, and to a test corrected over every row (docs/METHOD.md, "Comparing
//! two runs").

use super::{Row, Verdict};
use crate::noise::{self, middle};

/// What two sittings cannot tell a row's change from: the larger of its drift and each side's
/// resolution.
pub(super) fn margin(r: &Row) -> f64 {
    [r.drift.map(f64::abs), r.old_resolution, r.new_resolution].into_iter().flatten().fold(0.0, f64::max)
}

/// Each row's drift (the median change of its case's other libraries' rows of its figure) and
/// its change relative to it; then the verdicts of the rows beyond the threshold held to it: a
/// change only where the relative change lies beyond the threshold and both files' resolutions
/// and its test survives the Benjamini-Hochberg correction over every row's test.
pub(super) fn drifted(rows: &mut [Row], values: &[(Vec<f64>, Vec<f64>)], threshold: f64) {
    let drifts: Vec<Option<f64>> = rows
        .iter()
        .map(|r| {
            let others: Vec<f64> = rows
                .iter()
                .filter(|x| x.case == r.case && x.figure == r.figure && x.library != r.library)
                .filter(|x| x.verdict != Verdict::NoSharedState)
                .map(|x| x.change)
                .collect();
            middle(others)
        })
        .collect();
    for (i, r) in rows.iter_mut().enumerate() {
        r.drift = drifts[i];
        r.relative = Some((1.0 + r.change) / (1.0 + drifts[i].unwrap_or(0.0)) - 1.0);
        if r.verdict != Verdict::NoSharedState {
            r.p = noise::p_beyond(&values[i].0, &values[i].1, drifts[i].unwrap_or(0.0), threshold);
        }
    }
    let tested: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].p.is_some()).collect();
    let p: Vec<f64> = tested.iter().map(|&i| rows[i].p.unwrap_or(1.0)).collect();
    let passed = crate::ab::stats::benjamini_hochberg(&p, crate::ab::stats::FALSE_DISCOVERY);
    for (k, &i) in tested.iter().enumerate() {
        let r = &mut rows[i];
        if !matches!(r.verdict, Verdict::Faster | Verdict::Slower) {
            continue;
        }
        let relative = r.relative.unwrap_or(r.change);
        let beyond = relative.abs() > threshold
            && r.old_resolution.is_none_or(|x| relative.abs() > x)
            && r.new_resolution.is_none_or(|x| relative.abs() > x);
        if !beyond || !passed[k] {
            r.verdict = Verdict::WithinDrift;
        } else if (relative > 0.0) != (r.change > 0.0) {
            // The library moved less than the others: its change, against theirs, is the other way.
            r.verdict = if r.verdict == Verdict::Faster { Verdict::Slower } else { Verdict::Faster };
        }
    }
    // A row beyond the threshold that no test reached (its runs too few or not above zero) is
    // no verdict either.
    for r in
        rows.iter_mut().filter(|r| r.p.is_none() && matches!(r.verdict, Verdict::Faster | Verdict::Slower))
    {
        r.verdict = Verdict::WithinDrift;
    }
}
