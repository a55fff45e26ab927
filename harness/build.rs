//! Records the tool chain in the binary, and gives the binary the search path of every shared
//! library an adapter asks for (an adapter crate with `links` emits `cargo::metadata=rpath=DIR`,
//! seen here as DEP_*_RPATH). Every path is relative to the binary (`$ORIGIN`), so that the
//! binary runs where it is copied: `$ORIGIN/lib` first, where scripts/package.sh puts the
//! libraries beside it, then each folder as it lies from the binary inside `target/`, which
//! therefore may move as a whole.
use std::path::{Component, Path, PathBuf};
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
    // The binary lands in the profile's folder: OUT_DIR is <profile>/build/ipcbench-<hash>/out.
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let profile = out.ancestors().nth(3).expect("OUT_DIR is <profile>/build/<crate>/out").to_path_buf();
    let mut paths = vec!["$ORIGIN/lib".to_string()];
    for (key, dir) in std::env::vars() {
        if key.starts_with("DEP_") && key.ends_with("_RPATH") {
            println!("cargo::rerun-if-env-changed={key}");
            paths.push(relative_to(&profile, Path::new(&dir)));
        }
    }
    // DT_RPATH, not DT_RUNPATH: only the older one is searched for the libraries' own libraries
    // too (libbsd's libmd), so that a packaged binary finds all of them in its lib/.
    println!("cargo::rustc-link-arg-bins=-Wl,--disable-new-dtags,-rpath,{}", paths.join(":"));
    println!("cargo::rerun-if-changed=build.rs");
}

/// `dir` as `$ORIGIN/...` from a binary in `profile`, when `dir` is inside it; else as it is.
fn relative_to(profile: &Path, dir: &Path) -> String {
    match dir.strip_prefix(profile) {
        Ok(rest) if rest.components().all(|c| matches!(c, Component::Normal(_))) => {
            format!("$ORIGIN/{}", rest.display())
        }
        _ => dir.display().to_string(),
    }
}
