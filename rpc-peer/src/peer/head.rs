//! What the first bytes of an oversize or unreadable JSON-RPC message say about it: its `id`, when
//! the id comes before the cut (as `{"jsonrpc":"2.0","id":…` puts it), whether it has a `method`,
//! and ([`read_reply`]) whether it has a `result` or an `error`.
//!
//! Only the top level of the object is looked at; nested values are skipped. Reading stops at the
//! first thing that is not JSON or at the end of the head, keeping what was learnt so far.

use crate::jsonrpc::Id;

/// What a head tells.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Head {
    /// The `id`, if it was read whole.
    pub(super) id: Option<Id>,
    /// Whether a `method` key was seen: a request or a notification, not a response.
    pub(super) method: bool,
}

pub(super) fn read(head: &[u8]) -> Head {
    read_reply(head).0
}

/// What [`read`] tells, and whether a `result` or `error` key was seen (its value may be cut).
pub(super) fn read_reply(head: &[u8]) -> (Head, bool) {
    let mut found = Head::default();
    let mut response = false;
    let mut at = skip_space(head, 0);
    if head.get(at) != Some(&b'{') {
        return (found, response);
    }
    at += 1;
    loop {
        at = skip_space(head, at);
        let Some(key_end) = string_end(head, at) else {
            return (found, response);
        };
        let key = &head[at..key_end];
        at = skip_space(head, key_end);
        if head.get(at) != Some(&b':') {
            return (found, response);
        }
        at = skip_space(head, at + 1);
        response |= matches!(key, br#""result""# | br#""error""#);
        let Some(value_end) = value_end(head, at) else {
            return (found, response);
        };
        match key {
            br#""id""# => found.id = serde_json::from_slice(&head[at..value_end]).ok(),
            br#""method""# => found.method = true,
            _ => {}
        }
        at = skip_space(head, value_end);
        match head.get(at) {
            Some(b',') => at += 1,
            _ => return (found, response),
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The end (one past the closing quote) of the string starting at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of the JSON value starting at `at`, if it ends within `bytes`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = bytes[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            Some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_id_and_the_method_of_the_top_level_object() {
        let reply = read(br#"{"jsonrpc":"2.0","id":42,"result":{"findings":[{"x":"#);
        assert_eq!(
            reply,
            Head {
                id: Some(Id::Number(42)),
                method: false
            }
        );
        let request = read(br#" { "jsonrpc" : "2.0" , "id" : "a\"b" , "method":"x","params":"#);
        assert_eq!(
            request,
            Head {
                id: Some(Id::String("a\"b".into())),
                method: true
            }
        );
    }

    #[test]
    fn nested_ids_and_cut_values_are_not_taken_for_the_id() {
        let nested = read(br#"{"result":{"id":5,"method":"m"},"error":[{"id":6}],"x":1"#);
        assert_eq!(nested, Head::default());
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":12"#),
            Head::default(),
            "the id may go on"
        );
        assert_eq!(read(br#"{"result":"xxxxx"#), Head::default());
        assert_eq!(read(b"not json"), Head::default());
        assert_eq!(read(br#"{"id":true,"#), Head::default());
    }

    #[test]
    fn a_result_or_error_key_tells_a_reply_even_when_its_value_is_cut() {
        assert!(read_reply(br#"{"jsonrpc":"2.0","result":"\xff"#).1);
        assert!(read_reply(br#"{"error":{"code":1"#).1);
        let (head, reply) = read_reply(br#"{"jsonrpc":"2.0","id":3,"method":"m","params":[1]"#);
        assert!(!reply && head.method);
        assert!(!read_reply(b"\xff\xfe junk").1);
        assert!(
            !read_reply(br#"{"params":{"result":1}}"#).1,
            "only the top level"
        );
    }
}
