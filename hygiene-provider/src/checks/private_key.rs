//! `hygiene/private-key`: the armour lines of private keys (the list of pre-commit-hooks'
//! `detect-private-key`). The range covers the marker text; a file that is not text gets a
//! file-level finding.
//!
//! detect-secrets' inline allow comments are honoured, for this rule only: a line that holds
//! [`ALLOW`] has no private-key finding, nor has the line after one that holds [`ALLOW_NEXT`] (as
//! detect-secrets reads them; a file that is not text has no lines, so no comment).

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use super::found::{Finding, Found};
use crate::rules::Rule;
use provider_kit::text::{Position, Range, Text};

const MARKERS: [&str; 10] = [
    "BEGIN RSA PRIVATE KEY",            // pragma: allowlist secret
    "BEGIN DSA PRIVATE KEY",            // pragma: allowlist secret
    "BEGIN EC PRIVATE KEY",             // pragma: allowlist secret
    "BEGIN OPENSSH PRIVATE KEY",        // pragma: allowlist secret
    "BEGIN PRIVATE KEY",                // pragma: allowlist secret
    "PuTTY-User-Key-File-2",            // pragma: allowlist secret
    "BEGIN SSH2 ENCRYPTED PRIVATE KEY", // pragma: allowlist secret
    "BEGIN PGP PRIVATE KEY BLOCK",      // pragma: allowlist secret
    "BEGIN ENCRYPTED PRIVATE KEY",      // pragma: allowlist secret
    "BEGIN OpenVPN Static key V1",      // pragma: allowlist secret
];

/// The comment that allows the markers of its own line (detect-secrets' convention).
pub(crate) const ALLOW: &str = "pragma: allowlist secret";
/// The comment that allows the markers of the next line.
pub(crate) const ALLOW_NEXT: &str = "pragma: allowlist nextline secret";

/// Whether an allow comment covers the markers of line `index`.
fn allowed(text: &Text<'_>, index: usize) -> bool {
    text.content(index).contains(ALLOW)
        || index
            .checked_sub(1)
            .is_some_and(|before| text.content(before).contains(ALLOW_NEXT))
}

fn message(marker: &str) -> String {
    format!("private key in the repository (`{marker}`)")
}

/// The markers as one automaton: a text is searched once for all of them.
fn markers() -> &'static AhoCorasick {
    static MARKERS_AT_ONCE: OnceLock<AhoCorasick> = OnceLock::new();
    MARKERS_AT_ONCE.get_or_init(|| {
        AhoCorasick::new(MARKERS).unwrap_or_else(|_| unreachable!("ten short literals"))
    })
}

pub(super) fn check(text: &Text<'_>, out: &mut Found) {
    // Every marker of the text in order, in one pass (no marker spans a line, none starts inside
    // another, so the overlapping search finds what one search per marker would), each column
    // counted on from the one before it on its line: linear however many markers a line holds.
    let found = markers()
        .find_overlapping_iter(text.text)
        .map(|m| (m.start(), MARKERS[m.pattern().as_usize()]));
    let mut columns = None;
    // Whether the current line is allowed, asked once per line however many markers it holds.
    let mut allow: Option<(usize, bool)> = None;
    for (at, marker) in found {
        if out.full(Rule::PrivateKey) {
            return;
        }
        let index = text.line_of(at);
        let allowed = match allow {
            Some((line, allowed)) if line == index => allowed,
            _ => allow.insert((index, allowed(text, index))).1,
        };
        if allowed {
            continue;
        }
        let columns = match &mut columns {
            Some((line, columns)) if *line == index => columns,
            slot => &mut slot.insert((index, text.columns(index))).1,
        };
        let start = columns.position(at - text.lines[index].start);
        // Markers are ASCII: one UTF-16 unit per byte.
        let end = Position {
            char: start.char + marker.len() as u32,
            ..start
        };
        out.push(Finding::new(
            Rule::PrivateKey,
            Some(Range { start, end }),
            message(marker),
            marker,
        ));
    }
}

/// For content that is not UTF-8 text: one file-level finding per marker present.
pub(super) fn check_bytes(bytes: &[u8], out: &mut Found) {
    let mut present = [false; MARKERS.len()];
    for found in markers().find_overlapping_iter(bytes) {
        present[found.pattern().as_usize()] = true;
    }
    for (&marker, _) in MARKERS.iter().zip(present).filter(|(_, present)| *present) {
        out.push(Finding::new(
            Rule::PrivateKey,
            None,
            message(marker),
            marker,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{added, range, run, spots};
    use crate::rules::Rule;

    #[test]
    fn the_marker_is_found_at_its_utf16_position() {
        let text =
            "# clé 😀\n  -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"; // pragma: allowlist secret
        let found = run("deploy/id_rsa", text, None);
        let message = "private key in the repository (`BEGIN RSA PRIVATE KEY`)"; // pragma: allowlist secret
        assert_eq!(
            spots(&found),
            [(Rule::PrivateKey, range(1, 7, 1, 28), message)]
        );
        let after_emoji = run("k", "😀 BEGIN PRIVATE KEY\n", None); // pragma: allowlist secret
        assert_eq!(after_emoji[0].range, range(0, 3, 0, 20));
    }

    #[test]
    fn each_kind_of_key_is_found() {
        for marker in super::MARKERS {
            let found = run("k", &format!("{marker}\n"), None);
            assert_eq!(found.len(), 1, "{marker}");
        }
        assert_eq!(run("k", "-----BEGIN PUBLIC KEY-----\n", None), []);
    }

    #[test]
    fn an_allow_comment_covers_its_own_line_or_with_nextline_the_next_and_only_the_private_key_rule()
     {
        let text = concat!(
            "a = \"BEGIN RSA PRIVATE KEY\"  # pragma: allowlist secret\n",
            "b = \"BEGIN RSA PRIVATE KEY\"\n", // pragma: allowlist secret
            "# pragma: allowlist nextline secret\n",
            "c = \"BEGIN EC PRIVATE KEY\"\n", // pragma: allowlist secret
            "d = \"BEGIN EC PRIVATE KEY\"\n", // pragma: allowlist secret
            "<<<<<<< HEAD # pragma: allowlist secret\n",
        );
        let found = run("keys.py", text, None);
        let keys: Vec<u32> = found
            .iter()
            .filter(|f| f.rule == Rule::PrivateKey)
            .map(|f| f.range.unwrap().start.line)
            .collect();
        assert_eq!(keys, [1, 4], "only the lines no comment covers");
        assert!(
            found.iter().any(|f| f.rule == Rule::MergeConflict),
            "another rule is not allowed by the comment: {found:?}"
        );
        let marker = "BEGIN PRIVATE KEY "; // pragma: allowlist secret
        let many = format!("{} # pragma: allowlist secret\n", marker.repeat(10_000));
        assert_eq!(run("k", &many, None), []);
    }

    /// This repository's own sources name key markers (the list above, tests): each such line
    /// carries the allow comment, so a sweep of the repository finds no private key in them.
    #[test]
    fn no_tracked_file_of_this_repository_has_a_private_key_finding() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let listed = std::process::Command::new("git")
            .args(["ls-files", "-z"])
            .current_dir(&root)
            .output()
            .expect("git ls-files runs");
        assert!(listed.status.success(), "git ls-files failed");
        let mut checked = 0;
        let mut found = Vec::new();
        for path in listed.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(path).into_owned();
            let file = root.join(&path);
            // Links have no content of their own; a file deleted from the work tree is not there.
            let regular = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file());
            let Some(bytes) = regular.then(|| std::fs::read(&file).ok()).flatten() else {
                continue;
            };
            checked += 1;
            found.extend(
                added(&path, &bytes)
                    .findings
                    .into_iter()
                    .filter(|f| f.finding.rule == Rule::PrivateKey)
                    .map(|f| (path.clone(), f.finding.range.map(|r| r.start.line + 1))),
            );
        }
        assert!(checked > 100, "only {checked} files were checked");
        assert_eq!(
            found,
            [],
            "private-key findings in the repository's own files"
        );
    }
}
