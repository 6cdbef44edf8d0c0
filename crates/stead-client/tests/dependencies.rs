//! The client library stays light: a program that embeds it compiles no C, no database
//! client, no HTTP stack and no part of the server. Read from `cargo tree`, so a
//! dependency that creeps in through any path fails here.

use std::collections::BTreeSet;
use std::process::Command;

/// Every package the client library compiles (normal and build dependencies, for this
/// platform), by name.
fn dependency_tree() -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--package",
            "stead-client",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_client_compiles_no_c_no_database_no_http_and_no_server() {
    let tree = dependency_tree();
    assert!(
        tree.contains("stead-client") && tree.contains("stead-protocol"),
        "{tree:?}"
    );
    for forbidden in [
        // A C build.
        "cc",
        "libsqlite3-sys",
        // Databases and the HTTP stack.
        "rusqlite",
        "postgres",
        "tokio-postgres",
        "axum",
        "hyper",
        // The server's own crates and what only they need.
        "stead-core",
        "stead-store",
        "stead-server",
        "stead-monitor",
        "stead-guard",
        "brush-parser",
        "tokio",
        "clap",
    ] {
        assert!(
            !tree.contains(forbidden),
            "stead-client depends on {forbidden}: {tree:?}"
        );
    }
    // The whole tree, proc macros included: a few dozen crates, not hundreds.
    assert!(tree.len() < 60, "{} crates: {tree:?}", tree.len());
}
