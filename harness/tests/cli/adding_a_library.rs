//! docs/ARCHITECTURE.md's "Adding a library", compiled and run: the page shows this adapter as
//! it is, the adapter passes the scenarios every adapter's tests run, and its registry line
//! builds.

use super::*;
use ipcbench_api::{Library, RecvMode, Setup, Shape, testing};

#[path = "../../../docs/examples/mylib.rs"]
mod mylib;

#[test]
fn the_documented_adapter_is_the_one_the_page_shows_and_it_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let page = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let code = std::fs::read_to_string(root.join("docs/examples/mylib.rs")).unwrap();
    assert!(
        page.contains(&format!("```rust\n{code}```")),
        "docs/ARCHITECTURE.md shows docs/examples/mylib.rs as it is"
    );
    assert!(page.contains("    entry::<ipcbench_mylib::MyLib>(),"), "and its registry line");

    let entry = ipcbench::registry::entry::<mylib::MyLib>();
    assert_eq!((entry.info)().id, "mylib");
    let scratch = testing::Scratch::new("mylib");
    let setup = scratch.setup(Shape::Stream);
    testing::stream_in_order::<mylib::MyLib>(&setup, 10_000, || {});
    testing::round_trips::<mylib::MyLib>(&Setup { shape: Shape::RoundTrip, size: 1024, ..setup }, 1000);
    let polling =
        mylib::MyLib::stream(&Setup { mode: RecvMode::Polling, ..setup }, ipcbench_api::Side::Accept);
    assert!(polling.is_err(), "a mode it is not measured in is refused");
}
