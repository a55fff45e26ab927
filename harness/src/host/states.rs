//! The host's states, found from the probes themselves: no figure of any machine is written
//! here. A state is a set of probes whose figures cluster together: along each figure of the
//! probe, sorted values fall into groups wherever one is more than `GAP` times the one before
//! it, and a probe's state is its group along every figure that defines one (`DEFINING`). A run
//! is in a state when its probes before and after both are.

use std::collections::BTreeMap;

use crate::noise::middle;
use crate::results::{CaseResult, HostRecord, HostState, Probe, RunRecord};

/// Two neighbouring values, sorted, more than this factor apart belong to two groups. A state's
/// own noise stays inside it (one placement's polling floor was seen to vary up to 2x from
/// probe to probe, but densely, without a gap), and the changes the probe exists for (another
/// placement of the cores, which triples a round trip) are outside it.
pub const GAP: f64 = 2.0;

/// A run whose probe moved by more than this factor between before and after (on a defining
/// figure) is taken again: by as much as sets two states apart.
pub const MOVED: f64 = GAP;

/// How many times a run whose probe moved is taken again before it is kept and marked.
pub const RETAKES: u32 = 2;

/// The figures of a probe that define its state: the polling floor, the placement of the
/// cores. The waiting floor and the system call's cost are recorded beside it but define
/// nothing: an idle core's wake-up varies from probe to probe more than the placements differ,
/// and a system call's cost jumps 2x now and then right after a trial's processes exit (seen
/// here: a third of the retakes of a first version that counted it), while its shifts between
/// runs (23 % here) are far inside any gap.
pub const DEFINING: [&str; 1] = ["polling"];

fn defining(p: &Probe) -> impl Iterator<Item = (&'static str, Option<f64>)> {
    p.dimensions().into_iter().filter(|(name, _)| DEFINING.contains(name))
}

/// Each value's group (0 the lowest): sorted, a new group wherever a value is more than `gap`
/// times the one before it.
pub fn groups(values: &[f64], gap: f64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut out = vec![0; values.len()];
    let mut group = 0;
    for w in 0..order.len() {
        if w > 0 && values[order[w]] > gap * values[order[w - 1]] {
            group += 1;
        }
        out[order[w]] = group;
    }
    out
}

/// Whether a run's probe moved between before and after, on a defining figure.
pub fn moved(h: &HostRecord) -> bool {
    moved_between(&h.before, &h.after)
}

/// Whether two probes differ by more than `MOVED` on a defining figure, or one measured a
/// figure the other ran out of time for.
pub fn moved_between(a: &Probe, b: &Probe) -> bool {
    defining(a).zip(defining(b)).any(|((_, a), (_, b))| match (a, b) {
        (Some(a), Some(b)) => a.max(b) > MOVED * a.min(b),
        (None, None) => false,
        _ => true,
    })
}

/// The states of a set of probes: for each probe its key (its group along every defining
/// figure), and the states' labels, A, B, ... in the keys' order (lower polling floors first).
/// A probe that could not measure a figure the others did (its polling floor ran out of time:
/// the other CPU was not running) is in no state.
pub struct States {
    keys: Vec<Option<Vec<usize>>>,
    labels: BTreeMap<Vec<usize>, String>,
}

impl States {
    pub fn of(probes: &[Probe]) -> States {
        let columns: Vec<Vec<Option<usize>>> = DEFINING
            .iter()
            .map(|name| {
                let values: Vec<Option<f64>> = probes
                    .iter()
                    .map(|p| p.dimensions().into_iter().find(|(n, _)| n == name).and_then(|(_, v)| v))
                    .collect();
                let present: Vec<f64> = values.iter().flatten().copied().collect();
                let mut g = groups(&present, GAP).into_iter();
                values.iter().map(|v| v.map(|_| g.next().expect("one group per value"))).collect()
            })
            .collect();
        // A figure no probe measured (the polling floor on one core) defines nothing.
        let measured: Vec<bool> = columns.iter().map(|c| c.iter().any(Option::is_some)).collect();
        let keys: Vec<Option<Vec<usize>>> = (0..probes.len())
            .map(|i| columns.iter().zip(&measured).filter(|(_, m)| **m).map(|(c, _)| c[i]).collect())
            .collect();
        let mut labels = BTreeMap::new();
        for k in keys.iter().flatten() {
            labels.entry(k.clone()).or_insert_with(String::new);
        }
        for (i, label) in labels.values_mut().enumerate() {
            *label = label_of(i);
        }
        States { keys, labels }
    }

    /// The state of probe `i`, if it is in one.
    pub fn label(&self, i: usize) -> Option<&str> {
        Some(self.labels[self.keys[i].as_ref()?].as_str())
    }
}

/// A, B, ... Z, then S27, S28, ...
fn label_of(i: usize) -> String {
    match u8::try_from(i).ok().filter(|&i| i < 26) {
        Some(i) => char::from(b'A' + i).to_string(),
        None => format!("S{}", i + 1),
    }
}

/// Gives every run of `results` (a document's, and a case's under way) that carries probes its
/// state, and returns the states seen: each state's probe (the medians of its runs' probes),
/// runs and share. A run whose probes fall into two states, or that moved, is in none.
pub fn assign<'a>(results: impl Iterator<Item = &'a mut CaseResult>) -> Vec<HostState> {
    let mut runs: Vec<&mut RunRecord> =
        results.flat_map(|r| r.modes.iter_mut().flat_map(|m| m.runs.iter_mut())).collect();
    let probes: Vec<Probe> =
        runs.iter().filter_map(|r| r.host.as_ref()).flat_map(|h| [h.before, h.after]).collect();
    let states = States::of(&probes);
    let mut members: BTreeMap<String, Vec<Probe>> = BTreeMap::new();
    let mut i = 0;
    for run in runs.iter_mut() {
        let Some(h) = &run.host else { continue };
        let (before, after) = (states.label(i), states.label(i + 1));
        run.state = before.filter(|b| Some(*b) == after && !h.moved).map(str::to_string);
        if let Some(s) = &run.state {
            members.entry(s.clone()).or_default().extend([h.before, h.after]);
        }
        i += 2;
    }
    let total: usize = members.values().map(|p| p.len() / 2).sum();
    members
        .into_iter()
        .map(|(label, probes)| HostState {
            label,
            probe: median_probe(&probes),
            runs: (probes.len() / 2) as u32,
            share: (probes.len() / 2) as f64 / total.max(1) as f64,
        })
        .collect()
}

/// The median of each figure over a set of probes.
pub fn median_probe(probes: &[Probe]) -> Probe {
    Probe {
        polling_ns: middle(probes.iter().filter_map(|p| p.polling_ns).collect()),
        waiting_ns: middle(probes.iter().filter_map(|p| p.waiting_ns).collect()),
        syscall_ns: middle(probes.iter().map(|p| p.syscall_ns).collect()).unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(polling: f64, syscall: f64) -> Probe {
        Probe { polling_ns: Some(polling), waiting_ns: Some(30_000.0), syscall_ns: syscall }
    }

    #[test]
    fn values_split_where_they_cluster_apart_and_only_there() {
        assert_eq!(groups(&[410.0, 101.0, 395.0, 118.0, 430.0], GAP), [1, 0, 1, 0, 1]);
        // A spread without a gap stays one group, however wide in all.
        let dense: Vec<f64> = (0..40).map(|i| 100.0 * 1.1f64.powi(i)).collect();
        assert!(groups(&dense, GAP).iter().all(|&g| g == 0));
        assert_eq!(groups(&[5.0, 10.5, 22.0], GAP), [0, 1, 2], "each step more than 2x");
        assert_eq!(groups(&[190.0, 370.0], GAP), [0, 0], "less than 2x apart");
        assert!(groups(&[], GAP).is_empty());
    }

    #[test]
    fn a_state_is_a_group_of_the_polling_floor_and_the_other_figures_define_none() {
        let mut far = probe(400.0, 90.0);
        far.waiting_ns = Some(90_000.0);
        let probes = [probe(100.0, 90.0), far, probe(110.0, 250.0), probe(105.0, 92.0)];
        let s = States::of(&probes);
        let labels: Vec<&str> = (0..4).map(|i| s.label(i).unwrap()).collect();
        assert_eq!(labels, ["A", "B", "A", "A"]);
        // A probe whose polling floor ran out of time is in no state; where no probe has one
        // (one core), the polling floor defines nothing.
        let mut short = probe(100.0, 90.0);
        short.polling_ns = None;
        let s = States::of(&[probe(100.0, 90.0), short]);
        assert_eq!((s.label(0), s.label(1)), (Some("A"), None));
        let s = States::of(&[short, short]);
        assert_eq!((s.label(0), s.label(1)), (Some("A"), Some("A")));
        assert_eq!(label_of(25), "Z");
        assert_eq!(label_of(26), "S27");
    }

    #[test]
    fn a_probe_moved_when_a_defining_figure_moved_beyond_the_share() {
        let h = |a: Probe, b: Probe| HostRecord {
            before: a,
            after: b,
            steal_share: None,
            at_s: 0.0,
            retakes: 0,
            moved: false,
            refuted: None,
        };
        assert!(moved(&h(probe(100.0, 90.0), probe(400.0, 90.0))));
        assert!(!moved(&h(probe(100.0, 90.0), probe(100.0, 200.0))), "the system call defines no state");
        assert!(!moved(&h(probe(100.0, 90.0), probe(190.0, 95.0))), "within 2x");
        let mut waiting = probe(100.0, 90.0);
        waiting.waiting_ns = Some(1e6);
        assert!(!moved(&h(probe(100.0, 90.0), waiting)), "the waiting floor defines no state");
        let mut short = probe(100.0, 90.0);
        short.polling_ns = None;
        assert!(moved(&h(probe(100.0, 90.0), short)), "a polling floor that ran out of time");
    }
}
