//! `ipcbench doctor --watch DURATION`: the host's probe once a second, each sample a line, then
//! whether the host held still: the states its samples fell into, how often it changed between
//! them, and each state's share of the time. A user learns whether the machine is fit to
//! measure before spending half an hour on it.

use std::time::{Duration, Instant};

use super::probe::{Probe, Ticks};
use super::states::{self, States};
use crate::format::whole_percent;

/// One sample: seconds from the start, the probe, the steal share since the sample before.
pub struct Sample {
    pub at_s: f64,
    pub probe: Probe,
    pub steal_share: Option<f64>,
}

/// Samples the probe once a second for `duration`, calling `each` with each sample as it comes;
/// stops early when `stop` says so.
pub fn watch(
    duration: Duration,
    cores: usize,
    mut each: impl FnMut(&Sample),
    stop: impl Fn() -> bool,
) -> Vec<Sample> {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut ticks = Ticks::now();
    let mut next = start;
    while next <= start + duration && !stop() {
        if let Some(probe) = Probe::take(cores, None) {
            let now = Ticks::now();
            let steal_share = ticks.zip(now).and_then(|(a, b)| a.steal_share(b));
            ticks = now;
            let sample = Sample { at_s: start.elapsed().as_secs_f64(), probe, steal_share };
            each(&sample);
            out.push(sample);
        }
        next += Duration::from_secs(1);
        while Instant::now() < next && !stop() {
            std::thread::sleep(
                next.saturating_duration_since(Instant::now()).min(Duration::from_millis(100)),
            );
        }
    }
    out
}

/// A sample as a line of the watch.
pub fn line(s: &Sample) -> String {
    let steal = s.steal_share.map_or(String::new(), |v| format!(", steal {:.1}%", v * 100.0));
    format!("{:6.1} s  {}{steal}", s.at_s, s.probe.text())
}

/// What the samples say: the states, the changes between them, each state's share.
pub fn verdict(samples: &[Sample]) -> String {
    if samples.is_empty() {
        return "No sample was taken.".into();
    }
    let probes: Vec<Probe> = samples.iter().map(|s| s.probe).collect();
    let found = States::of(&probes);
    let labels: Vec<&str> = (0..probes.len()).map(|i| found.label(i).unwrap_or("none")).collect();
    let changes = labels.windows(2).filter(|w| w[0] != w[1]).count();
    let mut seen: Vec<&str> = labels.clone();
    seen.sort_unstable();
    seen.dedup();
    let each: Vec<String> = seen
        .iter()
        .map(|label| {
            let members: Vec<Probe> =
                probes.iter().zip(&labels).filter(|(_, l)| *l == label).map(|(p, _)| *p).collect();
            format!(
                "{}: {} of the time ({})",
                if *label == "none" {
                    "no state (a floor ran out of time)".to_string()
                } else {
                    format!("state {label}")
                },
                whole_percent(members.len() as f64 / probes.len() as f64),
                states::median_probe(&members).text()
            )
        })
        .collect();
    let held = if changes == 0 {
        format!("The host held still: one state over {} samples.", samples.len())
    } else {
        format!(
            "The host changed {changes} time(s) in {} samples, between {} states: figures measured now depend on \
             when they ran; ipcbench run ranks rivals only within one state and records each run's",
            samples.len(),
            seen.len()
        )
    };
    format!("{held}\n{}", each.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_s: f64, polling: f64) -> Sample {
        Sample {
            at_s,
            probe: Probe { polling_ns: Some(polling), waiting_ns: Some(20_000.0), syscall_ns: 80.0 },
            steal_share: Some(0.01),
        }
    }

    #[test]
    fn the_verdict_counts_the_changes_and_each_states_share() {
        let samples: Vec<Sample> = [100.0, 104.0, 410.0, 400.0, 101.0]
            .iter()
            .enumerate()
            .map(|(i, &p)| sample(i as f64, p))
            .collect();
        let v = verdict(&samples);
        assert!(v.starts_with("The host changed 2 time(s) in 5 samples, between 2 states"), "{v}");
        assert!(v.contains("state A: 60% of the time (polling 101 ns") && v.contains("state B: 40%"), "{v}");
        let still = verdict(&samples[..2]);
        assert!(still.starts_with("The host held still: one state over 2 samples."), "{still}");
        assert_eq!(
            line(&samples[2]),
            "   2.0 s  polling 410 ns, waiting 20.00 µs, syscall 80 ns, steal 1.0%"
        );
    }
}
