//! `hygiene/duplicate-key`: a key given twice in one JSON object or YAML mapping (as
//! pre-commit-hooks' `check-json` and `check-yaml` find). Most readers keep the last value without a
//! word, so the first is silently lost. Found on the parser's events (JSON is read as the YAML it
//! also is), each repeat at its own position; YAML's merge key `<<` may repeat.

use std::collections::HashSet;

use saphyr_parser::{Event, Parser, Span};

use super::found::{Finding, Found, short};
use crate::rules::Rule;
use provider_kit::text::Text;

/// One open collection: a mapping with the keys seen so far and how many child nodes it has had
/// (even: the next one is a key), or a sequence.
enum Open<'t> {
    Mapping {
        keys: HashSet<std::borrow::Cow<'t, str>>,
        nodes: usize,
    },
    Sequence,
}

/// Reports every repeated key; a text the parser cannot read to its end reports what it found
/// before (its syntax is another rule's business).
pub(super) fn check(text: &Text<'_>, out: &mut Found) {
    let mut keys = Keys::default();
    for event in Parser::new_from_str(text.text) {
        let Ok((event, span)) = event else {
            break;
        };
        keys.see(event, span);
    }
    keys.report(text, out);
}

/// The repeated keys of a text, seen on its parser's events: the syntax check feeds it the events
/// it reads anyway, so that a YAML file is parsed once for both rules.
#[derive(Default)]
pub(super) struct Keys<'t> {
    open: Vec<Open<'t>>,
    /// (start, end) in characters, and the key, of each repeat.
    repeats: Vec<(usize, usize, String)>,
}

impl<'t> Keys<'t> {
    pub(super) fn see(&mut self, event: Event<'t>, span: Span) {
        let open = &mut self.open;
        // Whether this event starts a node, and whether that node is a mapping's key.
        let starts_node = matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(_)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
        );
        let is_key = starts_node
            && match open.last_mut() {
                Some(Open::Mapping { nodes, .. }) => {
                    *nodes += 1;
                    *nodes % 2 == 1
                }
                _ => false,
            };
        match event {
            Event::Scalar(value, ..) if is_key && value != "<<" => {
                if let Some(Open::Mapping { keys, .. }) = open.last_mut() {
                    if keys.contains(&value) {
                        if self.repeats.len() < super::found::PER_RULE {
                            self.repeats.push((
                                span.start.index(),
                                span.end.index(),
                                value.to_string(),
                            ));
                        }
                    } else {
                        keys.insert(value);
                    }
                }
            }
            Event::MappingStart(..) => open.push(Open::Mapping {
                keys: HashSet::new(),
                nodes: 0,
            }),
            Event::SequenceStart(..) => open.push(Open::Sequence),
            Event::MappingEnd | Event::SequenceEnd => {
                open.pop();
            }
            _ => {}
        }
    }

    /// The findings of the keys seen.
    pub(super) fn report(self, text: &Text<'_>, out: &mut Found) {
        let repeats = self.repeats;
        // Character indices to byte offsets in one pass (the parser counts characters).
        let mut wanted: Vec<usize> = repeats.iter().flat_map(|r| [r.0, r.1]).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut bytes = std::collections::HashMap::with_capacity(wanted.len());
        let mut next = wanted.iter().peekable();
        for (n, (at, _)) in text
            .text
            .char_indices()
            .chain(std::iter::once((text.text.len(), ' ')))
            .enumerate()
        {
            while next.peek().is_some_and(|w| **w == n) {
                bytes.insert(n, at);
                next.next();
            }
            if next.peek().is_none() {
                break;
            }
        }
        for (start, end, key) in repeats {
            let (Some(&start), Some(&end)) = (bytes.get(&start), bytes.get(&end)) else {
                continue;
            };
            out.push(Finding::new(
                Rule::DuplicateKey,
                Some(text.range(start, end)),
                format!(
                    "duplicate key `{}`: most readers keep only its last value",
                    short(&key)
                ),
                key,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{range, run};
    use crate::rules::Rule;

    fn duplicates(path: &str, text: &str) -> Vec<(Option<provider_kit::text::Range>, String)> {
        run(path, text, None)
            .into_iter()
            .filter(|f| f.rule == Rule::DuplicateKey)
            .map(|f| (f.range, f.message))
            .collect()
    }

    #[test]
    fn a_key_given_twice_in_one_json_object_is_found_at_the_repeat() {
        let text = "{\n  \"name\": \"a\",\n  \"é\": {\"x\": 1, \"x\": 2},\n  \"name\": \"b\"\n}\n";
        let found = duplicates("package.json", text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0].0,
            range(2, 16, 2, 19),
            "the inner `\"x\"`, after `é` (UTF-16)"
        );
        assert_eq!(found[1].0, range(3, 2, 3, 8));
        assert_eq!(
            found[1].1,
            "duplicate key `name`: most readers keep only its last value"
        );
        assert_eq!(
            Rule::DuplicateKey.severity(),
            crate::rules::Severity::Warning
        );
    }

    #[test]
    fn a_key_given_twice_in_one_yaml_mapping_is_found_and_merge_keys_may_repeat() {
        let text = "base: &b {a: 1}\nother: &o {c: 3}\nk:\n  <<: *b\n  <<: *o\n  x: 1\n  y: [1, {x: 2}]\n  x: 3\n";
        let found = duplicates("ci.yml", text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, range(7, 2, 7, 3));
    }

    #[test]
    fn the_same_key_in_sibling_objects_or_as_a_value_is_no_duplicate() {
        assert_eq!(
            duplicates(
                "a.json",
                "[{\"a\": 1}, {\"a\": 2}, {\"b\": \"a\", \"a\": \"b\"}]\n"
            ),
            []
        );
        assert_eq!(duplicates("a.yaml", "a: a\nb:\n  a: 1\n"), []);
    }
}
