//! Lays out the `toolwire` binary's code for a small working set.
//!
//! `link-order.txt` names the functions `toolwire serve` runs from its start
//! through its first requests (written by `bench/link-order.sh`). Handed to
//! LLD as a symbol ordering file, they are placed together at the start of
//! the text: a page fault on code maps the 64 KB around it, and with that
//! code spread over the whole text `toolwire serve` held about 11 MB of code
//! pages for about 2 MB of code run (8 MB instead of 16 MB peak RSS after a
//! list and two calls; BENCHMARKS.md, "Where toolwire serve's memory is").
//!
//! Only where LLD is known to link: x86_64 Linux with Rust 1.90 or later,
//! whose default linker it is, and no linker chosen in the configuration.
//! The names carry this toolchain's and lock file's hashes; a name that is
//! not found is skipped, so an outdated list costs its effect, never the
//! build. `TOOLWIRE_LINK_ORDER=0` turns it off.
//!
//! With the same linker, and when the C library the binary is built against
//! is glibc 2.36 or later, its relocations are packed (`-z
//! pack-relative-relocs`, DT_RELR): the loader reads all of them at start,
//! and packed they are 16 KB instead of 1 MB of the file held in memory. The
//! binary then needs glibc 2.36 to start (it names `GLIBC_ABI_DT_RELR`), as
//! the machine that built it has. `TOOLWIRE_PACK_RELOCS=0` turns it off, for
//! a binary meant for older systems.

#![allow(clippy::print_stdout)] // a build script speaks to cargo on stdout

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=TOOLWIRE_LINK_ORDER");
    println!("cargo:rerun-if-env-changed=TOOLWIRE_PACK_RELOCS");
    if !links_with_default_lld() {
        return;
    }
    if !env::var("TOOLWIRE_PACK_RELOCS").is_ok_and(|v| v == "0") && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bin=toolwire=-Wl,-z,pack-relative-relocs");
        // Read by the test that checks the binary asks for what it has.
        println!("cargo:rustc-env=TOOLWIRE_PACKED_RELOCS=1");
    }
    if env::var("TOOLWIRE_LINK_ORDER").is_ok_and(|v| v == "0") {
        return;
    }
    let Ok(dir) = env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let order = Path::new(&dir).join("link-order.txt");
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bin=toolwire=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=toolwire=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the binary is linked by the LLD that Rust uses by default on
/// x86_64 Linux since 1.90 (GNU ld would refuse the ordering option).
fn links_with_default_lld() -> bool {
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return false;
    }
    // A linker set in the configuration (`linker = …`), or flags that choose
    // one: whatever it is, leave it alone.
    if env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f))
    {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    version_of(&rustc, "--version") >= (1, 90)
}

/// Whether the glibc the binary is linked against loads packed relative
/// relocations (2.36 or later). Only a native build is asked: the host's
/// glibc is the target's then.
fn glibc_has_relr() -> bool {
    if env::var("HOST").ok() != env::var("TARGET").ok() {
        return false;
    }
    version_of("getconf", "GNU_LIBC_VERSION") >= (2, 36)
}

/// The major and minor version `program arg` prints as its second word
/// ("rustc 1.95.0 (…)", "glibc 2.36"); `(0, 0)` when it cannot be read.
fn version_of(program: &str, arg: &str) -> (u32, u32) {
    let Ok(out) = Command::new(program).arg(arg).output() else {
        return (0, 0);
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut numbers = text
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .split(['.', '-'])
        .map(|n| n.parse::<u32>().unwrap_or(0));
    (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0))
}
