//! Why a result failed, as a kind scripts and tests match (`failure` in the results file),
//! beside the words of its `reason`, which name the role, the signal or code and what else
//! ended.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// The machine could not hold the trial before it began: /dev/shm too full, a name of the
    /// trial's already taken, its files not written, a child's status not read.
    Machine,
    /// A child process could not be started.
    Spawn,
    /// A deadline passed (set-up, the window's reports, a connect's answer); a process the
    /// kernel shows stopped is named.
    Deadline,
    /// A child was ended by a signal: a crash, the OOM killer, a fault injected.
    Killed,
    /// A child exited with a failure code, or closed its output, where it should have gone on.
    Exited,
    /// A child said what the protocol does not allow, or reported figures that cannot be read.
    Protocol,
    /// The roles' reports do not agree: messages lost, duplicated or out of order where the case
    /// allows none.
    Disagreement,
    /// A child reported but did not exit.
    NoExit,
}

impl Failure {
    /// A child's end: by a signal, or by itself.
    pub fn of_end(status: std::process::ExitStatus) -> Failure {
        use std::os::unix::process::ExitStatusExt;
        if status.signal().is_some() { Failure::Killed } else { Failure::Exited }
    }
}
