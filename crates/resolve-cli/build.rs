//! Lays out the `resolve` binary's code with the functions a command runs next to each other.
//!
//! The kernel maps a program's code 64 KB at a time around each page it first touches, so code
//! scattered over the binary's 15 MB keeps far more of it resident than a command runs: a
//! preview on tokio held 7.2 MB of text, 3.0 MB with the order below. `code-order.txt` lists the
//! functions the main commands run, hottest first, as `scripts/code_order.py` finds them under
//! callgrind; the linker puts them first in `.text`, in that order, and everything else after.
//! Only on x86-64 Linux with glibc, where rustc links with `rust-lld` by default (the ordering
//! file is an lld option), and not when a linker is chosen (`linker` in the configuration or
//! in `RUSTFLAGS`). A name the build does not have (a dependency changed) is skipped silently;
//! run the script again to refresh the list.

use std::path::Path;

fn main() {
    // Read when the script runs, not built into it: checkouts sharing a target directory
    // share this script's build, and each must link with its own list.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let order = Path::new(&manifest_dir).join("code-order.txt");
    println!("cargo::rerun-if-changed={}", order.display());
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    let var = |key: &str| std::env::var(key).unwrap_or_default();
    let linker_chosen =
        !var("RUSTC_LINKER").is_empty() || var("CARGO_ENCODED_RUSTFLAGS").contains("linker");
    if var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && !linker_chosen
        && order.is_file()
    {
        println!(
            "cargo::rustc-link-arg-bin=resolve=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo::rustc-link-arg-bin=resolve=-Wl,--no-warn-symbol-ordering");
    }
}
