//! `hygiene/json-syntax`, `hygiene/toml-syntax`, `hygiene/yaml-syntax`: files that do not parse, by
//! extension. One finding per file, at the position the parser stopped. TOML is parsed as TOML 1.1;
//! what TOML 1.0 readers would reject in a file that parses is `hygiene/toml-version`.
//!
//! What a maintainer would not call an error is left alone: JSON-with-comments files by well-known
//! name (`tsconfig*.json`, `jsconfig*.json`, `.vscode/*.json`, `devcontainer.json`, `.eslintrc.json`).
//! YAML is read as libyaml reads it (PyYAML, ruamel): a file the strict YAML 1.2 parser rejects but
//! libyaml loads is no error, unless `[hygiene] yaml = "strict"` asks for YAML 1.2 to the letter.
//! A YAML file that does not parse but holds template syntax (`{{ }}`, `{% %}`, `{# #}`: Helm, Jinja,
//! Ansible) is checked again with its template expressions masked; if it still does not parse, it is
//! reported as not checked (the template may be what breaks it), never as clean nor as an error.

use super::duplicate_key::{Keys, Repeats};
use super::found::{Finding, Found, YamlReading};
use crate::rules::Rule;
use provider_kit::text::{Range, Text};

pub(super) fn check(
    path: &str,
    text: &Text<'_>,
    enabled: &[Rule],
    reading: YamlReading,
    out: &mut Found,
) {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    // What the syntax check learnt of repeated keys: those a YAML parse saw, or none for a JSON
    // file read to its end without one. `None`: the parser's events are still to be read.
    let mut keys = None;
    let finding = match extension.as_str() {
        "json" if enabled.contains(&Rule::JsonSyntax) && !allows_comments(path, name) => {
            let (found, repeats) = json(text);
            if !repeats {
                // The syntax check saw every key: none repeats, so none is to be located.
                keys = Some(Keys::default());
            }
            found
        }
        "toml" if enabled.contains(&Rule::TomlSyntax) || enabled.contains(&Rule::TomlVersion) => {
            let found = toml(text);
            if found.is_none() && enabled.contains(&Rule::TomlVersion) {
                super::toml_version::check(text, out);
            }
            found.filter(|_| enabled.contains(&Rule::TomlSyntax))
        }
        "yaml" | "yml" if enabled.contains(&Rule::YamlSyntax) => {
            match yaml(text, reading, Some(keys.insert(Keys::default()))) {
                Some(error) if has_templates(text.text) => {
                    let masked = mask_templates(text.text);
                    if let Some(still) = yaml(&Text::new(&masked), reading, None) {
                        let at = still.range.map_or(0, |r| r.start.line + 1);
                        out.unchecked(format!(
                            "YAML template not checked: with its template expressions masked it still does not parse ({} at line {at}), so its syntax cannot be told apart from its template's",
                            still.message.trim_start_matches("invalid YAML: ")
                        ));
                    }
                    drop(error);
                    None
                }
                found => found,
            }
        }
        _ => None,
    };
    // A parser's depth limit is no syntax error: the file was not checked past it, which is said
    // as information (under its own rule, so that it can be turned off), never as an error.
    let finding = finding.and_then(|f| match depth_limit(&f.message) {
        false => Some(f),
        true if enabled.contains(&Rule::SyntaxDepth) => Some(Finding::new(
            Rule::SyntaxDepth,
            f.range,
            format!(
                "not fully checked: it nests deeper than the {} parser goes ({})",
                f.message
                    .strip_prefix("invalid ")
                    .and_then(|m| m.split_once(':'))
                    .map_or("syntax", |(what, _)| what),
                f.message.rsplit(": ").next().unwrap_or_default().trim()
            ),
            "",
        )),
        true => None,
    });
    let parsed = finding.is_none();
    out.extend(finding);
    let keyed =
        matches!(extension.as_str(), "json" | "yaml" | "yml") && !allows_comments(path, name);
    if parsed && keyed && enabled.contains(&Rule::DuplicateKey) {
        match keys {
            Some(keys) => keys.report(text, out),
            None => super::duplicate_key::check(text, out),
        }
    }
}

/// Whether a parser's message is its nesting limit (serde_json, saphyr and toml each word it
/// their way), not a fault of the file.
fn depth_limit(message: &str) -> bool {
    [
        "recursion limit exceeded",
        "max recursion depth",
        "cannot recurse further",
    ]
    .iter()
    .any(|words| message.contains(words))
}

/// JSON files that their tools read with comments allowed.
fn allows_comments(path: &str, name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    (name.starts_with("tsconfig") || name.starts_with("jsconfig"))
        || name == "devcontainer.json"
        || name == ".devcontainer.json"
        || name == ".eslintrc.json"
        || path.starts_with(".vscode/")
        || path.contains("/.vscode/")
}

fn finding(rule: Rule, range: Range, what: &str, message: &str) -> Finding {
    Finding::new(rule, Some(range), format!("invalid {what}: {message}"), "")
}

/// The syntax error of a JSON text, if any, and whether an object of it may repeat a key: read to
/// its end, whether one does; else true (the parser's events, read as far as they go, tell).
fn json(text: &Text<'_>) -> (Option<Finding>, bool) {
    let error = match serde_json::from_str::<Repeats>(text.text) {
        Ok(Repeats(repeats)) => return (None, repeats),
        // Keys are read recursively, to serde_json's depth limit; its reading into nothing has
        // none, so a deeper text is still checked to its end (its keys then by the events).
        Err(deep) if depth_limit(&deep.to_string()) => {
            match serde_json::from_str::<serde::de::IgnoredAny>(text.text) {
                Ok(_) => return (None, true),
                Err(error) => error,
            }
        }
        Err(error) => error,
    };
    // serde_json counts lines by LF only and columns in bytes, 1-based (0 = before the line's
    // first byte): find the byte offset in its own terms.
    let line_start: usize = text
        .text
        .split_inclusive('\n')
        .take(error.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let offset = (line_start + error.column().saturating_sub(1)).min(text.text.len());
    let message = error.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m);
    let found = finding(Rule::JsonSyntax, one_char(text, offset), "JSON", message);
    (Some(found), true)
}

fn toml(text: &Text<'_>) -> Option<Finding> {
    let error = toml::from_str::<toml::Table>(text.text).err()?;
    let span = error.span().unwrap_or(0..0);
    let message = error.message().trim().to_owned();
    let range = if span.is_empty() {
        one_char(text, span.start)
    } else {
        text.range(span.start, span.end)
    };
    Some(finding(Rule::TomlSyntax, range, "TOML", &message))
}

/// The strict YAML 1.2 parser's error, unless the reading is the compatible one and libyaml loads
/// the file (the strict parser's message and position are kept for a file both reject). The events
/// read before the error go to `keys` (the duplicate-key rule), so the text is parsed once for both.
fn yaml<'t>(
    text: &Text<'t>,
    reading: YamlReading,
    mut keys: Option<&mut Keys<'t>>,
) -> Option<Finding> {
    let mut events = saphyr_parser::Parser::new_from_str(text.text);
    let error = loop {
        match events.next()? {
            Ok((event, span)) => {
                if let Some(keys) = keys.as_deref_mut() {
                    keys.see(event, span);
                }
            }
            Err(error) => break error,
        }
    };
    if reading == YamlReading::Compatible && super::libyaml::loads(text.text) {
        return None;
    }
    // The parser counts characters; the range wants bytes first.
    let offset = text
        .text
        .char_indices()
        .nth(error.marker().index())
        .map_or(text.text.len(), |(at, _)| at);
    Some(finding(
        Rule::YamlSyntax,
        one_char(text, offset),
        "YAML",
        error.info(),
    ))
}

/// Whether `text` holds template syntax (Jinja, Helm, Ansible, Go templates).
fn has_templates(text: &str) -> bool {
    ["{{", "{%", "{#"].iter().any(|open| text.contains(open))
}

/// `text` with each template expression replaced by filler of the same length in bytes (line
/// breaks kept, so positions stay): an expression inside a line becomes a plain scalar (`x…`), and
/// a line that holds nothing but template tags becomes a comment (`#…`).
fn mask_templates(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let bytes = line.as_bytes();
        let mut masked = bytes.to_vec();
        let mut tag = vec![false; bytes.len()];
        let mut at = 0;
        while let Some(found) = line[at..].find('{') {
            let open = at + found;
            let close = match bytes.get(open + 1) {
                Some(b'{') => "}}",
                Some(b'%') => "%}",
                Some(b'#') => "#}",
                _ => {
                    at = open + 1;
                    continue;
                }
            };
            let Some(length) = line[open + 2..].find(close) else {
                break;
            };
            let end = open + 2 + length + 2;
            // `${{ … }}` (GitHub Actions) is masked with its `$`.
            let start = if open > 0 && bytes[open - 1] == b'$' {
                open - 1
            } else {
                open
            };
            masked[start..end].fill(b'x');
            tag[start..end].fill(true);
            at = end;
        }
        // What is left of a line once its tags are masked: nothing but filler and blanks makes
        // it a comment, since a block tag (`{% if %}`) stands for no YAML of its own.
        let only_tags = tag.contains(&true)
            && tag
                .iter()
                .zip(bytes)
                .all(|(tag, b)| *tag || b.is_ascii_whitespace());
        if only_tags {
            let indent = line.len() - line.trim_start().len();
            let end = line.trim_end().len();
            masked[indent..end].fill(b' ');
            masked[indent] = b'#';
        }
        out.extend_from_slice(&masked);
    }
    // Only whole characters were replaced, by ASCII filler, so the bytes are still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// The range of the character at `offset`, or an empty range at the end of a line or the text.
fn one_char(text: &Text<'_>, offset: usize) -> Range {
    let end = text.text[offset.min(text.text.len())..]
        .chars()
        .next()
        .filter(|c| *c != '\n' && *c != '\r')
        .map_or(offset, |c| offset + c.len_utf8());
    text.range(offset, end)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{range, run};
    use crate::rules::Rule;

    fn only(path: &str, text: &str) -> (Option<provider_kit::text::Range>, String) {
        let found: Vec<_> = run(path, text, None)
            .into_iter()
            .filter(|f| f.rule != Rule::TrailingWhitespace && f.rule != Rule::FinalNewline)
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        (found[0].range, found[0].message.clone())
    }

    #[test]
    fn json_errors_point_at_the_offending_character() {
        let (at, message) = only("config/app.json", "{\n  \"naïve\": 1,\n  \"b\": ,\n}\n");
        assert_eq!(at, range(2, 7, 2, 8));
        assert_eq!(message, "invalid JSON: expected value");
        // After a non-ASCII key on the same line: UTF-16 columns, not bytes (the parser stops
        // at the `}` that ends `tru`).
        let (at, message) = only("a.json", "{\"é😀\": tru}\n");
        assert_eq!(at, range(0, 11, 0, 12));
        assert_eq!(message, "invalid JSON: expected ident");
    }

    #[test]
    fn json_at_the_end_of_the_text_is_an_empty_range() {
        let (at, message) = only("a.json", "{\"a\": 1\n");
        assert_eq!(at, range(0, 7, 0, 7), "the end of the last line");
        assert_eq!(message, "invalid JSON: EOF while parsing an object");
        let (at, message) = only("b.json", "");
        assert_eq!(at, range(0, 0, 0, 0));
        assert_eq!(message, "invalid JSON: EOF while parsing a value");
    }

    #[test]
    fn json_with_comments_by_name_is_left_alone() {
        let jsonc = "{\n  // comment\n  \"a\": 1,\n}\n";
        assert_eq!(run("tsconfig.base.json", jsonc, None), []);
        assert_eq!(run("web/.vscode/settings.json", jsonc, None), []);
        assert_eq!(run("package.json", jsonc, None).len(), 1);
    }

    #[test]
    fn toml_errors_cover_the_parser_span() {
        let (at, message) = only("Cargo.toml", "[package]\nname = \"é\"\nname = \"x\"\n");
        assert_eq!(at, range(2, 0, 2, 4));
        assert_eq!(message, "invalid TOML: duplicate key");
        let (at, message) = only("a.toml", "a = 1\nb = [1,\n");
        assert_eq!(at, range(1, 7, 1, 7));
        assert_eq!(message, "invalid TOML: unclosed array, expected `]`");
    }

    #[test]
    fn yaml_errors_point_at_the_scanner_position() {
        let (at, message) = only(".github/workflows/ci.yml", "on: push\njobs:\n  a: [1, 2\n");
        assert_eq!(at, range(2, 10, 2, 10));
        assert_eq!(
            message,
            "invalid YAML: while parsing a flow sequence, expected ',' or ']'"
        );
        let (at, message) = only("a.yaml", "k: v\n\"é😀\": a: b\n");
        // The second `:`, 8 UTF-16 units in (11 bytes).
        assert_eq!(at, range(1, 8, 1, 9));
        assert_eq!(
            message,
            "invalid YAML: mapping values are not allowed in this context"
        );
        assert_eq!(run("a.yaml", "a: 1\nb:\n  - c\n---\nd: e\n", None), []);
    }

    #[test]
    fn yaml_templates_are_left_alone() {
        assert_eq!(
            run("chart/templates/a.yaml", "a: {{ .Values.x }\n  b\n", None),
            []
        );
        assert_eq!(run("ci.yml", "run: echo ${{ github.sha }}\n", None), []);
    }

    /// The findings of a YAML file, and what it says it could not check.
    fn checked(path: &str, text: &str) -> (Vec<crate::checks::Finding>, Vec<String>) {
        let checked = super::super::tests::added(path, text.as_bytes());
        (
            checked.findings.into_iter().map(|f| f.finding).collect(),
            checked.unchecked,
        )
    }

    #[test]
    fn a_template_that_parses_once_masked_is_checked_and_clean() {
        let ansible = "- hosts: all\n  tasks:\n    - name: {{ item }}\n{% for x in xs %}\n    - debug: {{ x }}\n{% endfor %}\n";
        let (found, unchecked) = checked("play.yml", ansible);
        assert_eq!(found, []);
        assert_eq!(unchecked, Vec::<String>::new());
        let actions = "on: push\njobs:\n  a:\n    if: ${{ github.event_name == 'push' }}\n    runs-on: ubuntu-latest\n";
        assert_eq!(checked("ci.yml", actions), (vec![], vec![]));
    }

    #[test]
    fn a_template_that_does_not_parse_even_masked_is_reported_as_not_checked_never_clean() {
        // A real unclosed `[` and a bad indentation, in files that hold templates.
        for text in [
            "a: {{ .Values.x }}\nlist: [1, 2\n",
            "a: {{ .Values.x }}\nb:\n  - 1\n - 2\n",
        ] {
            let (found, unchecked) = checked("chart/values.yaml", text);
            assert!(
                !found.iter().any(|f| f.rule == Rule::YamlSyntax),
                "the template may be at fault: no error"
            );
            assert_eq!(unchecked.len(), 1, "{text:?}");
            assert!(
                unchecked[0].starts_with("YAML template not checked"),
                "{}",
                unchecked[0]
            );
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert_eq!(
            only("a.json", &deep).1,
            "invalid JSON: EOF while parsing a list"
        );
        let balanced = format!("{deep}{}\n", "]".repeat(100_000));
        assert_eq!(run("a.json", &balanced, None), [], "deep but valid");
        assert_eq!(run("a.yaml", &deep, None).len(), 2);
        assert_eq!(run("a.toml", &format!("a = {deep}"), None).len(), 2);
    }

    #[test]
    fn valid_files_nested_past_the_parsers_depth_are_not_fully_checked_as_information() {
        let toml = format!("a = {}1{}\n", "[".repeat(100), "]".repeat(100));
        let yaml = format!("a: {}1{}\n", "[".repeat(1000), "]".repeat(1000));
        for (path, text, what) in [("deep.toml", toml, "TOML"), ("deep.yaml", yaml, "YAML")] {
            let found = run(path, &text, None);
            assert_eq!(found.len(), 1, "{path}: {found:?}");
            assert_eq!(found[0].rule, Rule::SyntaxDepth, "{path}");
            assert_eq!(Rule::SyntaxDepth.severity(), crate::rules::Severity::Info);
            assert!(
                found[0].message.starts_with(&format!(
                    "not fully checked: it nests deeper than the {what} parser goes"
                )),
                "{}",
                found[0].message
            );
        }
    }
}
