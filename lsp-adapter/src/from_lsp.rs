//! What the client says, made safe to use: its capabilities, the workspace root, and document URIs
//! confined to the workspace.
//!
//! A document URI must be a `file:` URI whose path passes [`bridge_core::confine`]: inside the
//! workspace root once resolved (symlinks followed, compared by components), without NUL bytes, `..`
//! or hidden characters. Anything else is ignored by the server.

use std::path::{Path, PathBuf};

use tower_lsp_server::ls_types::{ClientCapabilities, InitializeParams, PositionEncodingKind, Uri};

use crate::documents::Encoding;
use crate::error::Error;

/// What the server may do with this client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Negotiated {
    pub(crate) encoding: Encoding,
    /// `codeDescription` is shown.
    pub(crate) code_description: bool,
    /// The client pulls (`textDocument/diagnostic`).
    pub(crate) pull: bool,
    /// The client re-pulls on `workspace/diagnostic/refresh`.
    pub(crate) refresh: bool,
    /// The client shows server-initiated work-done progress.
    pub(crate) progress: bool,
}

impl Negotiated {
    pub(crate) fn encoding_kind(&self) -> PositionEncodingKind {
        match self.encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }
}

/// Reads the client's capabilities. The position encoding is the first the client lists that the
/// server speaks (UTF-8 or UTF-16), and UTF-16 when it lists none.
pub(crate) fn negotiate(caps: &ClientCapabilities) -> Negotiated {
    let offered = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_deref())
        .unwrap_or_default();
    let encoding = offered
        .iter()
        .find_map(|kind| match kind.as_str() {
            "utf-8" => Some(Encoding::Utf8),
            "utf-16" => Some(Encoding::Utf16),
            _ => None,
        })
        .unwrap_or(Encoding::Utf16);
    let text = caps.text_document.as_ref();
    Negotiated {
        encoding,
        code_description: text
            .and_then(|t| t.publish_diagnostics.as_ref())
            .and_then(|p| p.code_description_support)
            .unwrap_or(false),
        pull: text.is_some_and(|t| t.diagnostic.is_some()),
        refresh: caps
            .workspace
            .as_ref()
            .and_then(|w| w.diagnostics.as_ref())
            .and_then(|d| d.refresh_support)
            .unwrap_or(false),
        progress: caps
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false),
    }
}

/// The workspace root the client names: its first workspace folder, else `rootUri`, else
/// `rootPath`; canonicalised.
pub(crate) fn workspace_root(params: &InitializeParams) -> Result<PathBuf, Error> {
    let folder = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .map(|folder| &folder.uri);
    #[allow(deprecated)]
    let uri = folder.or(params.root_uri.as_ref());
    let path = match uri {
        Some(uri) => file_path(uri).map_err(|reason| Error::Root {
            uri: uri.as_str().to_owned(),
            reason,
        })?,
        #[allow(deprecated)]
        None => match params.root_path.as_deref().filter(|p| !p.is_empty()) {
            Some(path) => PathBuf::from(path),
            None => return Err(Error::NoWorkspace),
        },
    };
    path.canonicalize().map_err(|e| Error::Root {
        uri: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// The absolute path a `file:` URI names.
fn file_path(uri: &Uri) -> Result<PathBuf, String> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return Err(format!("scheme {:?} is not file", uri.scheme().as_str()));
    }
    let path = uri
        .to_file_path()
        .ok_or_else(|| "it names no path".to_owned())?
        .into_owned();
    if !path.is_absolute() {
        return Err("the path is not absolute".into());
    }
    Ok(path)
}

/// The repo-relative, `/`-separated path of a document URI inside `root` (canonical), confined by
/// the same rules as every client path ([`bridge_core::confine`]).
pub(crate) fn confine(root: &Path, uri: &Uri) -> Result<String, Error> {
    let outside = |reason: String| Error::Outside {
        uri: uri.as_str().to_owned(),
        reason,
    };
    let path = file_path(uri).map_err(outside)?;
    let path = path
        .to_str()
        .ok_or_else(|| outside("the path is not UTF-8".into()))?;
    match bridge_core::confine::confine(root, path) {
        Ok(relative) if relative == "." => Err(outside("it is the workspace root itself".into())),
        Ok(relative) => Ok(relative),
        Err(refused) => Err(outside(refused.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    use tower_lsp_server::ls_types::{GeneralClientCapabilities, WorkspaceFolder};

    fn uri(text: &str) -> Uri {
        Uri::from_str(text).unwrap()
    }

    fn file_uri(path: &Path) -> Uri {
        Uri::from_file_path(path).unwrap()
    }

    #[test]
    fn the_first_encoding_the_client_lists_that_the_server_speaks_wins() {
        let with = |list: &[&'static str]| ClientCapabilities {
            general: Some(GeneralClientCapabilities {
                position_encodings: Some(
                    list.iter().map(|k| PositionEncodingKind::new(k)).collect(),
                ),
                ..GeneralClientCapabilities::default()
            }),
            ..ClientCapabilities::default()
        };
        assert_eq!(
            negotiate(&with(&["utf-32", "utf-8", "utf-16"])).encoding,
            Encoding::Utf8
        );
        assert_eq!(
            negotiate(&with(&["utf-16", "utf-8"])).encoding,
            Encoding::Utf16
        );
        assert_eq!(negotiate(&with(&["utf-32"])).encoding, Encoding::Utf16);
        let plain = negotiate(&ClientCapabilities::default());
        assert_eq!(plain.encoding, Encoding::Utf16);
        assert!(!plain.pull && !plain.refresh && !plain.progress && !plain.code_description);
    }

    #[test]
    fn documents_inside_the_root_get_their_repo_relative_path() {
        let (_dir, root) = test_support::tree(&[("src/ünï/a b.ts", "x")]);
        assert_eq!(
            confine(&root, &file_uri(&root.join("src/ünï/a b.ts"))).unwrap(),
            "src/ünï/a b.ts"
        );
        assert_eq!(
            confine(&root, &file_uri(&root.join("src/new.ts"))).unwrap(),
            "src/new.ts",
            "a file not saved yet"
        );
        assert_eq!(
            confine(&root, &file_uri(&root.join("new-dir/a.ts"))).unwrap(),
            "new-dir/a.ts",
            "a file in a directory not created yet"
        );
    }

    #[test]
    fn uris_outside_the_root_are_refused() {
        let (_dir, root) = test_support::tree(&[]);
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("secret.txt"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(other.path(), root.join("link")).unwrap();
        let refused = [
            uri("file:///etc/passwd"),
            uri(&format!("file://{}/../x", root.display())),
            uri(&format!("file://{}/a%00b", root.display())),
            uri("untitled:Untitled-1"),
            uri("https://example.test/a.ts"),
            file_uri(&root.join("link/secret.txt")),
            file_uri(&root),
        ];
        for uri in refused {
            let err = confine(&root, &uri).unwrap_err();
            assert!(
                matches!(err, Error::Outside { .. }),
                "{}: {err}",
                uri.as_str()
            );
        }
    }

    #[test]
    fn the_root_is_the_first_workspace_folder_else_the_root_uri() {
        let (_dir, root) = test_support::tree(&[]);
        let mut params = InitializeParams {
            workspace_folders: Some(vec![WorkspaceFolder {
                uri: file_uri(&root),
                name: "w".into(),
            }]),
            ..InitializeParams::default()
        };
        assert_eq!(workspace_root(&params).unwrap(), root);
        params.workspace_folders = None;
        #[allow(deprecated)]
        {
            params.root_uri = Some(file_uri(&root));
        }
        assert_eq!(workspace_root(&params).unwrap(), root);
        assert!(matches!(
            workspace_root(&InitializeParams::default()),
            Err(Error::NoWorkspace)
        ));
    }
}
