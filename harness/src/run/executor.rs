//! What a run asks of the world beyond its own bookkeeping: the machine's conditions and floors,
//! a probe of the host, and each trial's processes. `Processes` is the real one. The driver's
//! tests give one that returns what they script, so that the schedule, a resume, the extra
//! rounds of host states, retakes, failures and the results file's writing are tested without a
//! process started or a clock waited on (as hyperfine's executor trait lets its tests run).

use std::time::Instant;

use super::trial::{Trial, TrialError};
use crate::floors::Floors;
use crate::host::probe::Probe;
use crate::machine::Conditions;
use crate::results::RunRecord;

pub trait Executor {
    /// The machine's conditions as the run starts (`others`: the other runs alive).
    fn conditions(&self, others: Vec<u32>, sizes: &[usize]) -> Conditions;
    /// The floors again, after the last trial.
    fn floors(&self, cores: usize, sizes: &[usize]) -> Floors;
    /// A probe of the host, before or after a trial.
    fn probe(&self, cores: usize, cpus: Option<(usize, usize)>) -> Option<Probe>;
    /// One trial: its record, or why it gave none.
    fn trial(&self, trial: &Trial) -> Result<RunRecord, TrialError>;
    /// Now, as the run's time and its retakes' budget are read.
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The real thing: the machine measured, the host probed, each trial's roles as processes.
pub struct Processes;

impl Executor for Processes {
    fn conditions(&self, others: Vec<u32>, sizes: &[usize]) -> Conditions {
        Conditions::now(others, sizes)
    }

    fn floors(&self, cores: usize, sizes: &[usize]) -> Floors {
        Floors::measure(cores, sizes)
    }

    fn probe(&self, cores: usize, cpus: Option<(usize, usize)>) -> Option<Probe> {
        Probe::take(cores, cpus)
    }

    fn trial(&self, trial: &Trial) -> Result<RunRecord, TrialError> {
        trial.run()
    }
}
