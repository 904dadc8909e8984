//! The checks over one file: content checks on the whole side evaluated, whitespace checks on the
//! lines it changes relative to the other side. Pure functions over bytes; nothing here reads.

mod conflict;
mod duplicate_key;
mod found;
mod libyaml;
mod private_key;
mod syntax;
mod toml_version;
mod whitespace;

use std::collections::HashMap;

use provider_kit::digest;

pub(crate) use self::found::{Finding, Found, PER_RULE, YamlReading};
use crate::rules::Rule;
use provider_kit::changed::changed_lines;
use provider_kit::text::Text;

/// Bytes of a file whose text checks are skipped as binary when one of them is NUL (as git does).
const BINARY_SNIFF: usize = 8000;
/// What the checks of one file side found: the findings kept, fingerprinted, in order, and how
/// many a rule's cap left out.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    pub(crate) findings: Vec<Fingerprinted>,
    pub(crate) cut: usize,
    /// What could not be checked, and why.
    pub(crate) unchecked: Vec<String>,
}

/// A finding with its position-resilient fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fingerprinted {
    pub(crate) finding: Finding,
    pub(crate) fingerprint: String,
}

/// Settings that change what the checks find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    /// An added file larger than this many bytes is reported.
    pub(crate) max_added_file_bytes: u64,
    /// How YAML is read.
    pub(crate) yaml: YamlReading,
}

/// One side of a change to check.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Subject<'a> {
    pub(crate) path: &'a str,
    pub(crate) bytes: &'a [u8],
    /// The other side (`before` when checking `after`); `None` when the path is new on this side.
    pub(crate) other: Option<&'a [u8]>,
    /// The file is added by the change (the large-file check applies).
    pub(crate) added: bool,
}

/// Runs the enabled rules on one side of a file, each finding with its fingerprint, in order.
pub(crate) fn check(subject: Subject<'_>, enabled: &[Rule], settings: Settings) -> Checked {
    let on = |rule: Rule| enabled.contains(&rule);
    let mut findings = Found::default();
    if on(Rule::LargeFile) && subject.added {
        large_file(subject.bytes.len() as u64, settings, &mut findings);
    }
    match decode(subject.bytes) {
        Content::Text(text) => {
            let text = Text::new(&text);
            if on(Rule::MergeConflict) {
                conflict::check(&text, &mut findings);
            }
            if on(Rule::PrivateKey) {
                private_key::check(&text, &mut findings);
            }
            syntax::check(subject.path, &text, enabled, settings.yaml, &mut findings);
            let other = subject.other.map(decode);
            let other = match &other {
                Some(Content::Text(other)) => Some(Text::new(other)),
                _ => None,
            };
            let changed = changed_lines(&text, other.as_ref());
            whitespace::check(subject.path, &text, &changed, enabled, &mut findings);
        }
        content => {
            if on(Rule::PrivateKey) {
                private_key::check_bytes(subject.bytes, &mut findings);
            }
            // Binary content has no text to check; text in an encoding the checks cannot read
            // is said to be unchecked, never passed over in silence.
            if matches!(content, Content::Undecodable) && on(Rule::TextEncoding) {
                findings.push(Finding::new(
                    Rule::TextEncoding,
                    None,
                    "not checked as text: it is neither UTF-8 nor UTF-16 with a byte order mark",
                    "",
                ));
            }
        }
    }
    Checked {
        cut: findings.cut,
        unchecked: findings.unchecked,
        findings: fingerprint(subject.path, findings.findings),
    }
}

/// What a file side holds, as the text checks see it.
enum Content<'a> {
    /// Its text, without a byte order mark: UTF-8 as it is, UTF-16 (with its mark) decoded.
    Text(std::borrow::Cow<'a, str>),
    /// A NUL byte in its first 8000 bytes, as git tells binary files.
    Binary,
    /// Text in another encoding (Latin-1, say), or UTF-16 that does not decode.
    Undecodable,
}

fn decode(bytes: &[u8]) -> Content<'_> {
    let utf16 = |rest: &[u8], unit: fn([u8; 2]) -> u16| {
        if !rest.len().is_multiple_of(2) {
            return Content::Undecodable;
        }
        let units = rest.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
        match char::decode_utf16(units).collect::<Result<String, _>>() {
            Ok(text) => Content::Text(text.into()),
            Err(_) => Content::Undecodable,
        }
    };
    if let Some(rest) = bytes.strip_prefix(b"\xff\xfe") {
        return utf16(rest, u16::from_le_bytes);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xfe\xff") {
        return utf16(rest, u16::from_be_bytes);
    }
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return Content::Binary;
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Content::Text(text.strip_prefix('\u{feff}').unwrap_or(text).into()),
        Err(_) => Content::Undecodable,
    }
}

fn large_file(size: u64, settings: Settings, out: &mut Found) {
    if size > settings.max_added_file_bytes {
        out.push(Finding::new(
            Rule::LargeFile,
            None,
            format!(
                "added file is {} KB, over the limit of {} KB",
                size.div_ceil(1024),
                settings.max_added_file_bytes / 1024
            ),
            "",
        ));
    }
}

/// Sorts the findings by position and gives each `sha256(rule, path, key, n)`, where `n` counts the
/// earlier findings with the same rule and key: stable when lines move, distinct for repeats.
fn fingerprint(path: &str, mut findings: Vec<Finding>) -> Vec<Fingerprinted> {
    findings.sort_by_key(|f| (f.range.map(|r| r.start), f.rule));
    let mut seen: HashMap<(Rule, String), u32> = HashMap::new();
    findings
        .into_iter()
        .map(|finding| {
            let n = seen.entry((finding.rule, finding.key.clone())).or_default();
            let fingerprint =
                digest::fingerprint([finding.rule.id(), path, &finding.key, &n.to_string()]);
            *n += 1;
            Fingerprinted {
                fingerprint,
                finding,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use provider_kit::text::{Position, Range};

    const SETTINGS: Settings = Settings {
        max_added_file_bytes: 500 * 1024,
        yaml: YamlReading::Compatible,
    };

    pub(super) fn run(path: &str, after: &str, before: Option<&str>) -> Vec<Finding> {
        check(
            Subject {
                path,
                bytes: after.as_bytes(),
                other: before.map(str::as_bytes),
                added: before.is_none(),
            },
            &Rule::ALL,
            SETTINGS,
        )
        .findings
        .into_iter()
        .map(|f| f.finding)
        .collect()
    }

    /// Every rule on `bytes` as a file the change adds.
    pub(super) fn added(path: &str, bytes: &[u8]) -> Checked {
        check(
            Subject {
                path,
                bytes,
                other: None,
                added: true,
            },
            &Rule::ALL,
            SETTINGS,
        )
    }

    /// Each finding as `(rule, range, message)`, to compare a whole list at once.
    pub(super) fn spots(found: &[Finding]) -> Vec<(Rule, Option<Range>, &str)> {
        found
            .iter()
            .map(|f| (f.rule, f.range, f.message.as_str()))
            .collect()
    }

    pub(super) fn range(sl: u32, sc: u32, el: u32, ec: u32) -> Option<Range> {
        Some(Range {
            start: Position { line: sl, char: sc },
            end: Position { line: el, char: ec },
        })
    }

    #[test]
    fn a_clean_file_has_no_findings() {
        assert_eq!(run("src/a.rs", "fn main() {}\n", None), []);
        assert_eq!(run("a.json", "{\"a\": [1, 2]}\n", Some("{}\n")), []);
    }

    #[test]
    fn an_added_file_over_the_limit_is_large() {
        let big = "x\n".repeat(300 * 1024);
        let found = run("data.txt", &big, None);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, Rule::LargeFile);
        assert_eq!(
            found[0].message,
            "added file is 600 KB, over the limit of 500 KB"
        );
        assert_eq!(found[0].range, None);
        assert_eq!(
            run("data.txt", &big, Some(&big)),
            [],
            "not added: not checked"
        );
    }

    #[test]
    fn binary_files_get_only_byte_checks() {
        let mut bytes = b"\0\x01-----BEGIN OPENSSH PRIVATE KEY-----\n   \n".to_vec(); // pragma: allowlist secret
        let found = check(
            Subject {
                path: "key.bin",
                bytes: &bytes,
                other: None,
                added: true,
            },
            &Rule::ALL,
            SETTINGS,
        )
        .findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].finding.rule, Rule::PrivateKey);
        assert_eq!(found[0].finding.range, None);
        bytes.truncate(2);
        assert!(
            check(
                Subject {
                    path: "x.bin",
                    bytes: &bytes,
                    other: None,
                    added: true
                },
                &Rule::ALL,
                SETTINGS
            )
            .findings
            .is_empty()
        );
    }

    #[test]
    fn fingerprints_survive_moving_lines_and_tell_repeats_apart() {
        let fp = |text: &str| -> Vec<String> {
            check(
                Subject {
                    path: "a.txt",
                    bytes: text.as_bytes(),
                    other: None,
                    added: true,
                },
                &[Rule::TrailingWhitespace],
                SETTINGS,
            )
            .findings
            .into_iter()
            .map(|f| f.fingerprint)
            .collect()
        };
        let first = fp("x \ny \nx \n");
        let moved = fp("\n\nx \ny \nx \n");
        assert_eq!(first, moved);
        assert_eq!(first.len(), 3);
        assert_ne!(first[0], first[2], "the second `x ` is another finding");
        assert!(first[0].starts_with("sha256:") && first[0].len() == 71);
    }

    #[test]
    fn disabled_rules_do_not_run() {
        let found = check(
            Subject {
                path: "a.json",
                bytes: b"{ \n",
                other: None,
                added: true,
            },
            &[Rule::TrailingWhitespace],
            SETTINGS,
        )
        .findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].finding.rule, Rule::TrailingWhitespace);
    }

    #[test]
    fn a_byte_order_mark_is_not_text() {
        assert_eq!(run("a.json", "\u{feff}{}\n", None), []);
    }

    #[test]
    fn every_check_is_linear_on_eight_mebibytes_of_its_worst_input() {
        const BYTES: usize = 8 << 20;
        let line = |unit: &str| unit.repeat(BYTES / unit.len());
        for (path, text) in [
            // Half a million key markers on one line: each column counted on from the last.
            ("keys.txt", line("BEGIN PRIVATE KEY é ")), // pragma: allowlist secret
            ("conflict.txt", format!(">>>>>>> {}", line("x"))),
            ("spaces.txt", format!("x{}", line(" "))),
            ("endings.txt", line("\r\n\n")),
            ("deep.json", line("[")),
            ("deep.yaml", line("[")),
            ("deep.toml", format!("a = {}", line("["))),
            ("long.json", format!("\"{}\"", line("é"))),
        ] {
            let started = std::time::Instant::now();
            let found = added(path, text.as_bytes());
            // Far from today's seconds in a debug build, and from the minutes a quadratic
            // check takes on this input.
            let took = started.elapsed();
            assert!(
                took < std::time::Duration::from_secs(20),
                "{path}: {took:?}"
            );
            assert!(found.findings.len() <= Rule::ALL.len() * PER_RULE, "{path}");
        }
    }

    #[test]
    fn utf16_with_a_byte_order_mark_is_checked_as_its_text() {
        for (mark, unit) in [
            (b"\xff\xfe", u16::to_le_bytes as fn(u16) -> [u8; 2]),
            (b"\xfe\xff", u16::to_be_bytes),
        ] {
            let text = "é\n-----BEGIN RSA PRIVATE KEY-----\n"; // pragma: allowlist secret
            let mut bytes = mark.to_vec();
            bytes.extend(text.encode_utf16().flat_map(unit));
            let found = added("key.txt", &bytes).findings;
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].finding.rule, Rule::PrivateKey);
            assert_eq!(found[0].finding.range, range(1, 5, 1, 26));
        }
    }

    #[test]
    fn text_in_another_encoding_is_said_to_be_unchecked() {
        let latin1 = b"caf\xe9 \n";
        let found = added("notes.txt", latin1).findings;
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].finding.rule, Rule::TextEncoding);
        assert_eq!(Rule::TextEncoding.severity(), crate::rules::Severity::Info);
        assert!(found[0].finding.message.starts_with("not checked as text"));
    }
}
