//! Digests over JSON and bytes that every ASP party here must compute alike: canonical JSON (the
//! bytes a changeset or configuration digest is taken over) and sha256 in lower-case hex.

use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    out
}

/// Lower-case hex of the sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The ASP blob id of `bytes`: `blob:sha256:<hex of the raw bytes>`.
pub fn blob_id(bytes: &[u8]) -> String {
    blob_id_of_digest(&Sha256::digest(bytes))
}

/// The ASP blob id of bytes whose sha256 is `digest` (hashed as they streamed).
pub fn blob_id_of_digest(digest: &[u8]) -> String {
    format!("blob:sha256:{}", hex(digest))
}

/// Compact JSON with object keys sorted recursively by UTF-16 code units (arrays keep their order):
/// the same bytes as `JSON.stringify` of a key-sorted copy, which is how opcore-asp-provider
/// canonicalises, so a host and its providers reach one digest.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `"sha256:" + hex(sha256(canonical JSON))`: the changeset, request and configuration digests.
pub fn canonical_digest(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    format!("sha256:{}", sha256_hex(&out))
}

/// Writes straight into `out`: no key or scalar is copied into a value or a string of its own.
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (i, (key, inner)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_scalar(key, out);
                out.push(b':');
                write_canonical(inner, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        other => write_scalar(other, out),
    }
}

/// A string or scalar as serde_json writes it (writing into a `Vec` cannot fail).
fn write_scalar<T: serde::Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    let _ = serde_json::to_writer(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_sort_by_utf16_code_units_as_javascript_does() {
        // U+FF5E sorts after U+1F600 in UTF-16 (0xFF5E > 0xD83D) but before it in UTF-8 bytes.
        let value = json!({"\u{1F600}": 1, "\u{FF5E}": 2});
        assert_eq!(canonical_json(&value), "{\"\u{1F600}\":1,\"\u{FF5E}\":2}");
    }

    #[test]
    fn hex_is_lower_case_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }
}
