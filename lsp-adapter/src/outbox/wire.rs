//! The server's output: tower-lsp's frames and the outbox's, each written whole, in one stream.
//!
//! tower-lsp writes its frames (responses, its own requests, progress) into a pipe; [`write`] cuts
//! that stream into frames with the crate's one parser ([`crate::frames::Frames`]) and writes each
//! one, and between two of them whatever the outbox queued meanwhile. The queue is read first, so
//! a notification queued before tower-lsp wrote a frame (a publish, then the answer to a request
//! that came after it) reaches the client first. Nothing more is read from the pipe while the
//! output is busy, so tower-lsp keeps its back-pressure.

use std::pin::Pin;

use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter, DuplexStream};
use tokio::sync::mpsc;

use crate::frames::{Frame, Frames};

/// How much of tower-lsp's output is read at once, and the size of the output's write buffer.
const CHUNK: usize = 64 * 1024;

/// The outbox's end of the output: JSON-RPC bodies, framed when they are written.
#[derive(Clone, Debug)]
pub(crate) struct Queue(mpsc::UnboundedSender<Vec<u8>>);

impl Queue {
    /// A queue, and the receiver to give [`write`].
    pub(crate) fn new() -> (Queue, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Queue(sender), receiver)
    }

    /// Queues one message body; dropped once the output is gone, as tower-lsp drops it then.
    pub(crate) fn send(&self, body: Vec<u8>) {
        let _ = self.0.send(body);
    }
}

/// Writes tower-lsp's output (`server`) and the queued bodies to `output` until `server` ends,
/// then what is still queued. Writes are buffered and flushed whenever the queue is empty, so a
/// burst of small notifications goes out in a few writes. A failed write is logged once; the rest
/// is then read and dropped, so that tower-lsp is never left blocked on a full pipe.
pub(crate) async fn write<O: AsyncWrite>(
    mut server: DuplexStream,
    mut queued: mpsc::UnboundedReceiver<Vec<u8>>,
    output: O,
) {
    let output = std::pin::pin!(output);
    let mut out = Output {
        output: BufWriter::with_capacity(CHUNK, output),
        broken: false,
    };
    let mut frames = Frames::default();
    let mut chunk = vec![0; CHUNK];
    loop {
        // Both are cancel-safe: a branch that loses the race has taken nothing.
        tokio::select! {
            biased;
            Some(body) = queued.recv() => out.message(&body).await,
            read = server.read(&mut chunk) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    for frame in frames.push(&chunk[..n]) {
                        match frame {
                            Frame::Body(body) => out.message(&body).await,
                            Frame::Skipped(why) => {
                                tracing::error!(why, "the language server wrote a bad frame")
                            }
                        }
                    }
                }
            },
        }
        if queued.is_empty() {
            out.flush().await;
        }
    }
    while let Ok(body) = queued.try_recv() {
        out.message(&body).await;
    }
    out.flush().await;
}

struct Output<'a, O> {
    output: BufWriter<Pin<&'a mut O>>,
    broken: bool,
}

impl<O: AsyncWrite> Output<'_, O> {
    /// One message: the header tower-lsp would write, then the body.
    async fn message(&mut self, body: &[u8]) {
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        self.bytes(header.as_bytes()).await;
        self.bytes(body).await;
    }

    async fn bytes(&mut self, bytes: &[u8]) {
        if self.broken || bytes.is_empty() {
            return;
        }
        if let Err(error) = self.output.write_all(bytes).await {
            self.failed(&error);
        }
    }

    async fn flush(&mut self) {
        if !self.broken
            && let Err(error) = self.output.flush().await
        {
            self.failed(&error);
        }
    }

    fn failed(&mut self, error: &std::io::Error) {
        tracing::warn!(%error, "writing to the client failed; its output is dropped from now on");
        self.broken = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[tokio::test]
    async fn queued_messages_go_between_whole_frames_of_the_server() {
        let (queue, queued) = Queue::new();
        let (mut server, from_server) = tokio::io::duplex(16);
        let mut output = Vec::new();
        let writing = write(from_server, queued, &mut output);
        let serving = async {
            let first = frame(r#"{"id":1,"result":"a long enough answer"}"#);
            let (head, tail) = first.split_at(20);
            server.write_all(head.as_bytes()).await.unwrap();
            tokio::task::yield_now().await;
            queue.send(br#"{"method":"m"}"#.to_vec());
            server.write_all(tail.as_bytes()).await.unwrap();
            drop(server);
            queue.send(br#"{"method":"late"}"#.to_vec());
        };
        tokio::join!(writing, serving);
        let mut written: Vec<String> = Frames::default()
            .push(&output)
            .into_iter()
            .map(|f| match f {
                Frame::Body(body) => frame(std::str::from_utf8(&body).unwrap()),
                Frame::Skipped(why) => panic!("a bad frame written: {why}"),
            })
            .collect();
        written.sort();
        let mut expected = [
            frame(r#"{"id":1,"result":"a long enough answer"}"#),
            frame(r#"{"method":"late"}"#),
            frame(r#"{"method":"m"}"#),
        ];
        expected.sort();
        assert_eq!(written, expected, "every frame whole, none lost");
    }
}
