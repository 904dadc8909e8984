//! NDJSON frames over any async byte stream: one UTF-8 line per frame, size-capped.
//!
//! Knows no method names and parses no JSON. Oversize lines are skipped without being buffered
//! (only their first [`OVERSIZE_HEAD`] bytes are kept, so the reader can tell whose answer it was),
//! blank lines are skipped; an oversize or invalid UTF-8 line is reported as a [`Frame`] of its own,
//! so the caller can answer or fail what it concerns at once, and counted in [`FrameStats`]. Both
//! ends reuse one buffer: a frame read is lent out until the next one, and frames written back to
//! back go out in as few writes as the buffer allows.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufWriter};

/// Default cap on one frame: 16 MiB.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;
/// A frame buffer that grew past this for one large frame is not kept for the next.
const KEPT_CAPACITY: usize = 1024 * 1024;
/// Size of the write buffer of a [`FrameWriter`].
const WRITE_BUFFER: usize = 64 * 1024;
/// How much of an oversize line is kept: enough for the envelope's first keys (`jsonrpc`, `id`).
pub const OVERSIZE_HEAD: usize = 1024;

/// What the reader found on one line.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A frame within the cap, without its line ending.
    Text(&'a str),
    /// A line longer than the cap, skipped; `head` is its first bytes (at most [`OVERSIZE_HEAD`]).
    Oversize { head: &'a [u8] },
    /// A line that is not valid UTF-8, skipped; [`FrameReader::skipped_head`] has its first bytes.
    NotUtf8,
}

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
    /// The line being read.
    line: Vec<u8>,
    /// The frame last returned; its allocation becomes `line` again on the next read.
    frame: String,
    stats: Arc<FrameStats>,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    pub fn new(inner: R, max_frame: usize, stats: Arc<FrameStats>) -> Self {
        FrameReader {
            inner,
            max_frame,
            line: Vec::new(),
            frame: String::new(),
            stats,
        }
    }

    /// The next frame, without its line ending, or the next skipped line; `None` at the end of the
    /// stream. The frame is lent: reading the next one reuses its buffer.
    ///
    /// A partial last line (no newline before the end) is still a frame.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame<'_>>> {
        self.line = std::mem::take(&mut self.frame).into_bytes();
        if self.line.capacity() > KEPT_CAPACITY {
            self.line = Vec::new();
        }
        loop {
            match self.next_line().await? {
                Line::End => return Ok(None),
                Line::Oversize => {
                    self.stats.oversize.fetch_add(1, Ordering::Relaxed);
                    return Ok(Some(Frame::Oversize { head: &self.line }));
                }
                Line::Whole if self.line.iter().all(u8::is_ascii_whitespace) => continue,
                Line::Whole => {}
            }
            return match String::from_utf8(std::mem::take(&mut self.line)) {
                Ok(text) => {
                    self.frame = text;
                    Ok(Some(Frame::Text(&self.frame)))
                }
                Err(error) => {
                    self.line = error.into_bytes();
                    self.stats.invalid_utf8.fetch_add(1, Ordering::Relaxed);
                    Ok(Some(Frame::NotUtf8))
                }
            };
        }
    }

    /// The first bytes (at most [`OVERSIZE_HEAD`]) of the line last reported as
    /// [`Frame::NotUtf8`], so the caller can tell whose answer it was.
    pub fn skipped_head(&self) -> &[u8] {
        &self.line[..self.line.len().min(OVERSIZE_HEAD)]
    }

    /// Reads one line within the cap into `line` (without its ending). An oversize line is
    /// dropped as it streams; `line` keeps its head.
    async fn next_line(&mut self) -> std::io::Result<Line> {
        self.line.clear();
        let mut oversize = false;
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                if oversize {
                    return Ok(Line::Oversize);
                }
                if self.line.is_empty() {
                    return Ok(Line::End);
                }
                self.end_line();
                return Ok(Line::Whole);
            }
            let (chunk, found) = match memchr::memchr(b'\n', buf) {
                Some(at) => (&buf[..at], Some(at + 1)),
                None => (buf, None),
            };
            if !oversize {
                if self.line.len() + chunk.len() > self.max_frame {
                    oversize = true;
                    let room = OVERSIZE_HEAD
                        .saturating_sub(self.line.len())
                        .min(chunk.len());
                    self.line.extend_from_slice(&chunk[..room]);
                    self.line.truncate(OVERSIZE_HEAD);
                    self.line.shrink_to(OVERSIZE_HEAD);
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let consumed = found.unwrap_or(buf.len());
            self.inner.consume(consumed);
            if found.is_some() {
                if oversize {
                    return Ok(Line::Oversize);
                }
                self.end_line();
                return Ok(Line::Whole);
            }
        }
    }

    /// Drops the `\r` of a CRLF line ending.
    fn end_line(&mut self) {
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
    }
}

/// What [`FrameReader::next_line`] read.
enum Line {
    Whole,
    Oversize,
    End,
}

/// Writes frames through a buffer: frames written back to back go out together (a frame larger
/// than the buffer goes straight through); nothing is sent before [`FrameWriter::flush`].
pub struct FrameWriter<W: AsyncWrite> {
    inner: BufWriter<W>,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    pub fn new(inner: W) -> Self {
        FrameWriter {
            inner: BufWriter::with_capacity(WRITE_BUFFER, inner),
        }
    }

    /// Buffers one frame (which must not contain a newline) and its newline.
    pub async fn write(&mut self, frame: &[u8]) -> std::io::Result<()> {
        debug_assert!(!frame.contains(&b'\n'), "a frame never contains a newline");
        self.inner.write_all(frame).await?;
        self.inner.write_all(b"\n").await
    }

    /// Sends every frame buffered so far.
    pub async fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().await
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
            if let Frame::Text(text) = frame {
                out.push(text.to_owned());
            }
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
    async fn an_oversize_line_is_reported_with_its_head_only() {
        let mut input = br#"{"jsonrpc":"2.0","id":7,"result":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * OVERSIZE_HEAD));
        input.extend(b"\"}\n\xff\n{}\n");
        let reader = tokio::io::BufReader::with_capacity(5, input.as_slice());
        let mut framer = FrameReader::new(reader, 2 * OVERSIZE_HEAD, Arc::default());
        match framer.next_frame().await.unwrap() {
            Some(Frame::Oversize { head }) => {
                assert_eq!(head.len(), OVERSIZE_HEAD);
                assert!(head.starts_with(br#"{"jsonrpc":"2.0","id":7,"#));
            }
            other => panic!("not reported as oversize: {other:?}"),
        }
        assert_eq!(framer.next_frame().await.unwrap(), Some(Frame::NotUtf8));
        assert_eq!(framer.next_frame().await.unwrap(), Some(Frame::Text("{}")));
        assert_eq!(framer.next_frame().await.unwrap(), None);
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
    async fn buffered_frames_go_out_in_order_on_flush() {
        let mut out = Vec::new();
        let mut writer = FrameWriter::new(&mut out);
        writer.write(b"{\"a\":1}").await.unwrap();
        let large = vec![b'x'; WRITE_BUFFER + 1];
        writer.write(&large).await.unwrap();
        writer.write(b"{}").await.unwrap();
        writer.flush().await.unwrap();
        let mut expected = b"{\"a\":1}\n".to_vec();
        expected.extend_from_slice(&large);
        expected.extend_from_slice(b"\n{}\n");
        assert_eq!(out, expected);
    }

    #[tokio::test]
    async fn write_frame_appends_one_newline() {
        let mut out = Vec::new();
        write_frame(&mut out, b"{}").await.unwrap();
        assert_eq!(out, b"{}\n");
    }
}
