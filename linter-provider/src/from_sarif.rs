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
use log::{Based, List, Log, Message, Obj, PhysicalLocation, Region, Rule, SarifResult};

mod log;

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

/// The findings of the SARIF log a tool printed (its JSON `output`), read straight into the
/// fields the mapping uses; `Err` when it is no JSON, or no SARIF log (no `runs` array).
pub fn read(output: &[u8], cx: &Context<'_>) -> Result<Mapped, String> {
    let log = Log::parse(output).map_err(not_json)?;
    map_log(log.as_ref(), cx)
}

/// Why a tool's output could not be read: no JSON, or JSON the log cannot be read from (a key
/// given twice in one object, which a JSON parser may read either way).
pub(crate) fn not_json(error: serde_json::Error) -> String {
    match error.classify() {
        serde_json::error::Category::Data => {
            format!("its output is JSON but no log that can be read: {error}")
        }
        _ => format!("its output is not JSON (cut short, or not the format asked for): {error}"),
    }
}

/// The findings of `log`; `Err` when it is no SARIF log (no `runs` array).
pub fn map(log: &Value, cx: &Context<'_>) -> Result<Mapped, String> {
    // Read as text, as a tool's output is: one reader, compiled once, for both.
    read(log.to_string().as_bytes(), cx)
}

fn map_log(log: Option<&Log>, cx: &Context<'_>) -> Result<Mapped, String> {
    let runs = log
        .and_then(|log| log.runs.0.as_ref())
        .ok_or("the output is not a SARIF log: it has no \"runs\" array")?;
    let mut out = Mapped::default();
    // Each file's lines, split once for all of its findings.
    let mut lines: HashMap<&str, Lines<'_>> = HashMap::new();
    for run in runs.iter().filter_map(Obj::get) {
        for invocation in run.invocations.objects() {
            if invocation.execution_successful.is_false() && out.failed.is_none() {
                let first = invocation.tool_execution_notifications.object(0);
                let why = first
                    .and_then(|n| said(&n.message))
                    .unwrap_or("the tool reported that its run failed");
                out.failed = Some(text(why, MAX_TEXT));
            }
        }
        let rules = run
            .tool
            .get()
            .and_then(|tool| tool.driver.get())
            .map(|driver| &driver.rules);
        let bases = run.original_uri_base_ids.get();
        for result in run.results.items() {
            // A result that is no object is located nowhere.
            let Some((result, path)) = result
                .get()
                .and_then(|result| Some((result, located(result, bases, cx.root)?)))
            else {
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
            let rule = rules.and_then(|rules| rule_of(result, rules));
            let lines = lines
                .entry(given.as_str())
                .or_insert_with(|| Lines::new(bytes));
            out.findings.push(finding(result, rule, path, lines, cx));
        }
    }
    Ok(out)
}

/// The rule a result names, by index or by id.
fn rule_of<'a>(result: &SarifResult, rules: &'a List<Obj<Rule>>) -> Option<&'a Rule> {
    if let Some(index) = result
        .rule_index
        .as_u64()
        .and_then(|i| usize::try_from(i).ok())
    {
        return rules.object(index);
    }
    let id = result.rule_id.as_str()?;
    rules.objects().find(|r| r.id.as_str() == Some(id))
}

/// The text of an optional message.
fn said(message: &Obj<Message>) -> Option<&str> {
    message.get()?.text.as_str()
}

fn finding(
    result: &SarifResult,
    rule: Option<&Rule>,
    path: String,
    lines: &Lines<'_>,
    cx: &Context<'_>,
) -> Finding {
    let rule_id = result
        .rule_id
        .as_str()
        .or_else(|| result.rule.get().and_then(|r| r.id.as_str()))
        .or_else(|| rule.and_then(|r| r.id.as_str()))
        .unwrap_or("finding");
    let level = result
        .level
        .as_str()
        .or_else(|| {
            rule.and_then(|r| r.default_configuration.get())
                .and_then(|c| c.level.as_str())
        })
        .map_or(Level::Warning, |level| match level {
            "error" => Level::Error,
            "note" | "none" => Level::Info,
            _ => Level::Warning,
        });
    let message = message(result, rule);
    // The rule's help, unless it only says the message again: ruff's is its short description,
    // the message itself or its template (`{name}` imported but unused).
    let mut help = rule
        .and_then(|r| {
            said(&r.help)
                .or_else(|| said(&r.full_description))
                .or_else(|| said(&r.short_description))
        })
        .map(|h| text(h, MAX_TEXT))
        .filter(|h| h.trim() != message.trim() && !is_template(h))
        .unwrap_or_default();
    for fix in result.fixes.objects() {
        if let Some(what) = said(&fix.description) {
            if !help.is_empty() {
                help.push('\n');
            }
            help.push_str(&format!("fix available: {}", text(what, MAX_TEXT)));
        }
    }
    let documented = rule
        .and_then(|r| r.help_uri.as_str())
        .map(str::to_owned)
        .or_else(|| {
            cx.rule_uri.map(|template| {
                template.replace(
                    "{rule}",
                    &percent_encoding::utf8_percent_encode(
                        rule_id,
                        percent_encoding::NON_ALPHANUMERIC,
                    )
                    .to_string(),
                )
            })
        });
    let help_uri = documented
        .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
        .map(|u| text(&u, MAX_TEXT))
        .unwrap_or_default();
    let region = physical(result).and_then(|p| p.region.get());
    Finding {
        path,
        span: region.and_then(|region| span(region, lines, cx.columns)),
        level,
        code: format!("{}/{}", cx.linter, one_line(rule_id, MAX_CODE)),
        message,
        help,
        help_uri,
    }
}

/// A result's first physical location.
fn physical(result: &SarifResult) -> Option<&PhysicalLocation> {
    result.locations.object(0)?.physical_location.get()
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
fn message(result: &SarifResult, rule: Option<&Rule>) -> String {
    let message = result.message.get();
    let raw = message
        .and_then(|m| m.text.as_str())
        .map(str::to_owned)
        .or_else(|| {
            let message = message?;
            let id = message.id.as_str()?;
            let strings = rule?.message_strings.get()?;
            let mut template = said(strings.get(id)?)?.to_owned();
            // A message string is used only with an arguments array to fill it in.
            let arguments = message.arguments.0.as_ref()?;
            for (i, argument) in arguments.iter().enumerate() {
                template = template.replace(&format!("{{{i}}}"), argument.as_str().unwrap_or(""));
            }
            Some(template)
        });
    text(raw.as_deref().unwrap_or("(no message)"), MAX_TEXT)
}

/// The 0-based UTF-16 span of a SARIF region on the file's lines; `None` without a start line.
fn span(region: &Region, lines: &Lines<'_>, unit: Unit) -> Option<Span> {
    let start_line = region.start_line.as_u64().filter(|&l| l >= 1)?;
    let end_line = region
        .end_line
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
    let start_char = columns::to_utf16(first, region.start_column.as_u64().unwrap_or(1), unit);
    // No end column, or a tool that gives lines only: to the end of the last line.
    let end_char = match (unit, region.end_column.as_u64()) {
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
fn located(
    result: &SarifResult,
    bases: Option<&HashMap<String, Obj<Based>>>,
    root: &Path,
) -> Option<String> {
    let artifact = physical(result)?.artifact_location.get()?;
    let uri = artifact.uri.as_str()?;
    let base = artifact
        .uri_base_id
        .as_str()
        .and_then(|id| bases?.get(id)?.get()?.uri.as_str())
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
