//! What a check reports of one file side: its findings, kept up to a cap per rule, and what it
//! could not check. Every check of `checks/` writes into a [`Found`].

use provider_kit::text::Range;

use crate::rules::Rule;

/// Most findings of one rule in one file side; past it the rule's check stops and the rest are
/// counted as cut (the answer is then truncated, never complete).
pub(crate) const PER_RULE: usize = 10_000;

/// One finding of one rule in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) rule: Rule,
    /// `None`: the finding is about the whole file (or the file is not text).
    pub(crate) range: Option<Range>,
    pub(crate) message: String,
    /// What identifies the finding apart from its position (for the fingerprint).
    pub(crate) key: String,
}

impl Finding {
    pub(crate) fn new(
        rule: Rule,
        range: Option<Range>,
        message: impl Into<String>,
        key: impl Into<String>,
    ) -> Finding {
        Finding {
            rule,
            range,
            message: message.into(),
            key: key.into(),
        }
    }
}

/// The findings of one file side as the checks find them, at most [`PER_RULE`] of each rule: a
/// check asks [`Found::full`] in its loop and stops there, so a file of a million markers costs
/// what ten thousand do.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(super) findings: Vec<Finding>,
    /// What a check could not check in this file, and why (reported as not covered, never clean).
    pub(super) unchecked: Vec<String>,
    /// Findings of each rule so far, by `Rule as usize`.
    counts: [usize; Rule::ALL.len()],
    /// Findings past a rule's cap, not kept.
    pub(super) cut: usize,
}

impl Found {
    pub(crate) fn push(&mut self, finding: Finding) {
        let count = &mut self.counts[finding.rule as usize];
        if *count < PER_RULE {
            self.findings.push(finding);
        } else {
            self.cut += 1;
        }
        *count += 1;
    }

    /// Says that part of the file could not be checked, and why.
    pub(crate) fn unchecked(&mut self, why: String) {
        self.unchecked.push(why);
    }

    pub(crate) fn extend(&mut self, findings: impl IntoIterator<Item = Finding>) {
        for finding in findings {
            self.push(finding);
        }
    }

    /// Whether `rule` has its [`PER_RULE`] findings: its check can stop (what it would still find
    /// is counted once, as one more cut).
    pub(crate) fn full(&mut self, rule: Rule) -> bool {
        let count = &mut self.counts[rule as usize];
        if *count < PER_RULE {
            return false;
        }
        if *count == PER_RULE {
            *count += 1;
            self.cut += 1;
        }
        true
    }
}

/// How YAML files are read (`[hygiene] yaml`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum YamlReading {
    /// What libyaml (PyYAML, ruamel and most tools) loads is no error.
    #[default]
    Compatible,
    /// YAML 1.2 to the letter.
    Strict,
}

/// A line or a key quoted in a message, cut to a readable length.
pub(crate) fn short(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}
