//! An axis's ticks and how they read: on a log axis, powers of ten, or 1-2-5 steps, or every
//! digit, whichever first gives three ticks (plain steps where the axis spans less than a decade);
//! a time with its unit (`200 ns`, `1 µs`, `10 ms`, `1 s`, never `1000000`), a number with no
//! trailing zeros.

/// `v` to `digits` significant digits: log-spaced ticks land on 1e-7 errors otherwise.
fn significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// A number to three significant digits, without trailing zeros: `0.05`, `2.5`, `150`, `2000`.
fn plain(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let v = significant(v, 3);
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{v:.digits$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

/// A count's tick: `0.05`, `2.5`, `150`, `2000`, `20k`, `3M`.
pub fn number_tick(v: f64) -> String {
    match v.abs() {
        a if a >= 1e7 => format!("{}M", plain(v / 1e6)),
        a if a >= 1e4 => format!("{}k", plain(v / 1e3)),
        _ => plain(v),
    }
}

/// A time's tick, given in microseconds: `200 ns`, `1.5 µs`, `10 ms`, `1 s`.
pub fn time_tick(us: f64) -> String {
    let ns = significant(us * 1e3, 6);
    let (v, unit) = match ns.abs() {
        a if a >= 1e9 => (ns / 1e9, "s"),
        a if a >= 1e6 => (ns / 1e6, "ms"),
        a if a >= 1e3 => (ns / 1e3, "µs"),
        _ => (ns, "ns"),
    };
    if v == 0.0 { "0".into() } else { format!("{} {unit}", plain(v)) }
}

/// Evenly spaced ticks of 1, 2 or 5 times a power of ten, three to eight of them, within
/// `lo..=hi`.
pub fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    if span <= 0.0 || !span.is_finite() {
        return vec![lo];
    }
    let power = 10f64.powf((span / 8.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| span / s <= 8.0)
        .unwrap_or(10.0 * power);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| significant(i as f64 * step, 6)).collect()
}

/// A log axis's ticks within `lo..=hi`: the coarsest of powers of ten, 1-2-5 steps and every
/// digit that gives three ticks, thinned to ten at most; plain steps across less than a decade.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    const STEPS: [&[f64]; 3] = [&[1.0], &[1.0, 2.0, 5.0], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]];
    if lo <= 0.0 || hi <= lo || !hi.is_finite() {
        return Vec::new();
    }
    for mantissas in STEPS {
        let ticks: Vec<f64> = (lo.log10().floor() as i32..=hi.log10().ceil() as i32)
            .flat_map(|e| mantissas.iter().map(move |m| significant(m * 10f64.powi(e), 6)))
            .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
            .collect();
        if ticks.len() >= 3 {
            // Many decades: every second (third, ...) power, so that the labels keep apart.
            let every = ticks.len().div_ceil(10);
            return ticks.into_iter().step_by(every).collect();
        }
    }
    linear_ticks(lo, hi)
}

/// Whether a log axis over `lo..hi` would read worse than a linear one: less than a decade.
pub fn narrow(lo: f64, hi: f64) -> bool {
    lo <= 0.0 || hi / lo < 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_in_their_unit() {
        let t: Vec<String> =
            [0.2, 1.0, 1.5, 10.0, 999.9999999, 1000.0, 250_000.0, 1e6, 3e7].map(time_tick).into();
        assert_eq!(t, ["200 ns", "1 µs", "1.5 µs", "10 µs", "1 ms", "1 ms", "250 ms", "1 s", "30 s"]);
        assert_eq!(time_tick(0.0), "0");
    }

    #[test]
    fn numbers_have_no_trailing_zeros() {
        let n: Vec<String> = [0.05, 0.1, 2.5, 10.0, 150.0, 2000.0, 20_000.0, 3e7].map(number_tick).into();
        assert_eq!(n, ["0.05", "0.1", "2.5", "10", "150", "2000", "20k", "30M"]);
    }

    #[test]
    fn a_log_axis_has_three_ticks_at_least_and_ten_at_most() {
        assert_eq!(log_ticks(0.3, 2e6), [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        assert_eq!(log_ticks(0.15, 4.0), [0.2, 0.5, 1.0, 2.0]);
        assert_eq!(log_ticks(1.1, 4.5), [2.0, 3.0, 4.0]);
        let wide = log_ticks(1e-3, 1e12);
        assert!(wide.len() <= 10 && wide.len() >= 3, "{wide:?}");
        // Less than a decade with no digit inside: plain steps.
        assert_eq!(log_ticks(180.0, 260.0), [180.0, 190.0, 200.0, 210.0, 220.0, 230.0, 240.0, 250.0, 260.0]);
        assert!(narrow(180.0, 260.0) && !narrow(1.0, 20.0));
    }

    #[test]
    fn linear_ticks_step_by_one_two_or_five() {
        assert_eq!(linear_ticks(0.0, 1.15), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(linear_ticks(0.0, 46.0), [0.0, 10.0, 20.0, 30.0, 40.0]);
    }
}
