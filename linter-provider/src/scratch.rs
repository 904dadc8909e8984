//! The private scratch tree a linter runs in: the files it checks and its configuration files,
//! written at their repository paths from bytes the host served, in a new folder only this user
//! can enter. It is removed when dropped, however the run ended (an error, the deadline, a cancel,
//! a crash of the linter), even if the linter took away its own permissions on what it wrote.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// A scratch tree; removed on drop.
#[derive(Debug)]
pub struct Scratch {
    dir: Option<tempfile::TempDir>,
    root: PathBuf,
}

impl Scratch {
    /// A new, empty scratch folder (mode 0700) under [`base`].
    pub fn new() -> Result<Scratch> {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::Builder::new()
            .prefix("asp-bridge-lint-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(base())
            .map_err(Error::Scratch)?;
        // The canonical path: the one a tool that resolves its arguments reports.
        let root = dir.path().canonicalize().map_err(Error::Scratch)?;
        Ok(Scratch {
            dir: Some(dir),
            root,
        })
    }

    /// The root: repository path `p` is at `root/p`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `bytes` at the repository path `path`, making its folders. Refuses any path that is
    /// not plain and relative (`..`, absolute, empty parts) and never writes through a link.
    pub fn write(&self, path: &str, bytes: &[u8]) -> Result<PathBuf> {
        let relative = plain(path)?;
        // Each folder on the way is made here or must be a real folder: never a link followed.
        let mut at = self.root.clone();
        let mut parts = relative.components().peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                break;
            }
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(Error::Path(path.to_owned())),
                Err(_) => std::fs::create_dir(&at).map_err(Error::Scratch)?,
            }
        }
        let full = self.root.join(relative);
        // A new file, never an existing one or a link left by an earlier write.
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        use std::io::Write as _;
        let mut file = options.open(&full).map_err(Error::Scratch)?;
        file.write_all(bytes).map_err(Error::Scratch)?;
        Ok(full)
    }

    /// The repository path of `file`, a path a tool reported (see [`repository_path`]).
    pub fn repository_path(&self, file: &Path) -> Option<String> {
        repository_path(&self.root, file)
    }
}

/// Where scratch trees are made: `$XDG_RUNTIME_DIR` when it is a folder only this user can enter
/// (a tmpfs on most systems, where a thousand small files are written in a tenth of the time an
/// ext4 `/tmp` takes, and where no other user can leave a `pyproject.toml` above the tree), else
/// the temporary folder (`$TMPDIR`, else `/tmp`).
pub fn base() -> PathBuf {
    private_folder(std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from))
        .unwrap_or_else(std::env::temp_dir)
}

/// `dir`, if it is an absolute path to a folder (not a link) this user owns and no one else may
/// enter.
fn private_folder(dir: Option<PathBuf>) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    dir.filter(|dir| dir.is_absolute()).filter(|dir| {
        std::fs::symlink_metadata(dir).is_ok_and(|meta| {
            meta.is_dir() && meta.uid() == effective_uid() && meta.mode() & 0o077 == 0
        })
    })
}

#[allow(unsafe_code)]
fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The repository path of `file`, a path a tool reported in a tree rooted at `root`: absolute under
/// the root, or relative to it; `None` when it lies outside (after `.` and `..` are resolved as
/// text) or is not UTF-8.
pub fn repository_path(root: &Path, file: &Path) -> Option<String> {
    let relative = if file.is_absolute() {
        file.strip_prefix(root).ok()?
    } else {
        file
    };
    let mut parts: Vec<&str> = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => parts.push(name.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else { return };
        let path = dir.path().to_path_buf();
        if dir.close().is_err() {
            // A linter may have made a folder it wrote unreadable: give the tree back to its owner.
            restore_permissions(&path);
            if let Err(e) = std::fs::remove_dir_all(&path) {
                tracing::warn!(path = %path.display(), "the scratch folder could not be removed: {e}");
            }
        }
    }
}

/// Makes every folder under `dir` (links not followed) readable, writable and enterable again.
fn restore_permissions(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            restore_permissions(&entry.path());
        }
    }
}

/// `path` as a plain relative path.
fn plain(path: &str) -> Result<&Path> {
    let ok = !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    if ok {
        Ok(Path::new(path))
    } else {
        Err(Error::Path(path.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn files_land_at_their_repository_paths_and_the_tree_is_private_and_removed() {
        let scratch = Scratch::new().unwrap();
        let root = scratch.root().to_path_buf();
        let mode = std::fs::metadata(&root).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "only this user can enter it");
        let file = scratch.write("src/deep/a.py", b"import os\n").unwrap();
        assert_eq!(file, root.join("src/deep/a.py"));
        assert_eq!(std::fs::read(&file).unwrap(), b"import os\n");
        assert!(
            scratch.write("src/deep/a.py", b"again").is_err(),
            "never overwritten"
        );
        drop(scratch);
        assert!(!root.exists());
    }

    #[test]
    fn trees_are_made_in_the_users_runtime_folder_only_when_it_is_private() {
        let runtime = tempfile::tempdir().unwrap();
        let dir = runtime.path().to_path_buf();
        let at = |mode: u32| {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            private_folder(Some(dir.clone()))
        };
        assert_eq!(at(0o700), Some(dir.clone()));
        assert_eq!(at(0o755), None, "others can enter it");
        let link = runtime.path().with_extension("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert_eq!(
            private_folder(Some(link.clone())),
            None,
            "a link is not followed"
        );
        std::fs::remove_file(link).unwrap();
        assert_eq!(private_folder(Some("relative".into())), None);
        assert_eq!(private_folder(None), None);
    }

    #[test]
    fn a_path_that_is_not_plain_is_refused_and_nothing_is_written_outside() {
        let scratch = Scratch::new().unwrap();
        for bad in ["", "../x", "/etc/x", "a/../../x", "a//b", "./a", "a\0b"] {
            assert!(scratch.write(bad, b"x").is_err(), "{bad:?}");
        }
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), scratch.root().join("link")).unwrap();
        assert!(
            scratch.write("link", b"x").is_err(),
            "an existing link is not written through"
        );
        assert!(
            scratch.write("link/x", b"x").is_err(),
            "nor a folder that is a link"
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_tree_the_linter_locked_is_still_removed() {
        let scratch = Scratch::new().unwrap();
        let root = scratch.root().to_path_buf();
        scratch.write("locked/inner/a.sh", b"echo\n").unwrap();
        for dir in ["locked/inner", "locked"] {
            std::fs::set_permissions(root.join(dir), std::fs::Permissions::from_mode(0o000))
                .unwrap();
        }
        drop(scratch);
        assert!(!root.exists());
    }

    #[test]
    fn reported_paths_map_back_to_repository_paths_only_inside_the_root() {
        let scratch = Scratch::new().unwrap();
        let root = scratch.root();
        assert_eq!(
            scratch.repository_path(&root.join("src/a.py")).as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            scratch
                .repository_path(Path::new("./src/./a.py"))
                .as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            scratch
                .repository_path(Path::new("src/x/../a.py"))
                .as_deref(),
            Some("src/a.py")
        );
        assert_eq!(scratch.repository_path(Path::new("../outside.py")), None);
        assert_eq!(scratch.repository_path(Path::new("/etc/passwd")), None);
        assert_eq!(scratch.repository_path(root), None);
    }
}
