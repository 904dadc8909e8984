//! One `[[linter]]` entry of the trusted `host.toml`, as the host hands it over (a JSON object
//! with the entry's own keys), made a [`Linter`]: the preset it names, then every key it sets over
//! the preset's. Each error names the key.

use serde_json::{Map, Value};

use crate::columns::Unit;
use crate::error::{Error, Result};
use crate::preset::{self, Linter, Output};

/// The keys of a `[[linter]]` entry the runner reads (the host reads `required-for`,
/// `timeout-ms`, `exclude`, `disable` and `min-severity` itself).
pub const KEYS: [&str; 11] = [
    "id",
    "preset",
    "command",
    "convert",
    "files",
    "config-files",
    "columns",
    "ok-exit",
    "format",
    "install",
    "rule-uri",
];

impl Linter {
    /// The linter an entry describes. Without a preset, `id`, `command` and `files` are needed.
    pub fn from_config(entry: &Value) -> Result<Linter> {
        let entry = entry
            .as_object()
            .ok_or_else(|| config("the linter's settings must be a table"))?;
        if let Some(key) = entry.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(config(format!(
                "unknown key `{key}`; a linter takes {}",
                KEYS.join(", ")
            )));
        }
        let mut linter = match string(entry, "preset")? {
            Some(name) => preset::named(&name)?,
            None => Linter {
                id: String::new(),
                command: Vec::new(),
                convert: None,
                files: Vec::new(),
                config_files: Vec::new(),
                columns: Unit::Utf16,
                ok_exit: vec![0],
                output: Output::Sarif,
                install: None,
                rule_uri: None,
            },
        };
        if let Some(id) = string(entry, "id")? {
            linter.id = id;
        }
        if linter.id.is_empty()
            || !linter
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(config(
                "`id` must be a word of letters, digits, `-`, `_` or `.` (it names the rule ids: `ruff/F401`)",
            ));
        }
        if let Some(command) = strings(entry, "command")? {
            linter.command = command;
        }
        if linter.command.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(config(
                "`command` must be a non-empty array: the program, then its arguments",
            ));
        }
        if strings(entry, "convert")?.is_some() {
            // Piping through a converter is not built yet: say so rather than lint nothing.
            return Err(config(
                "`convert` is not supported yet: use a tool that writes SARIF, or `format = \"shellcheck-json1\"`",
            ));
        }
        if let Some(files) = strings(entry, "files")? {
            linter.files = files;
        }
        if linter.files.is_empty() {
            return Err(config(
                "`files` must name the files it is given (globs such as \"**/*.py\")",
            ));
        }
        if let Some(files) = strings(entry, "config-files")? {
            linter.config_files = files;
        }
        if let Some(bad) = linter.config_files.iter().find(|f| !is_file_name(f)) {
            return Err(config(format!(
                "`config-files`: {bad:?} is not a file name (they are found at any depth)"
            )));
        }
        if let Some(unit) = string(entry, "columns")? {
            linter.columns = Unit::parse(&unit).ok_or_else(|| {
                config(format!(
                    "`columns`: {unit:?} is not utf16, unicode, utf8 or lines"
                ))
            })?;
        }
        if let Some(codes) = entry.get("ok-exit") {
            linter.ok_exit = codes
                .as_array()
                .and_then(|codes| {
                    codes
                        .iter()
                        .map(|c| c.as_i64().and_then(|c| i32::try_from(c).ok()))
                        .collect::<Option<Vec<i32>>>()
                })
                .filter(|codes| !codes.is_empty())
                .ok_or_else(|| config("`ok-exit` must be a non-empty array of exit statuses"))?;
        }
        if let Some(format) = string(entry, "format")? {
            linter.output = match format.as_str() {
                "sarif" => Output::Sarif,
                "shellcheck-json1" => Output::ShellcheckJson1,
                _ => {
                    return Err(config(format!(
                        "`format`: {format:?} is not \"sarif\" or \"shellcheck-json1\""
                    )));
                }
            };
        }
        if let Some(install) = string(entry, "install")? {
            linter.install = Some(install);
        }
        if let Some(uri) = string(entry, "rule-uri")? {
            linter.rule_uri = Some(uri);
        }
        Ok(linter)
    }

    /// The linter as a JSON object with every key filled in: what its config digest is taken of.
    pub fn to_config(&self) -> Value {
        serde_json::json!({
            "id": self.id,
            "command": self.command,
            "files": self.files,
            "config-files": self.config_files,
            "columns": self.columns.as_str(),
            "ok-exit": self.ok_exit,
            "format": match self.output {
                Output::Sarif => "sarif",
                Output::ShellcheckJson1 => "shellcheck-json1",
            },
            "rule-uri": self.rule_uri,
        })
    }
}

/// Why an entry's keys (as the host hands them over) make no linter, if they do not: what the
/// host's configuration loader is given to check `[[linter]]` entries with.
pub fn check(entry: &Value) -> std::result::Result<(), String> {
    Linter::from_config(entry)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn config(message: impl Into<String>) -> Error {
    Error::Config(message.into())
}

/// A file name without folders: `.shellcheckrc`, `pyproject.toml`.
fn is_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\0'])
        && !name.chars().any(char::is_control)
}

fn string(entry: &Map<String, Value>, key: &str) -> Result<Option<String>> {
    match entry.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(config(format!("`{key}` must be a string"))),
    }
}

fn strings(entry: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>> {
    match entry.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .map(Some)
            .ok_or_else(|| config(format!("`{key}` must be an array of strings"))),
        Some(_) => Err(config(format!("`{key}` must be an array of strings"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_preset_alone_is_a_whole_linter_and_each_key_overrides_it() {
        let ruff = Linter::from_config(&json!({"preset": "ruff"})).unwrap();
        assert_eq!(ruff, preset::named("ruff").unwrap());
        let mine = Linter::from_config(&json!({
            "preset": "ruff", "id": "ruff-strict", "files": ["src/**/*.py"],
            "ok-exit": [0, 1, 2], "columns": "utf8"
        }))
        .unwrap();
        assert_eq!(mine.id, "ruff-strict");
        assert_eq!(mine.files, ["src/**/*.py"]);
        assert_eq!(mine.ok_exit, [0, 1, 2]);
        assert_eq!(mine.columns, Unit::Utf8);
        assert_eq!(
            mine.command, ruff.command,
            "what is not set stays the preset's"
        );
    }

    #[test]
    fn an_entry_by_hand_needs_an_id_a_command_and_files() {
        let by_hand = json!({"id": "semgrep", "command": ["semgrep", "--sarif", "{files}"],
                             "files": ["**/*.py"], "columns": "utf8"});
        let linter = Linter::from_config(&by_hand).unwrap();
        assert_eq!(
            (linter.ok_exit.as_slice(), linter.output),
            (&[0][..], Output::Sarif)
        );
        for (entry, says) in [
            (json!({"command": ["x"], "files": ["*"]}), "`id`"),
            (json!({"id": "x", "files": ["*"]}), "`command`"),
            (json!({"id": "x", "command": ["x"]}), "`files`"),
            (json!({"preset": "eslint"}), "the presets are"),
            (
                json!({"preset": "ruff", "colums": "utf8"}),
                "unknown key `colums`",
            ),
            (json!({"preset": "ruff", "columns": "bytes"}), "`columns`"),
            (json!({"preset": "ruff", "ok-exit": []}), "`ok-exit`"),
            (
                json!({"preset": "ruff", "config-files": ["../x"]}),
                "`config-files`",
            ),
            (
                json!({"preset": "ruff", "convert": ["x"]}),
                "`convert` is not supported",
            ),
            (json!({"preset": "ruff", "id": "a b"}), "`id`"),
            (json!({"preset": "ruff", "format": "json"}), "`format`"),
        ] {
            let error = Linter::from_config(&entry).unwrap_err().to_string();
            assert!(error.contains(says), "{entry}: {error}");
        }
    }
}
