//! NDJSON frames over any async byte stream: one UTF-8 line per frame, size-capped.
//!
//! Knows no method names and parses no JSON. Oversize lines are skipped without being buffered,
//! invalid UTF-8 and blank lines are skipped; each skip is counted in [`FrameStats`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// Default cap on one frame: 16 MiB.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;

/// What the reader skipped, shared with whoever reports on the connection.
#[derive(Debug, Default)]
pub struct FrameStats {
    pub oversize: AtomicU64,
    pub invalid_utf8: AtomicU64,
    pub not_json: AtomicU64,
}

impl FrameStats {
    pub fn skipped(&self) -> u64 {
        self.oversize.load(Ordering::Relaxed)
            + self.invalid_utf8.load(Ordering::Relaxed)
            + self.not_json.load(Ordering::Relaxed)
    }
}

/// Reads newline-delimited frames.
pub struct FrameReader<R> {
    inner: R,
    max_frame: usize,
    line: Vec<u8>,
    stats: Arc<FrameStats>,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    pub fn new(inner: R, max_frame: usize, stats: Arc<FrameStats>) -> Self {
        FrameReader {
            inner,
            max_frame,
            line: Vec::new(),
            stats,
        }
    }

    /// The next frame, without its line ending; `None` at the end of the stream.
    ///
    /// A partial last line (no newline before the end) is still a frame.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<String>> {
        loop {
            let Some(line) = self.next_line().await? else {
                return Ok(None);
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match String::from_utf8(line) {
                Ok(text) => return Ok(Some(text)),
                Err(_) => {
                    self.stats.invalid_utf8.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!("skipped a host line that is not valid UTF-8");
                }
            }
        }
    }

    /// One raw line within the cap, or `None` at the end; oversize lines are dropped as they stream.
    async fn next_line(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        self.line.clear();
        let mut oversize = false;
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                if oversize || self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(self.take_line()));
            }
            let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
                Some(at) => (&buf[..at], Some(at + 1)),
                None => (buf, None),
            };
            if !oversize {
                if self.line.len() + chunk.len() > self.max_frame {
                    oversize = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let consumed = found.unwrap_or(buf.len());
            self.inner.consume(consumed);
            if found.is_some() {
                if oversize {
                    self.stats.oversize.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        max = self.max_frame,
                        "skipped a host line longer than the frame cap"
                    );
                    oversize = false;
                    continue;
                }
                return Ok(Some(self.take_line()));
            }
        }
    }

    fn take_line(&mut self) -> Vec<u8> {
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        line
    }
}

/// Writes one frame (which must not contain a newline) and flushes it.
pub async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    frame: &[u8],
) -> std::io::Result<()> {
    debug_assert!(!frame.contains(&b'\n'), "a frame never contains a newline");
    writer.write_all(frame).await?;
    writer.write_all(b"\n").await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> (Vec<String>, Arc<FrameStats>) {
        let stats = Arc::new(FrameStats::default());
        // A tiny buffer makes every frame span several reads.
        let reader = tokio::io::BufReader::with_capacity(3, input);
        let mut framer = FrameReader::new(reader, max, stats.clone());
        let mut out = Vec::new();
        while let Some(frame) = framer.next_frame().await.unwrap() {
            out.push(frame);
        }
        (out, stats)
    }

    #[tokio::test]
    async fn splits_lines_and_strips_crlf() {
        let (out, stats) = frames(b"{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}", 1024).await;
        assert_eq!(out, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
        assert_eq!(stats.skipped(), 0);
    }

    #[tokio::test]
    async fn skips_an_oversize_line_and_recovers() {
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 100));
        input.extend(b"\n{\"b\":2}\n");
        let (out, stats) = frames(&input, 50).await;
        assert_eq!(out, ["{\"a\":1}", "{\"b\":2}"]);
        assert_eq!(stats.oversize.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn a_line_exactly_at_the_cap_is_kept() {
        let line = "y".repeat(50);
        let (out, stats) = frames(format!("{line}\n").as_bytes(), 50).await;
        assert_eq!(out, [line]);
        assert_eq!(stats.skipped(), 0);
    }

    #[tokio::test]
    async fn an_oversize_partial_last_line_is_dropped() {
        let (out, _) = frames(&[b'z'; 80], 50).await;
        assert!(out.is_empty());
    }

    #[tokio::test]
    async fn skips_invalid_utf8() {
        let (out, stats) = frames(b"\xff\xfe junk\n{\"ok\":true}\n", 1024).await;
        assert_eq!(out, ["{\"ok\":true}"]);
        assert_eq!(stats.invalid_utf8.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn keeps_multibyte_text_split_across_reads() {
        let (out, _) = frames("{\"m\":\"naïve 漢字 😀\"}\n".as_bytes(), 1024).await;
        assert_eq!(out, ["{\"m\":\"naïve 漢字 😀\"}"]);
    }

    #[tokio::test]
    async fn write_frame_appends_one_newline() {
        let mut out = Vec::new();
        write_frame(&mut out, b"{}").await.unwrap();
        assert_eq!(out, b"{}\n");
    }
}
