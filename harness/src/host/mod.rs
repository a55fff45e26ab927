//! The host a run measures on, as it changes under the run: `probe` takes a few milliseconds'
//! look at it outside every measured window, `states` groups the probes of a run into the states
//! they show, `watch` is `ipcbench doctor --watch`.

pub mod probe;
pub mod states;
pub mod watch;
