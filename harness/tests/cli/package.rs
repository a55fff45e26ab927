//! A build copied to another machine: scripts/package.sh's archive, unpacked into an empty
//! folder, runs with the build's `target/` out of reach.

use super::*;

/// The build's `target/` folder (the binary is `target/<profile>/ipcbench`).
fn target_dir() -> PathBuf {
    Path::new(BIN).parent().and_then(Path::parent).expect("the binary is in target/<profile>/").to_path_buf()
}

/// `program args` where an empty tmpfs lies over `target/`, so that nothing of the build can be
/// loaded.
fn without_target(program: &Path, args: &[&str]) -> Command {
    let mut c =
        in_private_mounts("mount -t tmpfs -o size=1m none \"$HIDE\" && exec \"$0\" \"$@\"", program, args);
    c.env("HIDE", target_dir());
    c
}

#[test]
fn the_packaged_archive_runs_from_an_empty_folder_with_target_out_of_reach() {
    let t = RunTest::new("package");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/package.sh");
    let dist = t.out.join("dist");
    let packed =
        Command::new("bash").arg(&script).arg("--binary").arg(BIN).arg("--out").arg(&dist).output().unwrap();
    assert!(packed.status.success(), "package.sh: {}", String::from_utf8_lossy(&packed.stderr));
    let archive = PathBuf::from(String::from_utf8(packed.stdout).unwrap().trim());
    assert!(
        archive.starts_with(&dist) && archive.to_string_lossy().ends_with("-linux.tar.gz"),
        "{archive:?}"
    );

    let unpacked = t.out.join("elsewhere");
    std::fs::create_dir_all(&unpacked).unwrap();
    let tar = Command::new("tar").arg("-C").arg(&unpacked).arg("-xzf").arg(&archive).status().unwrap();
    assert!(tar.success());
    let folder = std::fs::read_dir(&unpacked).unwrap().next().unwrap().unwrap().path();
    let exe = folder.join("ipcbench");

    // Every library it loads but the C library's own comes from the folder beside it.
    let ldd = Command::new("ldd").arg(&exe).output().unwrap();
    let ldd = String::from_utf8_lossy(&ldd.stdout).into_owned();
    assert!(ldd.contains("libfastipc.so"), "{ldd}");
    for line in ldd.lines().filter(|l| l.contains(" => ")) {
        let soname = line.split_whitespace().next().unwrap();
        let glibc = ["libc.so", "libm.so", "libpthread.so", "libdl.so", "librt.so", "libresolv.so"]
            .iter()
            .any(|g| soname.starts_with(g));
        if !glibc {
            assert!(
                line.contains(&format!("{}/lib/{soname}", folder.display())),
                "{soname} not from the archive: {line}"
            );
        }
    }

    let list = without_target(&exe, &["list"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&list.stderr);
    assert!(list.status.success(), "list, with target/ hidden: {stderr}");
    assert!(String::from_utf8_lossy(&list.stdout).contains("\n  fastipc "), "{stderr}");

    // One short case, children and all, from the unpacked binary alone.
    let results = t.out.join("results");
    let (pid, output) = to_the_end(
        without_target(
            &exe,
            &[
                "run",
                "stream-rtt/16B",
                "--lib",
                "fastipc,uds",
                "--runs",
                "1",
                "--duration",
                "60ms",
                "--warmup",
                "20ms",
            ],
        )
        .arg("--out")
        .arg(&results),
    );
    assert!(output.status.success(), "a run from the archive: {}", String::from_utf8_lossy(&output.stderr));
    let doc = the_document(&results);
    for lib in ["fastipc", "uds"] {
        let r = result_in(&doc, "stream-rtt/16B", lib);
        assert_eq!(r.status, Status::Ok, "{lib}: {:?}", r.reason);
    }
    t.nothing_left(pid);
}
