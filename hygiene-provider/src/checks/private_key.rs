//! `hygiene/private-key`: the armour lines of private keys (the list of pre-commit-hooks'
//! `detect-private-key`). The range covers the marker text; a file that is not text gets a
//! file-level finding.

use super::{Finding, Found};
use crate::rules::Rule;
use crate::text::{Position, Range, Text};

const MARKERS: [&str; 10] = [
    "BEGIN RSA PRIVATE KEY",
    "BEGIN DSA PRIVATE KEY",
    "BEGIN EC PRIVATE KEY",
    "BEGIN OPENSSH PRIVATE KEY",
    "BEGIN PRIVATE KEY",
    "PuTTY-User-Key-File-2",
    "BEGIN SSH2 ENCRYPTED PRIVATE KEY",
    "BEGIN PGP PRIVATE KEY BLOCK",
    "BEGIN ENCRYPTED PRIVATE KEY",
    "BEGIN OpenVPN Static key V1",
];

fn message(marker: &str) -> String {
    format!("private key in the repository (`{marker}`)")
}

pub(super) fn check(text: &Text<'_>, out: &mut Found) {
    // Every marker of the text in order (one pass per marker, no marker spans a line), each
    // column counted on from the one before it on its line: linear however many markers a line
    // holds.
    let mut found: Vec<(usize, &str)> = MARKERS
        .iter()
        .flat_map(|marker| text.text.match_indices(marker))
        .collect();
    found.sort_unstable();
    let mut columns = None;
    for (at, marker) in found {
        if out.full(Rule::PrivateKey) {
            return;
        }
        let index = text.line_of(at);
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
    for marker in MARKERS {
        if bytes
            .windows(marker.len())
            .any(|window| window == marker.as_bytes())
        {
            out.push(Finding::new(
                Rule::PrivateKey,
                None,
                message(marker),
                marker,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{range, run, spots};
    use crate::rules::Rule;

    #[test]
    fn the_marker_is_found_at_its_utf16_position() {
        let text =
            "# clé 😀\n  -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n";
        let found = run("deploy/id_rsa", text, None);
        let message = "private key in the repository (`BEGIN RSA PRIVATE KEY`)";
        assert_eq!(
            spots(&found),
            [(Rule::PrivateKey, range(1, 7, 1, 28), message)]
        );
        let after_emoji = run("k", "😀 BEGIN PRIVATE KEY\n", None);
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
}
