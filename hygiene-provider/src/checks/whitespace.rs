//! Whitespace on the lines a change touches: `hygiene/trailing-whitespace`, `hygiene/final-newline`
//! and `hygiene/mixed-line-endings`. Lines the change leaves alone are never reported, so a file
//! that was already untidy does not drown a small change.

use super::found::{Finding, Found};
use crate::rules::Rule;
use provider_kit::text::{Ending, Position, Range, Text, utf16_len};

pub(super) fn check(
    path: &str,
    text: &Text<'_>,
    changed: &[bool],
    enabled: &[Rule],
    out: &mut Found,
) {
    if enabled.contains(&Rule::TrailingWhitespace) {
        trailing(path, text, changed, out);
    }
    if enabled.contains(&Rule::FinalNewline) {
        final_newline(text, changed, out);
    }
    if enabled.contains(&Rule::MixedLineEndings) {
        mixed_endings(text, changed, out);
    }
}

fn trailing(path: &str, text: &Text<'_>, changed: &[bool], out: &mut Found) {
    // Two trailing spaces are a hard line break in Markdown.
    let markdown = [".md", ".markdown"]
        .iter()
        .any(|e| path.to_ascii_lowercase().ends_with(e));
    for (index, line) in text.lines.iter().enumerate() {
        if !changed[index] {
            continue;
        }
        let content = text.content(index);
        let kept = content.trim_end_matches(|c: char| c.is_whitespace());
        let tail = &content[kept.len()..];
        if tail.is_empty() || (markdown && tail == "  " && !kept.is_empty()) {
            continue;
        }
        if out.full(Rule::TrailingWhitespace) {
            return;
        }
        let start = line.start + kept.len();
        out.push(Finding::new(
            Rule::TrailingWhitespace,
            Some(text.range(start, line.content_end)),
            match tail.chars().count() {
                1 => "trailing whitespace (1 character)".to_owned(),
                n => format!("trailing whitespace ({n} characters)"),
            },
            content,
        ));
    }
}

fn final_newline(text: &Text<'_>, changed: &[bool], out: &mut Found) {
    let Some(last) = text.lines.len().checked_sub(1) else {
        return;
    };
    if text.lines[last].ending == Ending::None && changed[last] {
        let end = text.line_range(last).end;
        out.push(Finding::new(
            Rule::FinalNewline,
            Some(Range { start: end, end }),
            "no newline at the end of the file",
            "",
        ));
    }
}

fn mixed_endings(text: &Text<'_>, changed: &[bool], out: &mut Found) {
    let mut counts = [(Ending::Lf, 0usize), (Ending::CrLf, 0), (Ending::Cr, 0)];
    for line in &text.lines {
        if let Some(entry) = counts.iter_mut().find(|(e, _)| *e == line.ending) {
            entry.1 += 1;
        }
    }
    if counts.iter().filter(|(_, n)| *n > 0).count() < 2 {
        return;
    }
    // The most frequent ending is the file's own (LF first on a tie).
    let usual = counts
        .iter()
        .rev()
        .max_by_key(|(_, n)| *n)
        .map_or(Ending::Lf, |(e, _)| *e);
    for (index, line) in text.lines.iter().enumerate() {
        if !changed[index] || line.ending == usual || line.ending == Ending::None {
            continue;
        }
        if out.full(Rule::MixedLineEndings) {
            return;
        }
        let content_end = Position {
            line: index as u32,
            char: utf16_len(text.content(index)),
        };
        let next = Position {
            line: index as u32 + 1,
            char: 0,
        };
        out.push(Finding::new(
            Rule::MixedLineEndings,
            Some(Range {
                start: content_end,
                end: next,
            }),
            format!(
                "line ends with {} while the file's other lines end with {}",
                line.ending.name(),
                usual.name()
            ),
            text.content(index),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{range, run};
    use crate::rules::Rule;

    fn of(
        rule: Rule,
        path: &str,
        after: &str,
        before: Option<&str>,
    ) -> Vec<crate::checks::Finding> {
        run(path, after, before)
            .into_iter()
            .filter(|f| f.rule == rule)
            .collect()
    }

    #[test]
    fn trailing_whitespace_is_reported_on_changed_lines_only() {
        let before = "old  \nkeep\n";
        let after = "old  \nkeep\nnew é\t \n";
        let found = of(Rule::TrailingWhitespace, "a.txt", after, Some(before));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].range, range(2, 5, 2, 7));
        assert_eq!(found[0].message, "trailing whitespace (2 characters)");
    }

    #[test]
    fn one_trailing_character_is_said_in_the_singular() {
        let found = of(Rule::TrailingWhitespace, "a.txt", "x \ny\t\t\n", None);
        let messages: Vec<&str> = found.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "trailing whitespace (1 character)",
                "trailing whitespace (2 characters)"
            ]
        );
    }

    #[test]
    fn whitespace_only_lines_and_utf16_offsets() {
        let found = of(Rule::TrailingWhitespace, "a.txt", "😀 \n   \n", None);
        assert_eq!(found[0].range, range(0, 2, 0, 3));
        assert_eq!(found[1].range, range(1, 0, 1, 3));
    }

    #[test]
    fn markdown_hard_breaks_are_not_trailing_whitespace() {
        assert_eq!(
            of(
                Rule::TrailingWhitespace,
                "README.md",
                "line  \nnext\n",
                None
            ),
            []
        );
        assert_eq!(
            of(Rule::TrailingWhitespace, "README.md", "line   \n", None).len(),
            1
        );
        assert_eq!(
            of(Rule::TrailingWhitespace, "a.txt", "line  \n", None).len(),
            1
        );
    }

    #[test]
    fn a_missing_final_newline_is_reported_when_the_last_line_changed() {
        let found = of(Rule::FinalNewline, "a.txt", "a\nbé", None);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].range, range(1, 2, 1, 2));
        assert_eq!(
            of(Rule::FinalNewline, "a.txt", "x\nb", Some("a\nb")),
            [],
            "last line untouched"
        );
        assert_eq!(
            of(Rule::FinalNewline, "a.txt", "", None),
            [],
            "an empty file is fine"
        );
    }

    #[test]
    fn mixed_line_endings_flag_the_changed_odd_ones_out() {
        let before = "a\nb\nc\n";
        let after = "a\nb\r\nc\nd\r\n\n";
        let found = of(Rule::MixedLineEndings, "a.txt", after, Some(before));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].range, range(1, 1, 2, 0));
        assert_eq!(
            found[0].message,
            "line ends with CRLF while the file's other lines end with LF"
        );
        assert_eq!(found[1].range, range(3, 1, 4, 0));
        assert_eq!(
            of(Rule::MixedLineEndings, "a.txt", "a\r\nb\r\n", None),
            [],
            "consistent CRLF"
        );
    }
}
