//! The benchmarks' stand-in for a host's `workspace/readBlob`: blobs served from memory, as cheaply
//! as a host could, so that what is timed is the other side.

use std::collections::HashMap;

use bridge_core::jsonrpc::ErrorObject;
use bridge_core::peer::{BoxFuture, Handler, IncomingRequest};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// Serves `workspace/readBlob` from memory: blob id → text.
pub(crate) struct Blobs(pub(crate) HashMap<String, String>);

impl Handler for Blobs {
    fn request(
        &self,
        request: IncomingRequest,
    ) -> BoxFuture<'static, Result<Box<RawValue>, ErrorObject>> {
        let params: Value = request.params().unwrap_or_default();
        let blobs: Vec<Value> = params["blobs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|id| id.as_str())
            .map(|id| json!({"id": id, "encoding": "utf-8", "bytes": self.0.get(id).cloned().unwrap_or_default()}))
            .collect();
        let answer = json!({"blobs": blobs}).to_string();
        Box::pin(async move { Ok(RawValue::from_string(answer).expect("json")) })
    }
}
