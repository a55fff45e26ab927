//! Faults the driver injects on purpose (`ipcbench run --fault`), so that the fault suite and
//! anyone doubting the harness can watch a case fail the way a real crash or hang would make it
//! fail: a signal to one role process at a chosen stage of a trial. docs/FAULTS.md lists the
//! faults tried and their outcomes.

use std::time::Duration;

use anyhow::{Result, bail};

use crate::matrix::{Case, Role, glob_match};

/// When in a trial the signal goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// As soon as the role says ready (its endpoint is open), before the start.
    Setup,
    /// Halfway through the warm-up.
    Warmup,
    /// Halfway through the measured window.
    Window,
}

/// Which side of the case receives it: the driving role (sender, pinger, publisher, producer,
/// client) or the other one (receiver, echo, subscriber, consumer, server); the first process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Sending,
    Receiving,
}

#[derive(Clone, Debug)]
pub struct Fault {
    pub signal: i32,
    /// A stall: the signal is SIGSTOP, and SIGCONT follows after this long (the latency cases'
    /// proof that a stall is charged to every message it delays).
    pub resume_after: Option<Duration>,
    pub stage: Stage,
    pub side: Side,
    /// The cases whose first trial gets it (a glob; every case when absent).
    pub cases: Option<String>,
}

pub const FORMAT: &str = "SIGNAL:STAGE:SIDE[:CASES], as kill:window:receiving:*/16B (SIGNAL: kill, \
                          stop, term, int, or stall=DURATION, a stop and a continue that long after; STAGE: setup, warmup or window; SIDE: sending or receiving; \
                          CASES: a glob of case names)";

impl Fault {
    pub fn parse(text: &str) -> Result<Fault> {
        let parts: Vec<&str> = text.splitn(4, ':').collect();
        let (signal, stage, side) = match parts[..] {
            [sig, stage, side] | [sig, stage, side, _] => (sig, stage, side),
            _ => bail!("--fault {text:?}: write it as {FORMAT}"),
        };
        let resume_after = match signal.strip_prefix("stall=") {
            Some(d) => Some(
                humantime::parse_duration(d)
                    .map_err(|e| anyhow::anyhow!("--fault: stall={d}: {e} (write it as stall=100ms)"))?,
            ),
            None => None,
        };
        let signal = match signal {
            _ if resume_after.is_some() => libc::SIGSTOP,
            "kill" => libc::SIGKILL,
            "stop" => libc::SIGSTOP,
            "term" => libc::SIGTERM,
            "int" => libc::SIGINT,
            other => bail!("--fault: unknown signal {other:?}: kill, stop, term, int or stall=DURATION"),
        };
        let stage = match stage {
            "setup" => Stage::Setup,
            "warmup" => Stage::Warmup,
            "window" => Stage::Window,
            other => bail!("--fault: unknown stage {other:?}: setup, warmup or window"),
        };
        let side = match side {
            "sending" => Side::Sending,
            "receiving" => Side::Receiving,
            other => bail!("--fault: unknown side {other:?}: sending or receiving"),
        };
        if resume_after.is_some() && stage == Stage::Setup {
            bail!("--fault: a stall goes in the warm-up or the window, not the set-up");
        }
        Ok(Fault { signal, resume_after, stage, side, cases: parts.get(3).map(|s| s.to_string()) })
    }

    /// Whether the trial numbered `run` (from 1) of the case's first receive mode gets it.
    pub fn applies(&self, case: &Case, first_mode: bool, run: u32) -> bool {
        first_mode && run == 1 && self.cases.as_deref().is_none_or(|g| glob_match(g, &case.name))
    }

    /// Which of the case's processes (its position in `Case::roles`) receives the signal.
    pub fn target(&self, roles: &[(Role, usize)]) -> Option<usize> {
        roles.iter().position(|(r, _)| r.is_driving() == (self.side == Side::Sending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let f = Fault::parse("stop:window:receiving:stream/*").unwrap();
        assert_eq!((f.signal, f.stage, f.side), (libc::SIGSTOP, Stage::Window, Side::Receiving));
        assert_eq!(f.cases.as_deref(), Some("stream/*"));
        let all = crate::matrix::matrix();
        let stream = all.iter().find(|c| c.name == "stream/16B").unwrap();
        let queue = all.iter().find(|c| c.name == "queue/1x1/16B").unwrap();
        assert!(f.applies(stream, true, 1) && !f.applies(stream, true, 2) && !f.applies(stream, false, 1));
        assert!(!f.applies(queue, true, 1));
        assert_eq!(f.target(&stream.roles()), Some(0), "the receiver is first");
        assert!(Fault::parse("kill:later:sending").unwrap_err().to_string().contains("unknown stage"));
        assert!(Fault::parse("kill").unwrap_err().to_string().contains("SIGNAL:STAGE:SIDE"));
        let stall = Fault::parse("stall=100ms:window:receiving").unwrap();
        assert_eq!((stall.signal, stall.resume_after), (libc::SIGSTOP, Some(Duration::from_millis(100))));
        assert_eq!(f.resume_after, None);
        assert!(Fault::parse("stall=soon:window:receiving").unwrap_err().to_string().contains("stall=100ms"));
        assert!(Fault::parse("stall=1s:setup:receiving").unwrap_err().to_string().contains("not the set-up"));
    }
}
