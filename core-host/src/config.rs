//! The trusted configuration: which providers the host may start, and how.
//!
//! Only this file (or the built-in defaults) ever names a program to run; repository files never do.
//! It is found at `--config FILE` or `ASP_BRIDGE_CONFIG`, else `$XDG_CONFIG_HOME/asp-bridge/host.toml`,
//! else `~/.config/asp-bridge/host.toml`; a missing default file means the defaults (the built-in
//! hygiene provider only). Every error names the file, the line and the key.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use crate::builtin::{Builtin, HYGIENE, LINTERS, Launcher};
use crate::error::{Error, Result};

mod leave_out;

use leave_out::RawLeaveOut;
pub use leave_out::{Exclude, LeaveOut, Severity};

/// The id of the built-in hygiene provider (its row in [`crate::builtin`]).
pub const HYGIENE_ID: &str = HYGIENE.id;
/// Deadline of one `check/evaluate` when the configuration names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Delay before the first restart of a failed provider when the configuration names none.
pub const DEFAULT_RESTART_DELAY: Duration = Duration::from_millis(500);
/// Largest configuration file read, in bytes.
const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// Largest `[hygiene] max-added-file-kb` (1 GiB), as the provider accepts it.
const MAX_ADDED_FILE_KB: u64 = 1024 * 1024;

/// A call site of the outer seam.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallSite {
    Interactive,
    Gate,
    Sweep,
}

impl CallSite {
    pub const ALL: [CallSite; 3] = [CallSite::Interactive, CallSite::Gate, CallSite::Sweep];

    pub fn as_str(self) -> &'static str {
        match self {
            CallSite::Interactive => "interactive",
            CallSite::Gate => "gate",
            CallSite::Sweep => "sweep",
        }
    }

    pub fn parse(text: &str) -> Option<CallSite> {
        CallSite::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// The inner-seam protocol a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `asp/1.0`: enrolled directly.
    V1_0,
    /// `asp/0.1` (opcore-asp-provider 0.2.1): enrolled through the compatibility layer, which maps
    /// its messages to and from v1.0 (`provider/from_asp01.rs`).
    V0_1,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::V1_0 => "asp/1.0",
            Protocol::V0_1 => "asp/0.1",
        }
    }
}

/// One provider the host may start.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderSpec {
    pub id: String,
    /// Program and arguments; never a shell string.
    pub command: Vec<String>,
    pub protocol: Protocol,
    /// Call sites whose decisions need this provider.
    pub required_for: Vec<CallSite>,
    pub timeout: Duration,
    /// Passed to the provider with every `check/evaluate`.
    pub configuration: Option<Value>,
    /// Read globs the provider may be granted (its request is narrowed to these).
    pub read: Vec<String>,
    /// Delay before the first restart after a failure; it doubles up to 30 s.
    pub restart_delay: Duration,
    /// The row of [`crate::builtin::BUILTINS`] of a built-in provider.
    pub builtin: Option<&'static Builtin>,
    /// What it is not shown and what of its findings the host drops (the top level's and its own).
    pub leave_out: LeaveOut,
}

/// The whole trusted configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file it came from; `None` for the defaults.
    pub source: Option<PathBuf>,
    pub providers: Vec<ProviderSpec>,
    /// git filter drivers the user trusts (`[git] filters`, e.g. git-lfs's `lfs`): the one
    /// exception to git running no program of the repository's configuration; their programs come
    /// from the user's and the system's git configuration only (see `repo_io::git`).
    pub git_filters: Vec<String>,
}

/// Where the configuration is: the flag (or `ASP_BRIDGE_CONFIG`, which the CLI folds into it),
/// else the XDG location, else `~/.config`. The bool says whether it was named explicitly.
pub fn locate(explicit: Option<&Path>) -> Option<(PathBuf, bool)> {
    if let Some(path) = explicit {
        return Some((path.to_path_buf(), true));
    }
    let xdg =
        std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty() && Path::new(v).is_absolute());
    let base = match xdg {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".config"),
    };
    Some((base.join("asp-bridge").join("host.toml"), false))
}

impl Config {
    /// Loads the configuration `locate` finds; `launcher` is how the built-in providers are
    /// started (this executable with `provider`, then each one's subcommand). Blocking.
    pub fn load(explicit: Option<&Path>, launcher: Launcher<'_>) -> Result<Config> {
        match locate(explicit) {
            Some((path, explicit)) => match read_capped(&path) {
                Ok(text) => Config::parse(&text, &path, launcher),
                Err(e) if !explicit && e.kind() == std::io::ErrorKind::NotFound => {
                    Ok(Config::defaults(launcher))
                }
                Err(e) => Err(Error::Config {
                    file: path.display().to_string(),
                    line: 0,
                    key: "-".into(),
                    message: format!("cannot read the configuration: {e}"),
                }),
            },
            None => Ok(Config::defaults(launcher)),
        }
    }

    /// The configuration when there is no file: the built-in providers alone.
    pub fn defaults(launcher: Launcher<'_>) -> Config {
        Config {
            source: None,
            providers: crate::builtin::BUILTINS
                .iter()
                .filter(|row| row.by_default)
                .map(|row| builtin(row, launcher.command, None))
                .collect(),
            git_filters: Vec::new(),
        }
    }

    /// Parses the text of `file`; `launcher` as for [`Config::load`].
    pub fn parse(text: &str, file: &Path, launcher: Launcher<'_>) -> Result<Config> {
        let fail = |span: Option<Range<usize>>, key: &str, message: String| Error::Config {
            file: file.display().to_string(),
            line: span.map_or(0, |s| line_of(text, s.start)),
            key: key.to_owned(),
            message,
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let key = key_of(e.message()).unwrap_or_else(|| key_at(text, e.span()));
            fail(e.span(), &key, first_line(e.message()))
        })?;
        let leave_out = |raw: RawLeaveOut, prefix: &str| {
            raw.check(prefix)
                .map_err(|(span, key, message)| fail(Some(span), &key, message))
        };
        let everywhere = leave_out(
            RawLeaveOut {
                exclude: raw.exclude,
                disable: raw.disable,
                min_severity: raw.min_severity,
            },
            "",
        )?;
        let mut git_filters = Vec::new();
        if let Some(filters) = raw.git.and_then(|g| g.into_inner().filters) {
            for name in filters.get_ref() {
                if name.is_empty() || name.chars().any(|c| c.is_control()) {
                    return Err(fail(
                        Some(filters.span()),
                        "git.filters",
                        "each must be the non-empty name of a filter driver".into(),
                    ));
                }
                git_filters.push(name.clone());
            }
        }
        let mut providers = Vec::new();
        let mut hygiene_raw = raw.hygiene.map(Spanned::into_inner).unwrap_or_default();
        if hygiene_raw.enabled.as_ref().is_none_or(|e| *e.get_ref()) {
            let own = RawLeaveOut {
                exclude: hygiene_raw.exclude.take(),
                disable: hygiene_raw.disable.take(),
                min_severity: hygiene_raw.min_severity.take(),
            };
            let row = &HYGIENE;
            let key = |name: &str| format!("{}.{name}", row.table);
            let own = leave_out(own, &key(""))?;
            if let Some(read) = &hygiene_raw.read {
                crate::glob::check_bounds(read.get_ref())
                    .map_err(|m| fail(Some(read.span()), &key("read"), m))?;
            }
            let mut spec = builtin(row, launcher.command, hygiene_raw.read.clone());
            spec.leave_out = everywhere.and(&own);
            if let Some(sites) = &hygiene_raw.required_for {
                spec.required_for = call_sites(sites)
                    .map_err(|m| fail(Some(sites.span()), &key("required-for"), m))?;
            }
            if let Some(ms) = &hygiene_raw.timeout_ms {
                spec.timeout =
                    millis(ms).map_err(|m| fail(Some(ms.span()), &key("timeout-ms"), m))?;
            }
            let mut settings = serde_json::Map::new();
            if let Some(kb) = &hygiene_raw.max_added_file_kb {
                let value = u64::try_from(*kb.get_ref())
                    .ok()
                    .filter(|kb| (1..=MAX_ADDED_FILE_KB).contains(kb))
                    .ok_or_else(|| {
                        fail(
                            Some(kb.span()),
                            &key("max-added-file-kb"),
                            format!("must be between 1 and {MAX_ADDED_FILE_KB} (KB)"),
                        )
                    })?;
                settings.insert("maxAddedFileKb".into(), value.into());
            }
            if let Some(yaml) = &hygiene_raw.yaml {
                if !["compatible", "strict"].contains(&yaml.get_ref().as_str()) {
                    return Err(fail(
                        Some(yaml.span()),
                        &key("yaml"),
                        "must be \"compatible\" (as libyaml, PyYAML and ruamel read) or \"strict\" (YAML 1.2)".into(),
                    ));
                }
                settings.insert("yaml".into(), yaml.get_ref().clone().into());
            }
            if !settings.is_empty() {
                spec.configuration = Some(settings.into());
            }
            providers.push(spec);
        }
        for (index, entry) in raw.linter.unwrap_or_default().into_iter().enumerate() {
            let at = |key: &str| format!("{}[{index}].{key}", LINTERS.table);
            let span = entry.span();
            let mut entry = entry.into_inner();
            let own = RawLeaveOut {
                exclude: entry.exclude.take(),
                disable: entry.disable.take(),
                min_severity: entry.min_severity.take(),
            };
            let own = leave_out(own, &at(""))?;
            let (id, id_span) = match (&entry.id, &entry.preset) {
                (Some(id), _) | (None, Some(id)) => (id.get_ref().trim().to_owned(), id.span()),
                (None, None) => {
                    return Err(fail(
                        Some(span),
                        &at("id"),
                        "a linter needs an `id` or a `preset`".into(),
                    ));
                }
            };
            if id.is_empty() || id.chars().any(|c| c.is_control() || c.is_whitespace()) {
                return Err(fail(
                    Some(id_span),
                    &at("id"),
                    "must be a non-empty word".into(),
                ));
            }
            if providers.iter().any(|p: &ProviderSpec| p.id == id) {
                return Err(fail(
                    Some(id_span),
                    &at("id"),
                    format!("the id `{id}` is used twice"),
                ));
            }
            let settings = entry.settings(&id);
            (launcher.check_linter)(&settings).map_err(|m| {
                fail(
                    Some(span.clone()),
                    &format!("{}[{index}]", LINTERS.table),
                    m,
                )
            })?;
            let mut spec = builtin(&LINTERS, launcher.command, None);
            if !spec.command.is_empty() {
                spec.command.push("--linter".into());
                spec.command.push(settings.to_string());
            }
            spec.id = id;
            spec.leave_out = everywhere.and(&own);
            if let Some(sites) = &entry.required_for {
                spec.required_for = call_sites(sites)
                    .map_err(|m| fail(Some(sites.span()), &at("required-for"), m))?;
            }
            if let Some(ms) = &entry.timeout_ms {
                spec.timeout =
                    millis(ms).map_err(|m| fail(Some(ms.span()), &at("timeout-ms"), m))?;
            }
            providers.push(spec);
        }
        for (index, entry) in raw.provider.unwrap_or_default().into_iter().enumerate() {
            let at = |key: &str| format!("provider[{index}].{key}");
            let mut entry = entry.into_inner();
            let own = RawLeaveOut {
                exclude: entry.exclude.take(),
                disable: entry.disable.take(),
                min_severity: entry.min_severity.take(),
            };
            let own = leave_out(own, &format!("provider[{index}]."))?;
            let id = entry.id.get_ref().trim().to_owned();
            if id.is_empty() || id.chars().any(|c| c.is_control() || c.is_whitespace()) {
                return Err(fail(
                    Some(entry.id.span()),
                    &at("id"),
                    "must be a non-empty word".into(),
                ));
            }
            if providers.iter().any(|p: &ProviderSpec| p.id == id) {
                return Err(fail(
                    Some(entry.id.span()),
                    &at("id"),
                    format!("the id `{id}` is used twice"),
                ));
            }
            let command = entry.command.get_ref().clone();
            if command.first().is_none_or(|p| p.trim().is_empty()) {
                return Err(fail(
                    Some(entry.command.span()),
                    &at("command"),
                    "must be a non-empty array: the program, then its arguments".into(),
                ));
            }
            let protocol = match entry.protocol.as_ref().map(|p| p.get_ref().as_str()) {
                None | Some("asp/1.0") => Protocol::V1_0,
                Some("asp/0.1") => Protocol::V0_1,
                Some(other) => {
                    return Err(fail(
                        entry.protocol.as_ref().map(Spanned::span),
                        &at("protocol"),
                        format!("unknown protocol `{other}`: expected \"asp/1.0\" or \"asp/0.1\""),
                    ));
                }
            };
            let required_for = match &entry.required_for {
                Some(sites) => call_sites(sites)
                    .map_err(|m| fail(Some(sites.span()), &at("required-for"), m))?,
                None => Vec::new(),
            };
            let timeout = match &entry.timeout_ms {
                Some(ms) => millis(ms).map_err(|m| fail(Some(ms.span()), &at("timeout-ms"), m))?,
                None => DEFAULT_TIMEOUT,
            };
            let configuration = match entry.configuration {
                Some(c) if !c.get_ref().is_object() => {
                    return Err(fail(
                        Some(c.span()),
                        &at("configuration"),
                        "must be a table".into(),
                    ));
                }
                Some(c) => Some(c.into_inner()),
                None => None,
            };
            let restart_delay = match &entry.restart_delay_ms {
                Some(ms) => {
                    millis(ms).map_err(|m| fail(Some(ms.span()), &at("restart-delay-ms"), m))?
                }
                None => DEFAULT_RESTART_DELAY,
            };
            if let Some(read) = &entry.read {
                crate::glob::check_bounds(read.get_ref())
                    .map_err(|m| fail(Some(read.span()), &at("read"), m))?;
            }
            let read = entry
                .read
                .map_or_else(|| vec!["**".to_owned()], Spanned::into_inner);
            providers.push(ProviderSpec {
                id,
                command,
                protocol,
                required_for,
                timeout,
                configuration,
                read,
                restart_delay,
                builtin: None,
                leave_out: everywhere.and(&own),
            });
        }
        Ok(Config {
            source: Some(file.to_path_buf()),
            providers,
            git_filters,
        })
    }
}

/// The enrollment of the built-in provider `row` with its defaults (`read`: its table's globs).
fn builtin(
    row: &'static Builtin,
    launcher: &[String],
    read: Option<Spanned<Vec<String>>>,
) -> ProviderSpec {
    ProviderSpec {
        id: row.id.to_owned(),
        command: row.command(launcher),
        protocol: Protocol::V1_0,
        required_for: row
            .required_for
            .iter()
            .filter_map(|site| CallSite::parse(site))
            .collect(),
        timeout: DEFAULT_TIMEOUT,
        configuration: None,
        read: read.map_or_else(|| vec!["**".to_owned()], Spanned::into_inner),
        restart_delay: DEFAULT_RESTART_DELAY,
        builtin: Some(row),
        leave_out: LeaveOut::default(),
    }
}

fn call_sites(sites: &Spanned<Vec<String>>) -> Result<Vec<CallSite>, String> {
    let mut out = Vec::new();
    for site in sites.get_ref() {
        let site = CallSite::parse(site).ok_or_else(|| {
            format!("unknown call site `{site}`: expected interactive, gate or sweep")
        })?;
        if !out.contains(&site) {
            out.push(site);
        }
    }
    Ok(out)
}

fn millis(ms: &Spanned<i64>) -> Result<Duration, String> {
    match u64::try_from(*ms.get_ref()) {
        Ok(ms @ 1..=3_600_000) => Ok(Duration::from_millis(ms)),
        _ => Err("must be between 1 and 3600000 milliseconds".into()),
    }
}

/// The configuration's text: a regular file (never waiting on a FIFO) of at most 1 MiB.
fn read_capped(path: &Path) -> std::io::Result<String> {
    match crate::snapshot::read_small_text(path, MAX_CONFIG_BYTES)? {
        Some((text, _)) => Ok(text),
        None => Err(std::io::Error::other("larger than 1 MiB")),
    }
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_owned()
}

/// The key serde named in its message (`unknown field `x``, `missing field `y``).
fn key_of(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    (message.starts_with("unknown field") || message.starts_with("missing field"))
        .then(|| message[start..start + len].to_owned())
}

/// The key written on the line of `span` (`key = …`), or the table header there.
fn key_at(text: &str, span: Option<Range<usize>>) -> String {
    let Some(span) = span else { return "-".into() };
    let start = text[..span.start.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or_default();
    match line.split_once('=') {
        Some((key, _)) => key.trim().to_owned(),
        None => line.trim().trim_matches(['[', ']']).to_owned(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "kebab-case")]
struct RawFile {
    git: Option<Spanned<RawGit>>,
    hygiene: Option<Spanned<RawHygiene>>,
    provider: Option<Vec<Spanned<RawProvider>>>,
    linter: Option<Vec<Spanned<RawLinter>>>,
    /// Paths never sent to this provider (or, at the top, to any), rule ids and a severity floor
    /// whose findings the host drops (`config/leave_out.rs`).
    exclude: Option<Spanned<Vec<String>>>,
    disable: Option<Spanned<Vec<String>>>,
    min_severity: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawGit {
    filters: Option<Spanned<Vec<String>>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawHygiene {
    enabled: Option<Spanned<bool>>,
    required_for: Option<Spanned<Vec<String>>>,
    timeout_ms: Option<Spanned<i64>>,
    read: Option<Spanned<Vec<String>>>,
    /// An added file larger than this is reported (`hygiene/large-file`; default 500).
    max_added_file_kb: Option<Spanned<i64>>,
    /// Paths never sent to this provider (or, at the top, to any), rule ids and a severity floor
    /// whose findings the host drops (`config/leave_out.rs`).
    exclude: Option<Spanned<Vec<String>>>,
    disable: Option<Spanned<Vec<String>>>,
    min_severity: Option<Spanned<String>>,
    /// How YAML is read: `compatible` (libyaml's reading, the default) or `strict` (YAML 1.2).
    yaml: Option<Spanned<String>>,
}

/// One `[[linter]]`: the keys the host reads (the call sites that need it, its deadline and what
/// it leaves out), and the linter's own, which the runner reads (`linter-provider`'s
/// `from_config.rs` checks them when it starts; the host only checks their types).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawLinter {
    id: Option<Spanned<String>>,
    preset: Option<Spanned<String>>,
    command: Option<Vec<String>>,
    convert: Option<Vec<String>>,
    files: Option<Vec<String>>,
    config_files: Option<Vec<String>>,
    columns: Option<String>,
    ok_exit: Option<Vec<i64>>,
    format: Option<String>,
    install: Option<String>,
    rule_uri: Option<String>,
    required_for: Option<Spanned<Vec<String>>>,
    timeout_ms: Option<Spanned<i64>>,
    exclude: Option<Spanned<Vec<String>>>,
    disable: Option<Spanned<Vec<String>>>,
    min_severity: Option<Spanned<String>>,
}

impl RawLinter {
    /// The linter's own keys, as the runner takes them (`--linter JSON`), its id resolved.
    fn settings(&self, id: &str) -> Value {
        let mut settings = serde_json::Map::new();
        settings.insert("id".into(), id.into());
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                settings.insert(key.into(), value);
            }
        };
        put(
            "preset",
            self.preset.as_ref().map(|p| p.get_ref().clone().into()),
        );
        put("command", self.command.clone().map(Value::from));
        put("convert", self.convert.clone().map(Value::from));
        put("files", self.files.clone().map(Value::from));
        put("config-files", self.config_files.clone().map(Value::from));
        put("columns", self.columns.clone().map(Value::from));
        put("ok-exit", self.ok_exit.clone().map(Value::from));
        put("format", self.format.clone().map(Value::from));
        put("install", self.install.clone().map(Value::from));
        put("rule-uri", self.rule_uri.clone().map(Value::from));
        settings.into()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawProvider {
    id: Spanned<String>,
    command: Spanned<Vec<String>>,
    protocol: Option<Spanned<String>>,
    required_for: Option<Spanned<Vec<String>>>,
    timeout_ms: Option<Spanned<i64>>,
    configuration: Option<Spanned<Value>>,
    read: Option<Spanned<Vec<String>>>,
    restart_delay_ms: Option<Spanned<i64>>,
    /// Paths never sent to this provider (or, at the top, to any), rule ids and a severity floor
    /// whose findings the host drops (`config/leave_out.rs`).
    exclude: Option<Spanned<Vec<String>>>,
    disable: Option<Spanned<Vec<String>>>,
    min_severity: Option<Spanned<String>>,
}

#[cfg(test)]
mod tests;
