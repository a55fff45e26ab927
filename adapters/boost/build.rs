//! Compiles the C++ shim around boost::interprocess::message_queue against Boost's headers:
//! those BOOST_INCLUDE_DIR names, else the pinned copy scripts/setup.sh installs from PyPI into
//! the project's .tools/boost.

use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=shim/mq.cpp");
    println!("cargo::rerun-if-env-changed=BOOST_INCLUDE_DIR");
    let include = match std::env::var_os("BOOST_INCLUDE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/boost/pkg/boost_headers/include")
        }
    };
    let header = include.join("boost/interprocess/ipc/message_queue.hpp");
    if !header.exists() {
        panic!(
            "Boost's headers are missing ({}): run scripts/setup.sh, which installs boost-headers \
             1.85 from PyPI into .tools/boost, or set BOOST_INCLUDE_DIR to a Boost include folder, \
             then build again",
            header.display()
        );
    }
    println!("cargo::rerun-if-changed={}", header.display());
    // Recorded in the results' configuration: whose headers these were.
    let from = if include.ends_with(".tools/boost/pkg/boost_headers/include") {
        "PyPI's boost-headers (scripts/setup.sh, in .tools/boost)".to_string()
    } else {
        format!("BOOST_INCLUDE_DIR {}", include.display())
    };
    println!("cargo::rustc-env=IPCB_BOOST_HEADERS={from}");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(2)
        .include(&include)
        .file("shim/mq.cpp")
        .warnings(true)
        .compile("ipcb_boost_mq");
    // Boost.Interprocess uses POSIX shared memory and process-shared pthread objects.
    println!("cargo::rustc-link-lib=pthread");
    println!("cargo::rustc-link-lib=rt");
}
