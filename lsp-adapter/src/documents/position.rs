//! Position math: a text with its line starts, LSP positions in UTF-8 or UTF-16 code units, byte
//! offsets, and how a range moves across an edit.
//!
//! Lines end at `\n`, `\r\n` or `\r`, as in LSP. Positions past the end of a line or of the text are
//! clamped when they address the text, and a column inside a character means that character's start.

use tower_lsp_server::ls_types::{Position, Range};

/// The unit of `Position.character` negotiated with the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    fn width(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
        }
    }

    /// The length of `text` in this unit.
    pub(crate) fn len(self, text: &str) -> u32 {
        match self {
            Encoding::Utf8 => u32::try_from(text.len()).unwrap_or(u32::MAX),
            Encoding::Utf16 => text
                .chars()
                .fold(0u32, |n, c| n.saturating_add(c.len_utf16() as u32)),
        }
    }
}

/// A document's text and the byte offset where each of its lines starts.
#[derive(Clone, Debug, Default)]
pub(crate) struct Text {
    text: String,
    starts: Vec<usize>,
}

fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => starts.push(i + 1),
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                i += 1;
                starts.push(i + 1);
            }
            b'\r' => starts.push(i + 1),
            _ => {}
        }
        i += 1;
    }
    starts
}

/// `text` without its trailing line break.
fn without_break(text: &str) -> &str {
    text.strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .or_else(|| text.strip_suffix('\r'))
        .unwrap_or(text)
}

impl Text {
    pub(crate) fn new(text: String) -> Text {
        let starts = line_starts(&text);
        Text { text, starts }
    }

    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The content of a line without its line break; `None` past the last line.
    pub(crate) fn line(&self, line: u32) -> Option<&str> {
        let line = line as usize;
        let start = *self.starts.get(line)?;
        let end = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        Some(without_break(&self.text[start..end]))
    }

    /// The byte offset of `pos`, clamped into the text and onto a character boundary.
    pub(crate) fn offset(&self, pos: Position, encoding: Encoding) -> usize {
        let Some(content) = self.line(pos.line) else {
            return self.text.len();
        };
        let start = self.starts[pos.line as usize];
        let mut units = 0u32;
        for (at, c) in content.char_indices() {
            let width = encoding.width(c);
            if units + width > pos.character {
                return start + at;
            }
            units += width;
        }
        start + content.len()
    }

    /// The position of a byte offset that lies on a character boundary.
    pub(crate) fn position(&self, offset: usize, encoding: Encoding) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let prefix = self.text.get(start..offset).unwrap_or_default();
        Position::new(line as u32, encoding.len(prefix))
    }

    /// Replaces a byte range (on character boundaries) with `with`.
    pub(crate) fn replace(&mut self, range: std::ops::Range<usize>, with: &str) {
        self.text.replace_range(range, with);
        self.starts = line_starts(&self.text);
    }

    /// A column given in UTF-16 code units on `line`, in `encoding`. Columns past the end of the
    /// line keep their excess, and lines past the end of the text are left as they are.
    pub(crate) fn column_from_utf16(&self, line: u32, column: u32, encoding: Encoding) -> u32 {
        if encoding == Encoding::Utf16 {
            return column;
        }
        let Some(content) = self.line(line) else {
            return column;
        };
        let (mut utf16, mut out) = (0u32, 0u32);
        for c in content.chars() {
            let width = c.len_utf16() as u32;
            if utf16 + width > column {
                return out;
            }
            utf16 += width;
            out += encoding.width(c);
        }
        // Saturating: a host column near `u32::MAX` past a multi-byte character would overflow.
        out.saturating_add(column - utf16)
    }

    /// Whether `pos` addresses a place in this text.
    pub(crate) fn fits(&self, pos: Position, encoding: Encoding) -> bool {
        self.line(pos.line)
            .is_some_and(|content| pos.character <= encoding.len(content))
    }

    /// The byte range of the longest common prefix and suffix `self` and `new` leave out: the one
    /// edit that turns `self` into `new`, on character boundaries.
    pub(crate) fn difference(&self, new: &str) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let old = self.text.as_str();
        let prefix = old
            .char_indices()
            .zip(new.chars())
            .find(|((_, a), b)| a != b)
            .map_or(old.len().min(new.len()), |((at, _), _)| at);
        let prefix = floor_boundary(old, prefix.min(new.len())).min(floor_boundary(new, prefix));
        let room = old.len().min(new.len()) - prefix;
        let suffix = old[prefix..]
            .chars()
            .rev()
            .zip(new[prefix..].chars().rev())
            .take_while(|(a, b)| a == b)
            .map(|(c, _)| c.len_utf8())
            .scan(0usize, |sum, n| {
                *sum += n;
                Some(*sum)
            })
            .take_while(|sum| *sum <= room)
            .last()
            .unwrap_or(0);
        (prefix..old.len() - suffix, prefix..new.len() - suffix)
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// One edit in the client's coordinates: the range it replaced and the shape of what it inserted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edit {
    pub(crate) range: Range,
    /// Line breaks in the inserted text.
    lines: u32,
    /// Length of the inserted text after its last line break (all of it when it has none).
    last: u32,
}

impl Edit {
    pub(crate) fn new(range: Range, inserted: &str, encoding: Encoding) -> Edit {
        let starts = line_starts(inserted);
        let tail = &inserted[*starts.last().unwrap_or(&0)..];
        Edit {
            range,
            lines: (starts.len() - 1) as u32,
            last: encoding.len(tail),
        }
    }

    /// Where a position at or after the end of the replaced range moves to.
    fn shift(&self, pos: Position) -> Position {
        let Range { start, end } = self.range;
        if pos.line == end.line {
            let rest = pos.character.saturating_sub(end.character);
            if self.lines == 0 {
                Position::new(start.line, start.character + self.last + rest)
            } else {
                Position::new(start.line + self.lines, self.last + rest)
            }
        } else {
            Position::new(
                pos.line - (end.line - start.line) + self.lines,
                pos.character,
            )
        }
    }

    /// Where a diagnostic's range moves: unchanged before the edit, shifted after it, stretched
    /// when the edit lies inside it; `None` when the edit cuts across one of its ends.
    pub(crate) fn move_range(&self, range: Range) -> Option<Range> {
        let Range { start, end } = self.range;
        if range.end <= start {
            Some(range)
        } else if range.start >= end {
            Some(Range::new(self.shift(range.start), self.shift(range.end)))
        } else if start >= range.start && end <= range.end {
            let moved = Range::new(range.start, self.shift(range.end));
            (moved.start < moved.end).then_some(moved)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    fn range(a: (u32, u32), b: (u32, u32)) -> Range {
        Range::new(pos(a.0, a.1), pos(b.0, b.1))
    }

    /// The range from `start` to `end` as `edit` moves it, in the same `(line, character)` pairs;
    /// `None` when the edit drops it.
    fn moved(edit: &Edit, start: (u32, u32), end: (u32, u32)) -> Option<[(u32, u32); 2]> {
        let moved = edit.move_range(range(start, end))?;
        Some([
            (moved.start.line, moved.start.character),
            (moved.end.line, moved.end.character),
        ])
    }

    #[test]
    fn lines_end_at_lf_crlf_and_cr() {
        let text = Text::new("a\nbb\r\nccc\rd".into());
        let lines: Vec<_> = (0..5).map(|n| text.line(n)).collect();
        assert_eq!(lines, [Some("a"), Some("bb"), Some("ccc"), Some("d"), None]);
    }

    #[test]
    fn emoji_and_cjk_columns_in_both_encodings() {
        // 😀 is 2 UTF-16 units and 4 bytes; 漢 and 字 are 1 unit and 3 bytes each.
        let text = Text::new("x\n😀漢字 key\n".into());
        assert_eq!(text.column_from_utf16(1, 5, Encoding::Utf8), 11);
        assert_eq!(text.column_from_utf16(1, 5, Encoding::Utf16), 5);
        assert_eq!(text.offset(pos(1, 5), Encoding::Utf16), 2 + 11);
        assert_eq!(text.offset(pos(1, 11), Encoding::Utf8), 2 + 11);
        assert_eq!(text.position(2 + 11, Encoding::Utf16), pos(1, 5));
        assert_eq!(text.position(2 + 11, Encoding::Utf8), pos(1, 11));
    }

    #[test]
    fn a_column_inside_a_character_means_its_start_and_past_the_end_is_clamped() {
        let text = Text::new("😀ab".into());
        assert_eq!(text.offset(pos(0, 1), Encoding::Utf16), 0);
        assert_eq!(text.offset(pos(0, 99), Encoding::Utf16), 6);
        assert_eq!(text.offset(pos(7, 0), Encoding::Utf16), 6);
        assert_eq!(text.column_from_utf16(0, 1, Encoding::Utf8), 0);
        assert_eq!(
            text.column_from_utf16(0, 6, Encoding::Utf8),
            8,
            "the excess is kept"
        );
        assert!(text.fits(pos(0, 4), Encoding::Utf16));
        assert!(!text.fits(pos(0, 5), Encoding::Utf16));
        assert!(!text.fits(pos(1, 0), Encoding::Utf16));
    }

    #[test]
    fn a_range_after_an_insertion_moves_down_and_right() {
        let newline = Edit::new(range((0, 0), (0, 0)), "\n", Encoding::Utf16);
        assert_eq!(moved(&newline, (2, 4), (2, 10)), Some([(3, 4), (3, 10)]));
        let two_chars = Edit::new(range((3, 0), (3, 0)), "xx", Encoding::Utf16);
        assert_eq!(moved(&two_chars, (3, 4), (3, 10)), Some([(3, 6), (3, 12)]));
        let emoji = Edit::new(range((3, 0), (3, 0)), "😀", Encoding::Utf16);
        assert_eq!(moved(&emoji, (3, 4), (3, 10)), Some([(3, 6), (3, 12)]));
        let emoji = Edit::new(range((3, 0), (3, 0)), "😀", Encoding::Utf8);
        assert_eq!(moved(&emoji, (3, 4), (3, 10)), Some([(3, 8), (3, 14)]));
    }

    #[test]
    fn joining_lines_moves_a_range_up_onto_the_joined_line() {
        // Deleting from 1:3 to 2:1 joins line 2 (minus its first char) onto line 1.
        let join = Edit::new(range((1, 3), (2, 1)), "", Encoding::Utf16);
        assert_eq!(moved(&join, (2, 5), (2, 8)), Some([(1, 7), (1, 10)]));
        assert_eq!(moved(&join, (4, 0), (4, 2)), Some([(3, 0), (3, 2)]));
        assert_eq!(moved(&join, (0, 0), (1, 3)), Some([(0, 0), (1, 3)]));
    }

    #[test]
    fn an_edit_inside_a_range_stretches_it_and_one_across_its_end_drops_it() {
        let inside = Edit::new(range((2, 6), (2, 6)), "abc", Encoding::Utf16);
        assert_eq!(moved(&inside, (2, 4), (2, 10)), Some([(2, 4), (2, 13)]));
        let across = Edit::new(range((2, 8), (2, 12)), "", Encoding::Utf16);
        assert_eq!(moved(&across, (2, 4), (2, 10)), None);
        let all = Edit::new(range((2, 4), (2, 10)), "", Encoding::Utf16);
        assert_eq!(moved(&all, (2, 4), (2, 10)), None);
        let at_end = Edit::new(range((2, 10), (2, 10)), "z", Encoding::Utf16);
        assert_eq!(moved(&at_end, (2, 4), (2, 10)), Some([(2, 4), (2, 10)]));
    }

    #[test]
    fn the_difference_of_two_texts_is_one_edit_on_character_boundaries() {
        let text = Text::new("let 😀 = 1;\n".into());
        let (old, new) = text.difference("let 😁 = 1;\n");
        assert_eq!((old, new), (4..8, 4..8));
        let (old, new) = text.difference("let 😀 = 1;\nmore\n");
        assert_eq!((old, new), (14..14, 14..19));
        let (old, new) = Text::new("aaa".into()).difference("aa");
        assert_eq!((old, new), (2..3, 2..2));
        let (old, new) = Text::new(String::new()).difference("x");
        assert_eq!((old, new), (0..0, 0..1));
    }
}
