//! What the trusted configuration leaves out of one evaluation (`config::LeaveOut`), done by the host
//! so that it holds for every provider: an `exclude`d change is not in the changeset the provider
//! is sent (nor in its read grant, see `provider/session.rs`), a finding of a `disable`d rule or
//! below `min-severity` is dropped from its assessment, and the decision says both in
//! `coverage.degraded` as `optional-degraded` entries whose detail starts with
//! [`LEFT_OUT_BY_CONFIGURATION`]: each excluded path once (the first [`MAX_PATHS_NAMED`], then a
//! count), and each provider's dropped rules and floor once. They leave the decision as it is.
//! The host's own rule goes the same way: a change whose working-tree entry is a symbolic link is
//! sent to no provider (a link's blob is its target path, not content), and is named as left out.

use std::collections::{BTreeMap, BTreeSet};

use asp_wire::reason::{LEFT_OUT_BY_CONFIGURATION, Reason};
use serde_json::Value;

use crate::config::{LeaveOut, Severity};
use crate::glob::GlobSet;
use crate::json;
use crate::receipt::Degradation;

/// Most excluded paths named one by one in a decision; past it one entry counts the rest.
pub(crate) const MAX_PATHS_NAMED: usize = 100;

/// The changeset one provider is sent, when its configuration excludes some of the changes or some
/// are symbolic links.
#[derive(Clone, Debug)]
pub(crate) struct Narrowed {
    /// The changeset without the excluded changes, and its digest.
    pub(crate) changeset: Value,
    pub(crate) digest: String,
    /// The excluded paths, each with the key and the glob that excluded it.
    pub(crate) excluded: Vec<(String, String, String)>,
    /// The changed paths left out because they are symbolic links.
    pub(crate) links: Vec<String>,
}

/// The globs of `leave_out` as one set that matches an excluded path.
pub(crate) fn matcher(leave_out: &LeaveOut) -> Option<GlobSet> {
    (!leave_out.exclude.is_empty()).then(|| {
        GlobSet::new(
            &leave_out
                .exclude
                .iter()
                .map(|e| e.glob.as_str())
                .collect::<Vec<_>>(),
        )
    })
}

/// The changeset the provider is sent: without the changes `leave_out` excludes and without those
/// whose working-tree entry is one of the symbolic `links` (a link's blob is its target path, not
/// content to check); `None` when that leaves out none of its changes.
pub(crate) fn narrow(
    leave_out: &LeaveOut,
    links: &BTreeSet<String>,
    changeset: &Value,
) -> Option<Narrowed> {
    let matcher = matcher(leave_out);
    if matcher.is_none() && links.is_empty() {
        return None;
    }
    let changes = changeset["changes"].as_array()?;
    // Which glob excluded a path, asked only of the paths the whole set excludes.
    let each: Vec<GlobSet> = leave_out
        .exclude
        .iter()
        .map(|e| GlobSet::new(&[e.glob.as_str()]))
        .collect();
    let mut excluded = Vec::new();
    let mut linked = Vec::new();
    let mut kept = Vec::with_capacity(changes.len());
    for change in changes {
        let path = change["path"].as_str().unwrap_or_default();
        if !path.is_empty() && matcher.as_ref().is_some_and(|m| m.allows(path)) {
            let by = each
                .iter()
                .position(|g| g.allows(path))
                .map_or(&leave_out.exclude[0], |i| &leave_out.exclude[i]);
            excluded.push((path.to_owned(), by.key.clone(), by.glob.clone()));
        } else if links.contains(path) {
            linked.push(path.to_owned());
        } else {
            kept.push(change.clone());
        }
    }
    if excluded.is_empty() && linked.is_empty() {
        return None;
    }
    let mut narrowed = changeset.clone();
    narrowed["changes"] = Value::Array(kept);
    let digest = json::digest(&narrowed);
    Some(Narrowed {
        changeset: narrowed,
        digest,
        excluded,
        links: linked,
    })
}

/// What [`drop_findings`] dropped of one assessment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// Per disabled rule id, how many of its findings.
    pub(crate) by_rule: BTreeMap<String, usize>,
    /// Findings below the floor.
    pub(crate) below: usize,
    /// Findings located in an excluded path (a provider that reported one anyway).
    pub(crate) excluded: usize,
}

/// Drops from `assessment["diagnostics"]` what `leave_out` does not report.
pub(crate) fn drop_findings(leave_out: &LeaveOut, assessment: &mut Value) -> Dropped {
    let mut dropped = Dropped::default();
    for rule in &leave_out.disable {
        dropped.by_rule.insert(rule.clone(), 0);
    }
    let matcher = matcher(leave_out);
    let Some(diagnostics) = assessment
        .get_mut("diagnostics")
        .and_then(Value::as_array_mut)
    else {
        return dropped;
    };
    diagnostics.retain(|d| {
        let code = d["code"].as_str().unwrap_or_default();
        if let Some(count) = dropped.by_rule.get_mut(code) {
            *count += 1;
            return false;
        }
        let severity = d["severity"].as_str().and_then(Severity::parse);
        if let (Some(floor), Some(severity)) = (leave_out.min_severity, severity)
            && severity > floor
        {
            dropped.below += 1;
            return false;
        }
        let path = d["location"]["path"].as_str().unwrap_or_default();
        if !path.is_empty() && matcher.as_ref().is_some_and(|m| m.allows(path)) {
            dropped.excluded += 1;
            return false;
        }
        true
    });
    dropped
}

/// The entries that say what one provider's settings dropped: once per provider that has any.
pub(crate) fn findings_note(
    provider: &str,
    leave_out: &LeaveOut,
    dropped: &Dropped,
) -> Option<Degradation> {
    let mut parts = Vec::new();
    if !dropped.by_rule.is_empty() {
        let rules: Vec<String> = dropped
            .by_rule
            .iter()
            .map(|(rule, n)| format!("{rule} ({n} dropped)"))
            .collect();
        parts.push(format!(
            "findings of the disabled rules {} are not reported",
            rules.join(", ")
        ));
    }
    if let Some(floor) = leave_out.min_severity {
        parts.push(format!(
            "findings below {} are not reported ({} dropped)",
            floor.as_str(),
            dropped.below
        ));
    }
    if dropped.excluded > 0 {
        parts.push(format!(
            "{} findings in excluded paths are not reported",
            dropped.excluded
        ));
    }
    (!parts.is_empty()).then(|| Degradation {
        capability: Some("check"),
        ..Degradation::new(
            provider,
            Reason::OptionalDegraded,
            format!("{LEFT_OUT_BY_CONFIGURATION}{}", parts.join("; ")),
        )
    })
}

/// Why a changed path was not sent to a provider.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Why<'a> {
    /// `exclude`d: the key and the glob.
    Excluded(&'a str, &'a str),
    /// A symbolic link.
    Link,
}

/// The entries that name the paths one evaluation left out (excluded or symbolic links): each path
/// once with the providers it was kept from, the first [`MAX_PATHS_NAMED`] by name and the rest
/// counted.
pub(crate) fn paths_note(left_out: &[(&str, &Narrowed)]) -> Vec<Degradation> {
    let mut paths: BTreeMap<&str, (Why, Vec<&str>)> = BTreeMap::new();
    for (provider, narrowed) in left_out {
        let excluded = narrowed
            .excluded
            .iter()
            .map(|(path, key, glob)| (path, Why::Excluded(key, glob)));
        let links = narrowed.links.iter().map(|path| (path, Why::Link));
        for (path, why) in excluded.chain(links) {
            paths
                .entry(path.as_str())
                .or_insert((why, Vec::new()))
                .1
                .push(provider);
        }
    }
    let total = paths.len();
    let mut out: Vec<Degradation> = paths
        .iter()
        .take(MAX_PATHS_NAMED)
        .map(|(path, (why, providers))| {
            let why = match why {
                Why::Excluded(key, glob) => format!("excluded by host.toml `{key}` (`{glob}`)"),
                Why::Link => {
                    "a symbolic link (its blob is its target path: no content to check)".to_owned()
                }
            };
            Degradation {
                capability: Some("check"),
                ..Degradation::new(
                    path,
                    Reason::OptionalDegraded,
                    format!(
                        "{LEFT_OUT_BY_CONFIGURATION}{why}, not sent to {}",
                        providers.join(", ")
                    ),
                )
            }
        })
        .collect();
    if total > MAX_PATHS_NAMED {
        let links = paths.values().any(|(why, _)| *why == Why::Link);
        let excluded = paths.values().any(|(why, _)| *why != Why::Link);
        let what = match (excluded, links) {
            (true, false) => "excluded by host.toml `exclude`",
            (false, _) => "left out as symbolic links",
            (true, true) => "excluded by host.toml `exclude` or left out as symbolic links",
        };
        out.push(Degradation {
            capability: Some("check"),
            ..Degradation::new(
                "host.toml",
                Reason::OptionalDegraded,
                format!(
                    "{LEFT_OUT_BY_CONFIGURATION}{} more paths {what} ({total} in all; the first {MAX_PATHS_NAMED} are named)",
                    total - MAX_PATHS_NAMED
                ),
            )
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::Exclude;

    fn leave_out() -> LeaveOut {
        LeaveOut {
            exclude: vec![Exclude {
                glob: "tests/fixtures/**".into(),
                key: "hygiene.exclude".into(),
            }],
            disable: vec!["hygiene/trailing-whitespace".into()],
            min_severity: Some(Severity::Warning),
        }
    }

    fn no_links() -> BTreeSet<String> {
        BTreeSet::new()
    }

    #[test]
    fn an_excluded_change_is_not_in_the_changeset_the_provider_is_sent() {
        let changeset = json!({"baseline": {"rev": "git:tree:1"}, "changes": [
            {"path": "tests/fixtures/conflict.txt", "kind": "create", "after": "blob:sha256:a"},
            {"path": "src/main.rs", "kind": "create", "after": "blob:sha256:b"},
        ]});
        let narrowed = narrow(&leave_out(), &no_links(), &changeset).unwrap();
        assert_eq!(narrowed.changeset["changes"].as_array().unwrap().len(), 1);
        assert_eq!(narrowed.changeset["changes"][0]["path"], "src/main.rs");
        assert_eq!(narrowed.digest, json::digest(&narrowed.changeset));
        assert_eq!(
            narrowed.excluded,
            [(
                "tests/fixtures/conflict.txt".to_owned(),
                "hygiene.exclude".to_owned(),
                "tests/fixtures/**".to_owned()
            )]
        );
        let notes = paths_note(&[("hygiene", &narrowed)]);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].source, "tests/fixtures/conflict.txt");
        assert!(notes[0].detail.starts_with(LEFT_OUT_BY_CONFIGURATION));
        assert!(
            notes[0].detail.contains("`hygiene.exclude`"),
            "{}",
            notes[0].detail
        );
        let clean = json!({"baseline": {}, "changes": [{"path": "src/a.rs"}]});
        assert!(narrow(&leave_out(), &no_links(), &clean).is_none());
        assert!(narrow(&LeaveOut::default(), &no_links(), &changeset).is_none());
    }

    #[test]
    fn disabled_rules_and_findings_below_the_floor_are_dropped_and_counted() {
        let mut assessment = json!({"diagnostics": [
            {"code": "hygiene/trailing-whitespace", "severity": "info", "location": {"path": "a"}},
            {"code": "hygiene/mixed-line-ending", "severity": "info", "location": {"path": "a"}},
            {"code": "hygiene/duplicate-key", "severity": "warning", "location": {"path": "a"}},
            {"code": "hygiene/merge-conflict", "severity": "error", "location": {"path": "tests/fixtures/x"}},
            {"code": "hygiene/private-key", "severity": "error", "location": {"path": "b"}},
        ]});
        let dropped = drop_findings(&leave_out(), &mut assessment);
        let codes: Vec<&str> = assessment["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["hygiene/duplicate-key", "hygiene/private-key"]);
        assert_eq!(dropped.by_rule["hygiene/trailing-whitespace"], 1);
        assert_eq!((dropped.below, dropped.excluded), (1, 1));
        let note = findings_note("hygiene", &leave_out(), &dropped).unwrap();
        assert_eq!(
            (note.source.as_str(), note.reason),
            ("hygiene", Reason::OptionalDegraded)
        );
        assert!(
            note.detail
                .contains("hygiene/trailing-whitespace (1 dropped)")
                && note.detail.contains("below warning"),
            "{}",
            note.detail
        );
        assert!(findings_note("x", &LeaveOut::default(), &Dropped::default()).is_none());
    }

    #[test]
    fn past_a_hundred_excluded_paths_the_rest_are_counted_in_one_entry() {
        let changes: Vec<Value> = (0..150)
            .map(|i| json!({"path": format!("tests/fixtures/{i:03}.txt")}))
            .collect();
        let narrowed = narrow(&leave_out(), &no_links(), &json!({"changes": changes})).unwrap();
        let notes = paths_note(&[("hygiene", &narrowed), ("opcore", &narrowed)]);
        assert_eq!(notes.len(), MAX_PATHS_NAMED + 1);
        assert!(
            notes[0].detail.ends_with("not sent to hygiene, opcore"),
            "{}",
            notes[0].detail
        );
        assert!(notes[MAX_PATHS_NAMED].detail.contains("50 more paths"));
    }

    #[test]
    fn a_change_to_a_symbolic_link_is_not_sent_and_each_link_is_named_once() {
        let changeset = json!({"baseline": {"rev": "git:tree:1"}, "changes": [
            {"path": "docs/current.json", "kind": "create", "after": "blob:sha256:a"},
            {"path": "tests/fixtures/link", "kind": "create", "after": "blob:sha256:b"},
            {"path": "src/main.rs", "kind": "modify", "before": "blob:sha256:c", "after": "blob:sha256:d"},
        ]});
        let links: BTreeSet<String> = ["docs/current.json", "tests/fixtures/link"]
            .map(str::to_owned)
            .into();
        let narrowed = narrow(&LeaveOut::default(), &links, &changeset).unwrap();
        let sent: Vec<&str> = narrowed.changeset["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["path"].as_str().unwrap())
            .collect();
        assert_eq!(sent, ["src/main.rs"]);
        assert_eq!(narrowed.links, ["docs/current.json", "tests/fixtures/link"]);
        assert_eq!(narrowed.digest, json::digest(&narrowed.changeset));
        // An excluded link is named once, as excluded.
        let both = narrow(&leave_out(), &links, &changeset).unwrap();
        assert_eq!(both.links, ["docs/current.json"]);
        assert_eq!(both.excluded.len(), 1);
        let notes = paths_note(&[("hygiene", &narrowed), ("opcore", &both)]);
        let named: Vec<(&str, &str)> = notes
            .iter()
            .map(|n| (n.source.as_str(), n.detail.as_str()))
            .collect();
        assert_eq!(named.len(), 2, "{named:#?}");
        assert_eq!(named[0].0, "docs/current.json");
        assert!(
            named[0].1.starts_with(LEFT_OUT_BY_CONFIGURATION)
                && named[0].1.contains("a symbolic link")
                && named[0].1.ends_with("not sent to hygiene, opcore"),
            "{named:#?}"
        );
        assert_eq!(named[1].0, "tests/fixtures/link");
        assert!(named[1].1.contains("a symbolic link"), "{named:#?}");
        assert!(narrow(&LeaveOut::default(), &no_links(), &changeset).is_none());
    }
}
