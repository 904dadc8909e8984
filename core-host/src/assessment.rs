//! What the host accepts from a provider's `check/evaluate`: a schema-valid Assessment with no
//! host-owned field at any depth, whose `validAsOf` equals what the host asked for (baseline,
//! changeset digest, and the set of blobs the provider read). Anything else is degraded coverage.

use std::collections::BTreeSet;

use asp_wire::proto::AssessmentStatus;
use asp_wire::reason::Reason;
use serde_json::Value;

use crate::json;
use crate::schema::{self, Shape};

/// Fields only a host may write; a provider answer carrying one anywhere is malformed.
pub const HOST_OWNED: &[&str] = &[
    "decision",
    "pass",
    "verdict",
    "authority",
    "assurance",
    "transactionGuarantee",
    "applyReceipt",
    "receipt",
    "policyDigest",
    "policyRef",
    "policyReference",
    "authorityEvidence",
    "hostDecision",
    "applyAttempt",
    "applyResult",
    "disposition",
    "shellCommand",
];

/// What the host asked the provider for.
#[derive(Debug)]
pub(crate) struct Expected<'a> {
    pub(crate) baseline: &'a Value,
    pub(crate) changeset_digest: &'a str,
    /// Blobs the host served to the provider during this request.
    pub(crate) blobs_read: &'a BTreeSet<String>,
}

/// Why an answer was not accepted, as a coverage degradation reason and detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    pub(crate) reason: Reason,
    pub(crate) detail: String,
}

/// A checked Assessment: its status and the document.
#[derive(Clone, Debug)]
pub(crate) struct Accepted {
    pub(crate) status: String,
    pub(crate) assessment: Value,
}

/// Checks one answer. `Ok` for every well-formed, fresh Assessment whatever its status (the
/// caller maps non-complete statuses to degradation but may still show their diagnostics).
pub(crate) fn accept(answer: Value, expected: &Expected<'_>) -> Result<Accepted, Rejection> {
    if let Some(path) = host_owned_field(&answer, "") {
        return Err(Rejection {
            reason: Reason::Malformed,
            detail: format!("the assessment carries the host-owned field {path}"),
        });
    }
    if let Err(e) = schema::check(Shape::Assessment, &answer) {
        return Err(Rejection {
            reason: Reason::Malformed,
            detail: format!("the assessment does not match check-assessment.schema.json: {e}"),
        });
    }
    let valid = &answer["validAsOf"];
    if !same_snapshot(&valid["baseline"], expected.baseline) {
        return Err(stale(
            "its validAsOf.baseline is not the baseline the host sent",
        ));
    }
    if valid["changesetDigest"].as_str() != Some(expected.changeset_digest) {
        return Err(stale(
            "its validAsOf.changesetDigest is not the digest of the changeset the host sent",
        ));
    }
    let reported: BTreeSet<String> = json::strings(&valid["blobs"]);
    let status = answer["status"].as_str().unwrap_or_default();
    // A complete answer names exactly what it read. One that says it is not complete may name
    // fewer: a read it gave up on (its deadline) was still served by the host.
    let fits = if status == AssessmentStatus::Complete.as_str() {
        &reported == expected.blobs_read
    } else {
        reported.is_subset(expected.blobs_read)
    };
    if !fits {
        return Err(stale(&format!(
            "its validAsOf.blobs ({} blobs) are not the {} blobs it read from the host",
            reported.len(),
            expected.blobs_read.len()
        )));
    }
    Ok(Accepted {
        status: status.to_owned(),
        assessment: answer,
    })
}

/// Whether two snapshot references name the same snapshot: by what identifies one (`rev`, and the
/// `dirty` overlay digest), not by when it was stamped (`stampedAt` is the issuer's clock: a client
/// may send its own or none, and a provider echoes the changeset it was given).
pub(crate) fn same_snapshot(a: &Value, b: &Value) -> bool {
    a["rev"].is_string() && a["rev"] == b["rev"] && a["dirty"] == b["dirty"]
}

fn stale(detail: &str) -> Rejection {
    Rejection {
        reason: Reason::Stale,
        detail: format!("the assessment is stale: {detail}"),
    }
}

/// The JSON path of the first host-owned key anywhere in `value`, below the path `at`.
pub(crate) fn host_owned_field(value: &Value, at: &str) -> Option<String> {
    // The path is built only for the key found, on the way back up.
    fn find(value: &Value) -> Option<Vec<String>> {
        match value {
            Value::Object(map) => map.iter().find_map(|(key, inner)| {
                if HOST_OWNED.contains(&key.as_str()) {
                    Some(vec![key.clone()])
                } else {
                    find(inner).map(|mut path| {
                        path.push(key.clone());
                        path
                    })
                }
            }),
            Value::Array(items) => items.iter().enumerate().find_map(|(i, inner)| {
                find(inner).map(|mut path| {
                    path.push(i.to_string());
                    path
                })
            }),
            _ => None,
        }
    }
    let mut path = find(value)?;
    path.reverse();
    Some(
        path.iter()
            .fold(at.to_owned(), |out, segment| format!("{out}/{segment}")),
    )
}

/// What an assessment's own coverage says was not covered (`truncated`, `degraded`, `unsupported`,
/// not `exhaustive`), in words; `None` when its coverage is whole.
pub(crate) fn coverage_gap(assessment: &Value) -> Option<String> {
    let coverage = &assessment["coverage"];
    let listed = |key: &str| coverage[key].as_array().map_or(0, Vec::len);
    let plural = |n: usize| if n == 1 { "entry" } else { "entries" };
    if coverage["truncated"] == true {
        Some("its coverage says its findings were cut short (truncated)".into())
    } else if listed("degraded") > 0 {
        let n = listed("degraded");
        Some(format!("its coverage lists {n} degraded {}", plural(n)))
    } else if listed("unsupported") > 0 {
        let n = listed("unsupported");
        Some(format!("its coverage lists {n} unsupported {}", plural(n)))
    } else if coverage["exhaustive"] == false {
        Some("its coverage says it is not exhaustive".into())
    } else {
        None
    }
}

/// The first `coverage.degraded` (else `coverage.unsupported`) entry of an assessment as one line
/// (the provider's own word on what it did not cover: untrusted, filtered and capped).
pub(crate) fn first_degraded(assessment: &Value) -> Option<String> {
    let coverage = &assessment["coverage"];
    let first = match &coverage["degraded"][0] {
        Value::Null => &coverage["unsupported"][0],
        first => first,
    };
    let detail = first["detail"].as_str().or(first["reason"].as_str())?;
    Some(asp_wire::text::one_line(detail, 300).into_owned())
}

/// The degradation reason of a non-complete status.
pub(crate) fn status_reason(status: &str) -> Option<Reason> {
    match AssessmentStatus::from_wire(status) {
        Some(AssessmentStatus::Complete) => None,
        Some(AssessmentStatus::Incomplete) => Some(Reason::Incomplete),
        Some(AssessmentStatus::Unsupported) => Some(Reason::Unsupported),
        Some(AssessmentStatus::Cancelled) => Some(Reason::Cancelled),
        Some(AssessmentStatus::Error) | None => Some(Reason::Error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn assessment(status: &str) -> Value {
        json!({
            "status": status,
            "diagnostics": [{
                "code": "fake/marker", "severity": "error", "source": "fake", "message": "m",
                "location": {"path": "a.txt", "range": {"start": {"line": 0, "char": 0}, "end": {"line": 0, "char": 4}}},
                "fingerprint": "f1"
            }],
            "coverage": {
                "requested": {"scope": "changeset", "diagnosticSources": ["fake"], "rules": [], "comparison": "all"},
                "covered": {"scope": "changeset", "diagnosticSources": ["fake"], "rules": [], "comparison": "all"},
                "degraded": [], "unsupported": [], "exhaustive": true, "truncated": false
            },
            "validAsOf": {"baseline": {"rev": "git:tree:1"}, "changesetDigest": "sha256:c", "blobs": ["blob:sha256:aa"]},
            "provider": {"id": "fake", "version": "1", "configDigest": "sha256:0", "capabilityVersion": "check/1.0"},
            "timing": {"elapsedMs": 1},
            "cache": {"status": "disabled"}
        })
    }

    fn expect(answer: &Value) -> Result<Accepted, Rejection> {
        let baseline = json!({"rev": "git:tree:1"});
        let blobs: BTreeSet<String> = ["blob:sha256:aa".to_owned()].into();
        accept(
            answer.clone(),
            &Expected {
                baseline: &baseline,
                changeset_digest: "sha256:c",
                blobs_read: &blobs,
            },
        )
    }

    #[test]
    fn a_fresh_well_formed_assessment_is_accepted_whatever_its_status() {
        for status in [
            "complete",
            "incomplete",
            "unsupported",
            "error",
            "cancelled",
        ] {
            assert_eq!(expect(&assessment(status)).unwrap().status, status);
        }
        assert_eq!(
            status_reason("incomplete").map(Reason::as_str),
            Some("incomplete")
        );
        assert_eq!(status_reason("complete"), None);
    }

    #[test]
    fn host_owned_fields_are_malformed_at_any_depth() {
        let mut top = assessment("complete");
        top["decision"] = json!("allow");
        assert_eq!(expect(&top).unwrap_err().reason.as_str(), "malformed");
        let mut nested = assessment("complete");
        nested["diagnostics"][0]["fix"] =
            json!({"editRef": "x", "args": {"deep": [{"verdict": "pass"}]}});
        let err = expect(&nested).unwrap_err();
        assert_eq!(err.reason.as_str(), "malformed");
        assert!(
            err.detail
                .contains("/diagnostics/0/fix/args/deep/0/verdict"),
            "{}",
            err.detail
        );
    }

    #[test]
    fn schema_invalid_answers_are_malformed() {
        let mut bad = assessment("complete");
        bad.as_object_mut().unwrap().remove("validAsOf");
        assert_eq!(expect(&bad).unwrap_err().reason.as_str(), "malformed");
        assert_eq!(
            expect(&json!("complete")).unwrap_err().reason.as_str(),
            "malformed"
        );
    }

    #[test]
    fn valid_as_of_is_compared_by_equality() {
        for (pointer, value) in [
            ("/validAsOf/baseline", json!({"rev": "git:tree:2"})),
            ("/validAsOf/changesetDigest", json!("sha256:other")),
            ("/validAsOf/blobs", json!([])),
            (
                "/validAsOf/blobs",
                json!(["blob:sha256:aa", "blob:sha256:bb"]),
            ),
        ] {
            let mut stale = assessment("complete");
            *stale.pointer_mut(pointer).unwrap() = value;
            assert_eq!(
                expect(&stale).unwrap_err().reason.as_str(),
                "stale",
                "{pointer}"
            );
        }
    }

    #[test]
    fn a_baseline_is_the_same_snapshot_whatever_its_stamp() {
        for echoed in [
            json!({"rev": "git:tree:1", "stampedAt": "2026-01-01T00:00:00.000Z"}),
            json!({"rev": "git:tree:1", "stampedAt": "2030-12-31T23:59:59.000Z"}),
            json!({"rev": "git:tree:1"}),
        ] {
            let mut answer = assessment("complete");
            answer["validAsOf"]["baseline"] = echoed.clone();
            assert!(expect(&answer).is_ok(), "{echoed}");
        }
        let mut dirty = assessment("complete");
        dirty["validAsOf"]["baseline"] = json!({"rev": "git:tree:1", "dirty": "sha256:d"});
        assert_eq!(expect(&dirty).unwrap_err().reason.as_str(), "stale");
    }

    #[test]
    fn a_complete_answer_whose_coverage_is_not_whole_has_a_gap() {
        assert_eq!(coverage_gap(&assessment("complete")), None);
        for (pointer, value, gap) in [
            ("/coverage/truncated", json!(true), "truncated"),
            ("/coverage/exhaustive", json!(false), "not exhaustive"),
            (
                "/coverage/degraded",
                json!([{"source": "fake", "reason": "incomplete"}]),
                "1 degraded entry",
            ),
            (
                "/coverage/unsupported",
                json!([{"source": "fake", "reason": "unsupported"}, {"source": "fake", "reason": "unsupported"}]),
                "2 unsupported entries",
            ),
        ] {
            let mut answer = assessment("complete");
            *answer.pointer_mut(pointer).unwrap() = value;
            let found = coverage_gap(&answer).unwrap_or_default();
            assert!(found.contains(gap), "{pointer}: {found}");
        }
    }

    #[test]
    fn an_answer_that_is_not_complete_may_name_fewer_blobs_than_it_was_served() {
        let mut partial = assessment("incomplete");
        partial["validAsOf"]["blobs"] = json!([]);
        assert!(
            expect(&partial).is_ok(),
            "a read given up on is no staleness"
        );
        partial["validAsOf"]["blobs"] = json!(["blob:sha256:aa", "blob:sha256:bb"]);
        assert_eq!(expect(&partial).unwrap_err().reason.as_str(), "stale");
    }
}
