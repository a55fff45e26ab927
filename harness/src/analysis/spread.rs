//! How far a series' runs lie apart (`ipcbench spread`, scripts/bench-spread.sh): a series is one
//! library's runs of one case in one receive mode, and its spread the standard deviation of the
//! natural logarithm of the figure that counts across those runs (0.035: about 3.5 %), over the
//! runs its figure is taken from (`figure_runs`: a split series by its larger cluster). Cases
//! with more processes than cores are left out: they measure the scheduler.

use ipcbench_api::RecvMode;

use super::{counted_runs, counted_values, figure_runs};
use crate::noise::{log_spread, t975};
use crate::results::{CaseResult, Status};

/// One series: its result's case and library, its mode, its spread and its runs.
#[derive(Clone, Debug)]
pub struct Series {
    pub case: String,
    pub library: String,
    pub mode: RecvMode,
    pub spread: f64,
    pub runs: usize,
    /// Its runs split into clusters apart; its spread is its larger cluster's.
    pub split: bool,
}

/// The series of these results (passed, not oversubscribed, two runs or more).
pub fn series<'a>(results: impl IntoIterator<Item = &'a CaseResult>) -> Vec<Series> {
    let mut out = Vec::new();
    for r in results.into_iter().filter(|r| r.status == Status::Ok && !r.oversubscribed) {
        for m in &r.modes {
            let counted_in = counted_runs(r.state(), &m.runs).count();
            let runs = figure_runs(r.pattern, counted_runs(r.state(), &m.runs));
            let values = counted_values(r.pattern, runs.iter().copied());
            if let Some(spread) = log_spread(&values) {
                out.push(Series {
                    case: r.case.clone(),
                    library: r.library.clone(),
                    mode: m.mode,
                    spread,
                    runs: values.len(),
                    split: runs.len() < counted_in,
                });
            }
        }
    }
    out
}

/// The widest spread at which a figure of `runs` runs resolves `change` (`noise::resolution`
/// solved for the spread).
pub fn widest_resolving(change: f64, runs: usize) -> f64 {
    change.ln_1p() / (t975(2 * (runs - 1)) * (2.0 / runs as f64).sqrt())
}

/// What a set of series' spreads come to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub median: f64,
    pub p75: f64,
    pub p90: f64,
    /// The share of the series whose spread resolves a 10 % change at 3 runs.
    pub resolve_10_at_3: f64,
    pub split: usize,
}

/// The `q` quantile of sorted values, nearest rank.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[k - 1]
}

/// The summary of `series`, None when there are none.
pub fn summary<'a>(series: impl IntoIterator<Item = &'a Series>) -> Option<Summary> {
    let all: Vec<&Series> = series.into_iter().collect();
    let mut s: Vec<f64> = all.iter().map(|x| x.spread).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let widest = widest_resolving(0.10, 3);
    Some(Summary {
        count: s.len(),
        median: quantile(&s, 0.5),
        p75: quantile(&s, 0.75),
        p90: quantile(&s, 0.9),
        resolve_10_at_3: s.iter().filter(|&&x| x <= widest).count() as f64 / s.len() as f64,
        split: all.iter().filter(|x| x.split).count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::resolution;

    #[test]
    fn the_widest_resolving_spread_is_the_resolutions_inverse() {
        let s = widest_resolving(0.10, 3);
        // Three runs at exactly that spread resolve 10 %: -a, 0, +a in logs has s = a.
        let runs = [(-s).exp(), 1.0, s.exp()];
        assert!((resolution(&runs).unwrap() - 0.10).abs() < 1e-9, "{s}");
        assert!((s - 0.0420).abs() < 1e-4, "{s}");
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!((quantile(&v, 0.5), quantile(&v, 0.75), quantile(&v, 0.9)), (5.0, 8.0, 9.0));
        assert_eq!(quantile(&[3.0], 0.9), 3.0);
        let series = |spread| Series {
            case: "stream/16B".into(),
            library: "uds".into(),
            mode: RecvMode::Polling,
            spread,
            runs: 3,
            split: false,
        };
        let all = [series(0.01), series(0.03), series(0.05), series(0.2)];
        let sum = summary(&all).unwrap();
        assert_eq!((sum.count, sum.median, sum.p90, sum.resolve_10_at_3), (4, 0.03, 0.2, 0.5));
        assert_eq!(summary(&[]), None);
    }
}
