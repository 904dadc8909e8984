//! The filter drivers git would find in its configuration, each neutralised unless the trusted
//! configuration allows it by name.
//!
//! git has no switch that turns filters off, and attributes (which name a driver) come from the
//! working tree and from `.git/info/attributes`, both hostile; but a driver runs only when the
//! configuration defines it. So one `git config --list --show-scope` finds every driver defined
//! anywhere, and each gets empty `clean`, `smudge` and `process` commands and `required = false`
//! (git then leaves the content as it is). A driver the trusted configuration allows (git-lfs's
//! `lfs`, without which every LFS file looks modified) gets the programs that the user's, the
//! system's or the caller's own settings give it, never those of the repository's configuration:
//! a variable only the repository sets is emptied (for `process`, which git prefers to `clean` and
//! `smudge` when it is set at all, that turns the driver off).
//!
//! [`FilterCache`] keeps the answer while the configuration files are byte for byte what they were
//! (the repository's, the user's, the system's), so that an evaluation still starts one git
//! process; a configuration that includes other files is looked up again every time.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

use crate::error::Result;

/// Most bytes of a configuration file read to see whether it changed; a larger one (or one that is
/// no regular file) is not cached by.
const MAX_CONFIG: u64 = 4 << 20;

/// Drivers the trusted configuration allows, for the whole process (set once, at start).
static TRUSTED: OnceLock<Vec<String>> = OnceLock::new();

/// Lets the filter drivers named here run in every git command of this process from now on, with
/// the programs of the user's and the system's git configuration (never the repository's). Called
/// once, by the CLI, with `[git] filters` of the trusted configuration; a later call changes
/// nothing and says so (`false`).
pub fn trust_filters(names: Vec<String>) -> bool {
    TRUSTED.set(names).is_ok()
}

/// The drivers of [`trust_filters`].
pub(super) fn trusted() -> &'static [String] {
    TRUSTED.get().map_or(&[], Vec::as_slice)
}

/// The overrides of every filter driver the configuration defines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    pairs: Vec<(String, String)>,
}

impl Filters {
    /// `(key, value)` settings, in order.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The names of the drivers overridden (allowed or not), for tests and logs.
    pub fn drivers(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .pairs
            .iter()
            .filter_map(|(k, _)| k.strip_prefix("filter.")?.rsplit_once('.').map(|(n, _)| n))
            .collect();
        names.dedup();
        names
    }
}

/// What the configuration says, read from `git config -z --list --show-scope`: the overrides, and
/// whether it includes other files.
pub(super) fn parse(listing: &[u8], allowed: &[String]) -> (Filters, bool) {
    let mut names: Vec<String> = Vec::new();
    // Every (name, variable) set anywhere, and the trusted values of allowed drivers, the last one
    // winning.
    let mut set: Vec<(String, String)> = Vec::new();
    let mut trusted: Vec<(String, String, String)> = Vec::new();
    let mut includes = false;
    let mut fields = listing.split(|&b| b == 0);
    while let (Some(scope), Some(entry)) = (fields.next(), fields.next()) {
        let entry = String::from_utf8_lossy(entry);
        let (key, value) = entry.split_once('\n').unwrap_or((&entry, ""));
        if key.starts_with("include.") || key.starts_with("includeif.") {
            includes = true;
        }
        let Some((name, variable)) = key
            .strip_prefix("filter.")
            .and_then(|rest| rest.rsplit_once('.'))
        else {
            continue;
        };
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
        if !set.iter().any(|(n, v)| n == name && v == variable) {
            set.push((name.to_owned(), variable.to_owned()));
        }
        let scope_trusted = matches!(scope, b"system" | b"global" | b"command");
        if scope_trusted && allowed.iter().any(|a| a == name) {
            trusted.retain(|(n, v, _)| !(n == name && v == variable));
            trusted.push((name.to_owned(), variable.to_owned(), value.to_owned()));
        }
    }
    let mut pairs = Vec::with_capacity(names.len() * 4);
    for name in names {
        let key = |variable: &str| format!("filter.{name}.{variable}");
        if !allowed.contains(&name) {
            // An empty `process` alone already keeps git from running `clean` and `smudge`.
            for variable in ["clean", "smudge", "process"] {
                pairs.push((key(variable), String::new()));
            }
            pairs.push((key("required"), "false".to_owned()));
            continue;
        }
        // An allowed driver: the trusted value of each variable; one only the repository sets is
        // emptied (an empty `process` then turns the whole driver off, which is safe); one nobody
        // sets stays unset, as git needs an unset `process` to use `clean` and `smudge`.
        for variable in ["clean", "smudge", "process", "required"] {
            let given = trusted
                .iter()
                .find(|(n, v, _)| *n == name && v == variable)
                .map(|(_, _, value)| value.clone());
            let value = match given {
                Some(value) => value,
                None if set.iter().any(|(n, v)| *n == name && v == variable) => {
                    if variable == "required" { "false" } else { "" }.to_owned()
                }
                None => continue,
            };
            pairs.push((key(variable), value));
        }
    }
    (Filters { pairs }, includes)
}

/// The sha256 of each configuration file git reads (`None`: absent).
type Stamp = Vec<Option<[u8; 32]>>;

/// The filter overrides of one repository, kept while its configuration files are unchanged.
#[derive(Debug)]
pub struct FilterCache {
    /// Drivers the trusted configuration allows by name.
    allowed: Vec<String>,
    last: Mutex<Option<(Stamp, Filters)>>,
}

impl Default for FilterCache {
    /// A cache allowing the drivers of [`trust_filters`].
    fn default() -> FilterCache {
        FilterCache::new(TRUSTED.get().cloned().unwrap_or_default())
    }
}

impl FilterCache {
    pub fn new(allowed: Vec<String>) -> FilterCache {
        FilterCache {
            allowed,
            last: Mutex::new(None),
        }
    }

    /// The overrides for the repository whose git directory and common directory are these:
    /// those kept while every configuration file git reads is as it was, else looked up again by
    /// `lookup` (given the drivers allowed; it also says whether the configuration has includes).
    pub(super) async fn get<F>(
        &self,
        lookup: impl FnOnce(Vec<String>) -> F,
        git_dir: &Path,
        common_dir: &Path,
    ) -> Result<Filters>
    where
        F: std::future::Future<Output = Result<(Filters, bool)>>,
    {
        let files = config_files(git_dir, common_dir);
        let stamp = tokio::task::spawn_blocking(move || stamp(&files))
            .await
            .ok()
            .flatten();
        if let (Some(stamp), Some((kept, filters))) = (&stamp, rpc_peer::lock(&self.last).as_ref())
            && stamp == kept
        {
            return Ok(filters.clone());
        }
        let (filters, includes) = lookup(self.allowed.clone()).await?;
        *rpc_peer::lock(&self.last) = match stamp {
            Some(stamp) if !includes => Some((stamp, filters.clone())),
            _ => None,
        };
        Ok(filters)
    }
}

/// Every configuration file git reads for this repository, as git finds them (includes aside).
fn config_files(git_dir: &Path, common_dir: &Path) -> Vec<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let mut files = vec![
        common_dir.join("config"),
        common_dir.join("config.worktree"),
        git_dir.join("config.worktree"),
    ];
    if let Some(global) = var("GIT_CONFIG_GLOBAL") {
        files.push(global.into());
    } else {
        let home = var("HOME").map(PathBuf::from);
        if let Some(home) = &home {
            files.push(home.join(".gitconfig"));
        }
        match var("XDG_CONFIG_HOME") {
            Some(xdg) => files.push(PathBuf::from(xdg).join("git/config")),
            None => files.extend(home.map(|h| h.join(".config/git/config"))),
        }
    }
    let no_system = var("GIT_CONFIG_NOSYSTEM")
        .is_some_and(|v| !matches!(v.to_str(), Some("0" | "false" | "no" | "off")));
    if !no_system {
        files.push(var("GIT_CONFIG_SYSTEM").map_or_else(|| "/etc/gitconfig".into(), PathBuf::from));
    }
    files
}

/// The sha256 of each file (`None` when absent); `None` for the whole when one cannot be compared
/// (not a regular file, too large, unreadable) or the repository's own file is missing (then the
/// directories may not be what git reads).
fn stamp(files: &[PathBuf]) -> Option<Stamp> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut stamp = Vec::with_capacity(files.len());
    for (i, path) in files.iter().enumerate() {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path);
        let file = match file {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && i > 0 => {
                stamp.push(None);
                continue;
            }
            Err(_) => return None,
        };
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > MAX_CONFIG {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(MAX_CONFIG + 1).read_to_end(&mut bytes).ok()?;
        if bytes.len() as u64 > MAX_CONFIG {
            return None;
        }
        stamp.push(Some(Sha256::digest(&bytes).into()));
    }
    Some(stamp)
}
