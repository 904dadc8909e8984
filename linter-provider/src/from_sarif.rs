//! A linter's SARIF 2.1.0 log made findings on repository paths (`LINTERS.md` §3): each result's
//! location mapped back from the scratch tree, its region made 0-based UTF-16 on the real line, its
//! level a severity, its rule's id, help and link, fixes as advice. Everything the tool wrote is
//! untrusted: filtered and capped. A result outside the scratch root or on a file the run was not
//! given is dropped and counted, and so are results past the cap.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use percent_encoding::percent_decode_str;
use serde_json::Value;

use crate::columns::{self, Lines, Unit};
use crate::scratch::repository_path;

/// Longest message, help text or rule id kept, in characters.
const MAX_TEXT: usize = 2000;
const MAX_CODE: usize = 200;

/// A finding's severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Info,
}

/// A 0-based UTF-16 range (end exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start_line: u32,
    pub start_char: u32,
    pub end_line: u32,
    pub end_char: u32,
}

/// One finding of the linter on a file it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub path: String,
    /// `None`: about the whole file.
    pub span: Option<Span>,
    pub level: Level,
    /// `linter/rule`.
    pub code: String,
    pub message: String,
    /// What to do (the rule's help, and the fixes the tool offers, never applied).
    pub help: String,
    pub help_uri: String,
}

/// What one run's output gave.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mapped {
    pub findings: Vec<Finding>,
    /// Results located outside the scratch root (or nowhere a path can be made of).
    pub outside: usize,
    /// Results on a file the run was not given.
    pub not_given: usize,
    /// Results past the cap.
    pub cut: usize,
    /// The tool said its run did not succeed (`executionSuccessful: false`), and why.
    pub failed: Option<String>,
}

/// What a log is read against.
pub struct Context<'a> {
    /// The linter's id, the namespace of its rule ids.
    pub linter: &'a str,
    /// The scratch root the tool ran in.
    pub root: &'a Path,
    /// The files it was given, by repository path, with the bytes it read.
    pub files: &'a HashMap<String, &'a [u8]>,
    pub columns: Unit,
    /// Most findings kept.
    pub max_results: usize,
    /// Where a rule is documented when the tool does not say (`{rule}` is its id).
    pub rule_uri: Option<&'a str>,
}

/// The findings of `log`; `Err` when it is no SARIF log (no `runs` array).
pub fn map(log: &Value, cx: &Context<'_>) -> Result<Mapped, String> {
    let runs = log["runs"]
        .as_array()
        .ok_or("the output is not a SARIF log: it has no \"runs\" array")?;
    let mut out = Mapped::default();
    // Each file's lines, split once for all of its findings.
    let mut lines: HashMap<&str, Lines<'_>> = HashMap::new();
    for run in runs {
        for invocation in run["invocations"].as_array().into_iter().flatten() {
            if invocation["executionSuccessful"] == false && out.failed.is_none() {
                let why = invocation["toolExecutionNotifications"][0]["message"]["text"]
                    .as_str()
                    .unwrap_or("the tool reported that its run failed");
                out.failed = Some(text(why, MAX_TEXT));
            }
        }
        let rules = run["tool"]["driver"]["rules"].as_array();
        let bases = &run["originalUriBaseIds"];
        for result in run["results"].as_array().into_iter().flatten() {
            let Some(path) = located(result, bases, cx.root) else {
                out.outside += 1;
                continue;
            };
            let Some((given, bytes)) = cx.files.get_key_value(&path) else {
                out.not_given += 1;
                continue;
            };
            if out.findings.len() >= cx.max_results {
                out.cut += 1;
                continue;
            }
            let rule = rule_of(result, rules);
            let lines = lines
                .entry(given.as_str())
                .or_insert_with(|| Lines::new(bytes));
            out.findings.push(finding(result, rule, path, lines, cx));
        }
    }
    Ok(out)
}

/// The rule a result names, by index or by id.
fn rule_of<'a>(result: &Value, rules: Option<&'a Vec<Value>>) -> Option<&'a Value> {
    let rules = rules?;
    if let Some(index) = result["ruleIndex"]
        .as_u64()
        .and_then(|i| usize::try_from(i).ok())
    {
        return rules.get(index);
    }
    let id = result["ruleId"].as_str()?;
    rules.iter().find(|r| r["id"] == id)
}

fn finding(
    result: &Value,
    rule: Option<&Value>,
    path: String,
    lines: &Lines<'_>,
    cx: &Context<'_>,
) -> Finding {
    let rule_id = result["ruleId"]
        .as_str()
        .or_else(|| result["rule"]["id"].as_str())
        .or_else(|| rule.and_then(|r| r["id"].as_str()))
        .unwrap_or("finding");
    let rule = rule.unwrap_or(&Value::Null);
    let level = result["level"]
        .as_str()
        .or_else(|| rule["defaultConfiguration"]["level"].as_str())
        .map_or(Level::Warning, |level| match level {
            "error" => Level::Error,
            "note" | "none" => Level::Info,
            _ => Level::Warning,
        });
    let message = message(result, rule);
    // The rule's help, unless it only says the message again: ruff's is its short description,
    // the message itself or its template (`{name}` imported but unused).
    let mut help = rule["help"]["text"]
        .as_str()
        .or_else(|| rule["fullDescription"]["text"].as_str())
        .or_else(|| rule["shortDescription"]["text"].as_str())
        .map(|h| text(h, MAX_TEXT))
        .filter(|h| h.trim() != message.trim() && !is_template(h))
        .unwrap_or_default();
    for fix in result["fixes"].as_array().into_iter().flatten() {
        if let Some(what) = fix["description"]["text"].as_str() {
            if !help.is_empty() {
                help.push('\n');
            }
            help.push_str(&format!("fix available: {}", text(what, MAX_TEXT)));
        }
    }
    let documented = rule["helpUri"].as_str().map(str::to_owned).or_else(|| {
        cx.rule_uri.map(|template| {
            template.replace(
                "{rule}",
                &percent_encoding::utf8_percent_encode(rule_id, percent_encoding::NON_ALPHANUMERIC)
                    .to_string(),
            )
        })
    });
    let help_uri = documented
        .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
        .map(|u| text(&u, MAX_TEXT))
        .unwrap_or_default();
    Finding {
        path,
        span: span(
            &result["locations"][0]["physicalLocation"]["region"],
            lines,
            cx.columns,
        ),
        level,
        code: format!("{}/{}", cx.linter, one_line(rule_id, MAX_CODE)),
        message,
        help,
        help_uri,
    }
}

/// Whether `help` is a message template (a `{name}` placeholder in it) rather than help: the
/// result's message is the template filled in.
fn is_template(help: &str) -> bool {
    help.split('{').skip(1).any(|after| {
        after.split_once('}').is_some_and(|(name, _)| {
            name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}

/// The result's message: its text, else the rule's message string it names, with its arguments.
fn message(result: &Value, rule: &Value) -> String {
    let message = &result["message"];
    let raw = message["text"].as_str().map(str::to_owned).or_else(|| {
        let id = message["id"].as_str()?;
        let mut template = rule["messageStrings"][id]["text"].as_str()?.to_owned();
        for (i, argument) in message["arguments"].as_array()?.iter().enumerate() {
            template = template.replace(&format!("{{{i}}}"), argument.as_str().unwrap_or(""));
        }
        Some(template)
    });
    text(raw.as_deref().unwrap_or("(no message)"), MAX_TEXT)
}

/// The 0-based UTF-16 span of a SARIF region on the file's lines; `None` without a start line.
fn span(region: &Value, lines: &Lines<'_>, unit: Unit) -> Option<Span> {
    let start_line = region["startLine"].as_u64().filter(|&l| l >= 1)?;
    let end_line = region["endLine"]
        .as_u64()
        .filter(|&l| l >= start_line)
        .unwrap_or(start_line);
    let line_text = |line: u64| {
        usize::try_from(line - 1)
            .ok()
            .and_then(|l| lines.get(l))
            .unwrap_or("")
    };
    let (first, last) = (line_text(start_line), line_text(end_line));
    let start_char = columns::to_utf16(first, region["startColumn"].as_u64().unwrap_or(1), unit);
    // No end column, or a tool that gives lines only: to the end of the last line.
    let end_char = match (unit, region["endColumn"].as_u64()) {
        (Unit::Lines, _) | (_, None) => columns::to_utf16(last, u64::MAX, unit.counting()),
        (_, Some(column)) => columns::to_utf16(last, column, unit),
    };
    let line = |l: u64| u32::try_from(l - 1).unwrap_or(u32::MAX);
    let (end_line, end_char) = if end_line == start_line && end_char < start_char {
        (start_line, start_char)
    } else {
        (end_line, end_char)
    };
    Some(Span {
        start_line: line(start_line),
        start_char,
        end_line: line(end_line),
        end_char,
    })
}

/// The repository path of a result's first location, if it is inside the scratch root.
fn located(result: &Value, bases: &Value, root: &Path) -> Option<String> {
    let artifact = &result["locations"][0]["physicalLocation"]["artifactLocation"];
    let uri = artifact["uri"].as_str()?;
    let base = artifact["uriBaseId"]
        .as_str()
        .and_then(|id| bases[id]["uri"].as_str())
        .and_then(file_path);
    let path = match file_path(uri) {
        Some(absolute) => absolute,
        None if uri.contains("://") || uri.starts_with('/') => return None,
        None => {
            let relative = PathBuf::from(percent_decode_str(uri).decode_utf8().ok()?.as_ref());
            base.unwrap_or_else(|| root.to_path_buf()).join(relative)
        }
    };
    repository_path(root, &path)
}

/// The absolute path of a `file:` URI (`file:///p`, `file://localhost/p`) or of an absolute path.
fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri
        .strip_prefix("file://localhost")
        .or_else(|| uri.strip_prefix("file://"))
        .or_else(|| uri.strip_prefix("file:").filter(|r| r.starts_with('/')))
        .or_else(|| uri.starts_with('/').then_some(uri))?;
    if !rest.starts_with('/') {
        return None;
    }
    let decoded = percent_decode_str(rest).decode_utf8().ok()?;
    Some(PathBuf::from(decoded.as_ref()))
}

fn text(raw: &str, max: usize) -> String {
    asp_wire::text::untrusted(raw, max).into_owned()
}

fn one_line(raw: &str, max: usize) -> String {
    asp_wire::text::one_line(raw, max).into_owned()
}

#[cfg(test)]
mod tests;
