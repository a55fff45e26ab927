//! Compiles the C++ shim around boost::interprocess::message_queue against the system's Boost
//! headers (Debian's libboost-dev; scripts/setup.sh installs it).

fn main() {
    println!("cargo::rerun-if-changed=shim/mq.cpp");
    let header = "/usr/include/boost/interprocess/ipc/message_queue.hpp";
    if !std::path::Path::new(header).exists() {
        panic!(
            "Boost's headers are missing ({header}): install libboost-dev (scripts/setup.sh does), then build again"
        );
    }
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(2)
        .file("shim/mq.cpp")
        .warnings(true)
        .compile("ipcb_boost_mq");
    // Boost.Interprocess uses POSIX shared memory and process-shared pthread objects.
    println!("cargo::rustc-link-lib=pthread");
    println!("cargo::rustc-link-lib=rt");
}
