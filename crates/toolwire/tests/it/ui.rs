//! Compile-fail tests of `#[tool]` (trybuild): each file in `tests/ui/` is a
//! common mistake, and its `.stderr` pins the error the user sees.

#[test]
fn tool_macro_mistakes_have_clear_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
