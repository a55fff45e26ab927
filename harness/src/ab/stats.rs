//! The statistics of a paired A/B comparison (docs/METHOD.md, "Did my change make it faster?"):
//! each round gives one ratio of two runs seconds apart, and the figure's change is the 20 %
//! trimmed mean of their logarithms, with Yuen's interval over the rounds. Trimmed because on a
//! VM one round in six or so pairs two runs the host placed apart though its probes agreed (a
//! ratio of 0.3 or 3 among ratios within 5 % of 1: the first A/B of 2026-12-05), and one such
//! round alone widens a mean's interval past any threshold. A change counts when it lies beyond
//! the threshold and a one-sided test against the threshold survives a Benjamini-Hochberg
//! correction over all the run's figures; no change when the whole interval lies within the
//! threshold; unresolved otherwise. More rounds are taken on the interval's width alone.

use crate::noise::{t_upper, t975};
use crate::results::ab::AbVerdict;

/// The false discovery rate the correction holds the run's verdicts to.
pub const FALSE_DISCOVERY: f64 = 0.05;

/// The share of the rounds trimmed from each end before the mean (Yuen 1974; Wilcox,
/// "Introduction to Robust Estimation and Hypothesis Testing", 20 % as the usual choice): it
/// keeps nearly a mean's power when no round is wild, and one or two wild rounds in eight to ten
/// no longer decide the interval.
pub const TRIM: f64 = 0.2;

/// How many rounds of `n` are trimmed from each end.
pub fn trimmed(n: usize) -> usize {
    (TRIM * n as f64).floor() as usize
}

/// The degrees of freedom of Yuen's interval over `n` rounds: the rounds kept, less one.
pub fn df(n: usize) -> usize {
    n.saturating_sub(2 * trimmed(n) + 1)
}

/// The rounds' log ratios of one figure, summarised.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    pub rounds: usize,
    /// The trimmed mean of the logarithms of the ratios (other over base).
    pub mean: f64,
    /// Its standard error: the winsorized spread over the share of rounds kept (Yuen).
    pub se: f64,
}

impl Paired {
    /// None below two rounds, or for a ratio not above zero.
    pub fn of(ratios: &[f64]) -> Option<Paired> {
        let n = ratios.len();
        if n < 2 || !ratios.iter().all(|r| r.is_finite() && *r > 0.0) {
            return None;
        }
        let mut logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
        logs.sort_by(f64::total_cmp);
        let g = trimmed(n);
        let kept = &logs[g..n - g];
        let mean = kept.iter().sum::<f64>() / kept.len() as f64;
        // Winsorized: each trimmed round counts as the nearest kept one.
        let (low, high) = (kept[0], kept[kept.len() - 1]);
        let wins: Vec<f64> = logs.iter().map(|x| x.clamp(low, high)).collect();
        let wmean = wins.iter().sum::<f64>() / n as f64;
        let wvar = wins.iter().map(|x| (x - wmean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let se = wvar.sqrt() / (kept.len() as f64 / n as f64 * (n as f64).sqrt());
        Some(Paired { rounds: n, mean, se })
    }

    /// The interval's half-width, on the logarithms.
    fn half_width(&self) -> f64 {
        t975(df(self.rounds)) * self.se
    }

    /// The trimmed geometric mean ratio and its 95 % interval: (ratio, low, high).
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
/// estimate lies, doubled because that direction was read from the data: from the trimmed mean
/// of the rounds' log ratios and its interval's half-width over `rounds` rounds (Yuen's t).
pub fn p_beyond(mean: f64, half_width: f64, rounds: usize, threshold: f64) -> f64 {
    let tau = threshold.ln_1p();
    let beyond = mean.abs() - tau;
    let df = df(rounds);
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

    /// One wild round in eight (the host placed its two runs apart, its probes agreeing) or two
    /// in ten, one each way, leave the verdict to the others: a mean's interval would span it.
    #[test]
    fn a_wild_round_does_not_decide_the_interval() {
        let calm = rounds(1.0, 0.01, 8);
        let mut wild = calm.clone();
        wild[3] = 3.0;
        let p = Paired::of(&wild).unwrap();
        let (r, lo, hi) = p.ratio();
        assert!(lo > 0.95 && hi < 1.05 && (r - 1.0).abs() < 0.02, "{r} {lo} {hi}");
        assert_eq!(verdict(Some(&p), 0.05, true, false), AbVerdict::NoChange);
        let mut two = rounds(1.0, 0.01, 10);
        two[2] = 0.3;
        two[5] = 3.5;
        assert_eq!(verdict(Paired::of(&two).as_ref(), 0.05, true, false), AbVerdict::NoChange);
        // A known 10 % slowdown with one wild round: still slower, its test passing alone.
        let mut slow = rounds(0.9, 0.01, 8);
        slow[0] = 2.5;
        let p = Paired::of(&slow).unwrap();
        assert!(p.p_beyond(0.05) < 0.001, "{}", p.p_beyond(0.05));
        assert_eq!(verdict(Some(&p), 0.05, true, true), AbVerdict::Slower);
        // Eight rounds trim one each end; four, none; the interval's freedom is what is kept.
        assert_eq!((trimmed(8), df(8), trimmed(4), df(4), trimmed(10), df(10)), (1, 5, 0, 3, 2, 5));
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
