//! The SARIF mapping on logs shaped as the tools write them.

use serde_json::json;

use super::*;

const PY: &str = "import os\nx = \"😀é\"; y\n";

fn files() -> HashMap<String, &'static [u8]> {
    HashMap::from([
        ("src/a.py".to_owned(), PY.as_bytes()),
        ("my dir/b.py".to_owned(), &b"print(1)\n"[..]),
    ])
}

fn context<'a>(files: &'a HashMap<String, &'a [u8]>, unit: Unit) -> Context<'a> {
    Context {
        linter: "ruff",
        root: Path::new("/scratch/root"),
        files,
        columns: unit,
        max_results: 100,
        rule_uri: None,
    }
}

fn result(uri: &str, region: Value) -> Value {
    json!({
        "ruleId": "F401",
        "level": "error",
        "message": {"text": "`os` imported but unused"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}]
    })
}

fn log(results: Vec<Value>) -> Value {
    json!({"version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "ruff", "rules": [{
            "id": "F401",
            "shortDescription": {"text": "unused-import"},
            "help": {"text": "Remove the unused import"},
            "helpUri": "https://docs.astral.sh/ruff/rules/unused-import"
        }]}},
        "results": results
    }]})
}

#[test]
fn a_result_becomes_a_finding_on_its_repository_path_with_its_rule() {
    let files = files();
    let region = json!({"startLine": 1, "startColumn": 8, "endLine": 1, "endColumn": 10});
    let mapped = map(
        &log(vec![result("file:///scratch/root/src/a.py", region)]),
        &context(&files, Unit::Unicode),
    )
    .unwrap();
    assert_eq!(
        mapped.findings,
        [Finding {
            path: "src/a.py".into(),
            span: Some(Span {
                start_line: 0,
                start_char: 7,
                end_line: 0,
                end_char: 9
            }),
            level: Level::Error,
            code: "ruff/F401".into(),
            message: "`os` imported but unused".into(),
            help: "Remove the unused import".into(),
            help_uri: "https://docs.astral.sh/ruff/rules/unused-import".into(),
        }]
    );
}

#[test]
fn columns_after_an_emoji_are_utf16_on_the_real_line_in_each_unit() {
    let files = files();
    // `y` on line 2: code point 11, UTF-8 byte 15, UTF-16 unit 12 (1-based); offset 11.
    for (unit, column) in [(Unit::Unicode, 11), (Unit::Utf8, 15), (Unit::Utf16, 12)] {
        let region = json!({"startLine": 2, "startColumn": column, "endColumn": column + 1});
        let mapped = map(
            &log(vec![result("src/a.py", region)]),
            &context(&files, unit),
        )
        .unwrap();
        let span = mapped.findings[0].span.unwrap();
        assert_eq!(
            (span.start_line, span.start_char, span.end_char),
            (1, 11, 12),
            "{unit:?}"
        );
    }
    // A lines-only tool: the whole line.
    let mapped = map(
        &log(vec![result("src/a.py", json!({"startLine": 2}))]),
        &context(&files, Unit::Lines),
    )
    .unwrap();
    let span = mapped.findings[0].span.unwrap();
    assert_eq!((span.start_char, span.end_line, span.end_char), (0, 1, 12));
}

#[test]
fn uris_are_read_as_file_uris_absolute_paths_or_relative_to_their_base() {
    let files = files();
    let cx = context(&files, Unit::Unicode);
    let region = json!({"startLine": 1});
    for uri in [
        "file:///scratch/root/my%20dir/b.py",
        "file://localhost/scratch/root/my%20dir/b.py",
        "/scratch/root/my dir/b.py",
        "my%20dir/b.py",
        "./my dir/./b.py",
    ] {
        let mapped = map(&log(vec![result(uri, region.clone())]), &cx).unwrap();
        assert_eq!(mapped.findings.len(), 1, "{uri}: {mapped:?}");
        assert_eq!(mapped.findings[0].path, "my dir/b.py", "{uri}");
    }
    let mut based = log(vec![json!({
        "ruleId": "F401", "message": {"text": "m"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "b.py", "uriBaseId": "SRC"}}}]
    })]);
    based["runs"][0]["originalUriBaseIds"] =
        json!({"SRC": {"uri": "file:///scratch/root/my%20dir/"}});
    let mapped = map(&based, &cx).unwrap();
    assert_eq!(mapped.findings[0].path, "my dir/b.py");
    assert_eq!(
        mapped.findings[0].span, None,
        "no region: about the whole file"
    );
}

#[test]
fn results_outside_the_root_on_files_not_given_or_past_the_cap_are_dropped_and_counted() {
    let files = files();
    let mut cx = context(&files, Unit::Unicode);
    cx.max_results = 2;
    let region = json!({"startLine": 1});
    let results = vec![
        result("file:///etc/passwd", region.clone()),
        result("../outside.py", region.clone()),
        result("https://example.com/a.py", region.clone()),
        result("src/other.py", region.clone()),
        result("src/a.py", region.clone()),
        result("src/a.py", region.clone()),
        result("src/a.py", region.clone()),
    ];
    let mapped = map(&log(results), &cx).unwrap();
    assert_eq!((mapped.outside, mapped.not_given, mapped.cut), (3, 1, 1));
    assert_eq!(mapped.findings.len(), 2);
}

#[test]
fn the_level_falls_back_to_the_rules_default_then_warning_and_note_is_information() {
    let files = files();
    let cx = context(&files, Unit::Unicode);
    let mut log = log(vec![]);
    let region = json!({"startLine": 1});
    let mut results = Vec::new();
    for level in [json!("note"), json!("none"), json!("warning"), Value::Null] {
        let mut r = result("src/a.py", region.clone());
        r["level"] = level;
        results.push(r);
    }
    log["runs"][0]["results"] = json!(results);
    let levels: Vec<Level> = map(&log, &cx)
        .unwrap()
        .findings
        .iter()
        .map(|f| f.level)
        .collect();
    assert_eq!(
        levels,
        [Level::Info, Level::Info, Level::Warning, Level::Warning]
    );
    log["runs"][0]["tool"]["driver"]["rules"][0]["defaultConfiguration"] =
        json!({"level": "error"});
    let last = map(&log, &cx).unwrap().findings[3].level;
    assert_eq!(last, Level::Error);
}

#[test]
fn tool_text_is_filtered_fixes_are_advice_and_message_strings_are_filled_in() {
    let files = files();
    let cx = context(&files, Unit::Unicode);
    let mut r = result("src/a.py", json!({"startLine": 1}));
    r["message"] = json!({"id": "default", "arguments": ["os\u{202e}"]});
    r["fixes"] = json!([{"description": {"text": "Remove import\u{0007}"}}]);
    let mut log = log(vec![r]);
    log["runs"][0]["tool"]["driver"]["rules"][0]["messageStrings"] =
        json!({"default": {"text": "`{0}` unused"}});
    log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = json!("javascript:alert(1)");
    let finding = &map(&log, &cx).unwrap().findings[0];
    assert_eq!(
        finding.message, "`os` unused",
        "the BiDi control is removed"
    );
    assert_eq!(
        finding.help,
        "Remove the unused import\nfix available: Remove import"
    );
    assert_eq!(finding.help_uri, "", "only http(s) links");
}

#[test]
fn a_rule_the_tool_does_not_document_gets_the_presets_link() {
    let files = files();
    let mut cx = context(&files, Unit::Lines);
    cx.rule_uri = Some("https://github.com/hadolint/hadolint/wiki/{rule}");
    let mut hadolint = log(vec![result("src/a.py", json!({"startLine": 1}))]);
    hadolint["runs"][0]["tool"]["driver"] = json!({"name": "hadolint"});
    hadolint["runs"][0]["results"][0]["ruleId"] = json!("DL3006");
    let finding = &map(&hadolint, &cx).unwrap().findings[0];
    assert_eq!(
        finding.help_uri,
        "https://github.com/hadolint/hadolint/wiki/DL3006"
    );
    assert_eq!(
        finding.code, "ruff/DL3006",
        "namespaced by the linter id it is given"
    );
}

#[test]
fn a_failed_run_is_said_and_a_log_without_runs_is_no_sarif() {
    let files = files();
    let cx = context(&files, Unit::Unicode);
    let mut failed = log(vec![]);
    failed["runs"][0]["invocations"] = json!([{"executionSuccessful": false,
        "toolExecutionNotifications": [{"message": {"text": "cannot parse pyproject.toml"}}]}]);
    assert_eq!(
        map(&failed, &cx).unwrap().failed.as_deref(),
        Some("cannot parse pyproject.toml")
    );
    assert!(map(&json!({"version": "2.1.0"}), &cx).is_err());
    assert!(map(&json!([1, 2]), &cx).is_err());
}

#[test]
fn a_rule_help_that_only_repeats_the_message_is_left_out_and_the_fix_stays() {
    // ruff's rule help is its short description, the message of most of its results.
    let files = files();
    let mut log = log(vec![result("src/a.py", json!({"startLine": 1}))]);
    log["runs"][0]["tool"]["driver"]["rules"][0]["help"]["text"] =
        json!("`os` imported but unused");
    log["runs"][0]["results"][0]["fixes"] =
        json!([{"description": {"text": "Remove unused import: `os`"}}]);
    let mapped = map(&log, &context(&files, Unit::Unicode)).unwrap();
    assert_eq!(
        mapped.findings[0].help,
        "fix available: Remove unused import: `os`"
    );
}

#[test]
fn a_rule_help_that_is_the_messages_template_is_left_out() {
    // ruff 0.17's F401 help, as its SARIF rules list has it.
    let files = files();
    let mut log = log(vec![result("src/a.py", json!({"startLine": 1}))]);
    log["runs"][0]["tool"]["driver"]["rules"][0]["help"]["text"] = json!(
        "`{name}` imported but unused; consider using `importlib.util.find_spec` to test for availability"
    );
    let mapped = map(&log, &context(&files, Unit::Unicode)).unwrap();
    assert_eq!(mapped.findings[0].help, "");
    assert!(!is_template("Use `{}` or `dict()` to build a mapping"));
    assert!(is_template("Unnecessary `{obj_type}` call"));
}

#[test]
fn a_field_of_another_type_reads_as_absent_and_the_rest_of_the_log_still_maps() {
    let files = files();
    let cx = context(&files, Unit::Unicode);
    let mut odd = result("src/a.py", json!("line 1"));
    odd["level"] = json!(3);
    odd["fixes"] = json!({"description": "not a list"});
    let mut log = log(vec![
        odd,
        json!("not a result"),
        result("src/a.py", json!({"startLine": 1, "startColumn": "8"})),
    ]);
    log["runs"][0]["tool"]["driver"]["rules"][0]["help"] = json!(["not", "a", "message"]);
    let text = serde_json::to_vec(&log).unwrap();
    let mapped = read(&text, &cx).unwrap();
    assert_eq!(
        mapped,
        map(&log, &cx).unwrap(),
        "read as the tool printed it"
    );
    assert_eq!(
        mapped.outside, 1,
        "the item that is no result is located nowhere"
    );
    let [odd, plain] = &mapped.findings[..] else {
        panic!("{mapped:?}")
    };
    assert_eq!((odd.span, odd.level), (None, Level::Warning));
    assert_eq!(odd.help, "unused-import", "the next description in line");
    assert_eq!(
        plain.span.map(|s| s.start_char),
        Some(0),
        "a column that is no number"
    );
    for not_sarif in [&b"{\"runs\": {}}"[..], b"[1, 2]", b"\"runs\""] {
        let why = read(not_sarif, &cx).unwrap_err();
        assert!(why.contains("no \"runs\" array"), "{why}");
    }
    let why = read(b"{\"runs\": [", &cx).unwrap_err();
    assert!(why.contains("not JSON"), "{why}");
}

#[test]
fn a_key_given_twice_in_one_object_is_refused_and_said() {
    let files = files();
    let twice = br#"{"runs": [{"results": [{"ruleId": "F401", "ruleId": "E501"}]}]}"#;
    let why = read(twice, &context(&files, Unit::Unicode)).unwrap_err();
    assert!(
        why.contains("no log that can be read: duplicate field `ruleId`"),
        "{why}"
    );
}
