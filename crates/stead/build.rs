//! Lays out the daemon's hot code together: the functions an idle server and a run
//! execute, listed in `hot-code.order` by `scripts/order-hot-code`, go first in
//! steadd's text, so that the pages the kernel maps around each one touched (64 KiB at a
//! time) hold hot code rather than cold. Only where the linker is known to take a symbol
//! ordering file (rust-lld, the default on x86_64 Linux) and the build names no linker
//! of its own; `STEAD_NO_HOT_ORDER=1` turns it off. A name the list has and the build
//! does not (after an upgrade) is skipped by the linker: the layout only gets worse, the
//! program stays the same.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=hot-code.order");
    println!("cargo:rerun-if-env-changed=STEAD_NO_HOT_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let own_linker = flags
        .split('\x1f')
        .any(|flag| flag.contains("linker") || flag.contains("fuse-ld"));
    let off = std::env::var_os("STEAD_NO_HOT_ORDER").is_some_and(|v| !v.is_empty() && v != "0");
    if target != "x86_64-unknown-linux-gnu" || own_linker || off {
        return;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let order = Path::new(&dir).join("hot-code.order");
    if !order.is_file() {
        return;
    }
    // Linked from a copy in the build's own output, which lives as long as the link
    // argument does: a tree whose target directory another checkout shares (a clone
    // that later went away) would otherwise be left pointing at that checkout's file.
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let copy = Path::new(&out).join("hot-code.order");
    std::fs::copy(&order, &copy).expect("hot-code.order copies into OUT_DIR");
    println!(
        "cargo:rustc-link-arg-bin=steadd=-Wl,--symbol-ordering-file={}",
        copy.display()
    );
    println!("cargo:rustc-link-arg-bin=steadd=-Wl,--no-warn-symbol-ordering");
}
