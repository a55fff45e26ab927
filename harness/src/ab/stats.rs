//! The statistics of a paired A/B comparison (docs/METHOD.md, "Did my change make it faster?"):
//! each round gives one ratio of two runs seconds apart, and the figure's change is the mean of
//! their logarithms, with Student's t interval over the rounds. A change counts when it lies
//! beyond the threshold and a one-sided test against the threshold survives a Benjamini-Hochberg
//! correction over all the run's figures; no change when the whole interval lies within the
//! threshold; unresolved otherwise. More rounds are taken on the interval's width alone.

use crate::noise::{t_upper, t975};
use crate::results::ab::AbVerdict;

/// The false discovery rate the correction holds the run's verdicts to.
pub const FALSE_DISCOVERY: f64 = 0.05;

/// The rounds' log ratios of one figure, summarised.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    pub rounds: usize,
    /// The mean of the logarithms of the ratios (other over base).
    pub mean: f64,
    /// Its standard error.
    pub se: f64,
}

impl Paired {
    /// None below two rounds, or for a ratio not above zero.
    pub fn of(ratios: &[f64]) -> Option<Paired> {
        let (n, spread) = (ratios.len(), crate::noise::log_spread(ratios)?);
        let mean = ratios.iter().map(|r| r.ln()).sum::<f64>() / n as f64;
        Some(Paired { rounds: n, mean, se: spread / (n as f64).sqrt() })
    }

    fn df(&self) -> usize {
        self.rounds - 1
    }

    /// The interval's half-width, on the logarithms.
    fn half_width(&self) -> f64 {
        t975(self.df()) * self.se
    }

    /// The geometric mean ratio and its 95 % interval: (ratio, low, high).
    pub fn ratio(&self) -> (f64, f64, f64) {
        let h = self.half_width();
        (self.mean.exp(), (self.mean - h).exp(), (self.mean + h).exp())
    }

    /// The smallest change these rounds tell, as a share: the half-width back from logarithms.
    pub fn resolution(&self) -> f64 {
        self.half_width().exp_m1()
    }

    /// `p_beyond` of these rounds.
    pub fn p_beyond(&self, threshold: f64) -> f64 {
        p_beyond(self.mean, self.half_width(), self.rounds, threshold)
    }
}

/// The one-sided p value of a change lying beyond `threshold` (a share) in the direction its
/// estimate lies, doubled because that direction was read from the data: from the mean of the
/// rounds' log ratios and its interval's half-width over `rounds` rounds.
pub fn p_beyond(mean: f64, half_width: f64, rounds: usize, threshold: f64) -> f64 {
    let tau = threshold.ln_1p();
    let beyond = mean.abs() - tau;
    let df = rounds.saturating_sub(1);
    let se = half_width / t975(df);
    if se.is_nan() || se <= 0.0 {
        return if beyond > 0.0 && df > 0 { 0.0 } else { 1.0 };
    }
    (2.0 * t_upper(beyond / se, df as f64)).min(1.0)
}

/// Whether a figure needs more rounds: fewer than two, or an interval wider than `resolve`.
pub fn needs_more(paired: Option<&Paired>, resolve: f64) -> bool {
    paired.is_none_or(|p| p.resolution() > resolve)
}

/// Which of `p` values a Benjamini-Hochberg procedure at rate `q` rejects: the `k` smallest, for
/// the largest `k` whose `k`th smallest is at most `k q / m`.
pub fn benjamini_hochberg(p: &[f64], q: f64) -> Vec<bool> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let k = (1..=m).rev().find(|&k| p[order[k - 1]] <= k as f64 * q / m as f64).unwrap_or(0);
    let mut out = vec![false; m];
    for &i in &order[..k] {
        out[i] = true;
    }
    out
}

/// A figure's verdict from its rounds: `higher_is_better` says which way is slower; `passed`
/// whether its test survived the correction.
pub fn verdict(paired: Option<&Paired>, threshold: f64, higher_is_better: bool, passed: bool) -> AbVerdict {
    match paired {
        Some(p) => judged(p.mean, p.half_width(), threshold, higher_is_better, passed),
        None => AbVerdict::Unresolved,
    }
}

/// A verdict from the mean log ratio and its interval's half-width: beyond the threshold with
/// its test passed, a change; the whole interval within it, none; else unresolved.
pub fn judged(mean: f64, half_width: f64, threshold: f64, higher_is_better: bool, passed: bool) -> AbVerdict {
    let tau = threshold.ln_1p();
    if mean.abs() > tau && passed {
        if (mean > 0.0) == higher_is_better { AbVerdict::Faster } else { AbVerdict::Slower }
    } else if mean - half_width >= -tau && mean + half_width <= tau {
        AbVerdict::NoChange
    } else {
        AbVerdict::Unresolved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds whose ratios scatter by `spread` (a fixed, symmetric pattern) around `ratio`.
    fn rounds(ratio: f64, spread: f64, n: usize) -> Vec<f64> {
        let pattern = [0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 0.25, -0.25, 0.0];
        (0..n).map(|i| ratio * (spread * pattern[i % pattern.len()]).exp()).collect()
    }

    /// The three outcomes the rules give on synthetic rounds: a known 10 % slowdown of a rate,
    /// no change, and noise too wide to tell.
    #[test]
    fn the_rules_call_a_known_change_none_and_noise_apart() {
        let judge = |ratios: &[f64], higher_is_better: bool| {
            let p = Paired::of(ratios);
            let passed = p.is_some_and(|p| p.p_beyond(0.05) <= FALSE_DISCOVERY);
            verdict(p.as_ref(), 0.05, higher_is_better, passed)
        };
        // A rate 10 % lower (ratio 0.9) with 1 % noise over 8 rounds: slower; a latency 10 %
        // higher: slower; a latency 10 % lower: faster.
        assert_eq!(judge(&rounds(0.9, 0.01, 8), true), AbVerdict::Slower);
        assert_eq!(judge(&rounds(1.1, 0.01, 8), false), AbVerdict::Slower);
        assert_eq!(judge(&rounds(1.0 / 1.1, 0.01, 8), false), AbVerdict::Faster);
        // None, with 1 % noise: its interval lies well within ±5 %.
        assert_eq!(judge(&rounds(1.0, 0.01, 8), true), AbVerdict::NoChange);
        // 10 % noise: neither a change nor none can be told from 8 rounds.
        assert_eq!(judge(&rounds(1.0, 0.10, 8), true), AbVerdict::Unresolved);
        assert_eq!(judge(&rounds(0.9, 0.10, 8), true), AbVerdict::Unresolved);
        // One round, or none: nothing to tell.
        assert_eq!(judge(&[0.9], true), AbVerdict::Unresolved);
        assert!(needs_more(Paired::of(&[0.9]).as_ref(), 0.025));
        assert!(needs_more(Paired::of(&rounds(1.0, 0.10, 8)).as_ref(), 0.025));
        assert!(!needs_more(Paired::of(&rounds(1.0, 0.01, 8)).as_ref(), 0.025));
    }

    #[test]
    fn the_ratio_and_its_interval_are_the_rounds_geometric_mean() {
        let p = Paired::of(&[1.1, 1.1, 1.1]).unwrap();
        let (r, lo, hi) = p.ratio();
        assert!((r - 1.1).abs() < 1e-12 && (lo - 1.1).abs() < 1e-12 && (hi - 1.1).abs() < 1e-12);
        assert_eq!(p.p_beyond(0.05), 0.0);
        assert_eq!(p.p_beyond(0.2), 1.0);
        let p = Paired::of(&rounds(1.0, 0.02, 9)).unwrap();
        let (_, lo, hi) = p.ratio();
        assert!(lo < 1.0 && hi > 1.0 && (hi - 1.0 - p.resolution()).abs() < 1e-12, "{lo} {hi}");
        assert!(Paired::of(&[1.0, 0.0]).is_none());
    }

    #[test]
    fn the_correction_rejects_the_smallest_up_to_its_line() {
        // m = 5, q = 0.05: the line is 0.01, 0.02, 0.03, 0.04, 0.05.
        assert_eq!(
            benjamini_hochberg(&[0.04, 0.001, 0.5, 0.019, 0.9], 0.05),
            [false, true, false, true, false]
        );
        // The third smallest under its line carries the two before it, though 0.015 > 0.01.
        assert_eq!(
            benjamini_hochberg(&[0.015, 0.02, 0.03, 0.6, 0.7], 0.05),
            [true, true, true, false, false]
        );
        assert_eq!(benjamini_hochberg(&[0.2, 0.3], 0.05), [false, false]);
        assert!(benjamini_hochberg(&[], 0.05).is_empty());
    }
}
