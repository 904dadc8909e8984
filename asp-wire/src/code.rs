//! The ASP error codes (`error.code`), named once: the registry of `spec/02` and the server code a
//! provider answers before `initialize`, and the class of each. JSON-RPC's own codes are
//! `rpc_peer::jsonrpc`'s.

use rpc_peer::FailClass;

/// A provider asked anything but `initialize` before it (as LSP's `ServerNotInitialized`).
pub const NOT_INITIALIZED: i64 = -32002;
/// `health_not_ready` (health).
pub const HEALTH_NOT_READY: i64 = -32010;
/// `stale_baseline` (health): the index lags the requested baseline.
pub const STALE_BASELINE: i64 = -32011;
/// `scope_denied` (policy).
pub const SCOPE_DENIED: i64 = -32012;
/// `invalid_changeset` (input).
pub const INVALID_CHANGESET: i64 = -32013;
/// `unsupported_version` (contract).
pub const UNSUPPORTED_VERSION: i64 = -32014;
/// `blob_unavailable` (health).
pub const BLOB_UNAVAILABLE: i64 = -32015;
/// `cancelled` (health).
pub const CANCELLED: i64 = -32016;

/// Every ASP error code above, for the checks that they are named nowhere else.
pub const ALL: [i64; 8] = [
    NOT_INITIALIZED,
    HEALTH_NOT_READY,
    STALE_BASELINE,
    SCOPE_DENIED,
    INVALID_CHANGESET,
    UNSUPPORTED_VERSION,
    BLOB_UNAVAILABLE,
    CANCELLED,
];

/// The class of an error reply that names no `failClass`, by its code: the registry's (`spec/02`),
/// else JSON-RPC's. What every ASP peer passes as `rpc_peer::peer::PeerConfig::classify`.
pub fn fail_class(code: i64) -> FailClass {
    match code {
        SCOPE_DENIED => FailClass::Policy,
        INVALID_CHANGESET => FailClass::Input,
        UNSUPPORTED_VERSION => FailClass::Contract,
        other => FailClass::of_json_rpc_code(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_codes_map_to_classes() {
        assert_eq!(fail_class(-32010), FailClass::Health);
        assert_eq!(fail_class(-32012), FailClass::Policy);
        assert_eq!(fail_class(-32013), FailClass::Input);
        assert_eq!(fail_class(-32014), FailClass::Contract);
        assert_eq!(FailClass::parse("policy"), Some(FailClass::Policy));
        assert_eq!(FailClass::parse("fatal"), None);
    }
}
