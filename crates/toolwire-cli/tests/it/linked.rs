//! How the binary was linked: its relocations packed exactly when the build
//! script says it asked for it (glibc 2.36 or later, LLD), and a binary so
//! linked starts and answers.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

/// The version the loader must offer for packed relocations; a binary that
/// has them names it among its needed versions.
const RELR_VERSION: &[u8] = b"GLIBC_ABI_DT_RELR";

#[test]
fn relocations_are_packed_when_the_build_asked_for_it() {
    let image = std::fs::read(BIN).expect("the binary reads");
    let names_relr = image.windows(RELR_VERSION.len()).any(|w| w == RELR_VERSION);
    let asked = option_env!("TOOLWIRE_PACKED_RELOCS") == Some("1");
    assert_eq!(
        names_relr, asked,
        "the build script asked for packed relocations: {asked}; the binary needs GLIBC_ABI_DT_RELR: {names_relr}"
    );
    // The loader takes it: the binary starts and says what it is.
    let out = Command::new(BIN).arg("--version").output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("toolwire "));
}
