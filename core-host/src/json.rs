//! Small JSON helpers: canonical digests, sha256 in hex, RFC 3339 times, string arrays and receipt
//! ids.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Lower-case hex of the sha256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Compact JSON with object keys sorted recursively (arrays keep their order): the bytes every
/// digest of a JSON value is taken over, the same as `JSON.stringify` of a key-sorted copy.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// `"sha256:" + hex(sha256(canonical JSON))`: the changeset digest and the request digest.
pub(crate) fn digest(value: &Value) -> String {
    format!("sha256:{}", sha256_hex(canonical(value).as_bytes()))
}

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
    let seed = format!(
        "{}:{}:{n}",
        std::process::id(),
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
        assert_eq!(canonical(&value), r#"{"a":null,"b":[3,{"a":"é\n","z":1}]}"#);
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
