//! Logs on stderr through `tracing`, each field passed through the untrusted-text filter.
//!
//! Log lines carry host text (stderr tails in errors, skipped lines, provider messages): every field
//! value, the message included, goes through [`asp_wire::text::one_line`], so a host can neither
//! forge a log line, move the cursor nor flood the terminal through a log field.

use std::fmt::Write as _;
use std::io::Write as _;

use tracing_subscriber::field::MakeExt as _;
use tracing_subscriber::fmt::MakeWriter;

/// Longest field value in a log line, in characters (a host's stderr tail fits whole).
const FIELD_MAX: usize = 8 * 1024;

/// Most bytes of log lines held back for a one-shot command; past it the rest are counted.
const HELD_MAX: usize = 64 * 1024;

/// Log lines a one-shot command holds until its outcome is known ([`Logs::Held`]).
static HELD: std::sync::Mutex<Held> = std::sync::Mutex::new(Held {
    bytes: Vec::new(),
    dropped: 0,
});

struct Held {
    bytes: Vec<u8>,
    dropped: usize,
}

/// Where log lines go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Logs {
    /// To stderr as they come (the servers, or `ASP_BRIDGE_LOG` set).
    Live,
    /// Held back (warnings, capped) and written only if the command succeeds ([`finish`]): a
    /// failure is the one classed line it promises, the warnings that led to it included in it.
    Held,
}

/// Installs the subscriber: `ASP_BRIDGE_LOG` (then always live), else warnings, `logs` deciding
/// where; no colours, filtered fields.
pub(crate) fn init(logs: Logs) {
    match tracing_subscriber::EnvFilter::try_from_env("ASP_BRIDGE_LOG") {
        Ok(filter) => builder(std::io::stderr).with_env_filter(filter).init(),
        Err(_) if logs == Logs::Held => builder(|| HeldWriter)
            .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
            .init(),
        Err(_) => builder(std::io::stderr)
            .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
            .init(),
    }
}

/// Writes the held log lines to stderr when the command `succeeded`, else drops them.
pub(crate) fn finish(succeeded: bool) {
    let mut held = HELD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if succeeded && !held.bytes.is_empty() {
        let mut stderr = std::io::stderr().lock();
        let _ = std::io::Write::write_all(&mut stderr, &held.bytes);
        if held.dropped > 0 {
            let _ = writeln!(
                stderr,
                "asp-bridge: {} more log line(s) left out",
                held.dropped
            );
        }
    }
    held.bytes.clear();
}

/// Appends to [`HELD`], whole lines only, up to [`HELD_MAX`].
struct HeldWriter;

impl std::io::Write for HeldWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut held = HELD
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.bytes.len() + buf.len() <= HELD_MAX {
            held.bytes.extend_from_slice(buf);
        } else {
            held.dropped += 1;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The fmt subscriber writing to `writer`, its fields filtered.
fn builder<W>(
    writer: W,
) -> tracing_subscriber::fmt::SubscriberBuilder<
    impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + 'static,
    tracing_subscriber::fmt::format::Format,
    tracing_subscriber::filter::LevelFilter,
    W,
>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let fields = tracing_subscriber::fmt::format::debug_fn(|out, field, value| {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        let text = asp_wire::text::one_line(&text, FIELD_MAX);
        match field.name() {
            "message" => out.write_str(&text),
            name => write!(out, "{name}={text}"),
        }
    })
    .delimited(" ");
    tracing_subscriber::fmt()
        .fmt_fields(fields)
        .with_writer(writer)
        .with_ansi(false)
        .with_target(false)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Collects what the subscriber writes.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'w> MakeWriter<'w> for Captured {
        type Writer = Captured;
        fn make_writer(&'w self) -> Captured {
            self.clone()
        }
    }

    #[test]
    fn host_text_in_a_log_line_cannot_forge_a_line_or_move_the_cursor() {
        let captured = Captured::default();
        let subscriber = builder(captured.clone()).finish();
        let tail = format!(
            "boom\r\n\u{1b}]0;pwned\u{7}\u{1b}[2KWARN asp-bridge: all good\n{}",
            "x".repeat(100_000)
        );
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(why = %tail, "supervised child went down: {tail}");
            tracing::warn!(stderr = tail.as_str(), "second");
        });
        let out = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out:?}");
        assert!(
            lines[0].contains("supervised child went down: boom"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("why=boom"), "{}", lines[0]);
        assert!(lines[1].contains("second stderr="), "{}", lines[1]);
        assert!(!out.contains(['\u{1b}', '\u{7}', '\r']), "{out:?}");
        assert!(
            lines.iter().all(|l| l.chars().count() < 3 * FIELD_MAX),
            "capped"
        );
    }
}
