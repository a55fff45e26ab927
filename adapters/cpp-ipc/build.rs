//! Builds cpp-ipc (libipc) from the source tree `CPP_IPC_SRC` names, with its own CMake project,
//! and the C++ shim over `ipc::route`, both linked statically; then sets `cfg(cpp_ipc)`. Without
//! the variable the crate builds a library that says it was not built, and why.

fn main() {
    println!("cargo::rerun-if-env-changed=CPP_IPC_SRC");
    println!("cargo::rerun-if-changed=shim/route.cpp");
    println!("cargo::rustc-check-cfg=cfg(cpp_ipc)");
    let Some(src) = std::env::var_os("CPP_IPC_SRC").filter(|s| !s.is_empty()) else { return };
    let src = std::path::PathBuf::from(src);
    if !src.join("include/libipc/ipc.h").is_file() || !src.join("CMakeLists.txt").is_file() {
        panic!(
            "CPP_IPC_SRC={} is not a cpp-ipc source tree (no include/libipc/ipc.h or CMakeLists.txt): clone \
             https://github.com/mutouyun/cpp-ipc at tag v1.4.1 and name it, or unset CPP_IPC_SRC",
            src.display()
        );
    }
    // Its tests and demos are off by default; only the static library is built.
    let dst = cmake::Config::new(&src).define("CMAKE_BUILD_TYPE", "Release").build_target("ipc").build();
    println!("cargo::rustc-link-search=native={}", dst.join("build/lib").display());
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(2)
        .include(src.join("include"))
        .file("shim/route.cpp")
        .compile("ipcb_cpp_ipc_route");
    println!("cargo::rustc-link-lib=static=ipc");
    println!("cargo::rustc-link-lib=stdc++");
    println!("cargo::rustc-link-lib=pthread");
    println!("cargo::rustc-link-lib=rt");
    println!("cargo::rustc-cfg=cpp_ipc");
}
