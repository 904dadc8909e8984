//! The rule catalogue: one rule per check, with its id, severity, summary and help text.
//!
//! Severities follow what a maintainer expects from the pre-commit-hooks checks these mirror: what
//! breaks a build or leaks a secret is an error, what bloats the repository or confuses diffs a
//! warning, whitespace information.

use hygiene_rules::{RULES, RuleInfo};

pub(crate) use provider_kit::Severity;

/// The diagnostic source and rule namespace of this provider.
pub const SOURCE: &str = hygiene_rules::SOURCE;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Rule {
    MergeConflict,
    PrivateKey,
    JsonSyntax,
    TomlSyntax,
    TomlVersion,
    YamlSyntax,
    SyntaxDepth,
    DuplicateKey,
    TextEncoding,
    LargeFile,
    MixedLineEndings,
    TrailingWhitespace,
    FinalNewline,
}

impl Rule {
    pub(crate) const ALL: [Rule; 13] = [
        Rule::MergeConflict,
        Rule::PrivateKey,
        Rule::JsonSyntax,
        Rule::TomlSyntax,
        Rule::TomlVersion,
        Rule::YamlSyntax,
        Rule::SyntaxDepth,
        Rule::DuplicateKey,
        Rule::TextEncoding,
        Rule::LargeFile,
        Rule::MixedLineEndings,
        Rule::TrailingWhitespace,
        Rule::FinalNewline,
    ];

    /// How the rule is described to every reader (the table in bridge-core, in this order).
    pub(crate) fn info(self) -> &'static RuleInfo {
        &RULES[self as usize]
    }

    /// The rule id, namespaced under [`SOURCE`].
    pub(crate) fn id(self) -> &'static str {
        self.info().id
    }

    pub(crate) fn parse(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|rule| rule.id() == id)
    }

    pub(crate) fn severity(self) -> Severity {
        match self {
            Rule::MergeConflict
            | Rule::PrivateKey
            | Rule::JsonSyntax
            | Rule::TomlSyntax
            | Rule::YamlSyntax => Severity::Error,
            Rule::LargeFile | Rule::MixedLineEndings | Rule::DuplicateKey | Rule::TomlVersion => {
                Severity::Warning
            }
            Rule::TrailingWhitespace
            | Rule::FinalNewline
            | Rule::SyntaxDepth
            | Rule::TextEncoding => Severity::Info,
        }
    }

    /// What to do about a finding of this rule.
    pub(crate) fn help(self) -> &'static str {
        match self {
            Rule::MergeConflict => {
                "Resolve the conflict: keep the intended text and delete the `<<<<<<<`, `=======` \
                 and `>>>>>>>` marker lines before committing."
            }
            Rule::PrivateKey => {
                "Remove the key from the change and treat it as leaked: revoke or rotate it, and load \
                 keys from a secret store or an ignored file instead."
            }
            Rule::JsonSyntax => {
                "Fix the JSON at the marked position. JSON allows no comments, trailing commas or \
                 single quotes; a file meant to hold comments should be named `.jsonc`."
            }
            Rule::TomlSyntax => {
                "Fix the TOML at the marked position; duplicate keys and tables are errors too."
            }
            Rule::TomlVersion => {
                "Write it as TOML 1.0 so that every reader takes it: inline tables on one line \
                 without a trailing comma, `\\u001b` for `\\e`, `\\u00XX` for `\\xXX`, and times \
                 with seconds (`07:32:00`)."
            }
            Rule::YamlSyntax => {
                "Fix the YAML at the marked position; indentation must be spaces and consistent \
                 within a block."
            }
            Rule::SyntaxDepth => {
                "The file nests deeper than the syntax check goes (about 100 levels for TOML, 128 \
                 for JSON and YAML), so its syntax past that depth was not checked; flatten it if \
                 other tools must read it too."
            }
            Rule::DuplicateKey => {
                "Give each key once per object: JSON and YAML readers keep one of the values (most \
                 the last) without a word, so the other is lost."
            }
            Rule::TextEncoding => {
                "The text checks read UTF-8 and UTF-16 with a byte order mark; save the file as \
                 UTF-8 to have it checked."
            }
            Rule::LargeFile => {
                "Large files weigh on every clone forever: keep generated files and binaries out of \
                 the repository (Git LFS or an artifact store), or raise `max-added-file-kb` in the \
                 `[hygiene]` section of host.toml if the file belongs here."
            }
            Rule::MixedLineEndings => {
                "Use one line ending per file; a `.gitattributes` entry such as `* text=auto` keeps \
                 them consistent."
            }
            Rule::TrailingWhitespace => {
                "Delete the trailing spaces and tabs; most editors can trim them on save."
            }
            Rule::FinalNewline => {
                "End the file with a newline, so that appending to it does not change its last line."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_id_is_namespaced_and_parses_back() {
        for rule in Rule::ALL {
            assert!(rule.id().starts_with("hygiene/"), "{}", rule.id());
            assert_eq!(Rule::parse(rule.id()), Some(rule));
            assert!(!rule.help().is_empty());
            assert_eq!(rule.info().id, rule.id());
        }
        assert_eq!(RULES.len(), Rule::ALL.len(), "one description per rule");
        assert_eq!(Rule::parse("hygiene/nope"), None);
    }

    #[test]
    fn secrets_and_conflicts_are_errors_whitespace_is_information() {
        assert_eq!(Rule::MergeConflict.severity(), Severity::Error);
        assert_eq!(Rule::PrivateKey.severity(), Severity::Error);
        assert_eq!(Rule::TrailingWhitespace.severity(), Severity::Info);
        assert_eq!(Rule::FinalNewline.severity(), Severity::Info);
    }
}
