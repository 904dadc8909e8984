//! Small value checks and formats the conversion needs: semantic versions, RFC 3339 times, untrusted
//! text made safe for a dashboard, and Markdown escaping.

use std::time::SystemTime;

use chrono::{DateTime, SecondsFormat, Utc};

/// Untrusted host text without hidden or BiDi characters, capped at `max` characters; `fallback` when
/// nothing is left.
pub(crate) fn clean(text: &str, max: usize, fallback: &str) -> String {
    let text = asp_wire::text::untrusted(text.trim(), max);
    if text.trim().is_empty() {
        fallback.to_owned()
    } else {
        text.into_owned()
    }
}

/// Whether `version` is a Semantic Versioning 2.0.0 version.
pub(crate) fn is_semver(version: &str) -> bool {
    semver::Version::parse(version).is_ok()
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for a moment (UTC).
pub(crate) fn utc(time: SystemTime) -> String {
    DateTime::<Utc>::from(time).to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Whether `text` is an RFC 3339 `date-time` (what the SARIF schema's `format` asks for).
pub(crate) fn is_date_time(text: &str) -> bool {
    DateTime::parse_from_rfc3339(text).is_ok()
}

/// Plain text made literal in Markdown: every character Markdown or HTML could interpret is escaped.
pub(crate) fn markdown_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`'
                | '*'
                | '_'
                | '{'
                | '}'
                | '['
                | ']'
                | '<'
                | '>'
                | '('
                | ')'
                | '#'
                | '+'
                | '-'
                | '.'
                | '!'
                | '|'
                | '~'
                | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether `href` can be a `helpUri`: an absolute http(s) URI without spaces or controls.
pub(crate) fn is_web_uri(href: &str) -> bool {
    let lower = href.get(..8).unwrap_or(href).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://"))
        && href.len() > 8
        && href.chars().all(|c| c.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn semantic_versions_are_recognised() {
        for ok in [
            "0.1.0",
            "1.2.3",
            "0.1.0-private",
            "0.1.0-alpha.0",
            "1.0.0+build.7",
            "10.20.30-rc.1+x",
        ] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in [
            "",
            "1",
            "1.2",
            "v1.2.3",
            "01.2.3",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3+",
            "1.2.3.4",
            "1.2.x",
            "1.2.3-a..b",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn times_are_utc_with_milliseconds() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_782_172_800_123);
        assert_eq!(utc(t), "2026-06-23T00:00:00.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_825_600);
        assert_eq!(utc(leap), "2000-02-29T12:00:00.000Z");
        assert!(is_date_time(&utc(SystemTime::now())));
    }

    #[test]
    fn date_times_are_checked_before_they_are_written() {
        for ok in [
            "2026-06-23T00:00:00Z",
            "2026-06-23T00:00:00.5+02:00",
            "2026-06-23t10:11:12z",
        ] {
            assert!(is_date_time(ok), "{ok}");
        }
        for bad in [
            "",
            "2026-06-23",
            "2026-06-23T00:00:00",
            "2026-13-01T00:00:00Z",
            "yesterday",
            "2026-06-23T00:00:00.Z",
            "2026-06-23T25:00:00Z",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }

    #[test]
    fn untrusted_text_loses_hidden_characters_and_never_ends_empty() {
        assert_eq!(clean("a\u{202e}b\u{200b}", 100, "-"), "ab");
        assert_eq!(clean("\u{202e}  ", 100, "(none)"), "(none)");
        assert_eq!(clean("abcdef", 3, "-"), "ab…");
    }

    #[test]
    fn markdown_is_escaped_so_help_cannot_inject_links_or_html() {
        assert_eq!(
            markdown_escape("[x](http://e) <img> *a*"),
            r"\[x\]\(http://e\) \<img\> \*a\*"
        );
    }

    #[test]
    fn only_web_uris_become_help_uris() {
        assert!(is_web_uri("https://example.test/rules/1"));
        assert!(!is_web_uri("https://"));
        assert!(!is_web_uri("javascript:alert(1)"));
        assert!(!is_web_uri("https://a b"));
        assert!(!is_web_uri("docs/rule.md"));
    }
}
