//! Digests and blob encodings: canonical JSON digests (bridge-core's), sha256 ids and
//! fingerprints, base64.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use sha2::{Digest as _, Sha256};

/// The content id of bytes, `blob:sha256:<hex>`, as the host names blobs.
pub use asp_wire::digest::blob_id;
/// `sha256:<hex>` of `value` as canonical JSON (the changeset digest and the config digest), computed
/// exactly as the host computes it.
pub use asp_wire::digest::canonical_digest;
/// Lower-case hex of bytes.
pub use asp_wire::digest::hex;

/// `sha256:<hex>` of `parts`, each ended by a NUL byte: a finding's fingerprint from what
/// identifies it (its rule, path, key and repeat count, say), never from its position.
pub fn fingerprint<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    format!("sha256:{}", hex(&hash.finalize()))
}

/// Whether `bytes` hash to the content id `blob:sha256:<hex>` (ids of other algorithms are taken
/// as they are: nothing to check them with).
pub(crate) fn blob_matches(id: &str, bytes: &[u8]) -> bool {
    match id.strip_prefix("blob:sha256:") {
        Some(expected) => expected.eq_ignore_ascii_case(&hex(&Sha256::digest(bytes))),
        None => true,
    }
}

/// Decodes standard base64 (padding optional, ASCII whitespace ignored).
pub(crate) fn base64(text: &str) -> Option<Vec<u8>> {
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let digits: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    LENIENT.decode(digits).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a = json!({"b": 1, "a": {"d": [3, {"z": 1, "y": "é"}], "c": null}});
        let text = asp_wire::digest::canonical_json(&a);
        assert_eq!(text, r#"{"a":{"c":null,"d":[3,{"y":"é","z":1}]},"b":1}"#);
        let b = json!({"a": {"c": null, "d": [3, {"y": "é", "z": 1}]}, "b": 1});
        assert_eq!(canonical_digest(&a), canonical_digest(&b));
    }

    #[test]
    fn blob_ids_are_checked_against_their_bytes() {
        let id = "blob:sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
        assert!(blob_matches(id, b"hello"));
        assert!(!blob_matches(id, b"hello!"));
    }

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(base64("AAECAw==").unwrap(), [0, 1, 2, 3]);
        assert_eq!(base64("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64("aGVs\nbG8=").unwrap(), b"hello");
        assert_eq!(base64("").unwrap(), b"");
        assert_eq!(base64("a"), None);
        assert_eq!(base64("a*bc"), None);
    }
}
