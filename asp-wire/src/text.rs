//! Untrusted text from the host (provider messages, help, next steps, details, identifiers, error
//! messages, stderr): made safe to show. The one filter every front end uses for every host string.
//!
//! [`untrusted`] strips control characters (terminal escapes, BEL, CR) but tab and line feed, every
//! Unicode default-ignorable code point (zero-width characters, BiDi controls, variation selectors,
//! Hangul fillers, tag characters…), the braille blank and the line and paragraph separators, then
//! caps the length on a character boundary. [`one_line`] does the same and also turns line feeds and
//! tabs into spaces, for text that must stay on one line (a terminal line, an identifier, a log
//! line): a host can then neither forge a line of its own nor move the cursor. The text is never
//! interpreted: this only keeps it from hiding or reordering what a reader sees.

use std::borrow::Cow;

/// Whether a character is removed from untrusted text: a control character but tab and line feed,
/// a default-ignorable code point (Unicode `DerivedCoreProperties.txt`, which includes every BiDi
/// control), or one of the blank-looking characters that are not ignorable but show nothing.
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'   // C0/C1 controls but \t and \n
        | '\u{ad}'                                                      // soft hyphen
        | '\u{34f}'                                                     // combining grapheme joiner
        | '\u{61c}'                                                     // Arabic letter mark
        | '\u{115f}' | '\u{1160}'                                       // Hangul choseong/jungseong fillers
        | '\u{17b4}' | '\u{17b5}'                                       // Khmer inherent vowels
        | '\u{180b}'..='\u{180f}'                                       // Mongolian variation selectors, vowel separator
        | '\u{200b}'..='\u{200f}'                                       // zero-width, LRM, RLM
        | '\u{2028}' | '\u{2029}'                                       // line and paragraph separators
        | '\u{202a}'..='\u{202e}'                                       // BiDi embeddings, overrides
        | '\u{2060}'..='\u{206f}'                                       // word joiner, invisible operators, isolates, deprecated format
        | '\u{2800}'                                                    // braille pattern blank
        | '\u{3164}'                                                    // Hangul filler
        | '\u{fe00}'..='\u{fe0f}'                                       // variation selectors
        | '\u{feff}'                                                    // BOM, zero-width no-break space
        | '\u{ffa0}'                                                    // halfwidth Hangul filler
        | '\u{fff0}'..='\u{fffb}'                                       // unassigned specials, interlinear annotation
        | '\u{1bca0}'..='\u{1bca3}'                                     // shorthand format controls
        | '\u{1d173}'..='\u{1d17a}'                                     // musical symbol format controls
        | '\u{e0000}'..='\u{e0fff}'                                     // tags, variation selectors supplement
    )
}

/// `text` without hidden characters, cut to at most `max_chars` characters (with `…` when cut).
/// Line feeds and tabs are kept.
pub fn untrusted(text: &str, max_chars: usize) -> Cow<'_, str> {
    filter(text, max_chars, false)
}

/// [`untrusted`] on one line: line feeds and tabs become spaces as well.
pub fn one_line(text: &str, max_chars: usize) -> Cow<'_, str> {
    filter(text, max_chars, true)
}

fn filter(text: &str, max_chars: usize, one_line: bool) -> Cow<'_, str> {
    let breaks = |c: char| one_line && matches!(c, '\n' | '\t');
    // Printable ASCII (and, unless one line, tab and line feed) is clean: most text is only that,
    // and a byte test is much cheaper than a look-up of each character.
    let plain = |b: u8| matches!(b, b' '..=b'~') || (!one_line && matches!(b, b'\n' | b'\t'));
    let clean = text.bytes().all(plain) || !text.chars().any(|c| is_hidden(c) || breaks(c));
    if clean && text.len() <= max_chars {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(max_chars.saturating_mul(4)));
    let kept = text
        .chars()
        .filter(|c| !is_hidden(*c))
        .map(|c| if breaks(c) { ' ' } else { c });
    for (count, c) in kept.enumerate() {
        if count == max_chars {
            out.pop();
            out.push('…');
            break;
        }
        out.push(c);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_bidi_invisible_and_escape_characters() {
        let hostile = "ok\u{202e}evil\u{202c} \u{200b}x\u{1b}[31mred\u{e0041}";
        assert_eq!(untrusted(hostile, 100), "okevil x[31mred");
    }

    #[test]
    fn each_ascii_character_is_kept_or_dropped_as_its_class_says() {
        for byte in 0u8..=0x7f {
            let c = char::from(byte);
            let text = format!("a{c}b");
            let kept = |breaks: bool| {
                if is_hidden(c) {
                    "ab".to_owned()
                } else if breaks && matches!(c, '\n' | '\t') {
                    "a b".to_owned()
                } else {
                    text.clone()
                }
            };
            assert_eq!(untrusted(&text, 10), kept(false), "{byte:#x}");
            assert_eq!(one_line(&text, 10), kept(true), "{byte:#x}");
        }
    }

    #[test]
    fn keeps_ordinary_text_borrowed() {
        assert!(matches!(
            untrusted("naïve 漢字 😀\tline\n", 100),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn caps_on_a_character_boundary() {
        assert_eq!(untrusted("😀😀😀😀", 3), "😀😀…");
        assert_eq!(untrusted("abc", 3), "abc");
    }

    #[test]
    fn strips_every_default_ignorable_and_blank_looking_character() {
        for hidden in [
            '\u{fe0f}',
            '\u{fe00}',
            '\u{e0100}',
            '\u{180b}', // variation selectors
            '\u{3164}',
            '\u{115f}',
            '\u{1160}',
            '\u{ffa0}', // Hangul fillers
            '\u{2800}',
            '\u{34f}',
            '\u{2065}',
            '\u{206a}',
            '\u{1d173}',
            '\u{1bca0}',
            '\u{2028}',
            '\u{2029}',
            '\u{7}',
            '\r',
            '\u{9b}',
        ] {
            let text = format!("a{hidden}b");
            assert_eq!(untrusted(&text, 100), "ab", "U+{:04X}", u32::from(hidden));
        }
    }

    #[test]
    fn one_line_text_cannot_forge_a_line_or_move_the_cursor() {
        let forged = "boom\r\n\u{1b}[2Kasp-bridge: ok: host ALLOW\u{7}\tx";
        assert_eq!(
            one_line(forged, 100),
            "boom [2Kasp-bridge: ok: host ALLOW x"
        );
        assert!(matches!(one_line("plain", 100), Cow::Borrowed(_)));
        assert_eq!(one_line(&"x".repeat(50), 10).chars().count(), 10);
    }
}
