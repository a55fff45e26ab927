//! The host's states across two files: the probes of both found together (`host::states`), so
//! that a state means the same in OLD and in NEW, and for each row the runs of the state both
//! files measured it in. A result that splits in two is held cluster against cluster.

use crate::analysis::states::split_values;
use crate::host::states::{States, median_probe};
use crate::noise;
use crate::results::{Document, Probe, RunRecord};

/// Each run's state in the two files found together: `old[i][m][k]` for result `i`, mode `m`,
/// run `k` of OLD (None: no probe, or it moved), and the states' probes.
pub struct Joint {
    pub old: Vec<Vec<Vec<Option<String>>>>,
    pub new: Vec<Vec<Vec<Option<String>>>>,
    /// (label, its probe, runs in OLD, runs in NEW).
    pub states: Vec<(String, Probe, usize, usize)>,
}

fn probes(doc: &Document) -> Vec<Probe> {
    doc.results
        .iter()
        .flat_map(|r| r.modes.iter().flat_map(|m| &m.runs))
        .filter_map(|run| run.host.as_ref())
        .flat_map(|h| [h.before, h.after])
        .collect()
}

impl Joint {
    /// None when either file's runs carry no probe.
    pub fn of(old: &Document, new: &Document) -> Option<Joint> {
        let (a, b) = (probes(old), probes(new));
        if a.is_empty() || b.is_empty() {
            return None;
        }
        let all: Vec<Probe> = a.iter().chain(&b).copied().collect();
        let found = States::of(&all);
        let mut i = 0;
        let mut members: Vec<(String, Vec<Probe>, usize, usize)> = Vec::new();
        let mut label = |doc: &Document, second: bool| -> Vec<Vec<Vec<Option<String>>>> {
            doc.results
                .iter()
                .map(|r| {
                    r.modes
                        .iter()
                        .map(|m| {
                            m.runs
                                .iter()
                                .map(|run| {
                                    let h = run.host.as_ref()?;
                                    let (x, y) = (found.label(i), found.label(i + 1));
                                    i += 2;
                                    let state = x.filter(|x| Some(*x) == y && !h.moved)?.to_string();
                                    let e = match members.iter_mut().find(|e| e.0 == state) {
                                        Some(e) => e,
                                        None => {
                                            members.push((state.clone(), Vec::new(), 0, 0));
                                            members.last_mut().expect("just pushed")
                                        }
                                    };
                                    e.1.extend([h.before, h.after]);
                                    if second {
                                        e.3 += 1
                                    } else {
                                        e.2 += 1
                                    }
                                    Some(state)
                                })
                                .collect()
                        })
                        .collect()
                })
                .collect()
        };
        let (old_states, new_states) = (label(old, false), label(new, true));
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let states = members.into_iter().map(|(l, p, o, n)| (l, median_probe(&p), o, n)).collect();
        Some(Joint { old: old_states, new: new_states, states })
    }

    /// The probe of a state, as text.
    pub fn probe_text(&self, label: &str) -> String {
        self.states.iter().find(|s| s.0 == label).map_or(String::new(), |s| s.1.text())
    }
}

/// The state to compare a row in: of the states both sides have runs in, the one with the most
/// runs on its poorer side (then the first). Err: each side's most common state, when they share
/// none.
pub fn shared_state(
    old: &[Option<String>],
    new: &[Option<String>],
) -> Result<String, (Option<String>, Option<String>)> {
    let count = |v: &[Option<String>], s: &str| v.iter().filter(|x| x.as_deref() == Some(s)).count();
    let mut labels: Vec<&str> = old.iter().chain(new).flatten().map(String::as_str).collect();
    labels.sort_unstable();
    labels.dedup();
    let best = labels
        .iter()
        .map(|s| (*s, count(old, s).min(count(new, s))))
        .filter(|(_, n)| *n > 0)
        .reduce(|a, b| if b.1 > a.1 { b } else { a });
    match best {
        Some((s, _)) => Ok(s.to_string()),
        None => {
            let most = |v: &[Option<String>]| {
                labels.iter().filter(|s| count(v, s) > 0).max_by_key(|s| count(v, s)).map(|s| s.to_string())
            };
            Err((most(old), most(new)))
        }
    }
}

/// The values of `runs` in `state`.
pub fn in_state(
    runs: &[RunRecord],
    states: &[Option<String>],
    state: &str,
    get: impl Fn(&RunRecord) -> Option<f64>,
) -> Vec<f64> {
    runs.iter().zip(states).filter(|(_, s)| s.as_deref() == Some(state)).filter_map(|(r, _)| get(r)).collect()
}

/// The change from `old` to `new` (`noise::change`); where either side's runs split into
/// clusters, each cluster of NEW against its match in OLD (every run of a side that does not
/// split is one cluster; as many on both sides pair in order, else each with the nearest): the change of the largest of NEW's clusters, with an interval from
/// the lowest of the clusters' lows to the highest of their highs, so that clusters that
/// disagree hold zero. Also whether clusters were matched.
pub fn change(old: &[f64], new: &[f64]) -> Option<((f64, f64, f64), bool)> {
    let (co, cn) = (split(old), split(new));
    if co.len() < 2 && cn.len() < 2 {
        return noise::change(old, new).map(|c| (c, false));
    }
    let mut out: Option<(f64, f64, f64)> = None;
    let mut largest = 0;
    for (k, n) in cn.iter().enumerate() {
        // As many clusters on both sides: in order, low with low (a shift moves all alike);
        // otherwise each with the nearest.
        let nearest = if co.len() == cn.len() {
            &co[k]
        } else {
            co.iter().min_by(|a, b| distance(a, n).total_cmp(&distance(b, n)))?
        };
        let c = noise::change(nearest, n)?;
        out = Some(match out {
            None => c,
            Some(o) => (if n.len() > largest { c.0 } else { o.0 }, o.1.min(c.1), o.2.max(c.2)),
        });
        largest = largest.max(n.len());
    }
    out.map(|c| (c, true))
}

/// A side's runs as clusters of two or more (`analysis::states::split_values`), or as one.
fn split(values: &[f64]) -> Vec<Vec<f64>> {
    let each = split_values(values);
    if each.is_empty() {
        return vec![values.to_vec()];
    }
    each.into_iter().filter(|c| c.len() >= 2).collect()
}

/// How far apart two clusters' medians are, as a factor.
fn distance(a: &[f64], b: &[f64]) -> f64 {
    match (noise::middle(a.to_vec()), noise::middle(b.to_vec())) {
        (Some(x), Some(y)) if x > 0.0 && y > 0.0 => (x / y).ln().abs(),
        _ => f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<Option<String>> {
        v.iter().map(|x| (!x.is_empty()).then(|| x.to_string())).collect()
    }

    #[test]
    fn a_row_is_compared_in_the_state_both_sides_have_most_runs_in() {
        assert_eq!(shared_state(&s(&["A", "A", "B"]), &s(&["B", "B", "A"])), Ok("A".into()));
        assert_eq!(shared_state(&s(&["A", "B", "B"]), &s(&["B", "B", "A"])), Ok("B".into()));
        assert_eq!(
            shared_state(&s(&["A", "A", ""]), &s(&["B", "B", "B"])),
            Err((Some("A".into()), Some("B".into())))
        );
    }

    #[test]
    fn clusters_are_held_against_their_nearest_and_a_shift_of_both_is_a_change() {
        let old = [3.0e6, 3.1e6, 6.0e6, 6.2e6, 6.1e6];
        let slowed: Vec<f64> = old.iter().map(|v| v * 0.7).collect();
        let ((c, lo, hi), matched) = change(&old, &slowed).unwrap();
        assert!(matched && (c + 0.3).abs() < 1e-9 && hi < 0.0, "{c} {lo} {hi}");
        // The same two clusters in other shares: no change, though the medians of all differ.
        let shares = [3.0e6, 3.05e6, 3.1e6, 6.1e6, 6.0e6];
        let ((c, lo, hi), _) = change(&old, &shares).unwrap();
        assert!(c.abs() < 0.05 && lo <= 0.0 && hi >= 0.0, "{c} {lo} {hi}");
        assert!(noise::change(&old, &shares).unwrap().0 < -0.4, "the plain medians would call it -50%");
        // Without clusters it is the plain change.
        assert!(!change(&[1.0, 1.1], &[2.0, 2.1]).unwrap().1);
    }
}
