//! The outer seam's error objects that more than one of its methods answers with.

use rpc_peer::FailClass;
use rpc_peer::jsonrpc::ErrorObject;
use rpc_peer::peer::error_object;

/// The `health` error of a host that cannot read its workspace yet (retryable).
pub(crate) fn not_ready(why: impl std::fmt::Display) -> ErrorObject {
    error_object(
        asp_wire::code::HEALTH_NOT_READY,
        format!("health_not_ready: {why}"),
        FailClass::Health,
        true,
    )
}
