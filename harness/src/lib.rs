//! ipcbench: measures inter-process communication libraries side by side, each in processes of
//! its own. The modules follow the data's flow:
//!
//! `cli` (the command line) → `options` (what a run is asked to do) → `matrix` (the cases) and
//! `registry` (the libraries) → `run` (the driver: schedule, trials, child processes) → `role`
//! (what each child process does, through its adapter) → `analysis` (reports → figures, medians,
//! which figure counts) → `results` (the file) → `report` (tables, charts, CSV, HTML, and the
//! terminal). `compare` holds two results files against each other, `noise` says how far a median could move; `machine` and `doctor` describe the machine, `floors` what it allows two processes, `host` how it changes under a run (its probes and states); `fault` the faults a run may inject
//! on purpose; `format` turns numbers into text; `unpredictable` makes the names nobody can plant ahead of a run; `histogram` carries latency histograms between
//! the stages.

pub mod ab;
pub mod analysis;
pub mod calibrate;
pub mod cli;
pub mod compare;
pub mod console;
pub mod doctor;
pub mod fault;
pub mod floors;
pub mod format;
pub mod histogram;
pub mod host;
pub mod machine;
pub mod matrix;
pub mod noise;
pub mod options;
pub mod pattern;
pub mod registry;
pub mod report;
pub mod results;
pub mod role;
pub mod run;
pub mod unpredictable;
