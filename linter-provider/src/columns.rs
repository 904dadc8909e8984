//! A linter's columns, in the unit it counts them in, made 0-based UTF-16 offsets on the real line
//! text (what ASP, LSP and SARIF consumers expect). ruff and shellcheck count code points, bandit
//! and semgrep UTF-8 bytes, ESLint UTF-16 code units, and hadolint gives lines only.

/// The unit a linter counts its 1-based columns in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Utf16,
    /// Unicode code points.
    Unicode,
    Utf8,
    /// The tool gives lines only: every finding starts at the line's first column.
    Lines,
}

impl Unit {
    /// The unit a configuration names (`utf16 | unicode | utf8 | lines`).
    pub fn parse(name: &str) -> Option<Unit> {
        match name {
            "utf16" => Some(Unit::Utf16),
            "unicode" => Some(Unit::Unicode),
            "utf8" => Some(Unit::Utf8),
            "lines" => Some(Unit::Lines),
            _ => None,
        }
    }

    /// A unit that counts columns: a lines-only tool's line ends are measured in UTF-16.
    pub(crate) fn counting(self) -> Unit {
        if self == Unit::Lines {
            Unit::Utf16
        } else {
            self
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Utf16 => "utf16",
            Unit::Unicode => "unicode",
            Unit::Utf8 => "utf8",
            Unit::Lines => "lines",
        }
    }
}

/// The 0-based UTF-16 offset of the 1-based `column`, counted in `unit`, on `line` (its text
/// without the line ending). A column past the end is clamped to the end, one inside a character
/// (a UTF-8 byte or a UTF-16 unit within it) moves back to the character's start, and column 0 or
/// none is the line's start.
pub fn to_utf16(line: &str, column: u64, unit: Unit) -> u32 {
    let skip = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    let mut units = 0usize;
    let mut counted = 0usize;
    for c in line.chars() {
        let width = match unit {
            Unit::Lines => return 0,
            Unit::Unicode => 1,
            Unit::Utf8 => c.len_utf8(),
            Unit::Utf16 => c.len_utf16(),
        };
        if counted + width > skip {
            break;
        }
        counted += width;
        units += c.len_utf16();
    }
    u32::try_from(units).unwrap_or(u32::MAX)
}

/// A file's text as lines (read as UTF-8, lossily), split once: each finding's line is then found
/// without reading the file again.
pub struct Lines<'a> {
    text: std::borrow::Cow<'a, str>,
    /// Where each piece between line feeds starts; the last piece runs to the end.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(bytes: &'a [u8]) -> Lines<'a> {
        let text = provider_kit::text::lossy(bytes);
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        Lines { text, starts }
    }

    /// The text of the 0-based line `line`, without its line ending (`\n` or `\r\n`); `None` past
    /// the last line.
    pub fn get(&self, line: usize) -> Option<&str> {
        let start = *self.starts.get(line)?;
        let last = line + 1 == self.starts.len();
        // The empty piece after a final newline is no line.
        if last && self.text.ends_with('\n') {
            return None;
        }
        let end = self
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |next| next - 1);
        let found = &self.text[start..end];
        Some(found.strip_suffix('\r').unwrap_or(found))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x = "😀é"; y` with the finding at `y`: after an emoji (2 UTF-16 units, 4 UTF-8 bytes, 1 code
    /// point) and an accented letter (1 unit, 2 bytes, 1 code point).
    const LINE: &str = "x = \"😀é\"; y";

    #[test]
    fn each_unit_lands_on_the_same_character() {
        // `y` is code point 11 (1-based), UTF-8 byte 15, UTF-16 unit 12; 0-based UTF-16 offset 11.
        assert_eq!(to_utf16(LINE, 11, Unit::Unicode), 11);
        assert_eq!(to_utf16(LINE, 15, Unit::Utf8), 11);
        assert_eq!(to_utf16(LINE, 12, Unit::Utf16), 11);
        assert_eq!(to_utf16(LINE, 11, Unit::Lines), 0);
    }

    #[test]
    fn a_column_past_the_end_is_clamped_and_one_inside_a_character_moves_to_its_start() {
        let end = LINE.encode_utf16().count() as u32;
        assert_eq!(to_utf16(LINE, 500, Unit::Unicode), end);
        assert_eq!(to_utf16(LINE, u64::MAX, Unit::Utf8), end);
        // UTF-8 byte 7 (1-based) is inside the emoji that starts at byte 6: its start, offset 5.
        assert_eq!(to_utf16(LINE, 7, Unit::Utf8), 5);
        // UTF-16 unit 7 is the emoji's low surrogate: its start, offset 5.
        assert_eq!(to_utf16(LINE, 7, Unit::Utf16), 5);
        assert_eq!(to_utf16(LINE, 0, Unit::Unicode), 0);
        assert_eq!(to_utf16("", 3, Unit::Unicode), 0);
    }

    #[test]
    fn lines_are_found_without_their_endings() {
        let line_of = |text: &str, line| Lines::new(text.as_bytes()).get(line).map(str::to_owned);
        let text = "one\r\ntwo\nthree\n";
        assert_eq!(line_of(text, 0).as_deref(), Some("one"));
        assert_eq!(line_of(text, 1).as_deref(), Some("two"));
        assert_eq!(line_of(text, 2).as_deref(), Some("three"));
        assert_eq!(line_of(text, 3), None);
        assert_eq!(line_of("no newline", 0).as_deref(), Some("no newline"));
        assert_eq!(line_of("a\n\nb", 1).as_deref(), Some(""));
        for unit in ["utf16", "unicode", "utf8", "lines"] {
            assert_eq!(Unit::parse(unit).map(Unit::as_str), Some(unit));
        }
        assert_eq!(Unit::parse("bytes"), None);
    }
}
