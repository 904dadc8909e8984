//! The export: a host decision prepared as one SARIF log ([`crate::to_sarif`]) and written as it
//! is produced ([`crate::writer`]), with a warning past GitHub's gzip upload limit.

use std::io::Write;

use asp_wire::proto::Decision;

use crate::error::{Error, Result};
use crate::options::Options;
use crate::summary::Summary;
use crate::{to_sarif, writer};

/// One SARIF log, ready to write. It borrows the decision: the results are built from its findings
/// one at a time as they are written, never all at once.
pub struct Export<'a> {
    prepared: to_sarif::Prepared<'a>,
    summary: Summary,
    gzip_limit: u64,
    pretty: bool,
}

impl std::fmt::Debug for Export<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Export")
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

/// Converts a host decision into a SARIF log. Blocking when `options.repo` is set (files are read
/// for line hashes while the log is written).
pub fn export<'a>(decision: &'a Decision, options: &'a Options) -> Export<'a> {
    let (prepared, summary) = to_sarif::prepare(decision, options);
    Export {
        prepared,
        summary,
        gzip_limit: options.limits.gzip_bytes,
        pretty: options.pretty,
    }
}

impl Export<'_> {
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The log as a JSON value (for tests: a large log is better written than held).
    pub fn to_json(&self) -> serde_json::Value {
        self.to_bytes()
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// The log as written (see [`Export::write_to`]).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.write_to(&mut bytes)?;
        Ok(bytes)
    }

    /// Writes the log to `out` as it is produced (compact unless [`Options::pretty`], with a final
    /// newline) and returns how many bytes it wrote. Warns (through `tracing`) when its gzip size
    /// would pass GitHub's upload limit. On an error, `out` may hold part of the log: write to a
    /// temporary file and rename it to publish a log only once it is whole.
    pub fn write_to(&self, mut out: impl Write) -> Result<u64> {
        let written = writer::write(&self.prepared, &mut out, self.pretty, self.gzip_limit)
            .map_err(Error::Write)?;
        out.flush().map_err(Error::Write)?;
        if let Some(size) = written.gzip_over {
            tracing::warn!(
                gzip_bytes = size,
                limit = self.gzip_limit,
                "the gzip-compressed SARIF log is {size} bytes: GitHub code scanning rejects \
                 uploads over {} bytes",
                self.gzip_limit
            );
        }
        Ok(written.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, subscriber::Interest};

    /// Keeps the message of every warning.
    #[derive(Default)]
    struct Warnings(Arc<Mutex<Vec<String>>>);

    struct Message(String);

    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl tracing::Subscriber for Warnings {
        fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
            Interest::always()
        }
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            if *event.metadata().level() == tracing::Level::WARN {
                let mut message = Message(String::new());
                event.record(&mut message);
                self.0.lock().unwrap().push(message.0);
            }
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    fn decision(findings: usize) -> Decision {
        let findings: Vec<serde_json::Value> = (0..findings)
            .map(|i| {
                serde_json::json!({"diagnostic": {"code": format!("r/{i}"), "severity": "error",
                    "source": "p", "message": format!("finding {i} {}", i * 7919 % 104_729),
                    "location": {"path": format!("f{i}.rs")}, "fingerprint": format!("{i:x}")}})
            })
            .collect();
        serde_json::from_value(serde_json::json!({"decision": "deny", "findings": findings}))
            .unwrap()
    }

    fn warnings_of(export: &Export<'_>) -> (Vec<u8>, Vec<String>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let subscriber = Warnings(Arc::clone(&seen));
        let bytes = tracing::subscriber::with_default(subscriber, || export.to_bytes().unwrap());
        let seen = seen.lock().unwrap().clone();
        (bytes, seen)
    }

    #[test]
    fn a_log_over_the_gzip_limit_is_written_with_a_warning() {
        let options = crate::options::limited(|l| l.gzip_bytes = 2_000);
        let decision = decision(200);
        let (bytes, warnings) = warnings_of(&export(&decision, &options));
        assert!(bytes.ends_with(b"}\n"), "the log is still written whole");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("GitHub code scanning rejects uploads over 2000 bytes"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_log_within_the_gzip_limit_has_no_warning() {
        let (decision, options) = (decision(200), Options::default());
        let (_, warnings) = warnings_of(&export(&decision, &options));
        assert_eq!(warnings, Vec::<String>::new());
    }

    #[test]
    fn a_log_larger_than_the_limit_that_compresses_within_it_has_no_warning() {
        let decision = decision(200);
        let size = export(&decision, &Options::default())
            .to_bytes()
            .unwrap()
            .len() as u64;
        let options = crate::options::limited(|l| l.gzip_bytes = size / 2);
        let (bytes, warnings) = warnings_of(&export(&decision, &options));
        assert!(bytes.len() as u64 > size / 2, "larger than the limit");
        assert_eq!(warnings, Vec::<String>::new());
    }

    #[test]
    fn writing_sends_the_whole_log_and_a_final_newline() {
        let decision = decision(3);
        let options = Options::default();
        let export = export(&decision, &options);
        let mut out = Vec::new();
        let written = export.write_to(&mut out).unwrap();
        assert_eq!(written, out.len() as u64);
        assert_eq!(out, export.to_bytes().unwrap());
        assert!(out.ends_with(b"}\n"));
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value, export.to_json());
        assert_eq!(value["runs"][0]["results"].as_array().unwrap().len(), 3);
        assert_eq!(export.summary().results, 3);
        assert_eq!(export.summary().decision, "deny");
    }

    #[test]
    fn the_log_is_compact_unless_pretty_is_asked_for() {
        let decision = decision(3);
        let compact = export(&decision, &Options::default()).to_bytes().unwrap();
        assert_eq!(
            compact.iter().filter(|&&b| b == b'\n').count(),
            1,
            "one line"
        );
        let options = Options {
            pretty: true,
            ..Options::default()
        };
        let pretty = export(&decision, &options).to_bytes().unwrap();
        assert!(pretty.starts_with(b"{\n  \""), "indented");
        let parse = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap();
        assert_eq!(parse(&compact), parse(&pretty), "the same log");
    }

    #[test]
    fn a_log_that_compresses_well_is_not_compressed_again_to_be_measured() {
        // 200 findings of the same text: far larger than the limit, far smaller gzipped.
        let findings: Vec<serde_json::Value> = (0..200)
            .map(|_| serde_json::json!({"diagnostic": {"code": "r", "message": "same"}}))
            .collect();
        let decision: Decision =
            serde_json::from_value(serde_json::json!({"decision": "deny", "findings": findings}))
                .unwrap();
        let options = crate::options::limited(|l| l.gzip_bytes = 5_000);
        let (bytes, warnings) = warnings_of(&export(&decision, &options));
        assert!(bytes.len() > 20_000, "{}", bytes.len());
        assert_eq!(warnings, Vec::<String>::new());
    }
}
