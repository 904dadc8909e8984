//! Small JSON helpers: canonical digests, sha256 in hex, RFC 3339 times, string arrays and receipt
//! ids.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

pub(crate) use asp_wire::digest::{canonical_digest as digest, sha256_hex};

/// Now, as RFC 3339 UTC with milliseconds.
pub(crate) fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

pub(crate) fn rfc3339(time: SystemTime) -> String {
    DateTime::<Utc>::from(time).to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The strings of a JSON array (anything else in it, or a value that is no array, gives none).
pub(crate) fn strings<C: FromIterator<String>>(value: &Value) -> C {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// A receipt id unique to this process and time: `core-host-<kind>-<16 hex>`.
pub(crate) fn receipt_id(kind: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // The process id, asked of the system once (each ask is a system call).
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let seed = format!(
        "{}:{}:{n}",
        PID.get_or_init(std::process::id),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    );
    format!("core-host-{kind}-{}", &sha256_hex(seed.as_bytes())[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth_and_keeps_array_order() {
        let value = json!({"b": [3, {"z": 1, "a": "é\n"}], "a": null});
        assert_eq!(
            asp_wire::digest::canonical_json(&value),
            r#"{"a":null,"b":[3,{"a":"é\n","z":1}]}"#
        );
    }

    #[test]
    fn the_changeset_digest_matches_the_documented_algorithm() {
        // sha256 of the bytes `{"baseline":{"rev":"r"},"changes":[]}`.
        let value = json!({"changes": [], "baseline": {"rev": "r"}});
        assert_eq!(
            digest(&value),
            format!(
                "sha256:{}",
                sha256_hex(br#"{"baseline":{"rev":"r"},"changes":[]}"#)
            )
        );
    }

    #[test]
    fn times_are_rfc3339_utc() {
        let t = UNIX_EPOCH + std::time::Duration::from_millis(1_767_225_600_123);
        assert_eq!(rfc3339(t), "2026-01-01T00:00:00.123Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }
}
