//! The agreement table: for each hook, the files it flagged against the files the matching hygiene
//! rules flagged in a SARIF log of the same repository (restricted to the files the hook looks at
//! when a rule covers several types: `hygiene/duplicate-key` is matched to `check-json` on JSON
//! files and to `check-yaml` on YAML files).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::hooks::HOOKS;

/// Examples of each disagreement printed.
const EXAMPLES: usize = 3;

/// One check, both sides.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    pub hook: &'static str,
    pub rules: &'static [&'static str],
    pub agree: BTreeSet<String>,
    pub only_hook: BTreeSet<String>,
    pub only_bridge: BTreeSet<String>,
}

/// The files each rule flagged in `log` (a SARIF log written by `asp-bridge sarif`), by rule id.
pub fn sarif_files(log: &Value) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let runs = log["runs"].as_array().into_iter().flatten();
    for result in runs.flat_map(|r| r["results"].as_array().into_iter().flatten()) {
        let (Some(rule), Some(uri)) = (
            result["ruleId"].as_str(),
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str(),
        ) else {
            continue;
        };
        files
            .entry(rule.to_owned())
            .or_default()
            .insert(uri.to_owned());
    }
    files
}

/// The table: one row per hook of [`HOOKS`], from what each hook flagged (by hook id) and what each
/// rule flagged (by rule id).
pub fn table(
    hooks: &BTreeMap<&'static str, BTreeSet<String>>,
    rules: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<Row> {
    HOOKS
        .iter()
        .map(|hook| {
            let by_hook = hooks.get(hook.id).cloned().unwrap_or_default();
            let by_bridge: BTreeSet<String> = hook
                .rules
                .iter()
                .flat_map(|r| rules.get(*r).into_iter().flatten())
                .filter(|f| match hook.id {
                    "check-json" => f.ends_with(".json"),
                    "check-yaml" => f.ends_with(".yaml") || f.ends_with(".yml"),
                    _ => true,
                })
                .cloned()
                .collect();
            Row {
                hook: hook.id,
                rules: hook.rules,
                agree: by_hook.intersection(&by_bridge).cloned().collect(),
                only_hook: by_hook.difference(&by_bridge).cloned().collect(),
                only_bridge: by_bridge.difference(&by_hook).cloned().collect(),
            }
        })
        .collect()
}

/// The table as text, one line per check and one per kind of disagreement with its examples.
pub fn render(rows: &[Row]) -> String {
    let mut out = format!(
        "  {:<25} {:<45} {:>6} {:>11} {:>16}\n",
        "hook", "hygiene rule", "agree", "only hooks", "only asp-bridge"
    );
    for row in rows {
        out.push_str(&format!(
            "  {:<25} {:<45} {:>6} {:>11} {:>16}\n",
            row.hook,
            row.rules.join(" + "),
            row.agree.len(),
            row.only_hook.len(),
            row.only_bridge.len()
        ));
        for (side, files) in [
            ("only hooks", &row.only_hook),
            ("only asp-bridge", &row.only_bridge),
        ] {
            if files.is_empty() {
                continue;
            }
            let examples: Vec<&str> = files.iter().take(EXAMPLES).map(String::as_str).collect();
            let more = files.len().saturating_sub(EXAMPLES);
            out.push_str(&format!(
                "      {side}: {}{}\n",
                examples.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_splits_the_files_into_agreed_and_each_side_alone() {
        let log = json!({"runs": [{"results": [
            {"ruleId": "hygiene/private-key", "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.txt"}}}]},
            {"ruleId": "hygiene/private-key", "locations": [{"physicalLocation": {"artifactLocation": {"uri": "b.png"}}}]},
            {"ruleId": "hygiene/duplicate-key", "locations": [{"physicalLocation": {"artifactLocation": {"uri": "c.yaml"}}}]},
        ]}]});
        let hooks = BTreeMap::from([
            (
                "detect-private-key",
                BTreeSet::from(["a.txt".to_owned(), "d.txt".to_owned()]),
            ),
            ("check-yaml", BTreeSet::from(["c.yaml".to_owned()])),
        ]);
        let rows = table(&hooks, &sarif_files(&log));
        let row = |id: &str| rows.iter().find(|r| r.hook == id).expect("a row");
        let keys = row("detect-private-key");
        assert_eq!(keys.agree, BTreeSet::from(["a.txt".to_owned()]));
        assert_eq!(keys.only_hook, BTreeSet::from(["d.txt".to_owned()]));
        assert_eq!(keys.only_bridge, BTreeSet::from(["b.png".to_owned()]));
        // A duplicate YAML key is check-yaml's, never check-json's.
        assert_eq!(row("check-yaml").agree.len(), 1);
        assert!(row("check-json").only_bridge.is_empty());
        let text = render(&rows);
        assert!(text.contains("only asp-bridge: b.png"), "{text}");
    }
}
