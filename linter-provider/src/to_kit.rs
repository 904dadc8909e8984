//! A linter's findings on one file made the provider kit's, each with a fingerprint that does not
//! change when lines move or when the line it is on is edited elsewhere (`LINTERS.md` §4): its
//! rule, its message, the text it points at (the whole line, spaces collapsed, for a tool that
//! gives lines only) and how many such findings came before it in the file.

use std::collections::HashMap;

use provider_kit::digest::fingerprint;
use provider_kit::text::{Position, Range};
use provider_kit::{Finding, Severity};

use crate::from_sarif::{self, Level, Span};

/// Longest piece of the pointed-at text a fingerprint is taken of, in characters.
const MAX_TOKEN: usize = 200;

/// The findings of one file whose bytes are `bytes`, in the tool's order.
pub(crate) fn findings(found: Vec<from_sarif::Finding>, bytes: &[u8]) -> Vec<Finding> {
    let text = provider_kit::text::lossy(bytes);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let tokens: Vec<String> = found
        .iter()
        .map(|f| f.span.map(|s| pointed_at(&lines, s)).unwrap_or_default())
        .collect();
    let mut seen: HashMap<(&str, &str, &str), usize> = HashMap::new();
    let fingerprints: Vec<String> = found
        .iter()
        .zip(&tokens)
        .map(|(f, token)| {
            let count = seen
                .entry((f.code.as_str(), f.message.as_str(), token.as_str()))
                .or_default();
            let nth = count.to_string();
            *count += 1;
            fingerprint([f.code.as_str(), &f.message, token, &nth])
        })
        .collect();
    drop(seen);
    found
        .into_iter()
        .zip(fingerprints)
        .map(|(f, fingerprint)| Finding {
            fingerprint,
            code: f.code,
            severity: match f.level {
                Level::Error => Severity::Error,
                Level::Warning => Severity::Warning,
                Level::Info => Severity::Info,
            },
            message: f.message,
            range: f.span.map(|s| Range {
                start: Position {
                    line: s.start_line,
                    char: s.start_char,
                },
                end: Position {
                    line: s.end_line,
                    char: s.end_char,
                },
            }),
            help: f.help,
            help_uri: f.help_uri,
        })
        .collect()
}

/// The text a span points at on its first line; the whole line (spaces collapsed) when the span
/// is empty or runs past it.
fn pointed_at(lines: &[&str], span: Span) -> String {
    let line = usize::try_from(span.start_line)
        .ok()
        .and_then(|l| lines.get(l))
        .copied()
        .unwrap_or("");
    let token = if span.end_line == span.start_line && span.end_char > span.start_char {
        utf16_slice(line, span.start_char, span.end_char)
    } else {
        line
    };
    let token = if token.trim().is_empty() { line } else { token };
    token
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_TOKEN)
        .collect()
}

/// `line` from UTF-16 offset `start` to `end` (clamped to character boundaries).
fn utf16_slice(line: &str, start: u32, end: u32) -> &str {
    let byte = |at: u32| {
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= at {
                return i;
            }
            units += c.len_utf16() as u32;
        }
        line.len()
    };
    &line[byte(start)..byte(end).max(byte(start))]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A span on one line.
    fn on(line: u32, start: u32, end: u32) -> Span {
        Span {
            start_line: line,
            start_char: start,
            end_line: line,
            end_char: end,
        }
    }

    fn finding(line: u32, start: u32, end: u32) -> from_sarif::Finding {
        from_sarif::Finding {
            path: "a.sh".into(),
            span: Some(on(line, start, end)),
            level: Level::Info,
            code: "shellcheck/SC2086".into(),
            message: "Double quote to prevent globbing and word splitting.".into(),
            help: String::new(),
            help_uri: String::new(),
        }
    }

    #[test]
    fn a_finding_that_moved_or_whose_line_was_edited_keeps_its_fingerprint() {
        let before = b"echo $x\n";
        let after = b"# a new first line\nprintf '%s' $x\n";
        let old = findings(vec![finding(0, 5, 7)], before);
        let new = findings(vec![finding(1, 12, 14)], after);
        assert_eq!(old[0].fingerprint, new[0].fingerprint);
        assert_eq!(new[0].range.unwrap().start, Position { line: 1, char: 12 });
        assert_eq!(new[0].severity, Severity::Info);
    }

    #[test]
    fn the_same_finding_twice_in_a_file_has_two_fingerprints_and_another_token_another() {
        let text = b"echo $x $x $y\n";
        let found = findings(
            vec![finding(0, 5, 7), finding(0, 8, 10), finding(0, 11, 13)],
            text,
        );
        assert_ne!(found[0].fingerprint, found[1].fingerprint);
        assert_ne!(found[0].fingerprint, found[2].fingerprint);
        assert_ne!(found[1].fingerprint, found[2].fingerprint);
    }

    #[test]
    fn the_pointed_at_text_is_cut_at_utf16_offsets_and_a_line_finding_takes_the_line() {
        let lines = ["x = \"😀é\"; y", "FROM   ubuntu"];
        assert_eq!(pointed_at(&lines, on(0, 11, 12)), "y");
        assert_eq!(pointed_at(&lines, on(1, 0, 0)), "FROM ubuntu");
    }
}
