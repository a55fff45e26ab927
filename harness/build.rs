//! Records the tool chain in the binary, and gives the binary the rpath every adapter asks for
//! (an adapter crate with `links` emits `cargo::metadata=rpath=DIR`, seen here as DEP_*_RPATH).
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    println!("cargo::rustc-env=IPCBENCH_RUSTC={}", version.trim());
    for (key, dir) in std::env::vars() {
        if key.starts_with("DEP_") && key.ends_with("_RPATH") {
            println!("cargo::rerun-if-env-changed={key}");
            println!("cargo::rustc-link-arg-bins=-Wl,-rpath,{dir}");
        }
    }
    println!("cargo::rerun-if-changed=build.rs");
}
