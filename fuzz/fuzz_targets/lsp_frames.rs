//! Fuzz target: arbitrary client bytes through the LSP incoming-frame checker.
//!
//! Nothing panics, and every frame the checker hands tower-lsp is well-formed and decodes as a
//! JSON-RPC message, so no input can make tower-lsp stop reading.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lsp_adapter::fuzzing::{checked_frames, decodes};

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let frames = runtime.block_on(checked_frames(data.to_vec()));
    for frame in frames {
        let body = frame.expect("the checker writes only well-formed frames");
        assert!(decodes(&body), "{}", String::from_utf8_lossy(&body));
    }
});
