//! Artifact URIs: host paths made into relative, `/`-separated, percent-encoded URI references
//! (resolved against `%SRCROOT%`), and the `file://` URI of the workspace root.
//!
//! Every byte but the RFC 3986 unreserved characters and `/` is percent-encoded (UTF-8, upper-case
//! hex), so non-ASCII, spaces, `%`, `:` and BiDi controls all give valid URIs that decode (as
//! GitHub's `decodeURIComponent` does) back to the exact path.

use std::path::Path;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_encode};

/// The base id every relative artifact URI is resolved against.
pub(crate) const SRCROOT: &str = "%SRCROOT%";

/// Where a diagnostic's path points, as SARIF says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Artifact {
    /// The URI reference (relative unless the host gave an absolute path outside the workspace).
    pub(crate) uri: String,
    /// Whether `uri` is relative to `%SRCROOT%`.
    pub(crate) relative: bool,
    /// The workspace-relative path, for reading the file (line hashes); `None` when not relative.
    pub(crate) path: Option<String>,
}

/// The artifact a host path names; `repo` (absolute) lets an absolute path inside it be made
/// relative. `None` for an empty path.
pub(crate) fn artifact(path: &str, repo: Option<&Path>) -> Option<Artifact> {
    let mut path = path;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    if path.is_empty() {
        return None;
    }
    if path.starts_with('/') {
        let inside = repo
            .and_then(|repo| Path::new(path).strip_prefix(repo).ok())
            .and_then(Path::to_str)
            .filter(|rest| !rest.is_empty());
        return Some(match inside {
            Some(rest) => relative(rest),
            None => Artifact {
                uri: format!("file://{}", encode_path(path)),
                relative: false,
                path: None,
            },
        });
    }
    Some(relative(path))
}

/// The workspace root itself, for a finding that names no file or a path outside the workspace:
/// `.` relative to `%SRCROOT%` (GitHub code scanning refuses results without a location).
pub(crate) fn workspace() -> Artifact {
    Artifact {
        uri: ".".to_owned(),
        relative: true,
        path: None,
    }
}

fn relative(path: &str) -> Artifact {
    Artifact {
        uri: encode_path(path),
        relative: true,
        path: Some(path.to_owned()),
    }
}

/// `file:///…/` for a directory: absolute, percent-encoded, ending with `/` (SARIF §3.14.14).
pub(crate) fn directory_uri(dir: &Path) -> String {
    let mut uri = String::from("file://");
    let bytes = bridge_core::changeset::path_bytes(dir);
    if !bytes.starts_with(b"/") {
        uri.push('/');
    }
    uri.push_str(&encode_bytes(&bytes));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// What stays literal in a path: the RFC 3986 unreserved characters and `/`.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// Percent-encodes a `/`-separated path.
pub(crate) fn encode_path(path: &str) -> String {
    encode_bytes(path.as_bytes())
}

fn encode_bytes(bytes: &[u8]) -> String {
    percent_encode(bytes, PATH).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inverse of the encoding, as `decodeURIComponent` does it.
    fn decode(uri: &str) -> String {
        percent_encoding::percent_decode_str(uri)
            .decode_utf8()
            .unwrap()
            .into_owned()
    }

    #[test]
    fn plain_paths_stay_readable() {
        let a = artifact("src/api.ts", None).unwrap();
        assert_eq!(a.uri, "src/api.ts");
        assert!(a.relative);
        assert_eq!(a.path.as_deref(), Some("src/api.ts"));
    }

    #[test]
    fn non_ascii_spaces_and_reserved_characters_are_percent_encoded() {
        let path = "src/ünï/файл-1 😀.ts";
        let a = artifact(path, None).unwrap();
        assert_eq!(
            a.uri,
            "src/%C3%BCn%C3%AF/%D1%84%D0%B0%D0%B9%D0%BB-1%20%F0%9F%98%80.ts"
        );
        assert_eq!(decode(&a.uri), path);
        assert_eq!(encode_path("a:b%c#d?e"), "a%3Ab%25c%23d%3Fe");
        assert_eq!(encode_path("rtl\u{202e}x"), "rtl%E2%80%AEx");
    }

    #[test]
    fn a_leading_dot_slash_is_dropped() {
        assert_eq!(artifact("././src/a.rs", None).unwrap().uri, "src/a.rs");
        assert_eq!(artifact("./", None), None);
        assert_eq!(artifact("", None), None);
    }

    #[test]
    fn absolute_paths_inside_the_workspace_become_relative() {
        let a = artifact("/work/repo/src/a b.rs", Some(Path::new("/work/repo"))).unwrap();
        assert_eq!(a.uri, "src/a%20b.rs");
        assert!(a.relative);
        let outside = artifact("/etc/passwd", Some(Path::new("/work/repo"))).unwrap();
        assert_eq!(outside.uri, "file:///etc/passwd");
        assert!(!outside.relative);
        assert_eq!(outside.path, None);
        let sibling = artifact("/work/repository/x", Some(Path::new("/work/repo"))).unwrap();
        assert!(!sibling.relative, "prefixes are compared by components");
    }

    #[test]
    fn the_workspace_root_is_a_file_uri_ending_with_a_slash() {
        assert_eq!(
            directory_uri(Path::new("/tmp/my repo/ü")),
            "file:///tmp/my%20repo/%C3%BC/"
        );
        assert_eq!(directory_uri(Path::new("/")), "file:///");
    }
}
