//! Repo-relative paths compared by whole components.

/// Whether the repo-relative `path` is `dir` or lies under it, by whole components (`src2/a` is not
/// under `src`); a trailing `/` on `dir` makes no difference.
pub fn is_within(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_left_out_covers_itself_and_what_lies_under_it() {
        let covers = |left_out: &str, path: &str| is_within(path, left_out);
        assert!(covers("src/pipe", "src/pipe"));
        assert!(covers("nested/", "nested/a.txt"));
        assert!(covers("nested", "nested/deep/a.txt"));
        assert!(!covers("nested", "nested2/a.txt"));
        assert!(!covers("src/pipe", "src/pipe2"));
    }
}
