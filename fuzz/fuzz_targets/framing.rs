//! Fuzz target: arbitrary bytes through the NDJSON frame reader, with a small cap.
//!
//! Every frame must be valid UTF-8 (a `String`), hold no newline, and stay within the cap; the head
//! kept of an oversize line is capped too.
#![no_main]

use std::sync::Arc;

use rpc_peer::framing::{Frame, FrameReader, FrameStats, OVERSIZE_HEAD};
use libfuzzer_sys::fuzz_target;

const CAP: usize = 64;

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let reader = tokio::io::BufReader::with_capacity(7, data);
        let mut framer = FrameReader::new(reader, CAP, Arc::new(FrameStats::default()));
        while let Some(frame) = framer
            .next_frame()
            .await
            .expect("in-memory reads cannot fail")
        {
            match frame {
                Frame::Text(frame) => {
                    assert!(!frame.contains('\n'), "a frame never holds a newline");
                    assert!(frame.len() <= CAP, "a frame never passes the cap");
                }
                Frame::Oversize { head } => {
                    assert!(head.len() <= OVERSIZE_HEAD, "a head is capped");
                    assert!(!head.contains(&b'\n'), "a head never holds a newline");
                }
                Frame::NotUtf8 => {}
            }
        }
    });
});
