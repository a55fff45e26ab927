//! The lines above the comparison's table on the host: what the files' floors and wake-ups
//! say, and the states their runs' probes show together.

use ipcbench_api::RecvMode;

use super::{Side, states::Joint};
use crate::floors;
use crate::format::nanos;
use crate::results::Document;

/// What the files' own records say about the host between and during them: floors that moved,
/// floors one file lacks, an idle core's wake-up that changed.
pub(super) fn host((old, o): (&Document, &Side), (new, n): (&Document, &Side)) -> Vec<String> {
    let mut notes = Vec::new();
    for (name, a, b) in [
        ("polling", o.polling_floor_ns, n.polling_floor_ns),
        ("waiting", o.waiting_floor_ns, n.waiting_floor_ns),
    ] {
        if let (Some(a), Some(b)) = (a, b)
            && floors::moved(a, b)
        {
            notes.push(format!(
                "The machine's {name} floor moved between the files ({} in OLD, {} in NEW): the host placed the \
                 cores differently, and figures near that floor moved with it, not with the libraries.",
                nanos(a),
                nanos(b)
            ));
        }
    }
    for (which, doc) in [("OLD", old), ("NEW", new)] {
        let c = doc.conditions.as_ref();
        match (c.and_then(|c| c.floors.as_ref()), c.and_then(|c| c.floors_after.as_ref())) {
            (None, _) => notes.push(format!(
                "{which} records no floors (its ipcbench predates them): whether the host moved between the files \
                 cannot be told from them."
            )),
            (Some(start), Some(end)) => {
                for mode in [RecvMode::Polling, RecvMode::Waiting] {
                    if let (Some(a), Some(b)) = (start.of(mode), end.of(mode))
                        && floors::moved(a.p50_ns, b.p50_ns)
                    {
                        notes.push(format!(
                            "{which}'s {mode} floor moved during its own run ({} at its start, {} at its end): \
                             the host changed under it, and its figures carry both states.",
                            nanos(a.p50_ns),
                            nanos(b.p50_ns)
                        ));
                    }
                }
            }
            (Some(_), None) => {}
        }
    }
    let wake = |d: &Document| d.conditions.as_ref().and_then(|c| c.wake_up_us).map(|w| w.median_us);
    if let (Some(a), Some(b)) = (wake(old), wake(new))
        && floors::moved(a, b)
    {
        notes.push(format!(
            "An idle core's wake-up, measured at each start, differs ({a:.1} µs in OLD, {b:.1} µs in NEW): \
             waiting figures carry it."
        ));
    }
    notes
}

/// What the runs' probes say about the host in both files: the states found in them together,
/// each with its probe and its runs in OLD and in NEW.
pub(super) fn states(joint: Option<&Joint>, old: &Document, new: &Document) -> Vec<String> {
    let Some(js) = joint else {
        let probed = |d: &Document| d.results.iter().any(crate::analysis::states::probed);
        return match (probed(old), probed(new)) {
            (true, false) | (false, true) => vec![
                "Only one file's runs carry the host's probes: its states cannot be matched, so every run of both is compared."
                    .into(),
            ],
            _ => Vec::new(),
        };
    };
    let each: Vec<String> = js
        .states
        .iter()
        .map(|(label, probe, o, n)| format!("{label} ({}): {o} runs in OLD, {n} in NEW", probe.text()))
        .collect();
    let shared = js.states.iter().filter(|s| s.2 > 0 && s.3 > 0).count();
    vec![format!(
        "The runs' probes, found together, show {} state(s) of the host: {}. Each figure is compared within the state both files measured it in most ({shared} shared); a figure with none in common has no verdict.",
        js.states.len(),
        each.join("; ")
    )]
}
