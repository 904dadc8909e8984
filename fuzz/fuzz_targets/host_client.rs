//! Fuzz target: arbitrary host output decoded by the JSON-RPC client while three requests wait.
//!
//! Whatever the host writes, the client must not panic, and every pending request must be answered
//! exactly once: by a reply, a host error, or the end of the stream.
#![no_main]

use std::time::Duration;

use bridge_core::{ClientConfig, HostClient};
use rpc_peer::{ExitStatus};
use libfuzzer_sys::fuzz_target;
use tokio::io::AsyncWriteExt;

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (host_out, bridge_in) = tokio::io::duplex(1 << 16);
        let config = ClientConfig {
            request_timeout: Duration::from_secs(60),
            max_frame: 4096,
            ..ClientConfig::default()
        };
        let probe: bridge_core::host::ExitProbe =
            Box::new(|| Box::pin(async { (ExitStatus::Unknown, String::new()) }));
        let client = HostClient::connect(
            tokio::io::BufReader::new(bridge_in),
            tokio::io::sink(),
            config,
            probe,
        );
        let calls = [client.status(), client.status(), client.status()];
        let mut host_out = host_out;
        host_out.write_all(data).await.expect("write");
        drop(host_out);
        for call in calls {
            // Ok or Err, but always resolved: the stream's end fails what is still pending.
            let _ = call.await;
        }
        assert!(client.is_closed());
    });
});
