//! `partialFingerprints.primaryLocationLineHash`, computed exactly as GitHub's upload action does
//! (codeql-action `src/fingerprints.ts`), so an upload through the API dedups like one through the
//! action.
//!
//! The text is read as UTF-16 code units. Spaces and tabs are skipped; CR, LF and CRLF all count as
//! one LF. A rolling hash `h = 37·h + c − 37^100·c_out` (64-bit, wrapping) runs over a window of 100
//! kept units; each line's hash is the window starting at its first kept unit. After the text comes
//! the unit 65535, then zeros flush the last lines. A hash is written as lower-case hex of its
//! unsigned value, then `:n` where `n` counts its occurrences so far.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::hash::BuildHasherDefault;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

const BLOCK: usize = 100;
const MOD: i64 = 37;
const END_OF_TEXT: i64 = 65_535;
const TAB: u16 = b'\t' as u16;
const SPACE: u16 = b' ' as u16;
const LF: u16 = b'\n' as u16;
const CR: u16 = b'\r' as u16;

/// Most threads that hash files at once.
const MAX_THREADS: usize = 4;
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
    let mut hasher = Hasher::new(lines(text));
    let mut rest = text;
    while !rest.is_empty() {
        // ASCII, the usual text, byte by byte; anything else as its UTF-16 code units.
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        for &byte in &rest.as_bytes()[..ascii] {
            hasher.character(u16::from(byte));
        }
        rest = &rest[ascii..];
        if let Some(c) = rest.chars().next() {
            let mut units = [0; 2];
            for &unit in c.encode_utf16(&mut units).iter() {
                hasher.character(unit);
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    hasher.finish()
}

/// About how many lines `text` has (its line feeds, and a last line without one).
fn lines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count() + 1
}

struct Hasher {
    /// The last [`BLOCK`] kept units, a ring from `index`.
    window: [u16; BLOCK],
    /// Whether a line starts at that unit of the ring.
    starts: [bool; BLOCK],
    hash: i64,
    first_mod: i64,
    index: usize,
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
    /// A hasher for a text of about `lines` lines: its tables sized once (the threads of
    /// [`FileHashes::prefetch`] share one allocator, so every growth is a lock taken).
    fn new(lines: usize) -> Hasher {
        Hasher {
            window: [0; BLOCK],
            starts: [false; BLOCK],
            hash: 0,
            first_mod: (0..BLOCK).fold(1_i64, |acc, _| acc.wrapping_mul(MOD)),
            index: 0,
            line_start: true,
            prev_cr: false,
            counts: HashMap::with_capacity_and_hasher(lines, BuildHasherDefault::default()),
            hashes: Vec::with_capacity(lines),
        }
    }

    #[inline]
    fn character(&mut self, unit: u16) {
        if unit == SPACE || unit == TAB || (self.prev_cr && unit == LF) {
            self.prev_cr = false;
            return;
        }
        self.prev_cr = unit == CR;
        let unit = if unit == CR { LF } else { unit };
        if self.starts[self.index] {
            self.output();
        }
        if self.line_start {
            self.line_start = false;
            self.starts[self.index] = true;
        }
        if unit == LF {
            self.line_start = true;
        }
        self.update(i64::from(unit));
    }

    /// After the text: the end-of-text unit, then zeros until every line's window is full.
    fn finish(mut self) -> Vec<LineHash> {
        if self.starts[self.index] {
            self.output();
        }
        if self.line_start {
            self.starts[self.index] = true;
        }
        self.update(END_OF_TEXT);
        for _ in 0..BLOCK {
            if self.starts[self.index] {
                self.output();
            }
            self.update(0);
        }
        self.hashes
    }

    #[inline]
    fn update(&mut self, unit: i64) {
        let begin = i64::from(self.window[self.index]);
        // The end-of-text unit is 65,535, a `u16` too.
        self.window[self.index] = unit as u16;
        self.hash = MOD
            .wrapping_mul(self.hash)
            .wrapping_add(unit)
            .wrapping_sub(self.first_mod.wrapping_mul(begin));
        self.index += 1;
        if self.index == BLOCK {
            self.index = 0;
        }
    }

    fn output(&mut self) {
        // The value is read as unsigned 64 bits: a reinterpretation, never a truncation.
        let value = self.hash as u64;
        let count = self.counts.entry(value).or_insert(0);
        *count += 1;
        self.hashes.push(LineHash {
            value,
            count: *count,
        });
        self.starts[self.index] = false;
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

    /// Reads and hashes `paths` ahead of the results that ask for them, on as many threads as
    /// there are processors (at most [`MAX_THREADS`]): files are independent, and a log of
    /// thousands of findings spends most of its time here otherwise.
    pub(crate) fn prefetch(&mut self, paths: &BTreeSet<String>) {
        let Some(root) = self.root.as_deref() else {
            return;
        };
        let todo: Vec<&String> = paths
            .iter()
            .filter(|p| !self.files.contains_key(*p))
            .collect();
        let threads = std::thread::available_parallelism()
            .map_or(1, NonZeroUsize::get)
            .min(MAX_THREADS)
            .min(todo.len());
        let next = AtomicUsize::new(0);
        let worker = || {
            let mut done = Vec::new();
            while let Some(path) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                let hashed = read_confined(root, path).map(|text| hashes(&text));
                done.push(((*path).clone(), hashed));
            }
            done
        };
        let done: Vec<_> = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
            let mut done = worker();
            // A helper that could not finish leaves its files to `get`.
            done.extend(helpers.into_iter().filter_map(|h| h.join().ok()).flatten());
            done
        });
        self.files.extend(done);
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

    /// The algorithm as the action writes it, unit by unit over `charCodeAt` (its `hash` function
    /// in `src/fingerprints.ts`): what [`hashes`] must give, however it gets there.
    fn as_the_action_writes_it(text: &str) -> Vec<String> {
        let units: Vec<i64> = text.encode_utf16().map(i64::from).collect();
        let first_mod = (0..BLOCK).fold(1_i64, |acc, _| acc.wrapping_mul(MOD));
        let mut window = [0_i64; BLOCK];
        let mut line_numbers: [Option<usize>; BLOCK] = [None; BLOCK];
        let (mut hash, mut index, mut line_number) = (0_i64, 0, 0);
        let (mut line_start, mut prev_cr) = (true, false);
        let mut counts: HashMap<u64, u32> = HashMap::new();
        let mut out = Vec::new();
        let mut output = |hash: i64, out: &mut Vec<String>| {
            let count = counts.entry(hash as u64).or_insert(0);
            *count += 1;
            out.push(format!("{:x}:{count}", hash as u64));
        };
        let update = |unit: i64, hash: &mut i64, index: &mut usize, window: &mut [i64]| {
            let begin = window[*index];
            window[*index] = unit;
            *hash = MOD
                .wrapping_mul(*hash)
                .wrapping_add(unit)
                .wrapping_sub(first_mod.wrapping_mul(begin));
            *index = (*index + 1) % BLOCK;
        };
        for unit in units.into_iter().chain([END_OF_TEXT]) {
            let space = unit == i64::from(SPACE) || unit == i64::from(TAB);
            if space || (prev_cr && unit == i64::from(LF)) {
                prev_cr = false;
                continue;
            }
            prev_cr = unit == i64::from(CR);
            let unit = if prev_cr { i64::from(LF) } else { unit };
            if line_numbers[index].take().is_some() {
                output(hash, &mut out);
            }
            if line_start {
                line_number += 1;
                line_numbers[index] = Some(line_number);
            }
            line_start = unit == i64::from(LF);
            update(unit, &mut hash, &mut index, &mut window);
        }
        for _ in 0..BLOCK {
            if line_numbers[index].take().is_some() {
                output(hash, &mut out);
            }
            update(0, &mut hash, &mut index, &mut window);
        }
        out
    }

    #[test]
    fn any_text_hashes_as_the_action_writes_it() {
        // Texts of spaces, tabs, each newline convention, ASCII, accents, CJK and emoji, short
        // lines and lines longer than the window, from a fixed seed.
        let pieces = [
            " ",
            "\t",
            "\n",
            "\r",
            "\r\n",
            "a",
            "x = 1;",
            "é",
            "漢字",
            "😀",
            "\u{ffff}",
            &"long line ".repeat(15),
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..500 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for _ in 0..seed % 60 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            assert_eq!(
                line_hashes(&text),
                as_the_action_writes_it(&text),
                "{text:?}"
            );
        }
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
