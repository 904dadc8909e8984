//! Exists for `fuzz/` (the cargo-fuzz crate outside the workspace), behind the `fuzzing` feature:
//! the line hashing of file text, which `export` only reaches through files on disk. Not for other
//! callers.

/// GitHub's `primaryLocationLineHash` of every line of `text`; index 0 is line 1.
pub fn line_hashes(text: &str) -> Vec<String> {
    crate::line_hash::line_hashes(text)
}
