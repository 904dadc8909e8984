//! `partialFingerprints.primaryLocationLineHash`, computed exactly as GitHub's upload action does
//! (codeql-action `src/fingerprints.ts`), so an upload through the API dedups like one through the
//! action.
//!
//! The text is read as UTF-16 code units. Spaces and tabs are skipped; CR, LF and CRLF all count as
//! one LF. A rolling hash `h = 37·h + c − 37^100·c_out` (64-bit, wrapping) runs over a window of 100
//! kept units; each line's hash is the window starting at its first kept unit. After the text comes
//! the unit 65535, then zeros flush the last lines. A hash is written as lower-case hex of its
//! unsigned value, then `:n` where `n` counts its occurrences so far.

use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::path::{Path, PathBuf};

const BLOCK: usize = 100;
const MOD: i64 = 37;
const END_OF_TEXT: i64 = 65_535;
const TAB: u16 = b'\t' as u16;
const SPACE: u16 = b' ' as u16;
const LF: u16 = b'\n' as u16;
const CR: u16 = b'\r' as u16;

/// Files larger than this are not hashed (the result then simply has no line hash).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// One line's hash: the rolling hash and how many lines so far had it. Written as the action
/// writes it (`{hash:x}:{count}`) only when a result asks for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineHash {
    value: u64,
    count: u32,
}

impl fmt::Display for LineHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}:{}", self.value, self.count)
    }
}

/// The hash of every line of `text`, as the action writes them; index 0 is line 1.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn line_hashes(text: &str) -> Vec<String> {
    hashes(text).iter().map(LineHash::to_string).collect()
}

/// The hash of every line of `text`; index 0 is line 1.
pub(crate) fn hashes(text: &str) -> Vec<LineHash> {
    let mut hasher = Hasher::new();
    for unit in text.encode_utf16() {
        hasher.character(i64::from(unit));
    }
    hasher.character(END_OF_TEXT);
    for _ in 0..BLOCK {
        if hasher.line_numbers[hasher.index].is_some() {
            hasher.output();
        }
        hasher.update(0);
    }
    hasher.hashes
}

struct Hasher {
    window: [i64; BLOCK],
    line_numbers: [Option<usize>; BLOCK],
    hash: i64,
    first_mod: i64,
    index: usize,
    line_number: usize,
    line_start: bool,
    prev_cr: bool,
    counts: HashMap<u64, u32, BuildHasherDefault<Spread>>,
    hashes: Vec<LineHash>,
}

/// Hashes a key that is already a 64-bit hash, only spreading its bits (a rolling hash's low bits
/// depend on the input's low bits alone, and a table indexes by them).
#[derive(Default)]
struct Spread(u64);

impl std::hash::Hasher for Spread {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

impl Hasher {
    fn new() -> Hasher {
        Hasher {
            window: [0; BLOCK],
            line_numbers: [None; BLOCK],
            hash: 0,
            first_mod: (0..BLOCK).fold(1_i64, |acc, _| acc.wrapping_mul(MOD)),
            index: 0,
            line_number: 0,
            line_start: true,
            prev_cr: false,
            counts: HashMap::default(),
            hashes: Vec::new(),
        }
    }

    fn character(&mut self, unit: i64) {
        let is = |c: u16| unit == i64::from(c);
        if is(SPACE) || is(TAB) || (self.prev_cr && is(LF)) {
            self.prev_cr = false;
            return;
        }
        let unit = if is(CR) {
            self.prev_cr = true;
            i64::from(LF)
        } else {
            self.prev_cr = false;
            unit
        };
        if self.line_numbers[self.index].is_some() {
            self.output();
        }
        if self.line_start {
            self.line_start = false;
            self.line_number += 1;
            self.line_numbers[self.index] = Some(self.line_number);
        }
        if unit == i64::from(LF) {
            self.line_start = true;
        }
        self.update(unit);
    }

    fn update(&mut self, unit: i64) {
        let begin = self.window[self.index];
        self.window[self.index] = unit;
        self.hash = MOD
            .wrapping_mul(self.hash)
            .wrapping_add(unit)
            .wrapping_sub(self.first_mod.wrapping_mul(begin));
        self.index = (self.index + 1) % BLOCK;
    }

    fn output(&mut self) {
        // The value is read as unsigned 64 bits: a reinterpretation, never a truncation.
        let value = self.hash as u64;
        let count = self.counts.entry(value).or_insert(0);
        *count += 1;
        debug_assert_eq!(self.line_numbers[self.index], Some(self.hashes.len() + 1));
        self.hashes.push(LineHash {
            value,
            count: *count,
        });
        self.line_numbers[self.index] = None;
    }
}

/// Line hashes of workspace files, each file read and hashed once.
#[derive(Debug)]
pub(crate) struct FileHashes {
    root: Option<PathBuf>,
    files: HashMap<String, Option<Vec<LineHash>>>,
}

impl FileHashes {
    /// Hashes files under `root` (already canonical); with no root, nothing is hashed.
    pub(crate) fn new(root: Option<&Path>) -> FileHashes {
        FileHashes {
            root: root.map(Path::to_path_buf),
            files: HashMap::new(),
        }
    }

    /// The hash of 1-based `line` of the workspace-relative `path`, when the file is readable inside
    /// the workspace (symlinks resolved and confined) and has that line.
    pub(crate) fn get(&mut self, path: &str, line: usize) -> Option<LineHash> {
        let root = self.root.as_deref()?;
        let hashes = self
            .files
            .entry(path.to_owned())
            .or_insert_with(|| read_confined(root, path).map(|text| hashes(&text)));
        hashes.as_ref()?.get(line.checked_sub(1)?).copied()
    }
}

/// The text of `root/path` if it is a regular file that resolves inside `root`. Invalid UTF-8 reads
/// as U+FFFD, as Node's decoder does.
fn read_confined(root: &Path, path: &str) -> Option<String> {
    if path.contains('\0') || Path::new(path).is_absolute() {
        return None;
    }
    let file = root.join(path).canonicalize().ok()?;
    if !file.starts_with(root) {
        return None;
    }
    let metadata = std::fs::metadata(&file).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(&file).ok()?;
    Some(
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// codeql-action `src/fingerprints.test.ts`, test `hash`.
    #[test]
    fn matches_the_published_vectors_of_githubs_upload_action() {
        let vectors: &[(&str, &[&str])] = &[
            ("", &["c129715d7a2bc9a3:1"]),
            (
                " a\nb\n  \t\tc\n d",
                &[
                    "271789c17abda88f:1",
                    "54703d4cd895b18:1",
                    "180aee12dab6264:1",
                    "a23a3dc5e078b07b:1",
                ],
            ),
            (
                " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
                &[
                    "8b7cf3e952e7aeb2:1",
                    "b1ae1287ec4718d9:1",
                    "bff680108adb0fcc:1",
                    "c6805c5e1288b612:1",
                    "b86d3392aea1be30:1",
                    "e6ceba753e1a442:1",
                ],
            ),
        ];
        for (input, expected) in vectors {
            assert_eq!(line_hashes(input), *expected, "input {input:?}");
        }
    }

    #[test]
    fn every_newline_convention_hashes_the_same() {
        let expected = [
            "e9496ae3ebfced30:1",
            "fb7c023a8b9ccb3f:1",
            "ce8ba1a563dcdaca:1",
            "e20e36e16fcb0cc8:1",
            "b3edc88f2938467e:1",
            "c8e28b0b4002a3a0:1",
            "c129715d7a2bc9a3:1",
        ];
        for input in [
            " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
            " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
            " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
            " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n",
        ] {
            assert_eq!(line_hashes(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn repeated_lines_are_numbered_by_occurrence() {
        let input = "Lorem ipsum dolor sit amet.\n".repeat(10);
        assert_eq!(
            line_hashes(&input),
            [
                "a7f2ff13bc495cf2:1",
                "a7f2ff13bc495cf2:2",
                "a7f2ff13bc495cf2:3",
                "a7f2ff13bc495cf2:4",
                "a7f2ff13bc495cf2:5",
                "a7f2ff13bc495cf2:6",
                "a7f2ff1481e87703:1",
                "a9cf91f7bbf1862b:1",
                "55ec222b86bcae53:1",
                "cc97dc7b1d7d8f7b:1",
                "c129715d7a2bc9a3:1",
            ]
        );
    }

    #[test]
    fn non_bmp_characters_count_as_two_utf16_units() {
        // One emoji is two code units, as JavaScript's `charCodeAt` sees it; hashing its scalar value
        // instead (as some ports do) would give a different hash.
        assert_ne!(line_hashes("😀"), line_hashes("\u{f600}"));
        assert_eq!(line_hashes("a😀\nb").len(), 2);
    }

    #[test]
    fn emoji_tabs_and_mixed_newlines_hash_as_the_actions_javascript_does() {
        // Reference values from the action's algorithm run under Node (UTF-16 `charCodeAt`).
        let text = "const a = \"😀 naïve\";\r\n\tlet b = 1;  \n\n// 漢字 😀 end\r";
        assert_eq!(
            line_hashes(text),
            [
                "dcd9fd094cfaa0c:1",
                "2d595cb5fb296e28:1",
                "78c62eb9fcc95576:1",
                "7c849adb89f8c7a4:1",
                "c129715d7a2bc9a3:1",
            ]
        );
    }

    #[test]
    fn files_are_read_only_inside_the_workspace() {
        let (_dir, root) = test_support::tree(&[("src/a.txt", " a\nb\n  \t\tc\n d")]);
        let outside = tempfile::NamedTempFile::new().unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        let mut files = FileHashes::new(Some(&root));
        assert_eq!(
            files.get("src/a.txt", 2).map(|h| h.to_string()).as_deref(),
            Some("54703d4cd895b18:1")
        );
        assert_eq!(files.get("src/a.txt", 5), None, "no such line");
        assert_eq!(files.get("src/a.txt", 0), None);
        assert_eq!(files.get("src/missing.txt", 1), None);
        assert_eq!(files.get("src", 1), None, "a directory");
        assert_eq!(files.get("../x", 1), None);
        assert_eq!(files.get("link", 1), None, "a symlink out of the workspace");
        assert_eq!(
            files.get(&outside.path().to_string_lossy(), 1),
            None,
            "an absolute path"
        );
        assert_eq!(FileHashes::new(None).get("src/a.txt", 1), None);
    }
}
