//! Read-grant globs: `*` within one path segment, `**` across segments, `?` one character; a
//! leading `!` excludes. A path is allowed when some include matches and no exclude does. Every
//! other character is literal (no classes, alternates or escapes). Matching is `globset`'s, linear
//! in the path: a glob of many stars costs what a plain one does.

use std::sync::Arc;

/// Most globs one list may hold (a provider's `requestedPermissions.read`, a configured `read`).
pub(crate) const MAX_GLOBS: usize = 256;
/// Longest glob in such a list, in bytes.
pub(crate) const MAX_GLOB_BYTES: usize = 1024;

/// A list of include and exclude globs, as in `requestedPermissions.read`.
#[derive(Clone, Debug)]
pub(crate) struct GlobSet {
    includes: Vec<String>,
    excludes: Vec<String>,
    compiled: Arc<Compiled>,
}

/// The matchers of one list. A side that failed to compile matches nothing when it includes and
/// everything when it excludes, so that an unusable list fails closed.
#[derive(Debug)]
struct Compiled {
    includes: Option<globset::GlobSet>,
    excludes: Option<globset::GlobSet>,
}

impl PartialEq for GlobSet {
    fn eq(&self, other: &GlobSet) -> bool {
        self.includes == other.includes && self.excludes == other.excludes
    }
}

impl Eq for GlobSet {}

impl GlobSet {
    pub(crate) fn new<S: AsRef<str>>(globs: &[S]) -> GlobSet {
        let mut includes = Vec::new();
        let mut excludes = Vec::new();
        for glob in globs {
            let glob = glob.as_ref().trim();
            match glob.strip_prefix('!') {
                Some(rest) => excludes.push(normalise(rest)),
                None if !glob.is_empty() => includes.push(normalise(glob)),
                None => {}
            }
        }
        let compiled = Arc::new(Compiled {
            includes: compile(&includes),
            excludes: compile(&excludes),
        });
        GlobSet {
            includes,
            excludes,
            compiled,
        }
    }

    /// [`GlobSet::new`] for a list a provider requests or a configuration states, refused past
    /// [`MAX_GLOBS`] globs or a glob past [`MAX_GLOB_BYTES`].
    pub(crate) fn bounded<S: AsRef<str>>(globs: &[S]) -> Result<GlobSet, String> {
        check_bounds(globs)?;
        Ok(GlobSet::new(globs))
    }

    #[cfg(test)]
    pub(crate) fn everything() -> GlobSet {
        GlobSet::new(&["**"])
    }

    pub(crate) fn allows(&self, path: &str) -> bool {
        let path = normalise_path(path);
        let Compiled { includes, excludes } = &*self.compiled;
        includes.as_ref().is_some_and(|g| g.is_match(&path))
            && !excludes.as_ref().is_none_or(|g| g.is_match(&path))
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

/// Refuses a list past [`MAX_GLOBS`] globs or with a glob past [`MAX_GLOB_BYTES`].
pub(crate) fn check_bounds<S: AsRef<str>>(globs: &[S]) -> Result<(), String> {
    if globs.len() > MAX_GLOBS {
        return Err(format!(
            "{} read globs are more than the {MAX_GLOBS} allowed",
            globs.len()
        ));
    }
    if let Some(long) = globs.iter().find(|g| g.as_ref().len() > MAX_GLOB_BYTES) {
        return Err(format!(
            "a read glob of {} bytes is longer than the {MAX_GLOB_BYTES} allowed",
            long.as_ref().len()
        ));
    }
    Ok(())
}

fn normalise(glob: &str) -> String {
    glob.trim_start_matches("./")
        .trim_start_matches('/')
        .to_owned()
}

/// A path's non-empty segments joined by `/`, as the globs are compiled.
fn normalise_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(segment);
    }
    out
}

fn compile(globs: &[String]) -> Option<globset::GlobSet> {
    let mut set = globset::GlobSetBuilder::new();
    for glob in globs {
        for pattern in patterns(glob) {
            let built = globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .backslash_escape(false)
                .build();
            match built {
                Ok(g) => {
                    set.add(g);
                }
                Err(e) => {
                    tracing::warn!(glob = %glob, error = %e, "a read glob does not compile");
                    return None;
                }
            }
        }
    }
    set.build()
        .inspect_err(|e| tracing::warn!(error = %e, "read globs do not compile"))
        .ok()
}

/// The `globset` patterns that together match what `glob` does: its non-empty segments, a `**`
/// segment kept (consecutive ones are one), a run of stars within a segment one `*`, every other
/// character but `?` escaped. `a/**` also matches `a` itself, so it brings the pattern `a` along.
fn patterns(glob: &str) -> Vec<String> {
    let mut segments: Vec<String> = Vec::new();
    for segment in glob.split('/').filter(|s| !s.is_empty()) {
        if segment == "**" {
            if segments.last().is_none_or(|s| s != "**") {
                segments.push("**".to_owned());
            }
            continue;
        }
        let mut out = String::with_capacity(segment.len());
        let mut star = false;
        for c in segment.chars() {
            match c {
                '*' if star => {}
                '*' | '?' => out.push(c),
                c => out.push_str(&globset::escape(c.encode_utf8(&mut [0; 4]))),
            }
            star = c == '*';
        }
        segments.push(out);
    }
    let mut out = vec![segments.join("/")];
    if segments.len() > 1 && segments.last().is_some_and(|s| s == "**") {
        out.push(segments[..segments.len() - 1].join("/"));
    }
    out
}

/// Whether `path` (slash-separated, relative) matches `glob`.
#[cfg(test)]
pub(crate) fn matches(glob: &str, path: &str) -> bool {
    compile(&[glob.to_owned()]).is_some_and(|g| g.is_match(normalise_path(path)))
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

    /// The recursive matcher this module had before `globset`, kept to check that the semantics
    /// did not move.
    fn reference(glob: &str, path: &str) -> bool {
        fn segments(glob: &[&str], path: &[&str]) -> bool {
            match glob.split_first() {
                None => path.is_empty(),
                Some((&"**", rest)) => (0..=path.len()).any(|skip| segments(rest, &path[skip..])),
                Some((first, rest)) => path.split_first().is_some_and(|(segment, path_rest)| {
                    segment_matches(first.as_bytes(), segment.as_bytes())
                        && segments(rest, path_rest)
                }),
            }
        }
        fn segment_matches(glob: &[u8], text: &[u8]) -> bool {
            match glob.split_first() {
                None => text.is_empty(),
                Some((b'*', rest)) => {
                    (0..=text.len()).any(|skip| segment_matches(rest, &text[skip..]))
                }
                Some((b'?', rest)) => !text.is_empty() && segment_matches(rest, &text[1..]),
                Some((c, rest)) => text.first() == Some(c) && segment_matches(rest, &text[1..]),
            }
        }
        let glob: Vec<&str> = glob.split('/').filter(|s| !s.is_empty()).collect();
        let path: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        segments(&glob, &path)
    }

    #[test]
    fn the_linear_matcher_agrees_with_the_recursive_one_it_replaced() {
        // A small xorshift, so the corpus is the same on every run.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % n as u64).unwrap()
        };
        let glob_parts = ["a", "b", "*", "?", "**", "/", ".", "[", "{", "\\", "!"];
        let path_parts = ["a", "b", "/", ".", "[", "{", "\\", "!", "ab"];
        let mut checked = 0;
        for _ in 0..20_000 {
            let glob: String = (0..1 + next(7))
                .map(|_| glob_parts[next(glob_parts.len())])
                .collect();
            let path: String = (0..1 + next(7))
                .map(|_| path_parts[next(path_parts.len())])
                .collect();
            if path.split('/').all(str::is_empty) {
                continue;
            }
            assert_eq!(
                matches(&glob, &path),
                reference(&glob, &path),
                "glob {glob:?} on path {path:?}"
            );
            checked += 1;
        }
        assert!(checked > 10_000);
    }

    #[test]
    fn pathological_globs_match_a_thousand_paths_in_bounded_time() {
        let set = GlobSet::new(&[
            format!("{}b", "*a".repeat(8)),
            format!("{}x", "**/".repeat(20)),
            "!**/*a*a*a*a*a*a*a*a*c".to_owned(),
        ]);
        let segment = "a".repeat(30);
        let path = [segment.as_str(); 12].join("/");
        let started = std::time::Instant::now();
        for i in 0..1_000 {
            assert!(!set.allows(&format!("{path}/{i}")));
        }
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_millis(100),
            "1,000 paths took {took:?}"
        );
    }

    #[test]
    fn a_glob_list_past_the_caps_is_refused() {
        let many = vec!["src/**"; MAX_GLOBS + 1];
        let e = GlobSet::bounded(&many).unwrap_err();
        assert!(e.contains("257 read globs"), "{e}");
        let long = ["a".repeat(MAX_GLOB_BYTES + 1)];
        let e = GlobSet::bounded(&long).unwrap_err();
        assert!(e.contains("1025 bytes"), "{e}");
        assert!(GlobSet::bounded(&vec!["src/**"; MAX_GLOBS]).is_ok());
    }
}
