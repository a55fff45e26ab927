//! The noise behind a median: how far it could move if the runs were done again. Both intervals
//! here are percentile bootstraps over the runs (docs/METHOD.md, "Noise"): the runs are drawn
//! again with replacement, the median taken, many times, and the middle 95 % of those medians is
//! the interval. The draws come from a fixed seed, so one file always gives the same intervals.
//!
//! With 3 runs a resampled median is one of the 3 runs, so the interval is the runs' whole
//! range: wide, as 3 runs are. It narrows from about 8 runs on.

/// The middle value (the mean of the two middle ones for an even count).
pub fn middle(mut v: Vec<f64>) -> Option<f64> {
    middle_in(&mut v)
}

/// `middle`, sorting `v` in place.
fn middle_in(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// The share of the resampled medians an interval holds.
pub const CONFIDENCE: f64 = 0.95;
/// Resamples per interval: enough for a stable 2.5th percentile, cheap at 15 runs.
const RESAMPLES: usize = 2000;
/// Any fixed seed: an interval must not change between two readings of one file.
const SEED: u64 = 0x1bc5_9e37_79b9_7f4a;

/// SplitMix64: a small, good generator for draws (no dependency for 20 lines), from a seed.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn draw(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n`, without the modulo's bias.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.draw()) * n as u128) >> 64) as usize
    }
}

/// The bootstrap's draws from the fixed seed, and the buffer each resample is drawn into (one
/// allocation per interval, not per resample).
struct Draws {
    rng: SplitMix,
    sample: Vec<f64>,
}

impl Draws {
    fn new() -> Draws {
        Draws { rng: SplitMix(SEED), sample: Vec::new() }
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    /// The median of `values` drawn again with replacement.
    fn resampled_median(&mut self, values: &[f64]) -> f64 {
        let mut sample = std::mem::take(&mut self.sample);
        sample.clear();
        sample.extend((0..values.len()).map(|_| values[self.below(values.len())]));
        let m = middle_in(&mut sample).expect("values are not empty");
        self.sample = sample;
        m
    }
}

/// The (low, high) percentiles of `CONFIDENCE` in `stats`.
fn percentiles(mut stats: Vec<f64>) -> (f64, f64) {
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let n = stats.len();
    let lo = ((n as f64 * tail).floor() as usize).min(n - 1);
    let hi = ((n as f64 * (1.0 - tail)).ceil() as usize).clamp(1, n) - 1;
    (stats[lo], stats[hi])
}

/// The interval of the median of `values` (one figure of each run): (low, high).
pub fn median_interval(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let mut draws = Draws::new();
    Some(percentiles((0..RESAMPLES).map(|_| draws.resampled_median(values)).collect()))
}

/// The change from the median of `old` to the median of `new`, as a share of the old median
/// (+0.10: 10 % more), with its interval: (change, low, high). None when either side is empty
/// or the old median is not above zero.
pub fn change(old: &[f64], new: &[f64]) -> Option<(f64, f64, f64)> {
    let (a, b) = (middle(old.to_vec())?, middle(new.to_vec())?);
    if a <= 0.0 || new.is_empty() {
        return None;
    }
    let mut draws = Draws::new();
    let ratios = (0..RESAMPLES)
        .map(|_| {
            let o = draws.resampled_median(old);
            let n = draws.resampled_median(new);
            if o > 0.0 { n / o - 1.0 } else { f64::INFINITY }
        })
        .collect();
    let (lo, hi) = percentiles(ratios);
    Some((b / a - 1.0, lo, hi))
}

/// Student's t at 97.5 % (a two-sided 95 % interval) for 1 to 30 degrees of freedom, from the
/// standard table (NIST/SEMATECH e-Handbook, 1.3.6.7.2).
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
    2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// Student's t at 97.5 % for `df` degrees of freedom: the table to 30, then the normal's 1.960
/// plus a term in 1/df that meets the table at 40, 60 and 120 to the third decimal.
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T975[df - 1],
        _ => 1.960 + 2.46 / df as f64,
    }
}

/// The smallest change a figure of `values` (one per run) can tell: the half-width of the 95 %
/// interval of the difference between two such figures, each of `n` runs with these runs'
/// spread, as a share (0.04: a change of 4 % or more shows). On the logarithms, so that a
/// change is a ratio either way: spread `s` (their standard deviation), the difference of two
/// means' standard error `s * sqrt(2 / n)`, and Student's t with the two samples' `2 (n - 1)`
/// degrees of freedom; `exp(h) - 1` back to a share. None below two runs or for a value not
/// above zero. (docs/METHOD.md, "The smallest change a figure tells".)
pub fn resolution(values: &[f64]) -> Option<f64> {
    let (s, n) = (log_spread(values)?, values.len());
    Some((t975(2 * (n - 1)) * s * (2.0 / n as f64).sqrt()).exp_m1())
}

/// The spread of `values` as the resolution reads it: the standard deviation of their natural
/// logarithms (0.035: about 3.5 %). None below two values or for one not above zero.
pub fn log_spread(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 || !values.iter().all(|v| v.is_finite() && *v > 0.0) {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let mean = logs.iter().sum::<f64>() / n as f64;
    Some((logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt())
}

/// The one-sided p value of the change from `old` to `new` (one figure per run) lying beyond
/// `threshold` (a share) after `drift` (a share both sittings moved by alike), in the direction
/// it lies, doubled because that direction was read from the data: Welch's t on the logarithms.
/// None below two values a side, or for a value not above zero.
pub fn p_beyond(old: &[f64], new: &[f64], drift: f64, threshold: f64) -> Option<f64> {
    let moments = |v: &[f64]| -> Option<(f64, f64, f64)> {
        let n = v.len() as f64;
        if v.len() < 2 || !v.iter().all(|x| x.is_finite() && *x > 0.0) {
            return None;
        }
        let mean = v.iter().map(|x| x.ln()).sum::<f64>() / n;
        let var = v.iter().map(|x| (x.ln() - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Some((mean, var / n, n))
    };
    let ((ma, ea, na), (mb, eb, nb)) = (moments(old)?, moments(new)?);
    let beyond = (mb - ma - drift.ln_1p()).abs() - threshold.ln_1p();
    let se = (ea + eb).sqrt();
    if se == 0.0 {
        return Some(if beyond > 0.0 { 0.0 } else { 1.0 });
    }
    let df = (ea + eb).powi(2) / (ea * ea / (na - 1.0) + eb * eb / (nb - 1.0));
    Some((2.0 * t_upper(beyond / se, df)).min(1.0))
}

/// P(T > t) for Student's t with `df` degrees of freedom.
pub fn t_upper(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 { tail } else { 1.0 - tail }
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (evaluated
/// by the modified Lentz method) on the side where it converges fast.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * fraction(a, b, x) / a
    } else {
        1.0 - front * fraction(b, a, 1.0 - x) / b
    }
}

fn fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0, by Lanczos' approximation (g = 7, nine terms: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // The reflection formula.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let sum = C[1..].iter().enumerate().fold(C[0], |s, (i, c)| s + c / (x + i as f64 + 1.0));
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resolution_follows_the_runs_spread_and_count() {
        // The table's ends and the curve past it.
        assert_eq!((t975(1), t975(4), t975(30)), (12.706, 2.776, 2.042));
        for (df, table) in [(40, 2.021), (60, 2.000), (120, 1.980)] {
            assert!((t975(df) - table).abs() < 0.0015, "{df}: {}", t975(df));
        }
        assert!(t975(0).is_infinite());
        // Runs 1 %, 2 %, 3 % apart: s = 0.01 in logs to the fourth decimal; with 3 runs,
        // t(4) 2.776 * 0.01 * sqrt(2/3) = 0.0227 in logs, 2.29 %.
        let runs = [100.0, 101.0, 102.0];
        let s = log_spread(&runs).unwrap();
        assert!((s - 0.00990).abs() < 1e-4, "{s}");
        let r = resolution(&runs).unwrap();
        assert!((r - (2.776 * s * (2.0f64 / 3.0).sqrt()).exp_m1()).abs() < 1e-12, "{r}");
        // More runs of the same spread resolve less; a wider spread resolves more.
        let ten: Vec<f64> = (0..10).map(|i| runs[i % 3]).collect();
        assert!(resolution(&ten).unwrap() < r / 2.0);
        assert!(resolution(&[100.0, 110.0, 120.0]).unwrap() > 5.0 * r);
        // The same runs scaled resolve the same: a ratio, not a difference.
        let scaled: Vec<f64> = runs.iter().map(|v| v * 1e6).collect();
        assert!((resolution(&scaled).unwrap() - r).abs() < 1e-9);
        assert_eq!(resolution(&[5.0]), None);
        assert_eq!(resolution(&[5.0, 0.0]), None);
        assert_eq!(resolution(&[7.0, 7.0]), Some(0.0));
    }

    #[test]
    fn three_runs_give_their_whole_range() {
        assert_eq!(median_interval(&[10.0, 12.0, 11.0]), Some((10.0, 12.0)));
        assert_eq!(median_interval(&[5.0]), Some((5.0, 5.0)));
        assert_eq!(median_interval(&[]), None);
    }

    #[test]
    fn more_runs_narrow_the_interval_inside_their_range() {
        let runs: Vec<f64> = (0..15).map(|i| 100.0 + f64::from(i)).collect();
        let (lo, hi) = median_interval(&runs).unwrap();
        assert!(lo > 100.0 && hi < 114.0 && lo <= 107.0 && hi >= 107.0, "{lo} {hi}");
    }

    #[test]
    fn the_same_runs_change_nothing_and_a_slowdown_is_outside_the_noise() {
        let runs = [100.0, 90.0, 105.0];
        let (c, lo, hi) = change(&runs, &runs).unwrap();
        assert_eq!(c, 0.0);
        assert!(lo < 0.0 && hi > 0.0, "{lo} {hi}");
        let slowed: Vec<f64> = runs.iter().map(|r| r * 0.7).collect();
        let (c, lo, hi) = change(&runs, &slowed).unwrap();
        assert!((c + 0.3).abs() < 1e-9, "{c}");
        assert!(hi < 0.0 && lo < -0.3, "{lo} {hi}");
        assert_eq!(change(&[], &runs), None);
        // One run each: no noise to speak of, the interval is the change itself.
        let (c, lo, hi) = change(&[100.0], &[130.0]).unwrap();
        assert!((c - 0.3).abs() < 1e-9 && lo == hi && (lo - c).abs() < 1e-9);
    }
    /// The upper tail meets the t table's 97.5 % and 95 % points, and the normal's far out.
    #[test]
    fn the_t_tail_meets_the_table() {
        for (df, t) in [(1, 12.706), (2, 4.303), (9, 2.262), (29, 2.045)] {
            let p = t_upper(t, df as f64);
            assert!((p - 0.025).abs() < 5e-5, "df {df}: {p}");
        }
        for (df, t) in [(7, 1.895), (20, 1.725)] {
            let p = t_upper(t, df as f64);
            assert!((p - 0.05).abs() < 2e-4, "df {df}: {p}");
        }
        assert!((t_upper(0.0, 5.0) - 0.5).abs() < 1e-12);
        assert!((t_upper(-2.262, 9.0) - 0.975).abs() < 2e-5);
        assert!((t_upper(1.9623, 1000.0) - 0.025).abs() < 1e-4);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }
}
