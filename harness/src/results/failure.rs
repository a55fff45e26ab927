//! Why a result failed, as a kind scripts and tests match (`failure` in the results file),
//! beside the words of its `reason`, which name the role, the signal or code and what else
//! ended.

use serde::{Deserialize, Serialize};

/// Each kind carries what a script needs without reading the words: which role (as the words
/// name it, `producer 2`), its signal or exit code, who was still awaited.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Failure {
    /// The machine could not hold the trial before it began: /dev/shm too full, a name of the
    /// trial's already taken, its files not written, a child's status not read.
    Machine,
    /// A child process could not be started (`role` absent: this binary could not be found).
    Spawn {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    },
    /// A deadline passed (set-up, the window's reports, a connect's answer) while these roles
    /// were awaited; a process the kernel shows stopped is named in the words.
    Deadline { waiting: Vec<String> },
    /// A child was ended by a signal: a crash, the OOM killer, a fault injected.
    Killed { role: String, signal: i32 },
    /// A child exited with a failure code, or closed its output or input where it should have
    /// gone on (no code; no role: every child's output closed at once).
    Exited {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
    },
    /// A child said what the protocol does not allow, or reported figures that cannot be read.
    Protocol { role: String },
    /// The roles' reports do not agree: messages lost, duplicated or out of order where the case
    /// allows none. `role` is the one whose report shows it.
    Disagreement { role: String },
    /// A child reported but did not exit.
    NoExit { role: String },
}

impl Failure {
    /// Role `role`'s end: by a signal, or by itself with a code.
    pub fn of_end(role: String, status: std::process::ExitStatus) -> Failure {
        use std::os::unix::process::ExitStatusExt;
        match status.signal() {
            Some(signal) => Failure::Killed { role, signal },
            None => Failure::Exited { role: Some(role), code: status.code() },
        }
    }

    /// A child's output or input closed where it should have gone on: no code to tell.
    pub fn closed(role: String) -> Failure {
        Failure::Exited { role: Some(role), code: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// The file holds the kind and its data, flat, so a script reads `failure.kind`.
    #[test]
    fn a_failure_is_written_as_its_kind_and_data() {
        let killed = Failure::of_end("producer 2".into(), std::process::ExitStatus::from_raw(libc::SIGABRT));
        let text = serde_json::to_string(&killed).unwrap();
        assert_eq!(text, r#"{"kind":"killed","role":"producer 2","signal":6}"#);
        let exited = Failure::of_end("receiver 0".into(), std::process::ExitStatus::from_raw(3 << 8));
        assert_eq!(
            serde_json::to_string(&exited).unwrap(),
            r#"{"kind":"exited","role":"receiver 0","code":3}"#
        );
        assert_eq!(serde_json::to_string(&Failure::Machine).unwrap(), r#"{"kind":"machine"}"#);
        for f in [killed, exited, Failure::Machine, Failure::Deadline { waiting: vec!["sender 0".into()] }] {
            assert_eq!(serde_json::from_str::<Failure>(&serde_json::to_string(&f).unwrap()).unwrap(), f);
        }
    }
}
