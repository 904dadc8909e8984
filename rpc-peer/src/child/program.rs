//! Where the program of a command line is: resolved once, so that the file a host hashes to
//! describe a provider (its integrity) is the file that runs.

use std::path::{Path, PathBuf};

/// The variable in which a host hands a provider it runs from its own executable the digest it
/// computed of that file (`sha256:<hex>`), so that the provider need not hash the same file again
/// for its build fingerprint.
pub const BUILD_FINGERPRINT_ENV: &str = "ASP_BRIDGE_BUILD_FINGERPRINT";

/// Whether `value` has the shape of such a digest: `sha256:` and 64 lowercase hex digits.
pub fn is_sha256_digest(value: &str) -> bool {
    value.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The file `program` names: with a slash, that path (relative to `cwd`); without one, the first
/// executable regular file of that name in an absolute directory of `PATH` (a relative `PATH`
/// entry is skipped: it would depend on where the program is started). `None` when there is none.
pub fn resolve(program: &str, cwd: &Path) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let path = cwd.join(program);
        return is_executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .flat_map(|dir| candidates(&dir, program))
        .find(|candidate| is_executable(candidate))
}

fn candidates(dir: &Path, name: &str) -> Vec<PathBuf> {
    if cfg!(windows) {
        ["exe", "cmd", "bat"]
            .iter()
            .map(|ext| dir.join(format!("{name}.{ext}")))
            .collect()
    } else {
        vec![dir.join(name)]
    }
}

fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_path_is_taken_relative_to_the_working_directory_and_must_be_executable() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        assert_eq!(resolve("./tool", dir.path()), None, "not executable");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            resolve("./tool", dir.path()),
            Some(dir.path().join("./tool"))
        );
        assert_eq!(resolve(tool.to_str().unwrap(), Path::new("/")), Some(tool));
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(resolve("./sub", dir.path()), None, "a directory");
        assert_eq!(resolve("", dir.path()), None);
    }

    #[test]
    fn a_bare_name_is_the_first_executable_file_of_that_name_on_path() {
        // `sh` is on every PATH this runs with; whatever it resolves to is an executable file.
        let sh = resolve("sh", Path::new("/")).expect("sh on PATH");
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        assert_eq!(resolve("no-such-program-anywhere", Path::new("/")), None);
    }
}
