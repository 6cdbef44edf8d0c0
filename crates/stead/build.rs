//! Lays out each program's hot code together: the functions an idle server and a run
//! execute, listed in `hot-code.order` by `scripts/order-hot-code`, go first in
//! steadd's text, and those of the client's commonest commands (`hot-code-client.order`)
//! first in stead's, so that the pages the kernel maps around each one touched (64 KiB
//! at a time) hold hot code rather than cold. Only where the linker is known to take a symbol
//! ordering file (rust-lld, the default on x86_64 Linux) and the build names no linker
//! of its own; `STEAD_NO_HOT_ORDER=1` turns it off. A name the list has and the build
//! does not (after an upgrade) is skipped by the linker: the layout only gets worse, the
//! program stays the same.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=hot-code.order");
    println!("cargo:rerun-if-changed=hot-code-client.order");
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
    order("steadd", "hot-code.order");
    order("stead", "hot-code-client.order");
}

/// Links the program `bin` with its functions in the order `list` gives, when there is
/// that list.
fn order(bin: &str, list: &str) {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let order = Path::new(&dir).join(list);
    if !order.is_file() {
        return;
    }
    // Linked from a copy in the build's own output, which lives as long as the link
    // argument does: a tree whose target directory another checkout shares (a clone
    // that later went away) would otherwise be left pointing at that checkout's file.
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let copy = Path::new(&out).join(list);
    std::fs::copy(&order, &copy).expect("the order list copies into OUT_DIR");
    println!(
        "cargo:rustc-link-arg-bin={bin}=-Wl,--symbol-ordering-file={}",
        copy.display()
    );
    println!("cargo:rustc-link-arg-bin={bin}=-Wl,--no-warn-symbol-ordering");
}
