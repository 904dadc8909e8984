//! Text as the protocol sees it: lines (ended by LF, CRLF or a lone CR, as in LSP) and 0-based
//! positions whose character offset counts UTF-16 code units.

use std::borrow::Cow;

use serde::Serialize;

/// `bytes` read as UTF-8, invalid sequences as U+FFFD; valid text (the usual case) is borrowed,
/// checked by the standard library's word-at-a-time validation rather than the lossy decoder's
/// byte-at-a-time one.
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    std::str::from_utf8(bytes).map_or_else(|_| String::from_utf8_lossy(bytes), Cow::Borrowed)
}

/// How a line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    Lf,
    CrLf,
    Cr,
    /// The last line of a file without a final newline.
    None,
}

impl Ending {
    pub fn name(self) -> &'static str {
        match self {
            Ending::Lf => "LF",
            Ending::CrLf => "CRLF",
            Ending::Cr => "CR",
            Ending::None => "no line ending",
        }
    }
}

/// One line: byte offsets into the text, without and with its ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub start: usize,
    /// Where the content ends and the line ending begins.
    pub content_end: usize,
    pub ending: Ending,
}

/// A 0-based position; `char` counts UTF-16 code units from the start of the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Position {
    pub line: u32,
    pub char: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

/// A UTF-8 document split into lines.
#[derive(Debug)]
pub struct Text<'a> {
    pub text: &'a str,
    pub lines: Vec<Line>,
}

impl<'a> Text<'a> {
    pub fn new(text: &'a str) -> Text<'a> {
        let bytes = text.as_bytes();
        let mut lines = Vec::new();
        let mut start = 0;
        let mut at = 0;
        while at < bytes.len() {
            let (ending, width) = match bytes[at] {
                b'\n' => (Ending::Lf, 1),
                b'\r' if bytes.get(at + 1) == Some(&b'\n') => (Ending::CrLf, 2),
                b'\r' => (Ending::Cr, 1),
                _ => {
                    at += 1;
                    continue;
                }
            };
            lines.push(Line {
                start,
                content_end: at,
                ending,
            });
            at += width;
            start = at;
        }
        if start < bytes.len() {
            lines.push(Line {
                start,
                content_end: bytes.len(),
                ending: Ending::None,
            });
        }
        Text { text, lines }
    }

    /// The content of line `index`, without its ending.
    pub fn content(&self, index: usize) -> &'a str {
        let line = self.lines[index];
        &self.text[line.start..line.content_end]
    }

    /// The content of line `index` with its ending.
    pub fn with_ending(&self, index: usize) -> &'a str {
        let end = self
            .lines
            .get(index + 1)
            .map_or(self.text.len(), |next| next.start);
        &self.text[self.lines[index].start..end]
    }

    /// The position of byte `offset` (clamped to the text, moved back to a character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let index = self.line_of(offset);
        match self.lines.get(index) {
            None => Position { line: 0, char: 0 },
            Some(line) if offset > line.content_end && line.ending != Ending::None => {
                // Inside a CRLF: the position after the content.
                Position {
                    line: index as u32,
                    char: utf16_len(&self.text[line.start..line.content_end]),
                }
            }
            Some(line) => Position {
                line: index as u32,
                char: utf16_len(&self.text[line.start..offset]),
            },
        }
    }

    /// The line of byte `offset`: the last line starting at or before it (a line ending belongs to
    /// its line).
    pub fn line_of(&self, offset: usize) -> usize {
        self.lines
            .partition_point(|line| line.start <= offset)
            .saturating_sub(1)
    }

    /// The range of bytes `start..end` of the text.
    pub fn range(&self, start: usize, end: usize) -> Range {
        Range {
            start: self.position(start),
            end: self.position(end.max(start)),
        }
    }

    /// The range of line `index`'s content.
    pub fn line_range(&self, index: usize) -> Range {
        let line = self.lines[index];
        self.range(line.start, line.content_end)
    }
}

/// UTF-16 columns of byte offsets on one line, each counted on from the offset asked before it,
/// so that offsets asked in increasing order cost one pass over the line in all.
#[derive(Debug)]
pub struct Columns<'a> {
    line: u32,
    content: &'a str,
    /// The byte offset counted up to, and its column.
    at: usize,
    units: u32,
}

impl Columns<'_> {
    /// The position of byte `offset` of the line's content (clamped to it, moved back to a
    /// character boundary); an offset before the last one asked counts again from the start.
    pub fn position(&mut self, offset: usize) -> Position {
        let mut offset = offset.min(self.content.len());
        while !self.content.is_char_boundary(offset) {
            offset -= 1;
        }
        if offset < self.at {
            (self.at, self.units) = (0, 0);
        }
        self.units += utf16_len(&self.content[self.at..offset]);
        self.at = offset;
        Position {
            line: self.line,
            char: self.units,
        }
    }
}

impl<'a> Text<'a> {
    /// Columns on line `index`'s content ([`Columns`]).
    pub fn columns(&self, index: usize) -> Columns<'a> {
        Columns {
            line: index as u32,
            content: self.content(index),
            at: 0,
            units: 0,
        }
    }
}

/// Length of `text` in UTF-16 code units.
pub fn utf16_len(text: &str) -> u32 {
    text.chars().map(|c| c.len_utf16() as u32).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, char: u32) -> Position {
        Position { line, char }
    }

    #[test]
    fn lines_end_with_lf_crlf_or_a_lone_cr() {
        let text = Text::new("a\nb\r\nc\rd");
        let endings: Vec<_> = text.lines.iter().map(|l| l.ending).collect();
        assert_eq!(
            endings,
            [Ending::Lf, Ending::CrLf, Ending::Cr, Ending::None]
        );
        let contents: Vec<_> = (0..4).map(|i| text.content(i)).collect();
        assert_eq!(contents, ["a", "b", "c", "d"]);
        assert_eq!(text.with_ending(1), "b\r\n");
    }

    #[test]
    fn a_final_newline_opens_no_empty_line() {
        assert_eq!(Text::new("a\n").lines.len(), 1);
        assert_eq!(Text::new("").lines.len(), 0);
    }

    #[test]
    fn positions_count_utf16_code_units() {
        // é is 2 bytes and 1 unit; 😀 is 4 bytes and 2 units.
        let text = Text::new("é😀x\nab");
        assert_eq!(text.position(0), pos(0, 0));
        assert_eq!(text.position(2), pos(0, 1));
        assert_eq!(text.position(6), pos(0, 3));
        assert_eq!(text.position(7), pos(0, 4));
        assert_eq!(text.position(8), pos(1, 0));
        assert_eq!(text.position(10), pos(1, 2));
        assert_eq!(text.position(99), pos(1, 2), "clamped to the end");
        assert_eq!(text.position(3), pos(0, 1), "inside a character: its start");
    }

    #[test]
    fn columns_asked_in_any_order_are_the_positions_of_their_offsets() {
        let text = Text::new("x\né😀ab😀\n");
        let mut columns = text.columns(1);
        for offset in [0, 2, 6, 7, 8, 2, 12, 99, 3] {
            let expected = text.position(text.lines[1].start + offset.min(12));
            assert_eq!(columns.position(offset), expected, "offset {offset}");
        }
    }

    #[test]
    fn an_offset_inside_crlf_stays_on_its_line() {
        let text = Text::new("ab\r\ncd");
        assert_eq!(text.position(3), pos(0, 2));
        assert_eq!(text.position(4), pos(1, 0));
    }
}
