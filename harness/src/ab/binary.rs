//! The other binary of an A/B run: what it says it is (`ipcbench identify`, one JSON line),
//! checked before any trial. Its children must speak this driver's role protocol: the same
//! protocol number and the same child flags; anything else is refused, naming both.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use crate::registry;
use crate::results::ab::{Binary, Side};
use crate::role::ChildArgs;

/// The role protocol: what a driver says to a child and reads back (its command line, the
/// ready/go/result/drain lines, the report's JSON). Raised with any change to them that an
/// older child would misread; the child flags are compared besides.
pub const PROTOCOL: u32 = 1;

/// How long `identify` may take.
const ANSWER: Duration = Duration::from_secs(10);

/// What a binary says of itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub tool: String,
    pub version: String,
    pub protocol: u32,
    /// The long flags of `child`, sorted.
    pub child_flags: Vec<String>,
    /// Each library built in: id and version.
    pub libraries: Vec<(String, String)>,
}

impl Identity {
    pub fn this() -> Identity {
        let child = ChildArgs::augment_args(clap::Command::new("child"));
        let mut child_flags: Vec<String> =
            child.get_arguments().filter_map(|a| a.get_long()).map(String::from).collect();
        child_flags.sort();
        let libraries = registry::select(None)
            .map(|libs| libs.into_iter().map(|l| (l.id.to_string(), l.version)).collect())
            .unwrap_or_default();
        Identity {
            tool: "ipcbench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: PROTOCOL,
            child_flags,
            libraries,
        }
    }

    fn text(&self) -> String {
        format!(
            "ipcbench {} (role protocol {}; child flags {})",
            self.version,
            self.protocol,
            self.child_flags.join(" ")
        )
    }
}

/// FNV-1a over the file's bytes, and its length: enough to tell two builds apart.
fn build_of(bytes: &[u8]) -> String {
    let hash =
        bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("fnv1a64 {hash:016x}, {} bytes", bytes.len())
}

/// This binary as an A/B run records it.
pub fn this_binary() -> Result<Binary> {
    let exe = std::env::current_exe().context("finding this binary")?;
    let bytes = std::fs::read(&exe).with_context(|| format!("reading {}", exe.display()))?;
    let id = Identity::this();
    Ok(Binary {
        side: Side::Base,
        path: exe,
        version: id.version,
        build: build_of(&bytes),
        libraries: id.libraries,
    })
}

/// `--against PATH`, checked: a file this driver can start whose role protocol is this one's and
/// which has every library of `libraries` built in. Also whether it is this very binary (the
/// same bytes), which is allowed: a run of one binary against itself is what the sentinel does.
pub fn check(path: &Path, libraries: &[&str]) -> Result<(Binary, bool)> {
    let what = format!("--against {}", path.display());
    let meta = std::fs::metadata(path).with_context(|| format!("{what}: no such file to run"))?;
    // Started by its whole path: a bare name would be looked up on PATH instead.
    let path = &std::fs::canonicalize(path).with_context(|| format!("{what}: finding it"))?;
    if meta.is_dir() {
        bail!("{what} is a folder: name the other ipcbench binary (target/release/ipcbench of its build)");
    }
    if meta.permissions().mode() & 0o111 == 0 {
        bail!("{what} is not executable: name the other ipcbench binary, or chmod +x it");
    }
    let them =
        identify(path).with_context(|| format!("{what} is not an ipcbench binary this driver can run"))?;
    let us = Identity::this();
    if them.tool != "ipcbench" {
        bail!("{what} says it is {:?}, not ipcbench", them.tool);
    }
    if (them.protocol, &them.child_flags) != (us.protocol, &us.child_flags) {
        bail!(
            "{what} is {}, this driver is {}: its role processes would not understand this driver; build the two \
             from versions that speak one protocol",
            them.text(),
            us.text()
        );
    }
    for id in libraries {
        if !them.libraries.iter().any(|(l, _)| l == id) {
            bail!(
                "{what} has no library {id} built in (it has {})",
                them.libraries.iter().map(|l| l.0.as_str()).collect::<Vec<_>>().join(", ")
            );
        }
    }
    let bytes = std::fs::read(path).with_context(|| format!("{what}: reading it"))?;
    let mine = std::fs::read(std::env::current_exe()?).context("reading this binary")?;
    let binary = Binary {
        side: Side::Candidate,
        path: path.to_path_buf(),
        version: them.version,
        build: build_of(&bytes),
        libraries: them.libraries,
    };
    Ok((binary, bytes == mine))
}

/// Runs `path identify` and reads its one line, within `ANSWER`.
fn identify(path: &Path) -> Result<Identity> {
    let mut child = Command::new(path)
        .arg("identify")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting it")?;
    let deadline = Instant::now() + ANSWER;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("`identify` gave no answer within {}s", ANSWER.as_secs());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut out = String::new();
    child.stdout.take().expect("piped").take(1 << 16).read_to_string(&mut out).ok();
    if !status.success() {
        bail!("`identify` ended with {status}");
    }
    serde_json::from_str(out.trim())
        .with_context(|| format!("`identify` said {:?}", out.chars().take(200).collect::<String>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_binary_names_its_protocol_and_every_child_flag() {
        let id = Identity::this();
        assert_eq!(id.protocol, PROTOCOL);
        for flag in ["lib", "case", "role", "verify", "handicap-ns"] {
            assert!(id.child_flags.iter().any(|f| f == flag), "{flag}: {:?}", id.child_flags);
        }
        assert_eq!(id.libraries.len(), registry::LIBRARIES.len());
        assert_ne!(build_of(b"a"), build_of(b"b"));
    }
}
