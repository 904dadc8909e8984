//! Read-grant globs: `*` within one path segment, `**` across segments, `?` one character; a
//! leading `!` excludes. A path is allowed when some include matches and no exclude does.

/// A list of include and exclude globs, as in `requestedPermissions.read`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GlobSet {
    includes: Vec<String>,
    excludes: Vec<String>,
}

impl GlobSet {
    pub(crate) fn new<S: AsRef<str>>(globs: &[S]) -> GlobSet {
        let mut set = GlobSet {
            includes: Vec::new(),
            excludes: Vec::new(),
        };
        for glob in globs {
            let glob = glob.as_ref().trim();
            match glob.strip_prefix('!') {
                Some(rest) => set.excludes.push(normalise(rest)),
                None if !glob.is_empty() => set.includes.push(normalise(glob)),
                None => {}
            }
        }
        set
    }

    #[cfg(test)]
    pub(crate) fn everything() -> GlobSet {
        GlobSet::new(&["**"])
    }

    pub(crate) fn allows(&self, path: &str) -> bool {
        self.includes.iter().any(|g| matches(g, path))
            && !self.excludes.iter().any(|g| matches(g, path))
    }

    /// Whether every path is included (exclusions aside).
    fn is_universal(&self) -> bool {
        self.includes.iter().any(|g| g == "**" || g == "**/*")
    }

    /// The list a grant states: both sides' exclusions, and the includes of the side that narrows.
    /// When both sides narrow, the includes they share; if none are textually shared, those of
    /// `other` (the host enforces both sides on every read either way).
    pub(crate) fn narrowed(&self, other: &GlobSet) -> Vec<String> {
        let includes = if self.is_universal() {
            other.includes.clone()
        } else if other.is_universal() {
            self.includes.clone()
        } else {
            let shared: Vec<String> = self
                .includes
                .iter()
                .filter(|g| other.includes.contains(g))
                .cloned()
                .collect();
            if shared.is_empty() {
                other.includes.clone()
            } else {
                shared
            }
        };
        let mut out = includes;
        for exclude in self.excludes.iter().chain(&other.excludes) {
            let item = format!("!{exclude}");
            if !out.contains(&item) {
                out.push(item);
            }
        }
        out
    }
}

fn normalise(glob: &str) -> String {
    glob.trim_start_matches("./")
        .trim_start_matches('/')
        .to_owned()
}

/// Whether `path` (slash-separated, relative) matches `glob`.
pub(crate) fn matches(glob: &str, path: &str) -> bool {
    let glob: Vec<&str> = glob.split('/').filter(|s| !s.is_empty()).collect();
    let path: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    segments(&glob, &path)
}

fn segments(glob: &[&str], path: &[&str]) -> bool {
    match glob.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((segment, path_rest)) => {
                segment_matches(first.as_bytes(), segment.as_bytes()) && segments(rest, path_rest)
            }
            None => false,
        },
    }
}

fn segment_matches(glob: &[u8], text: &[u8]) -> bool {
    match glob.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| segment_matches(rest, &text[skip..])),
        Some((b'?', rest)) => !text.is_empty() && segment_matches(rest, &text[utf8_len(text[0])..]),
        Some((c, rest)) => text.first() == Some(c) && segment_matches(rest, &text[1..]),
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
    .min(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_stay_in_a_segment_and_double_stars_cross_them() {
        assert!(matches("src/*.rs", "src/a.rs"));
        assert!(!matches("src/*.rs", "src/x/a.rs"));
        assert!(matches("src/**", "src/x/a.rs"));
        assert!(matches("**/*.rs", "a.rs"));
        assert!(matches("**/.env*", "deep/.env.local"));
        assert!(matches("**", "anything/at/all"));
        assert!(matches("a?c", "abc"));
        assert!(matches("ü?", "üx"));
        assert!(!matches("a?c", "ac"));
    }

    #[test]
    fn excludes_win_over_includes() {
        let set = GlobSet::new(&["src/**", "!**/.env*"]);
        assert!(set.allows("src/main.rs"));
        assert!(!set.allows("src/.env"));
        assert!(!set.allows("README.md"));
        assert!(!GlobSet::new::<&str>(&[]).allows("a"));
    }

    #[test]
    fn a_grant_is_narrowed_to_the_configured_globs() {
        let requested = GlobSet::new(&["**/*"]);
        let configured = GlobSet::new(&["src/**", "!**/secret*"]);
        assert_eq!(requested.narrowed(&configured), ["src/**", "!**/secret*"]);
        let requested = GlobSet::new(&["docs/**", "!docs/private/**"]);
        assert_eq!(
            requested.narrowed(&GlobSet::everything()),
            ["docs/**", "!docs/private/**"]
        );
    }
}
