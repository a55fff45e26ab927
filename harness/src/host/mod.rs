//! The host a run measures on, as it changes under the run: `probe` takes a few milliseconds'
//! look at it outside every measured window, `states` groups the probes of a run into the states
//! they show, `load` reads what else ran beside a trial's window, `watch` is `ipcbench doctor
//! --watch`.

pub mod load;
pub mod probe;
pub mod states;
pub mod watch;
