//! Where the `$/progress` values of one outgoing request go: a bounded queue that keeps the latest.
//!
//! Progress is only a preview, so a slow consumer never makes the peer wait or buffer without bound:
//! when the queue is full the oldest value is dropped (and counted) to make room for the newest.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::Notify;

/// Values queued for a consumer that has not caught up yet, by default.
pub const PROGRESS_QUEUE: usize = 16;

struct Queue {
    values: VecDeque<Value>,
    senders: usize,
    receiver_gone: bool,
    coalesced: u64,
}

struct Inner {
    queue: Mutex<Queue>,
    ready: Notify,
    capacity: usize,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        crate::sync::lock(&self.queue)
    }
}

/// A queue of [`PROGRESS_QUEUE`] values; see the module doc.
pub fn progress_channel() -> (ProgressSender, ProgressReceiver) {
    progress_channel_with(PROGRESS_QUEUE)
}

/// A queue of `capacity` values (at least 1); see the module doc.
pub fn progress_channel_with(capacity: usize) -> (ProgressSender, ProgressReceiver) {
    let inner = Arc::new(Inner {
        queue: Mutex::new(Queue {
            values: VecDeque::new(),
            senders: 1,
            receiver_gone: false,
            coalesced: 0,
        }),
        ready: Notify::new(),
        capacity: capacity.max(1),
    });
    (
        ProgressSender {
            inner: inner.clone(),
        },
        ProgressReceiver { inner },
    )
}

/// The sending end; the receiver sees the end of the stream once every sender is dropped.
pub struct ProgressSender {
    inner: Arc<Inner>,
}

impl ProgressSender {
    /// Queues `value`, dropping the oldest queued value when full. False once the receiver is gone.
    pub fn send(&self, value: Value) -> bool {
        let mut queue = self.inner.lock();
        if queue.receiver_gone {
            return false;
        }
        if queue.values.len() >= self.inner.capacity {
            queue.values.pop_front();
            queue.coalesced += 1;
        }
        queue.values.push_back(value);
        drop(queue);
        self.inner.ready.notify_one();
        true
    }
}

impl Clone for ProgressSender {
    fn clone(&self) -> Self {
        self.inner.lock().senders += 1;
        ProgressSender {
            inner: self.inner.clone(),
        }
    }
}

impl Drop for ProgressSender {
    fn drop(&mut self) {
        let mut queue = self.inner.lock();
        queue.senders -= 1;
        let last = queue.senders == 0;
        drop(queue);
        if last {
            self.inner.ready.notify_one();
        }
    }
}

impl std::fmt::Debug for ProgressSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressSender")
            .field("capacity", &self.inner.capacity)
            .finish()
    }
}

/// The receiving end (one consumer).
pub struct ProgressReceiver {
    inner: Arc<Inner>,
}

impl ProgressReceiver {
    /// The oldest queued value; `None` once every sender is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<Value> {
        loop {
            {
                let mut queue = self.inner.lock();
                if let Some(value) = queue.values.pop_front() {
                    return Some(value);
                }
                if queue.senders == 0 {
                    return None;
                }
            }
            // One consumer: a `notify_one` sent while nobody waits is kept as a permit, so no wake-up
            // between the check above and this wait is lost.
            self.inner.ready.notified().await;
        }
    }

    /// The oldest queued value, if any, without waiting.
    pub fn try_recv(&mut self) -> Option<Value> {
        self.inner.lock().values.pop_front()
    }

    /// How many values were dropped to make room for newer ones.
    pub fn coalesced(&self) -> u64 {
        self.inner.lock().coalesced
    }
}

impl Drop for ProgressReceiver {
    fn drop(&mut self) {
        let mut queue = self.inner.lock();
        queue.receiver_gone = true;
        queue.values.clear();
    }
}

impl std::fmt::Debug for ProgressReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressReceiver").finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn a_full_queue_keeps_the_latest_values() {
        let (sender, mut receiver) = progress_channel_with(3);
        for n in 0..1000 {
            assert!(sender.send(json!(n)));
        }
        drop(sender);
        let mut seen = Vec::new();
        while let Some(value) = receiver.recv().await {
            seen.push(value);
        }
        assert_eq!(seen, [json!(997), json!(998), json!(999)]);
        assert_eq!(receiver.coalesced(), 997);
    }

    #[tokio::test]
    async fn the_stream_ends_when_the_last_sender_goes() {
        let (sender, mut receiver) = progress_channel();
        let second = sender.clone();
        drop(sender);
        second.send(json!("x"));
        let waiting = tokio::spawn(async move {
            let first = receiver.recv().await;
            (first, receiver.recv().await)
        });
        drop(second);
        assert_eq!(waiting.await.unwrap(), (Some(json!("x")), None));
    }

    #[test]
    fn sending_to_a_dropped_receiver_reports_it() {
        let (sender, receiver) = progress_channel();
        drop(receiver);
        assert!(!sender.send(json!(1)));
    }
}
