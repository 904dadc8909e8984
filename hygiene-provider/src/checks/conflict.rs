//! `hygiene/merge-conflict`: conflict markers left by git (`<<<<<<<`, `|||||||`, `=======`,
//! `>>>>>>>`). One finding per conflict, ranging from its opening marker to its closing one; an
//! opening or closing marker without its partner is a finding of its own line. A `=======` line
//! outside a conflict (a heading underline) is not a marker.

use super::found::{Finding, Found, short};
use crate::rules::Rule;
use provider_kit::text::{Range, Text};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Marker {
    Open,
    Base,
    Separator,
    Close,
}

fn marker(line: &str) -> Option<Marker> {
    let is = |prefix: &str| {
        line.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
    };
    if is("<<<<<<<") {
        Some(Marker::Open)
    } else if is("|||||||") {
        Some(Marker::Base)
    } else if is("=======") {
        Some(Marker::Separator)
    } else if is(">>>>>>>") {
        Some(Marker::Close)
    } else {
        None
    }
}

pub(super) fn check(text: &Text<'_>, out: &mut Found) {
    let mut open: Option<usize> = None;
    for index in 0..text.lines.len() {
        if out.full(Rule::MergeConflict) {
            return;
        }
        let content = text.content(index);
        match (marker(content), open) {
            (Some(Marker::Open), Some(start)) => {
                out.push(unterminated(text, start));
                open = Some(index);
            }
            (Some(Marker::Open), None) => open = Some(index),
            (Some(Marker::Close), Some(start)) => {
                let range = Range {
                    start: text.line_range(start).start,
                    end: text.line_range(index).end,
                };
                out.push(Finding::new(
                    Rule::MergeConflict,
                    Some(range),
                    format!(
                        "unresolved merge conflict ({} lines, from `{}` to `{}`)",
                        index - start + 1,
                        short(text.content(start)),
                        short(content)
                    ),
                    format!("{}\n{}", text.content(start), content),
                ));
                open = None;
            }
            (Some(Marker::Close), None) => out.push(Finding::new(
                Rule::MergeConflict,
                Some(text.line_range(index)),
                format!(
                    "merge conflict marker `{}` without an opening `<<<<<<<`",
                    short(content)
                ),
                content,
            )),
            _ => {}
        }
    }
    if let Some(start) = open {
        out.push(unterminated(text, start));
    }
}

fn unterminated(text: &Text<'_>, start: usize) -> Finding {
    let content = text.content(start);
    Finding::new(
        Rule::MergeConflict,
        Some(text.line_range(start)),
        format!(
            "merge conflict marker `{}` without a closing `>>>>>>>`",
            short(content)
        ),
        content,
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{range, run, spots};
    use crate::rules::Rule;

    #[test]
    fn a_conflict_is_one_error_from_its_opening_to_its_closing_marker() {
        let text =
            "fn a() {}\n<<<<<<< HEAD\nlet x = 1;\n=======\nlet x = 2;\n>>>>>>> feature/é\nend\n";
        let found = run("src/a.rs", text, Some("fn a() {}\nend\n"));
        let message =
            "unresolved merge conflict (5 lines, from `<<<<<<< HEAD` to `>>>>>>> feature/é`)";
        assert_eq!(
            spots(&found),
            [(Rule::MergeConflict, range(1, 0, 5, 17), message)]
        );
    }

    #[test]
    fn diff3_base_sections_and_crlf_are_part_of_the_conflict() {
        let text = "<<<<<<< ours\r\na\r\n||||||| base\r\nb\r\n=======\r\nc\r\n>>>>>>> theirs\r\n";
        let found: Vec<_> = run("a.txt", text, None)
            .into_iter()
            .filter(|f| f.rule == Rule::MergeConflict)
            .collect();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].range, range(0, 0, 6, 14));
    }

    #[test]
    fn unpaired_markers_are_reported_on_their_own_line() {
        let found = run("a.txt", "x\n<<<<<<< HEAD\ny\n", None);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].range, range(1, 0, 1, 12));
        assert!(found[0].message.contains("without a closing"));
        let found = run("a.txt", ">>>>>>> main\n", None);
        assert_eq!(found[0].range, range(0, 0, 0, 12));
        assert!(found[0].message.contains("without an opening"));
    }

    #[test]
    fn heading_underlines_and_longer_runs_are_not_markers() {
        assert_eq!(
            run("doc.rst", "Title\n=======\n\n<<<<<<<< eight\n", None),
            []
        );
    }
}
