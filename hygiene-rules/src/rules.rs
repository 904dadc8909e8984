//! The built-in hygiene provider's rules as every reader names them: their ids, descriptions, tags
//! and documentation anchors, written once. The provider reports by these ids and links each
//! finding to its anchor (`codeDescription.href`); the SARIF exporter describes the rules of its
//! findings from here, since neither the ASP assessment nor the verdict carries rule descriptors.

/// The diagnostic source (and rule namespace) of the built-in hygiene provider.
pub const SOURCE: &str = "hygiene";

/// Where the rules are documented: the README's sections, one anchor per rule.
pub const DOCS: &str = "https://github.com/asp-bridge/asp-bridge";

/// One rule of the built-in hygiene provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleInfo {
    /// Its id, namespaced under [`SOURCE`].
    pub id: &'static str,
    /// What it finds, in a line.
    pub short: &'static str,
    /// What it finds and why that matters.
    pub full: &'static str,
    /// What kind of problem it is (`security`, `correctness`, `maintainability`, `style`).
    pub tags: &'static [&'static str],
    /// GitHub code scanning's `security-severity` (0.0 to 10.0, as a string), for security rules.
    pub security_severity: Option<&'static str>,
    /// The README anchor of its section (without `#`).
    pub anchor: &'static str,
}

impl RuleInfo {
    /// The address of its documentation.
    pub fn help_uri(&self) -> String {
        format!("{DOCS}#{}", self.anchor)
    }
}

/// Every rule, in the provider's order.
pub const RULES: [RuleInfo; 13] = [
    RuleInfo {
        id: "hygiene/merge-conflict",
        short: "Unresolved merge conflict markers",
        full: "A line starts with a merge conflict marker (`<<<<<<<`, `=======` between the two, \
               `>>>>>>>`): the file holds both sides of an unresolved conflict and will not build or \
               read as intended.",
        tags: &["correctness"],
        security_severity: None,
        anchor: "hygiene-merge-conflict",
    },
    RuleInfo {
        id: "hygiene/private-key",
        short: "Private key committed",
        full: "The file holds the header of a private key (PEM, OpenSSH, PuTTY, PGP, OpenVPN): whoever can \
               read the repository can use the key, so it must be treated as leaked.",
        tags: &["security", "secrets"],
        security_severity: Some("9.0"),
        anchor: "hygiene-private-key",
    },
    RuleInfo {
        id: "hygiene/json-syntax",
        short: "Invalid JSON",
        full: "A `.json` file does not parse as JSON (RFC 8259): the tools that read it will fail.",
        tags: &["correctness"],
        security_severity: None,
        anchor: "hygiene-json-syntax",
    },
    RuleInfo {
        id: "hygiene/toml-syntax",
        short: "Invalid TOML",
        full: "A `.toml` file does not parse as TOML (1.1, duplicate keys and tables included): the \
               tools that read it will fail.",
        tags: &["correctness"],
        security_severity: None,
        anchor: "hygiene-toml-syntax",
    },
    RuleInfo {
        id: "hygiene/toml-version",
        short: "TOML 1.1 that TOML 1.0 readers reject",
        full: "A `.toml` file is valid TOML 1.1 but not TOML 1.0 (newlines or a trailing comma in an \
               inline table, a `\\e` or `\\x` escape, a time without seconds): Python's tomllib and \
               most tools read TOML 1.0 and reject it.",
        tags: &["correctness", "portability"],
        security_severity: None,
        anchor: "hygiene-toml-version",
    },
    RuleInfo {
        id: "hygiene/yaml-syntax",
        short: "Invalid YAML",
        full: "A `.yaml` or `.yml` file does not parse as YAML (as libyaml, PyYAML and ruamel read \
               it, or strict YAML 1.2 when so configured): the tools that read it will fail.",
        tags: &["correctness"],
        security_severity: None,
        anchor: "hygiene-yaml-syntax",
    },
    RuleInfo {
        id: "hygiene/syntax-depth",
        short: "Nested deeper than the syntax check goes",
        full: "A JSON, TOML or YAML file nests deeper than its parser goes, so its syntax past that \
               depth was not checked.",
        tags: &["maintainability"],
        security_severity: None,
        anchor: "hygiene-syntax-depth",
    },
    RuleInfo {
        id: "hygiene/duplicate-key",
        short: "Duplicate key in a JSON or YAML object",
        full: "A JSON or YAML object gives the same key twice: readers keep one of the values, most \
               the last, without a word, so the other is lost.",
        tags: &["correctness"],
        security_severity: None,
        anchor: "hygiene-duplicate-key",
    },
    RuleInfo {
        id: "hygiene/text-encoding",
        short: "Text not checked: unknown encoding",
        full: "A file is text in neither UTF-8 nor UTF-16 with a byte order mark, so the text checks \
               did not read it.",
        tags: &["maintainability"],
        security_severity: None,
        anchor: "hygiene-text-encoding",
    },
    RuleInfo {
        id: "hygiene/large-file",
        short: "Large file added",
        full: "An added file is larger than the limit (500 KB unless `max-added-file-kb` says \
               otherwise): it weighs on every clone of the repository forever.",
        tags: &["maintainability"],
        security_severity: None,
        anchor: "hygiene-large-file",
    },
    RuleInfo {
        id: "hygiene/mixed-line-endings",
        short: "Mixed line endings",
        full: "A file ends its lines in more than one way (LF, CRLF, CR), which confuses diffs and \
               tools.",
        tags: &["style"],
        security_severity: None,
        anchor: "hygiene-mixed-line-endings",
    },
    RuleInfo {
        id: "hygiene/trailing-whitespace",
        short: "Trailing whitespace",
        full: "A changed line ends in spaces or tabs, which show up as noise in later diffs.",
        tags: &["style"],
        security_severity: None,
        anchor: "hygiene-trailing-whitespace",
    },
    RuleInfo {
        id: "hygiene/final-newline",
        short: "No newline at the end of the file",
        full: "A text file whose last line changed does not end with a newline, so appending to it \
               changes its last line.",
        tags: &["style"],
        security_severity: None,
        anchor: "hygiene-final-newline",
    },
];

/// The rule with id `id`.
pub fn rule(id: &str) -> Option<&'static RuleInfo> {
    RULES.iter().find(|rule| rule.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_described_tagged_and_linked_and_only_security_rules_have_a_severity() {
        let mut anchors = std::collections::HashSet::new();
        for rule in RULES {
            assert!(rule.id.starts_with("hygiene/"), "{}", rule.id);
            assert_ne!(rule.short, rule.id);
            assert!(rule.short.len() <= 100 && rule.full.len() > rule.short.len());
            assert!(!rule.tags.is_empty(), "{}", rule.id);
            assert_eq!(
                rule.security_severity.is_some(),
                rule.tags.contains(&"security"),
                "{}",
                rule.id
            );
            assert!(anchors.insert(rule.anchor), "{}", rule.anchor);
            assert!(rule.help_uri().starts_with("https://"));
        }
        let key = rule("hygiene/private-key").unwrap();
        assert_eq!(key.security_severity, Some("9.0"));
        assert_eq!(rule("hygiene/nope"), None);
    }

    #[test]
    fn every_rules_anchor_is_a_row_of_the_readme() {
        let readme = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
        )
        .expect("the README");
        for rule in RULES {
            let row = format!("<a id=\"{}\"></a>`{}`", rule.anchor, rule.id);
            assert!(
                readme.contains(&row),
                "the README's hygiene rules lack {row}"
            );
        }
    }
}
