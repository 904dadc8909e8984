//! Client paths confined to the workspace (DESIGN invariant 6), for every front end.
//!
//! A path from a client is accepted only as a plain repo-relative path, or an absolute path inside
//! the root. Refused outright: empty or oversized paths, NUL and other control or invisible
//! characters, `..` components, backslashes and drive letters (Windows and UNC forms), git pathspec
//! magic (a leading `:`, which git would resolve from the top of an enclosing repository), and
//! percent-encoded dots and slashes. What is left is resolved against the canonical root with every
//! existing part canonicalised (symlinks followed) and compared by components, so neither a prefix
//! (`/repo_evil`) nor a symlink (`link -> /etc`) nor a dangling symlink can lead outside. The result is
//! the repo-relative path with `/` separators, as ASP wants it.
//!
//! Paths from the host go the other way: [`host_path`] places a path the host reported (relative,
//! absolute or a `file:` URI) inside the workspace from its text alone, or says why it is outside,
//! so that every front end drops or flags the same paths. [`is_path_shaped`] tells which strings of
//! a free-form JSON value are paths whatever key they sit under.

use std::path::{Component, Path, PathBuf};

use crate::error::Error;
use asp_wire::text;
pub use repo_io::path::is_within;

/// Longest path accepted from a client, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;

/// `raw` as a `/`-separated path relative to `root` (which must be canonical), `.` for the root
/// itself, or an `input` error saying why it was refused.
pub fn confine(root: &Path, raw: &str) -> Result<String, Error> {
    refuse_forms(raw).map_err(|why| refused(raw, why))?;
    let path = Path::new(raw);
    let mut relative = PathBuf::new();
    let mut absolute = false;
    for component in path.components() {
        match component {
            Component::Normal(part) => relative.push(part),
            Component::CurDir => {}
            Component::RootDir => absolute = true,
            Component::ParentDir => return Err(refused(raw, "`..` is not allowed")),
            Component::Prefix(_) => return Err(refused(raw, "path prefixes are not allowed")),
        }
    }
    let resolved = if absolute {
        resolve(path)
    } else {
        resolve(&root.join(&relative))
    }
    .map_err(|why| refused(raw, why))?;
    let Ok(inside) = resolved.strip_prefix(root) else {
        let why = if absolute {
            "it is outside the workspace"
        } else {
            "it leads outside the workspace through a symlink"
        };
        return Err(refused(raw, why));
    };
    let relative = if absolute { inside } else { &relative };
    let mut parts = Vec::new();
    for component in relative.components() {
        match component.as_os_str().to_str() {
            Some(part) => parts.push(part),
            None => return Err(refused(raw, "it is not valid UTF-8 once resolved")),
        }
    }
    Ok(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

fn refused(raw: &str, why: &str) -> Error {
    let shown = text::untrusted(raw, 120);
    Error::Input(format!(
        "path {shown:?} refused: {why}; give a path relative to the workspace root"
    ))
}

/// The textual forms refused before any resolution.
fn refuse_forms(raw: &str) -> Result<(), &'static str> {
    if raw.is_empty() {
        return Err("it is empty");
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err("it is longer than 1024 bytes");
    }
    if raw.contains('\0') {
        return Err("it contains a NUL byte");
    }
    if raw.chars().any(|c| c.is_control() || text::is_hidden(c)) {
        return Err("it contains control or invisible characters");
    }
    refuse_windows_forms(raw)?;
    if raw.starts_with(':') {
        return Err("git pathspec magic (a leading `:`) is not a path");
    }
    let lower = raw.to_ascii_lowercase();
    if ["%2e", "%2f", "%5c"].iter().any(|e| lower.contains(e)) {
        return Err("percent-encoded dots and slashes are not allowed");
    }
    Ok(())
}

/// Windows forms, refused in client and host paths alike: backslashes (UNC paths among them) and
/// drive letters.
fn refuse_windows_forms(path: &str) -> Result<(), &'static str> {
    if path.contains('\\') {
        return Err("backslashes (Windows or UNC forms) are not allowed; use `/`");
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("drive letters are not allowed");
    }
    Ok(())
}

/// `path` with its longest existing prefix canonicalised and the rest appended as written. A part
/// that is a symlink but does not resolve (dangling, or a loop) is refused: it could point anywhere.
fn resolve(path: &Path) -> Result<PathBuf, &'static str> {
    let mut tail = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        match current.canonicalize() {
            Ok(mut base) => {
                base.extend(tail.iter().rev());
                return Ok(base);
            }
            Err(_) => {
                if current
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    return Err("it goes through a symlink that does not resolve");
                }
                let (Some(parent), Some(name)) = (current.parent(), current.file_name()) else {
                    return Err("no part of it exists");
                };
                tail.push(name.to_os_string());
                current = parent.to_path_buf();
            }
        }
    }
}

/// A path a host names (a finding's location), checked as text and never looked up on disk: the
/// `/`-separated path relative to `root`, or why it is refused. A `file:` URI is read as the absolute
/// path it names. Refused: `..` components, absolute paths outside `root` (compared by components),
/// any absolute path when there is no `root` to place it in, NUL, control characters and
/// backslashes, other URI schemes' forms (`file:` URIs that name a remote host). A leading `./` is
/// dropped; an empty path stays empty (the caller decides what that means).
pub fn host_path(root: Option<&Path>, raw: &str) -> Result<String, &'static str> {
    let decoded;
    let path = match file_uri_path(raw) {
        Some(path) => {
            decoded = path?;
            decoded.as_str()
        }
        None => raw,
    };
    if path.chars().any(|c| c.is_control()) {
        return Err("it contains NUL or control characters");
    }
    refuse_windows_forms(path)?;
    let absolute = path.starts_with('/');
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("`..` leads outside the workspace"),
            part => parts.push(part),
        }
    }
    if !absolute {
        let mut relative = path;
        while let Some(rest) = relative.strip_prefix("./") {
            relative = rest;
        }
        return Ok(relative.to_owned());
    }
    let root = root.ok_or("it is absolute and there is no workspace to place it in")?;
    let mut inside = parts.iter();
    for component in root.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(name) if inside.next().is_some_and(|p| name == *p) => {}
            _ => return Err("it is outside the workspace"),
        }
    }
    let rest: Vec<&str> = inside.copied().collect();
    if rest.is_empty() {
        return Err("it is the workspace root itself, not a file");
    }
    Ok(rest.join("/"))
}

/// `raw`, a `file:` URI, as the `/`-separated path relative to `root` it names, or an `input` error
/// saying why it was refused (another machine, a bad escape, or any reason [`confine`] gives).
pub fn confine_uri(root: &Path, raw: &str) -> Result<String, Error> {
    match file_uri_path(raw) {
        Some(Ok(path)) => confine(root, &path),
        Some(Err(why)) => Err(refused(raw, why)),
        None => Err(refused(raw, "it is not a `file:` URI")),
    }
}

/// The path of a `file:` URI, percent-decoded (`None` when `raw` is not one; an error when it names
/// another machine or does not decode to UTF-8).
pub fn file_uri_path(raw: &str) -> Option<Result<String, &'static str>> {
    let scheme = raw.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = &raw[5..];
    let path = match rest.strip_prefix("//") {
        Some(after) => match after.find('/') {
            Some(0) => after,
            Some(at) if after[..at].eq_ignore_ascii_case("localhost") => &after[at..],
            _ => return Some(Err("it is a `file:` URI of another machine")),
        },
        None if rest.starts_with('/') => rest,
        None => return Some(Err("it is a `file:` URI that is not absolute")),
    };
    let mut bytes = Vec::with_capacity(path.len());
    let mut iter = path.bytes();
    while let Some(byte) = iter.next() {
        if byte == b'%' {
            let hex = [iter.next(), iter.next()];
            let digit = |b: Option<u8>| char::from(b.unwrap_or(b'x')).to_digit(16);
            match (digit(hex[0]), digit(hex[1])) {
                (Some(high), Some(low)) => bytes.push((high * 16 + low) as u8),
                _ => return Some(Err("it is a `file:` URI with a bad percent-encoding")),
            }
        } else {
            bytes.push(byte);
        }
    }
    Some(String::from_utf8(bytes).map_err(|_| "it is a `file:` URI that is not UTF-8"))
}

/// Whether a string of a free-form value is a path by its shape alone, whatever key it sits under:
/// a `file:` URI, an absolute path (`/…`, `\\…`, a drive letter), or a path with a `..` part.
pub fn is_path_shaped(text: &str) -> bool {
    let bytes = text.as_bytes();
    file_uri_path(text).is_some()
        || text.starts_with('/')
        || text.starts_with('\\')
        || (bytes.len() >= 3
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes[2], b'/' | b'\\'))
        || text.split(['/', '\\']).any(|part| part == "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Workspace {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    /// `<tmp>/repo` with `src/a.ts`, plus a sibling `<tmp>/repo_evil/secret`.
    fn workspace() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("repo/src")).unwrap();
        std::fs::write(base.join("repo/src/a.ts"), "x").unwrap();
        std::fs::create_dir_all(base.join("repo_evil")).unwrap();
        std::fs::write(base.join("repo_evil/secret"), "x").unwrap();
        Workspace {
            _dir: dir,
            root: base.join("repo"),
        }
    }

    fn refusal(root: &Path, raw: &str) -> String {
        match confine(root, raw) {
            Ok(ok) => panic!("{raw:?} was accepted as {ok:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn repo_relative_paths_are_normalised() {
        let w = workspace();
        assert_eq!(confine(&w.root, "src/a.ts").unwrap(), "src/a.ts");
        assert_eq!(confine(&w.root, "./src//a.ts").unwrap(), "src/a.ts");
        assert_eq!(
            confine(&w.root, "src/not-yet.ts").unwrap(),
            "src/not-yet.ts"
        );
        assert_eq!(confine(&w.root, "new/dir/f.rs").unwrap(), "new/dir/f.rs");
        assert_eq!(confine(&w.root, ".").unwrap(), ".");
        assert_eq!(confine(&w.root, "fïlé 😀.ts").unwrap(), "fïlé 😀.ts");
    }

    #[test]
    fn absolute_paths_inside_the_root_become_relative() {
        let w = workspace();
        let inside = w.root.join("src/a.ts");
        assert_eq!(
            confine(&w.root, inside.to_str().unwrap()).unwrap(),
            "src/a.ts"
        );
        assert_eq!(confine(&w.root, w.root.to_str().unwrap()).unwrap(), ".");
    }

    #[test]
    fn parent_components_are_refused_even_when_they_would_stay_inside() {
        let w = workspace();
        assert!(refusal(&w.root, "../repo_evil/secret").contains("`..`"));
        assert!(refusal(&w.root, "src/../src/a.ts").contains("`..`"));
        assert!(refusal(&w.root, "src/../../etc").contains("`..`"));
    }

    #[test]
    fn absolute_paths_outside_the_root_are_refused_by_components_not_prefix() {
        let w = workspace();
        assert!(refusal(&w.root, "/etc/passwd").contains("outside the workspace"));
        let evil = format!("{}_evil/secret", w.root.display());
        assert!(refusal(&w.root, &evil).contains("outside the workspace"));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_root_are_refused() {
        let w = workspace();
        std::os::unix::fs::symlink("/etc", w.root.join("etc-link")).unwrap();
        std::os::unix::fs::symlink("../repo_evil", w.root.join("sibling")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/target", w.root.join("dangling")).unwrap();
        std::os::unix::fs::symlink("src", w.root.join("inner")).unwrap();
        assert!(refusal(&w.root, "etc-link/passwd").contains("symlink"));
        assert!(refusal(&w.root, "etc-link").contains("symlink"));
        assert!(refusal(&w.root, "sibling/secret").contains("symlink"));
        assert!(refusal(&w.root, "dangling/x").contains("symlink"));
        assert_eq!(confine(&w.root, "inner/a.ts").unwrap(), "inner/a.ts");
    }

    #[test]
    fn hostile_forms_are_refused_before_resolution() {
        let w = workspace();
        for (raw, why) in [
            ("", "empty"),
            ("src/a\0.ts", "NUL"),
            ("src/\u{202e}a.ts", "invisible"),
            ("src\\a.ts", "backslash"),
            ("\\\\server\\share", "backslash"),
            ("C:/Windows", "drive letter"),
            (":/outside", "pathspec"),
            (":(top)src", "pathspec"),
            ("%2e%2e/etc", "percent-encoded"),
            ("src%2F..%2Fx", "percent-encoded"),
        ] {
            assert!(refusal(&w.root, raw).contains(why), "{raw:?}");
        }
        let long = "a/".repeat(MAX_PATH_BYTES);
        assert!(refusal(&w.root, &long).contains("longer"));
    }

    #[test]
    fn host_paths_stay_inside_the_workspace_or_are_refused_with_a_reason() {
        let root = Path::new("/work/repo");
        let ok = |raw: &str| host_path(Some(root), raw).unwrap();
        assert_eq!(ok("src/a.ts"), "src/a.ts");
        assert_eq!(ok("././src/a b.ts"), "src/a b.ts");
        assert_eq!(
            ok("src/%41:b#c?.ts"),
            "src/%41:b#c?.ts",
            "relative text is kept as sent"
        );
        assert_eq!(ok("/work/repo/src/a.ts"), "src/a.ts");
        assert_eq!(ok("/work//repo/./src/a.ts"), "src/a.ts");
        assert_eq!(ok("file:///work/repo/src/%C3%BC%20x.ts"), "src/ü x.ts");
        assert_eq!(ok("FILE://localhost/work/repo/a.ts"), "a.ts");
        assert_eq!(ok(""), "");
        let refused = |raw: &str| host_path(Some(root), raw).unwrap_err();
        assert!(refused("../../etc/passwd").contains("`..`"));
        assert!(refused("src/../../x").contains("`..`"));
        assert!(refused("/etc/passwd").contains("outside"));
        assert!(
            refused("/work/repository/x").contains("outside"),
            "by components"
        );
        assert!(refused("/work/repo/../etc").contains("`..`"));
        assert!(refused("file:///etc/passwd").contains("outside"));
        assert!(refused("file:///work/repo/%2e%2e/x").contains("`..`"));
        assert!(refused("file://evil.test/work/repo/a").contains("another machine"));
        assert!(refused("file:x").contains("not absolute"));
        assert!(refused("file:///a%zz").contains("percent"));
        assert!(refused("a\u{0}b").contains("NUL"));
        assert!(refused("..\\..\\x").contains("backslash"));
        assert!(refused("C:/x").contains("drive"));
        assert!(refused("/work/repo").contains("root itself"));
        assert!(
            host_path(None, "/work/repo/a.ts")
                .unwrap_err()
                .contains("no workspace")
        );
        assert_eq!(host_path(None, "a.ts").unwrap(), "a.ts");
    }

    #[test]
    fn paths_are_known_by_their_shape() {
        for path in [
            "/etc/passwd",
            "file:///etc",
            "File:/x",
            "../x",
            "a/../../b",
            "C:\\x",
            "\\\\unc\\x",
        ] {
            assert!(is_path_shaped(path), "{path:?}");
        }
        for text in ["src/a.ts", "references", "a..b", "x:y", "see ../ later"] {
            assert!(!is_path_shaped(text), "{text:?}");
        }
    }

    #[test]
    fn file_uris_are_confined_like_paths() {
        let w = workspace();
        let uri = format!("file://{}/src/a.ts", w.root.display());
        assert_eq!(confine_uri(&w.root, &uri).unwrap(), "src/a.ts");
        assert!(refusal_uri(&w.root, "file:///etc/passwd").contains("outside"));
        assert!(refusal_uri(&w.root, "file://host/x").contains("another machine"));
    }

    fn refusal_uri(root: &Path, raw: &str) -> String {
        match confine_uri(root, raw) {
            Ok(ok) => panic!("{raw:?} was accepted as {ok:?}"),
            Err(e) => e.to_string(),
        }
    }
}
