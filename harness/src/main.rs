//! The `ipcbench` binary: the library's command line (`cli`), and nothing else.

fn main() -> std::process::ExitCode {
    ipcbench::cli::main()
}
