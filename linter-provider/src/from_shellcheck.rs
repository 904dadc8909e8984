//! shellcheck's `-f json1` made findings, exactly as a SARIF converter would write them (so no
//! converter needs installing): `code` 2086 is `shellcheck/SC2086` with its wiki page, `style` and
//! `info` are information, columns count code points (a tab is one), paths are relative to the
//! folder it ran in.

use std::path::Path;

use serde_json::Value;

use crate::columns::Unit;
use crate::from_sarif::{self, Context, Mapped};

/// The findings of the json1 text shellcheck printed; `Err` when it is no JSON, or not json1.
pub fn read(output: &[u8], cx: &Context<'_>) -> Result<Mapped, String> {
    let value: Value = serde_json::from_slice(output).map_err(from_sarif::not_json)?;
    map(&value, cx)
}

/// The findings of shellcheck's json1 `output`, mapped through the SARIF rules; `Err` when it is
/// not json1 (no `comments` array).
pub fn map(output: &Value, cx: &Context<'_>) -> Result<Mapped, String> {
    let comments = output["comments"]
        .as_array()
        .ok_or("the output is not shellcheck's json1: it has no \"comments\" array")?;
    let results: Vec<Value> = comments.iter().map(result_of).collect();
    let log = serde_json::json!({"version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "shellcheck"}},
        "results": results,
    }]});
    from_sarif::map(
        &log,
        &Context {
            columns: Unit::Unicode,
            rule_uri: cx.rule_uri.or(Some(WIKI)),
            ..*cx
        },
    )
}

/// One json1 comment as the SARIF result a converter writes for it.
fn result_of(comment: &Value) -> Value {
    let level = match comment["level"].as_str() {
        Some("error") => "error",
        Some("warning") => "warning",
        _ => "note",
    };
    let file = comment["file"].as_str().unwrap_or_default();
    // A relative path is the folder shellcheck ran in; an absolute one stays as it is.
    let uri = if Path::new(file).is_absolute() {
        file.to_owned()
    } else {
        format!("./{file}")
    };
    let mut result = serde_json::json!({
        "ruleId": comment["code"].as_u64().map(|c| format!("SC{c}")),
        "level": level,
        "message": {"text": comment["message"]},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": percent_encoding::utf8_percent_encode(&uri, URI).to_string()},
            "region": {
                "startLine": comment["line"],
                "startColumn": comment["column"],
                "endLine": comment["endLine"],
                "endColumn": comment["endColumn"],
            }
        }}]
    });
    if comment["fix"]["replacements"]
        .as_array()
        .is_some_and(|r| !r.is_empty())
    {
        result["fixes"] = serde_json::json!([{"description": {
            "text": "shellcheck can apply it (`shellcheck -f diff`)"
        }}]);
    }
    result
}

/// Where shellcheck documents each rule.
const WIKI: &str = "https://www.shellcheck.net/wiki/{rule}";

/// What is percent-encoded in a path made a relative URI.
const URI: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'%')
    .add(b'#')
    .add(b'?');

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;
    use crate::from_sarif::{Level, Span};

    #[test]
    fn a_comment_becomes_a_finding_with_its_wiki_rule_and_code_point_columns() {
        let script = "#!/bin/sh\necho \"😀é\" $1\n\techo $foo\n";
        let files = HashMap::from([("bin/my run.sh".to_owned(), script.as_bytes())]);
        let cx = Context {
            linter: "shellcheck",
            root: Path::new("/scratch"),
            files: &files,
            columns: Unit::Utf8,
            max_results: 10,
            rule_uri: None,
        };
        // As shellcheck 0.11 prints it for this script.
        let output = json!({"comments": [
            {"file": "bin/my run.sh", "line": 2, "endLine": 2, "column": 11, "endColumn": 13,
             "level": "info", "code": 2086, "message": "Double quote to prevent globbing and word splitting.",
             "fix": {"replacements": [{"column": 11}]}},
            {"file": "bin/my run.sh", "line": 3, "endLine": 3, "column": 7, "endColumn": 11,
             "level": "warning", "code": 2154, "message": "foo is referenced but not assigned.", "fix": null},
            {"file": "/elsewhere/x.sh", "line": 1, "column": 1, "level": "error", "code": 1000, "message": "m"}
        ]});
        let mapped = map(&output, &cx).unwrap();
        assert_eq!(mapped.outside, 1);
        let first = &mapped.findings[0];
        assert_eq!(
            (first.path.as_str(), first.code.as_str(), first.level),
            ("bin/my run.sh", "shellcheck/SC2086", Level::Info)
        );
        // `$1` after an emoji: code point 11 is UTF-16 offset 11 (the emoji is two units).
        assert_eq!(
            first.span,
            Some(Span {
                start_line: 1,
                start_char: 11,
                end_line: 1,
                end_char: 13
            })
        );
        assert!(first.help.contains("fix available"), "{}", first.help);
        assert_eq!(first.help_uri, "https://www.shellcheck.net/wiki/SC2086");
        let second = &mapped.findings[1];
        assert_eq!(
            (second.level, second.span.unwrap().start_char),
            (Level::Warning, 6)
        );
        assert!(map(&json!({"version": "2.1.0"}), &cx).is_err());
    }
}
