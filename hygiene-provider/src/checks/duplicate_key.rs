//! `hygiene/duplicate-key`: a key given twice in one JSON object or YAML mapping (as
//! pre-commit-hooks' `check-json` and `check-yaml` find). Most readers keep the last value without a
//! word, so the first is silently lost. Found on the parser's events (JSON is read as the YAML it
//! also is), each repeat at its own position; YAML's merge key `<<` may repeat. A YAML file's
//! events are those its syntax check reads; a JSON file's are read only when its syntax check
//! ([`Repeats`]) saw a key repeat.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use saphyr_parser::{Event, Parser, Span};

use super::found::{Finding, Found, short};
use crate::rules::Rule;
use provider_kit::text::Text;

/// One open collection: a mapping with the keys seen so far and how many child nodes it has had
/// (even: the next one is a key), or a sequence.
enum Open<'t> {
    Mapping {
        keys: HashSet<Cow<'t, str>>,
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

/// A JSON value read for one fact: whether an object in it repeats a key. The JSON syntax check
/// reads the file into it (as fast as reading into nothing), so that the parser's events, which
/// locate each repeat, are read only for the rare file that has one.
pub(super) struct Repeats(pub(super) bool);

impl<'de> Deserialize<'de> for Repeats {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Repeats(false))
    }
}

impl<'de> Visitor<'de> for Repeats {
    type Value = Repeats;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Repeats, E> {
        Ok(self)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Repeats, E> {
        Ok(self)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Repeats, E> {
        Ok(self)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Repeats, E> {
        Ok(self)
    }

    fn visit_str<E>(self, _: &str) -> Result<Repeats, E> {
        Ok(self)
    }

    fn visit_unit<E>(self) -> Result<Repeats, E> {
        Ok(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Repeats, A::Error> {
        let mut repeats = false;
        while let Some(Repeats(inner)) = items.next_element()? {
            repeats |= inner;
        }
        Ok(Repeats(repeats))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Repeats, A::Error> {
        let mut keys = HashSet::new();
        let mut repeats = false;
        while let Some(Key(key)) = entries.next_key()? {
            repeats |= !keys.insert(key);
            let Repeats(inner) = entries.next_value()?;
            repeats |= inner;
        }
        Ok(Repeats(repeats))
    }
}

/// An object's key, borrowed from the text unless it holds an escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
        }
        deserializer.deserialize_str(Text)
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

    #[test]
    fn the_json_reading_tells_a_repeat_at_any_depth_and_through_escapes_and_nothing_else() {
        let repeats = |text: &str| serde_json::from_str::<super::Repeats>(text).unwrap().0;
        assert!(
            repeats(r#"[1, {"a": [{"k": 1, "\u006b": 2}]}]"#),
            "k and its escape"
        );
        assert!(repeats(r#"{"a": 1, "b": {}, "a": null}"#));
        assert!(!repeats(
            r#"[{"a": 1}, {"a": 2.5e3}, {"b": "a", "a": true}, "a", -1, null]"#
        ));
        // A repeated key found so is located by the events, in a deep file too.
        let deep = format!(
            "{}{{\"k\": 1, \"k\": 2}}{}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(duplicates("a.json", &deep).len(), 1);
    }
}
