//! Each result's record as the run goes: what it is before any trial (a dash, a skip, or a
//! place for each receive mode's runs), and how an interruption marks it.

use ipcbench_api::{LibraryInfo, Requests, Shape, Transfer};

use crate::matrix::Case;
use crate::registry;
use crate::results::{CaseParams, CaseResult, ModeResult, Pin, Status};

/// The reason of a result the run's interruption cut short.
const INTERRUPTED: &str = "the run was interrupted (Ctrl-C or SIGTERM)";

/// Where `--pin` puts each role of `case` on `cpus`, in words: `sender 0 on CPU 0, receiver 0
/// on CPU 1`, and which roles share a CPU when there are more roles than CPUs.
pub fn placement(case: &Case, pin: Pin, cpus: &[usize]) -> String {
    let roles = case.roles();
    let mut on: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, (role, index)) in roles.iter().enumerate() {
        let Some(cpu) = pin.cpu(cpus, i) else { return "not pinned: no CPU to pin to".into() };
        let name = format!("{} {index}", role.as_str());
        match on.iter_mut().find(|(c, _)| *c == cpu) {
            Some((_, names)) => names.push(name),
            None => on.push((cpu, vec![name])),
        }
    }
    let each: Vec<String> =
        on.iter().map(|(cpu, names)| format!("CPU {cpu}: {}", names.join(", "))).collect();
    let shared = if on.iter().any(|(_, n)| n.len() > 1) {
        format!("{} roles on {} CPU{}, shared; ", roles.len(), on.len(), if on.len() == 1 { "" } else { "s" })
    } else {
        String::new()
    };
    format!("{shared}{}", each.join("; "))
}

/// Why a library cannot run a case, if it cannot: the pattern it lacks, a message larger than
/// it carries, or (a loan case) larger than it lends.
fn lacks(case: &Case, lib: &LibraryInfo, buffer: Option<usize>) -> Option<String> {
    let support = case.support(&lib.capabilities);
    if !support.is_yes() {
        return Some(support.text().into());
    }
    if let Some((largest, why)) = &lib.largest_message
        && case.size > *largest
    {
        return Some(format!("messages of {} bytes, where at most {largest} fit: {why}", case.size));
    }
    let lent = if case.transfer == Transfer::Loan {
        registry::largest_loan(lib.id, case.shape, buffer)
    } else {
        None
    };
    match lent {
        Some((largest, why)) if case.size > largest => Some(format!(
            "a loan of {} bytes, where at most {largest} are lent: {why} (a loan is never copied in pieces)",
            case.size
        )),
        _ => None,
    }
}

/// One case for one library, before any trial: a dash (the library lacks the pattern or the
/// size), a skip, or `Ok` with a place for each receive mode's runs.
pub fn begin(
    case: &Case,
    lib: &LibraryInfo,
    cores: usize,
    skip_oversubscribed: bool,
    buffer: Option<usize>,
) -> CaseResult {
    let processes = case.roles().len();
    let mut result = CaseResult {
        case: case.name.clone(),
        params: Some(CaseParams::of(case)),
        pattern: case.pattern(),
        size: case.size,
        batch: (case.batch > 1).then_some(case.batch),
        transfer: case.transfer,
        library: lib.id.into(),
        side: None,
        processes,
        oversubscribed: processes > cores,
        status: Status::Ok,
        reason: None,
        failure: None,
        best_mode: None,
        median: None,
        spread: None,
        note: None,
        placement: None,
        resolution: None,
        runs_taken: None,
        concurrent_runs: Vec::new(),
        host_state: None,
        load: None,
        modes: Vec::new(),
    };
    if let Some(reason) = lacks(case, lib, buffer) {
        result.status = Status::Unsupported;
        result.reason = Some(reason);
        return result;
    }
    if let (Shape::Service { servers, .. }, Requests::ToEveryServer) = (case.shape, lib.requests)
        && servers > 1
    {
        result.note = Some(format!(
            "every request went to all {servers} servers and each answered it: {}'s servers do not \
             share a load; each client took the first reply",
            lib.name
        ));
    }
    if result.oversubscribed && skip_oversubscribed {
        result.status = Status::Skipped;
        result.reason = Some(format!("oversubscribed: {processes} processes on {cores} cores"));
        return result;
    }
    result.modes =
        lib.modes.iter().map(|&mode| ModeResult { mode, runs: Vec::new(), median: None }).collect();
    result
}

/// The run was interrupted during one of this result's trials.
pub fn interrupted(result: &mut CaseResult) {
    result.status = Status::Interrupted;
    result.reason = Some(INTERRUPTED.into());
}

/// The run stopped before this result had all its `runs`: no median stands on fewer runs than
/// asked for, so it is interrupted and a resume runs it again, whole.
pub fn cut_short(result: &mut CaseResult, runs: u32) {
    if result.status == Status::Ok && result.modes.iter().any(|m| m.runs.len() < runs as usize) {
        interrupted(result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::find;
    use crate::registry;

    #[test]
    fn a_result_begins_as_a_dash_a_skip_or_a_place_for_every_mode() {
        let (_, uds) = registry::find("uds").unwrap();
        let queue = begin(&find("queue/1x1/16B").unwrap(), &uds, 2, false, None);
        assert_eq!(
            (queue.status, queue.reason.as_deref()),
            (Status::Unsupported, Some(uds.capabilities.queue.text()))
        );
        let service = begin(&find("service/4c4s/16B").unwrap(), &uds, 2, true, None);
        assert_eq!(service.status, Status::Skipped);
        assert_eq!(service.reason.as_deref(), Some("oversubscribed: 8 processes on 2 cores"));
        let (_, fastipc) = registry::find("fastipc").unwrap();
        let stream = begin(&find("stream/16B").unwrap(), &fastipc, 2, true, None);
        assert_eq!(stream.status, Status::Ok);
        assert_eq!(stream.modes.iter().map(|m| m.mode).collect::<Vec<_>>(), fastipc.modes);
        let (_, iceoryx2) = registry::find("iceoryx2").unwrap();
        let shared = begin(&find("service/4c4s/16B").unwrap(), &iceoryx2, 8, false, None);
        assert!(shared.note.unwrap().contains("do not share a load"));
    }

    #[test]
    fn a_result_cut_short_is_interrupted_and_a_whole_one_is_not() {
        let (_, fastipc) = registry::find("fastipc").unwrap();
        let mut r = begin(&find("stream/16B").unwrap(), &fastipc, 2, false, None);
        cut_short(&mut r, 1);
        assert_eq!(r.status, Status::Interrupted);
        let mut dash =
            begin(&find("queue/1x1/16B").unwrap(), &registry::find("uds").unwrap().1, 2, false, None);
        cut_short(&mut dash, 1);
        assert_eq!(dash.status, Status::Unsupported, "a dash stays a dash");
    }
}
