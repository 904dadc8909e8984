//! The log as bytes, written as it is produced: compact JSON by default (pretty for people), with a
//! final newline. The results are built one at a time while they are written, so no second copy of
//! every finding is ever held. GitHub's gzip limit is checked only for a log larger than the limit
//! (JSON compresses, so a smaller one passes): it is produced again into a fast compression (an
//! upper bound of the default level's size), and only a log whose fast size passes the limit is
//! compressed once more at the default level, as the upload would be, to say by how much.

use std::io::{self, BufWriter, Write};

use flate2::Compression;
use flate2::write::GzEncoder;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::to_sarif::Prepared;

/// How the writer buffers its output.
const BUFFER: usize = 64 * 1024;

/// What writing a log found out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Written {
    /// Bytes written, the final newline included.
    pub(crate) bytes: u64,
    /// The gzip-compressed size at the default level, when it passes the limit.
    pub(crate) gzip_over: Option<u64>,
}

/// Writes the log to `out` and checks its gzip size against `gzip_limit`.
pub(crate) fn write(
    prepared: &Prepared<'_>,
    out: impl Write,
    pretty: bool,
    gzip_limit: u64,
) -> io::Result<Written> {
    let head = Head::of(prepared)?;
    let bytes = serialise(&head, prepared, Counted { out, bytes: 0 }, pretty)?.bytes;
    let compressed = |level| -> io::Result<u64> {
        let gzip = GzEncoder::new(Counter(0), level);
        Ok(serialise(&head, prepared, gzip, pretty)?.finish()?.0)
    };
    let gzip_over = if bytes <= gzip_limit || compressed(Compression::fast())? <= gzip_limit {
        None
    } else {
        let exact = compressed(Compression::default())?;
        (exact > gzip_limit).then_some(exact)
    };
    Ok(Written { bytes, gzip_over })
}

/// Serialises the whole log into `out` (buffered), the final newline included, and gives `out` back.
fn serialise<W: Write>(
    head: &Head,
    prepared: &Prepared<'_>,
    out: W,
    pretty: bool,
) -> io::Result<W> {
    let log = Log { head, prepared };
    let mut buffered = BufWriter::with_capacity(BUFFER, out);
    if pretty {
        log.serialize(&mut serde_json::Serializer::pretty(&mut buffered))?;
    } else {
        log.serialize(&mut serde_json::Serializer::new(&mut buffered))?;
    }
    buffered.write_all(b"\n")?;
    buffered
        .into_inner()
        .map_err(io::IntoInnerError::into_error)
}

/// The log without its results, as JSON: small (rules, extensions, notifications, the receipt).
struct Head {
    log: Map<String, Value>,
    run: Map<String, Value>,
}

impl Head {
    fn of(prepared: &Prepared<'_>) -> io::Result<Head> {
        let Value::Object(mut log) = serde_json::to_value(&prepared.head)? else {
            return Err(io::Error::other("a SARIF log is a JSON object"));
        };
        let run = match log.remove("runs") {
            Some(Value::Array(runs)) => runs.into_iter().next(),
            _ => None,
        };
        let Some(Value::Object(mut run)) = run else {
            return Err(io::Error::other("a SARIF log of one run"));
        };
        run.remove("results");
        Ok(Head { log, run })
    }
}

/// The log with its run's results streamed from the findings.
struct Log<'h, 'p, 'a> {
    head: &'h Head,
    prepared: &'p Prepared<'a>,
}

impl Serialize for Log<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in &self.head.log {
            map.serialize_entry(key, value)?;
        }
        map.serialize_entry("runs", &[Run(self)])?;
        map.end()
    }
}

struct Run<'l, 'h, 'p, 'a>(&'l Log<'h, 'p, 'a>);

impl Serialize for Run<'_, '_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in &self.0.head.run {
            map.serialize_entry(key, value)?;
        }
        map.serialize_entry("results", &Results(self.0.prepared))?;
        map.end()
    }
}

struct Results<'p, 'a>(&'p Prepared<'a>);

impl Serialize for Results<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.results())
    }
}

/// The output, counted on the way.
struct Counted<W> {
    out: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.out.write(buf)?;
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A sink that only counts.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
