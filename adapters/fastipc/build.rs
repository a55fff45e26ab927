//! fipc-sys ships libfastipc.so and links it, but the binary gets no RUNPATH: pass the folder on
//! to the harness's build script, which sets the rpath of the `ipcbench` binary.
fn main() {
    println!("cargo::rerun-if-env-changed=DEP_FASTIPC_LIB_DIR");
    let dir = std::env::var("DEP_FASTIPC_LIB_DIR").expect("fipc-sys sets DEP_FASTIPC_LIB_DIR");
    println!("cargo::metadata=rpath={dir}");
    // The baseline example runs outside cargo too.
    println!("cargo::rustc-link-arg-examples=-Wl,-rpath,{dir}");
}
