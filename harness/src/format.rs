//! Numbers as text: the one place a rate, a latency, a size or a ratio becomes words, for the
//! terminal, the reports and the doctor alike.

/// Messages (or calls) per second: `23.02 M msg/s`, `742.7 k msg/s`, `980 msg/s`.
pub fn rate(r: f64) -> String {
    per_second(r, "msg/s")
}

/// A service's calls per second: `1.64 M calls/s`.
pub fn calls(r: f64) -> String {
    per_second(r, "calls/s")
}

fn per_second(r: f64, unit: &str) -> String {
    if r >= 1e6 {
        format!("{:.2} M {unit}", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k {unit}", r / 1e3)
    } else {
        format!("{r:.0} {unit}")
    }
}

/// Bytes per second, in decimal units as bandwidth is quoted: `44.3 MB/s`, `1.42 GB/s`.
pub fn bandwidth(b: f64) -> String {
    if b >= 1e9 {
        format!("{:.2} GB/s", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB/s", b / 1e6)
    } else {
        format!("{:.1} kB/s", b / 1e3)
    }
}

/// A latency: `481 ns`, `1.82 µs`, `3.51 ms`.
pub fn nanos(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// Memory a library maps, or a buffer: `none`, `160 B`, `24 KiB`, `1.5 MiB`.
pub fn bytes(n: u64) -> String {
    match n {
        0 => "none".into(),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.0} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// Whole mebibytes, as the doctor states free space.
pub fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

/// A share as a percentage with one decimal: `24.0%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// The smallest change a figure tells (`noise::resolution`): `±4%`, `±0.7%` below 1 %.
pub fn resolution(share: f64) -> String {
    if share < 0.01 { format!("±{:.1}%", share * 100.0) } else { format!("±{:.0}%", share * 100.0) }
}

/// A length of time in seconds, to the second: `45 s`, `9 min 12 s`, `1 h 05 min`.
pub fn duration_text(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// A length of time as a reader plans by it: `about 31 min`, `about 45 s`, `about 1 h 05 min`.
pub fn about(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("about {} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 90 {
        format!("about {} min", (s + 30) / 60)
    } else {
        format!("about {s} s")
    }
}

/// A share as a whole percentage: `10%`.
pub fn whole_percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// A value with three significant digits, as the report's tables write a figure in its row's
/// unit: `0.0738`, `4.66`, `62.8`, `2052` (a whole number above 999 keeps its digits).
pub fn three_digits(v: f64) -> String {
    if v >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
        format!("{v:.digits$}")
    }
}

/// A ratio between two libraries: two figures below 10, whole above.
pub fn ratio(x: f64) -> String {
    if x >= 10.0 { format!("{x:.0}") } else { format!("{x:.1}") }
}

/// A range of ratios, or one ratio when both ends read the same: `11 to 20`, `1.4`.
pub fn ratio_span(lo: f64, hi: f64) -> String {
    if ratio(lo) == ratio(hi) { ratio(lo) } else { format!("{} to {}", ratio(lo), ratio(hi)) }
}

/// Cores kept busy (CPU seconds per second): `1.87 cores`.
pub fn cores(busy: f64) -> String {
    format!("{busy:.2} cores")
}

/// A message size in a sentence: `16-byte`, `1KiB`.
pub fn size_words(size: usize, label: &str) -> String {
    if size < 1024 { format!("{size}-byte") } else { label.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_change_at_a_thousand() {
        assert_eq!(rate(23_020_000.0), "23.02 M msg/s");
        assert_eq!(rate(742_700.0), "742.7 k msg/s");
        assert_eq!(rate(980.0), "980 msg/s");
        assert_eq!(nanos(481.0), "481 ns");
        assert_eq!(nanos(1820.0), "1.82 µs");
        assert_eq!(nanos(3_510_000.0), "3.51 ms");
        assert_eq!(bytes(0), "none");
        assert_eq!(bytes(24 << 10), "24 KiB");
        assert_eq!(bytes(160), "160 B");
        assert_eq!(bytes(3 << 19), "1.5 MiB");
        assert_eq!((percent(0.24), whole_percent(0.1)), ("24.0%".into(), "10%".into()));
        assert_eq!((ratio_span(11.2, 20.4), ratio_span(1.41, 1.44)), ("11 to 20".into(), "1.4".into()));
        assert_eq!(cores(0.5), "0.50 cores");
        assert_eq!((size_words(16, "16B"), size_words(1024, "1KiB")), ("16-byte".into(), "1KiB".into()));
    }
}
