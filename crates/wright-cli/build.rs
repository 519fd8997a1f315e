//! Link settings for the `wright` binary.
//!
//! wright's own binary is also its sandbox launcher: every sandboxed process (the shell,
//! git for snapshots, MCP servers, the start's check) begins by loading it, and most of
//! that load is the dynamic loader applying tens of thousands of relative relocations
//! read from a table of about 1.7 MB. Packed relative relocations (`DT_RELR`) hold the
//! same relocations in a few kilobytes, so each start reads and faults in far less.
//!
//! Only glibc 2.36 and later apply them, and a binary packed so cannot start on an older
//! one, so the flag is given only when building for this machine's own glibc and that
//! glibc is new enough; anything unclear (cross builds, no `ldd`, another C library)
//! links as before.

use std::io::Write;
use std::process::Command;

fn main() {
    // Cargo reads these lines from the build script's standard output.
    let mut cargo = std::io::stdout();
    let _ = writeln!(cargo, "cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    if native
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && glibc_applies_packed_relocations()
    {
        let _ = writeln!(
            cargo,
            "cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs"
        );
    }
}

/// Whether this machine's glibc is 2.36 or later, read from `ldd --version`, whose first
/// line ends with the version (`ldd (Debian GLIBC 2.36-9+deb12u14) 2.36`).
fn glibc_applies_packed_relocations() -> bool {
    let Ok(output) = Command::new("ldd").arg("--version").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(first) = text.lines().next() else {
        return false;
    };
    if !first.contains("GLIBC") && !first.contains("GNU libc") {
        return false;
    }
    let Some(version) = first.split_whitespace().last() else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= (2, 36),
        _ => false,
    }
}
