//! The outer seam's error objects that more than one of its methods answers with.

use bridge_core::FailClass;
use bridge_core::jsonrpc::ErrorObject;
use bridge_core::peer::error_object;

/// The `health` error of a host that cannot read its workspace yet (retryable).
pub(crate) fn not_ready(why: impl std::fmt::Display) -> ErrorObject {
    error_object(
        -32010,
        format!("health_not_ready: {why}"),
        FailClass::Health,
        true,
    )
}
