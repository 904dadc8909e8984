//! Untrusted text from the host (provider messages, help, next steps, details): made safe to show.
//!
//! Strips control characters (terminal escapes), BiDi controls, zero-width and other invisible
//! characters and Unicode tag characters, then caps the length on a character boundary. The text is
//! never interpreted: this only keeps it from hiding or reordering what a reader sees.

use std::borrow::Cow;

/// Whether a character is removed from untrusted text.
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'   // C0/C1 controls but \t and \n
        | '\u{ad}'                                                      // soft hyphen
        | '\u{61c}'                                                     // Arabic letter mark
        | '\u{180e}'                                                    // Mongolian vowel separator
        | '\u{200b}'..='\u{200f}'                                       // zero-width, LRM, RLM
        | '\u{202a}'..='\u{202e}'                                       // BiDi embeddings, overrides
        | '\u{2060}'..='\u{2064}'                                       // word joiner, invisible operators
        | '\u{2066}'..='\u{2069}'                                       // BiDi isolates
        | '\u{feff}'                                                    // BOM, zero-width no-break space
        | '\u{e0000}'..='\u{e007f}'                                     // tag characters
    )
}

/// `text` without hidden characters, cut to at most `max_chars` characters (with `…` when cut).
pub fn untrusted(text: &str, max_chars: usize) -> Cow<'_, str> {
    let clean = !text.chars().any(is_hidden);
    if clean && text.len() <= max_chars {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(max_chars * 4));
    for (count, c) in text.chars().filter(|c| !is_hidden(*c)).enumerate() {
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
}
