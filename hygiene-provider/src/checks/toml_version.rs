//! `hygiene/toml-version`: a TOML file that parses (as TOML 1.1) but holds what TOML 1.0 does not
//! allow, which Python's `tomllib` and most tools (they read 1.0) reject: a line break or a comment
//! inside an inline table (outside a value that allows one), a trailing comma in an inline table,
//! the `\e` and `\xHH` escapes, and a time without seconds. Read from the events of toml's own
//! parser, so what counts as a string, a comment or a value is what the syntax check parsed.

use toml_parser::decoder::Encoding;
use toml_parser::parser::{EventReceiver, parse_document};
use toml_parser::{ErrorSink, Source, Span};

use super::found::{Finding, Found};
use crate::rules::Rule;
use provider_kit::text::Text;

/// Checks a file that parsed as TOML 1.1: one finding, at the first construct TOML 1.0 lacks.
pub(super) fn check(text: &Text<'_>, out: &mut Found) {
    let source = Source::new(text.text);
    let tokens: Vec<_> = source.lex().collect();
    let mut events = Events {
        input: text.text,
        open: Vec::new(),
        after_comma: false,
        first: None,
    };
    parse_document(&tokens, &mut events, &mut ());
    if let Some((span, what)) = events.first {
        out.push(Finding::new(
            Rule::TomlVersion,
            Some(text.range(span.start(), span.end())),
            format!(
                "valid TOML 1.1 but not TOML 1.0 ({what}): Python's tomllib and most tools reject it"
            ),
            what,
        ));
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    InlineTable,
    Array,
}

struct Events<'i> {
    input: &'i str,
    open: Vec<Open>,
    /// The last event inside an inline table was a comma (whitespace aside).
    after_comma: bool,
    first: Option<(Span, &'static str)>,
}

impl Events<'_> {
    fn found(&mut self, span: Span, what: &'static str) {
        if self.first.is_none() {
            self.first = Some((span, what));
        }
    }

    fn in_inline_table(&self) -> bool {
        self.open.last() == Some(&Open::InlineTable)
    }

    /// Anything but whitespace: a comma is no longer the last thing seen.
    fn other(&mut self) {
        self.after_comma = false;
    }
}

impl EventReceiver for Events<'_> {
    fn inline_table_open(&mut self, _: Span, _: &mut dyn ErrorSink) -> bool {
        self.other();
        self.open.push(Open::InlineTable);
        true
    }

    fn inline_table_close(&mut self, span: Span, _: &mut dyn ErrorSink) {
        if self.after_comma {
            self.found(span, "a trailing comma in an inline table");
        }
        self.other();
        self.open.pop();
    }

    fn array_open(&mut self, _: Span, _: &mut dyn ErrorSink) -> bool {
        self.other();
        self.open.push(Open::Array);
        true
    }

    fn array_close(&mut self, _: Span, _: &mut dyn ErrorSink) {
        self.other();
        self.open.pop();
    }

    fn value_sep(&mut self, _: Span, _: &mut dyn ErrorSink) {
        self.after_comma = self.in_inline_table();
    }

    fn newline(&mut self, span: Span, _: &mut dyn ErrorSink) {
        if self.in_inline_table() {
            self.found(span, "a line break inside an inline table");
        }
    }

    fn comment(&mut self, span: Span, _: &mut dyn ErrorSink) {
        if self.in_inline_table() {
            self.found(span, "a comment inside an inline table");
        }
    }

    fn simple_key(&mut self, _: Span, _: Option<Encoding>, _: &mut dyn ErrorSink) {
        self.other();
    }

    fn key_sep(&mut self, _: Span, _: &mut dyn ErrorSink) {
        self.other();
    }

    fn key_val_sep(&mut self, _: Span, _: &mut dyn ErrorSink) {
        self.other();
    }

    fn scalar(&mut self, span: Span, encoding: Option<Encoding>, _: &mut dyn ErrorSink) {
        self.other();
        let raw = self.input.get(span.start()..span.end()).unwrap_or_default();
        match encoding {
            Some(Encoding::BasicString | Encoding::MlBasicString) => {
                if let Some(what) = new_escape(raw) {
                    self.found(span, what);
                }
            }
            Some(_) => {}
            None if time_without_seconds(raw) => {
                self.found(span, "a time without seconds");
            }
            None => {}
        }
    }
}

/// The first escape of a basic string that TOML 1.0 lacks.
fn new_escape(raw: &str) -> Option<&'static str> {
    let mut bytes = raw.bytes();
    while let Some(b) = bytes.next() {
        if b == b'\\' {
            match bytes.next() {
                Some(b'e') => return Some("the `\\e` escape"),
                Some(b'x') => return Some("a `\\x` escape"),
                _ => {}
            }
        }
    }
    None
}

/// Whether a bare value is a time (alone or in a date-time) with hours and minutes only.
fn time_without_seconds(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let digits = |at: usize, n: usize| {
        bytes
            .get(at..at + n)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    // `HH:MM` at the start, or after `YYYY-MM-DD` and `T`, `t` or a space.
    let time_at = if digits(0, 4) && bytes.get(4) == Some(&b'-') {
        match bytes.get(10) {
            Some(b'T' | b't' | b' ') => 11,
            _ => return false,
        }
    } else {
        0
    };
    digits(time_at, 2)
        && bytes.get(time_at + 2) == Some(&b':')
        && digits(time_at + 3, 2)
        && bytes.get(time_at + 5) != Some(&b':')
}

#[cfg(test)]
mod tests {
    use super::super::tests::run;
    use crate::rules::Rule;

    fn versions(text: &str) -> Vec<String> {
        run("a.toml", text, None)
            .into_iter()
            .filter(|f| f.rule == Rule::TomlVersion || f.rule == Rule::TomlSyntax)
            .map(|f| f.message)
            .collect()
    }

    /// What TOML 1.0 allows and 1.1 kept: nothing to say.
    pub(crate) const TOML_1_0: [&str; 8] = [
        "a = { b = [\n  1,\n  2,\n] }\n",
        "a = { b = \"\"\"\nx\n\"\"\" }\n",
        "a = [\n  { b = 1 }, # c\n]\n",
        "t = 07:32:00\nd = 1979-05-27T07:32:00Z\ne = 1979-05-27 07:32:00.5\n",
        "s = \"\\\\e \\\\x41 \\u001b\"\n",
        "l = 'C:\\e\\x'\n",
        "k = \"12:30\"\n",
        "[x]\na.b = 1\n[x.a.c]\nd = 1\n",
    ];

    /// What only TOML 1.1 allows.
    pub(crate) const TOML_1_1_ONLY: [&str; 7] = [
        "a = {\n  b = 1\n}\n",
        "a = { b = 1, }\n",
        "a = { b = 1, # note\n c = 2 }\n",
        "a = \"\\e[0m\"\n",
        "a = \"\"\"\\x41\"\"\"\n",
        "t = 07:32\n",
        "d = 1979-05-27T07:32Z\n",
    ];

    #[test]
    fn toml_1_1_only_constructs_are_said_to_be_valid_1_1_but_not_1_0() {
        for text in TOML_1_1_ONLY {
            let found = versions(text);
            assert_eq!(found.len(), 1, "{text:?}: {found:?}");
            assert!(
                found[0].starts_with("valid TOML 1.1 but not TOML 1.0 ("),
                "{}",
                found[0]
            );
            assert!(found[0].ends_with("Python's tomllib and most tools reject it"));
        }
        for text in TOML_1_0 {
            assert_eq!(versions(text), Vec::<String>::new(), "{text:?}");
        }
        assert_eq!(
            crate::rules::Rule::TomlVersion.severity(),
            crate::rules::Severity::Warning
        );
    }

    /// The cases above are what Python's tomllib (TOML 1.0) reads: it takes every 1.0 case and
    /// rejects every 1.1-only one.
    #[test]
    fn tomllib_rejects_exactly_what_is_reported_as_not_toml_1_0() {
        let Some(python) = test_support::external_tool("ASP_BRIDGE_PYTHON", "Python 3.11 or later")
        else {
            return;
        };
        let script = "import json, sys, tomllib\n\
            ok = []\n\
            for text in json.load(sys.stdin):\n\
            \x20   try:\n\
            \x20       tomllib.loads(text); ok.append(True)\n\
            \x20   except tomllib.TOMLDecodeError:\n\
            \x20       ok.append(False)\n\
            print(json.dumps(ok))\n";
        let cases: Vec<&str> = TOML_1_0
            .iter()
            .chain(TOML_1_1_ONLY.iter())
            .copied()
            .collect();
        let read = test_support::process::json_verdicts(
            python.as_ref(),
            &["-c", script],
            &cases,
            std::time::Duration::from_secs(60),
        );
        let read: Vec<bool> = serde_json::from_value(read).unwrap();
        for (text, read) in cases.iter().zip(read) {
            assert_eq!(
                read,
                versions(text).is_empty(),
                "tomllib and the check on {text:?}"
            );
        }
    }
}
