//! The log as bytes: pretty JSON with a final newline, serialised in full before anything is
//! written, with a warning when the gzip-compressed file would pass GitHub's upload limit.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use serde_sarif::sarif::Sarif;

use crate::error::{Error, Result};

/// The log as it is written.
pub(crate) fn to_bytes(log: &Sarif) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(log).map_err(|e| Error::Write(e.into()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The gzip-compressed size of `bytes` when it may pass `limit` (`None` when it cannot: gzip never
/// grows a JSON document past its own size by more than a few bytes, so only larger ones are
/// compressed to find out).
pub(crate) fn gzip_size_over(bytes: &[u8], limit: u64) -> Option<u64> {
    if (bytes.len() as u64) <= limit {
        return None;
    }
    let mut encoder = GzEncoder::new(Counter(0), Compression::default());
    encoder.write_all(bytes).ok()?;
    let size = encoder.finish().ok()?.0;
    (size > limit).then_some(size)
}

/// A sink that only counts.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_logs_are_not_compressed_to_be_measured() {
        assert_eq!(gzip_size_over(b"{}", 10), None);
    }

    #[test]
    fn a_log_whose_gzip_passes_the_limit_is_reported_with_its_size() {
        let noise: Vec<u8> = (0..200_000_u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let size = gzip_size_over(&noise, 1_000).expect("incompressible bytes pass the limit");
        assert!(size > 1_000);
        let zeros = vec![b'0'; 200_000];
        assert_eq!(gzip_size_over(&zeros, 10_000), None, "compresses below it");
    }
}
