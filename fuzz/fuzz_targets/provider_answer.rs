//! Fuzz target: arbitrary bytes as a provider's `check/evaluate` answer, through what the embedded
//! host does with it: the asp/0.1 mapping (opcore), the checks of an Assessment, its outcome, and
//! the decision of one required, authorized provider.
//!
//! The first byte chooses: bit 0 the `gate` call site (else `interactive`), bit 1 the asp/0.1
//! mapping, bit 2 a fresh `validAsOf` in place of the answer's own (so that mutations reach the
//! accepted path without guessing digests). The rest is the answer, or a JSON-RPC response whose
//! `result` is the answer, or a recorded exchange whose `response` is one (as the fixtures are).
//!
//! Nothing panics. Every decision validates against `evaluateChangesetResult` of the outer schema,
//! whatever the provider wrote into its diagnostics. An accepted answer carries no host-owned field
//! at any depth. `allow` only for an accepted answer at `interactive`; at `gate` always
//! `indeterminate`, with `insufficient-assurance` in `coverage.degraded`.
#![no_main]

use asp_bridge_fuzz::flagged;
use core_host::HOST_OWNED;
use core_host::fuzzing::{check_decision, fresh_valid_as_of, provider_answer};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn host_owned(value: &Value) -> Option<&str> {
    match value {
        Value::Object(map) => map.iter().find_map(|(key, inner)| {
            if HOST_OWNED.contains(&key.as_str()) {
                Some(key.as_str())
            } else {
                host_owned(inner)
            }
        }),
        Value::Array(items) => items.iter().find_map(host_owned),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((flags, mut answer)) = flagged(data, "response") else {
        return;
    };
    let (gate, asp01, fresh) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0);
    if fresh && let Some(object) = answer.as_object_mut() {
        object.insert("validAsOf".into(), fresh_valid_as_of());
    }
    let sent = answer.clone();
    let decided = provider_answer(answer, gate, asp01);
    let decision = &decided.decision;

    if let Err(violations) = check_decision(decision) {
        panic!("a decision that is not schema-valid: {violations}");
    }
    if decided.accepted && !asp01 {
        assert_eq!(host_owned(&sent), None, "accepted with a host-owned field");
    }
    let verdict = decision["decision"].as_str().expect("a decision");
    if verdict == "allow" {
        assert!(decided.accepted && !gate, "{decision:#}");
    }
    if gate {
        assert_eq!(verdict, "indeterminate");
        let reasons: Vec<&str> = decision["coverage"]["degraded"]
            .as_array()
            .expect("coverage.degraded")
            .iter()
            .filter_map(|d| d["reason"].as_str())
            .collect();
        assert!(reasons.contains(&"insufficient-assurance"), "{reasons:?}");
    }
});
