//! Latency histograms between the stages: what a role process records into (allocated before its
//! loop, so recording never allocates), how its buckets travel in its report, how the results
//! file keeps a whole histogram (HdrHistogram's V2 compressed form, base64, as HdrHistogram's
//! own logs write it), the percentiles taken from one, and the `.hgrm` text HdrHistogram's
//! plotter reads.

use anyhow::{Context, Result};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Significant figures every histogram keeps: 0.1 % of any value.
const SIGFIG: u8 = 3;

/// The histogram a role records into: 1 ns to a minute, allocated now.
pub fn recording() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, SIGFIG).expect("valid bounds")
}

/// A histogram's recorded buckets: (the bucket's highest value, its count).
pub fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
}

/// An empty histogram that grows to whatever it is given (values, or other histograms, whose
/// ranges may be wider than its own: a decoded one keeps only the range it needed).
pub fn growing() -> Histogram<u64> {
    Histogram::<u64>::new(SIGFIG).expect("valid precision")
}

/// The histogram of these buckets together (any number of reports' buckets).
pub fn from_buckets<'a>(all: impl IntoIterator<Item = &'a [(u64, u64)]>) -> Histogram<u64> {
    let mut h = growing();
    for buckets in all {
        for &(value, count) in buckets {
            h.record_n(value, count).expect("an auto-resizing histogram takes any value");
        }
    }
    h
}

/// HdrHistogram's V2 compressed form, base64.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).expect("serializing into memory cannot fail");
    STANDARD.encode(bytes)
}

/// A histogram the results file keeps (`encode`).
pub fn decode(text: &str) -> Result<Histogram<u64>> {
    let bytes = STANDARD.decode(text).context("a histogram that is not base64")?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("a histogram that HdrHistogram cannot read: {e:?}"))
}

/// The percentiles a latency result states, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spectrum {
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub p9999: f64,
    pub max: f64,
}

impl Spectrum {
    /// None for an empty histogram.
    pub fn of(h: &Histogram<u64>) -> Option<Spectrum> {
        if h.is_empty() {
            return None;
        }
        let q = |q: f64| h.value_at_quantile(q) as f64;
        Some(Spectrum {
            min: h.min() as f64,
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
            max: h.highest_equivalent(h.max()) as f64,
        })
    }
}

/// The histogram as HdrHistogram's percentile distribution (`.hgrm`): values in milliseconds
/// (the unit its plotter labels), five ticks per half distance, as its Java original writes.
pub fn hgrm(h: &Histogram<u64>) -> String {
    let ms = |ns: f64| ns / 1e6;
    let mut out =
        format!("{:>12} {:>14} {:>10} {:>14}\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let value = ms(h.highest_equivalent(v.value_iterated_to()) as f64);
        if q < 1.0 {
            out.push_str(&format!("{value:12.6} {q:2.12} {total:10} {:14.2}\n", 1.0 / (1.0 - q)));
        } else {
            out.push_str(&format!("{value:12.6} {q:2.12} {total:10}\n"));
        }
    }
    let sub_buckets = 1u64 << (2.0 * 10f64.powi(i32::from(h.sigfig()))).log2().ceil() as u32;
    out.push_str(&format!(
        "#[Mean    = {:12.6}, StdDeviation   = {:12.6}]\n#[Max     = {:12.6}, Total count    = {:12}]\n\
         #[Buckets = {:12}, SubBuckets     = {:12}]\n",
        ms(h.mean()),
        ms(h.stdev()),
        ms(h.max() as f64),
        h.len(),
        h.buckets(),
        sub_buckets
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Histogram<u64> {
        let mut h = recording();
        for v in 1..=10_000u64 {
            h.record(v * 100).unwrap();
        }
        h.record_n(5_000_000, 3).unwrap();
        h
    }

    /// What a role reports, and what the results file keeps, give back the same percentiles.
    #[test]
    fn a_histogram_survives_its_journeys() {
        let h = sample();
        let again = from_buckets([buckets(&h).as_slice()]);
        assert_eq!(Spectrum::of(&again), Spectrum::of(&h));
        let text = encode(&again);
        let back = decode(&text).unwrap();
        assert_eq!(back.len(), 10_003);
        assert_eq!(Spectrum::of(&back), Spectrum::of(&h));
        let s = Spectrum::of(&h).unwrap();
        assert!((s.p50 - 500_000.0).abs() / 500_000.0 < 0.001, "{s:?}");
        assert!(s.max >= 5_000_000.0 && s.max < 5_010_000.0, "{s:?}");
        assert!(decode("not base64!").unwrap_err().to_string().contains("base64"));
        assert!(decode("AAAA").is_err());
        assert_eq!(Spectrum::of(&recording()), None);
        // Decoded histograms of different ranges add up in a growing one.
        let mut small = recording();
        small.record(5).unwrap();
        let mut all = growing();
        all.add(decode(&encode(&small)).unwrap()).unwrap();
        all.add(back).unwrap();
        assert_eq!((all.len(), all.max() >= 5_000_000), (10_004, true));
    }

    #[test]
    fn the_hgrm_file_is_what_the_plotter_reads() {
        let text = hgrm(&sample());
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap().split_whitespace().collect::<Vec<_>>()[..3],
            ["Value", "Percentile", "TotalCount"]
        );
        assert_eq!(lines.next(), Some(""));
        let rows: Vec<Vec<f64>> = text
            .lines()
            .skip(2)
            .take_while(|l| !l.starts_with('#'))
            .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
            .collect();
        // Percentiles rise to 1, counts to the total; the last row has no 1/(1-p).
        assert!(rows.windows(2).all(|w| w[0][1] <= w[1][1] && w[0][2] <= w[1][2]));
        let last = rows.last().unwrap();
        assert_eq!((last.len(), last[1], last[2]), (3, 1.0, 10_003.0));
        assert!((last[0] - 5.0).abs() < 0.01, "the greatest value in ms: {last:?}");
        assert!(text.contains("#[Buckets = ") && text.contains("SubBuckets     =         2048]"), "{text}");
    }
}
