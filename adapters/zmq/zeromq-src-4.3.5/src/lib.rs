//! zeromq-src 0.3.6 (libzmq 4.3.5) re-exported under zeromq-src 0.2's version: see Cargo.toml.
pub use upstream::*;
