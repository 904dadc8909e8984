//! The host's decision, read only as far as one document needs it.
//!
//! An evaluation is shown in one document, but the host's answer may hold findings for many files
//! (thousands on a large repository): decoding all of them into typed findings cost more than
//! everything else the language server does with the answer. [`Answer`] decodes everything but the
//! findings, which it keeps raw, one slice each (one scan, no decode); [`Answer::at`] then decodes
//! the findings of one document and just counts the others. Whether a finding is the document's
//! is read from its path first (a probe that decodes nothing else), except right after a finding
//! that was the document's: findings come grouped by file, so the next one is decoded whole at once
//! and the probe is skipped, which keeps an answer whose findings are all in the document at one
//! decode per finding.

use bridge_core::model::{DecisionView, NotRunView};
use std::borrow::Cow;

use asp_wire::proto::{Decision, DecisionKind, Finding};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// A `host/evaluateChangeset` result whose findings are still raw.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The decision without its findings.
    head: Decision,
    /// Each finding's text, in the host's order.
    findings: Vec<Box<RawValue>>,
}

/// The decision as one document shows it: its findings located there, decoded, in the host's order.
#[derive(Clone, Debug)]
pub(crate) struct Checked {
    pub(crate) decision: Decision,
    /// How many findings are located in other files.
    pub(crate) elsewhere: usize,
    /// Why the document itself was left out of the changeset (not a regular file, or inside a
    /// nested repository): it was not checked, whatever the decision says.
    pub(crate) left_out: Option<String>,
}

impl Checked {
    /// `decision` as the document at `path` shows it.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn new(mut decision: Decision, path: &str) -> Checked {
        let before = decision.findings.len();
        decision
            .findings
            .retain(|f| shown_in(&f.diagnostic.location.path, path));
        let elsewhere = before - decision.findings.len();
        Checked {
            decision,
            elsewhere,
            left_out: None,
        }
    }

    /// Whether required coverage is incomplete ([`Decision::is_incomplete`], counting the findings
    /// located elsewhere: a refusal explained by them is not unexplained).
    pub(crate) fn is_incomplete(&self) -> bool {
        let decision = &self.decision;
        if self.elsewhere == 0 {
            return decision.is_incomplete();
        }
        decision.is(DecisionKind::Indeterminate) || !decision.not_run().is_empty()
    }
}

/// Whether a finding the host located at `path` is shown in the document at `document`: the
/// document's own findings, and those on the workspace as a whole (a project-level finding names
/// no file, so every document shows it at its top).
pub(crate) fn shown_in(path: &str, document: &str) -> bool {
    same_path(path, document) || asp_wire::proto::is_workspace_path(path)
}

/// Whether the host's `path` names the document at `document` (repo-relative, `/`-separated).
pub(crate) fn same_path(host: &str, document: &str) -> bool {
    let host = host.strip_prefix("./").unwrap_or(host);
    host == document || (host.contains('\\') && host.replace('\\', "/") == document)
}

impl Answer {
    /// The decision as the document at `path` shows it: its findings decoded, the others counted.
    pub(crate) fn at(self, path: &str) -> bridge_core::Result<Checked> {
        let malformed = |e: serde_json::Error| {
            bridge_core::Error::Peer(rpc_peer::Error::Malformed {
                role: rpc_peer::Role::Host,
                method: asp_wire::proto::EVALUATE_CHANGESET.to_owned(),
                detail: e.to_string(),
            })
        };
        let mut decision = self.head;
        let mut elsewhere = 0;
        // Whether the finding before was the document's: then this one likely is too.
        let mut after_shown = false;
        for finding in &self.findings {
            let text = finding.get();
            let shown = if after_shown {
                match serde_json::from_str::<Finding>(text) {
                    Ok(finding) => {
                        shown_in(&finding.diagnostic.location.path, path).then_some(finding)
                    }
                    // Malformed: refused if it is the document's, counted if it is not (as below).
                    Err(error) => match probe(text, path).map_err(malformed)? {
                        true => return Err(malformed(error)),
                        false => None,
                    },
                }
            } else if probe(text, path).map_err(malformed)? {
                Some(serde_json::from_str::<Finding>(text).map_err(malformed)?)
            } else {
                None
            };
            after_shown = shown.is_some();
            match shown {
                Some(finding) => decision.findings.push(finding),
                None => elsewhere += 1,
            }
        }
        Ok(Checked {
            decision,
            elsewhere,
            left_out: None,
        })
    }
}

/// Whether the finding `text` is shown in the document at `path`, reading only its path.
fn probe(text: &str, path: &str) -> serde_json::Result<bool> {
    let probe: Probe<'_> = serde_json::from_str(text)?;
    Ok(shown_in(&probe.diagnostic.location.path, path))
}

impl<'de> Deserialize<'de> for Answer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Answer, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Answer;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a decision object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Answer, M::Error> {
                // The head is rebuilt as text from the fields in order (duplicates kept, so its
                // typed decode still refuses them) and decoded as a decision without findings.
                let mut head = String::from("{");
                let mut findings = None;
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    if key.0 == "findings" {
                        // Anything but an array (`null` too) is refused, as the typed decision
                        // refuses it.
                        let list: Vec<Box<RawValue>> = map.next_value()?;
                        if findings.replace(list).is_some() {
                            return Err(de::Error::duplicate_field("findings"));
                        }
                        continue;
                    }
                    let value: Box<RawValue> = map.next_value()?;
                    if head.len() > 1 {
                        head.push(',');
                    }
                    head.push_str(&serde_json::to_string(&key.0).map_err(de::Error::custom)?);
                    head.push(':');
                    head.push_str(value.get());
                }
                head.push('}');
                let head: Decision = serde_json::from_str(&head).map_err(de::Error::custom)?;
                Ok(Answer {
                    head,
                    findings: findings.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// A key, borrowed unless it holds an escape.
#[derive(Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

/// Where a finding is, and nothing else of it.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    diagnostic: ProbeDiagnostic<'a>,
}

#[derive(Deserialize)]
struct ProbeDiagnostic<'a> {
    #[serde(borrow, default)]
    location: ProbeLocation<'a>,
}

#[derive(Default, Deserialize)]
struct ProbeLocation<'a> {
    #[serde(borrow, default)]
    path: Cow<'a, str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    use test_support::fixture;

    fn answer(value: &Value) -> serde_json::Result<Answer> {
        serde_json::from_str(&value.to_string())
    }

    /// What the typed decode of the whole answer shows in the document at `path`.
    fn typed(value: &Value, path: &str) -> Checked {
        Checked::new(serde_json::from_value(value.clone()).unwrap(), path)
    }

    fn fingerprints(checked: &Checked) -> Vec<String> {
        let findings = &checked.decision.findings;
        findings
            .iter()
            .map(|f| f.diagnostic.fingerprint.clone())
            .collect()
    }

    #[test]
    fn one_documents_findings_are_decoded_and_the_others_counted() {
        let mut value = fixture("outer/evaluate.deny.gating.json");
        let template = value["findings"][0].clone();
        let findings: Vec<Value> = (0..7)
            .map(|i| {
                let mut finding = template.clone();
                let path = if i % 3 == 0 {
                    "src/api.ts"
                } else {
                    "./src/other.ts"
                };
                finding["diagnostic"]["location"]["path"] = json!(path);
                finding["diagnostic"]["fingerprint"] = json!(format!("sha256:{i}"));
                finding
            })
            .collect();
        value["findings"] = Value::Array(findings);
        for path in ["src/api.ts", "src/other.ts", "src/none.ts"] {
            let lazy = answer(&value).unwrap().at(path).unwrap();
            let whole = typed(&value, path);
            assert_eq!(fingerprints(&lazy), fingerprints(&whole), "{path}");
            assert_eq!(lazy.elsewhere, whole.elsewhere, "{path}");
            assert_eq!(lazy.decision.receipt.receipt_id, "eval-deny-0001");
            assert_eq!(lazy.is_incomplete(), whole.is_incomplete());
        }
        let api = answer(&value).unwrap().at("src/api.ts").unwrap();
        assert_eq!(fingerprints(&api), ["sha256:0", "sha256:3", "sha256:6"]);
        assert_eq!(api.elsewhere, 4);
    }

    #[test]
    fn a_refusal_explained_by_findings_elsewhere_is_not_incomplete() {
        let value = fixture("outer/evaluate.deny.gating.json");
        let other = answer(&value).unwrap().at("src/other.ts").unwrap();
        assert!(other.decision.findings.is_empty());
        assert!(
            !other.is_incomplete(),
            "the deny is explained in src/api.ts"
        );
        let mut bare = value.clone();
        bare["findings"] = json!([]);
        assert!(
            answer(&bare)
                .unwrap()
                .at("src/api.ts")
                .unwrap()
                .is_incomplete()
        );
    }

    #[test]
    fn every_fixture_reads_as_the_typed_decision_does() {
        for name in [
            "outer/evaluate.deny.gating.json",
            "outer/evaluate.indeterminate.missing-provider.json",
            "core/evaluate.allow.json",
            "bent/evaluate.json",
            "hostile/evaluate.strings.json",
        ] {
            let value = fixture(name);
            let lazy = answer(&value).unwrap().at("src/api.ts").unwrap();
            let whole = typed(&value, "src/api.ts");
            assert_eq!(fingerprints(&lazy), fingerprints(&whole), "{name}");
            assert_eq!(lazy.elsewhere, whole.elsewhere, "{name}");
            assert_eq!(lazy.is_incomplete(), whole.is_incomplete(), "{name}");
            assert_eq!(lazy.decision.not_run(), whole.decision.not_run(), "{name}");
        }
    }

    #[test]
    fn what_the_typed_decision_refuses_is_refused() {
        let mut no_decision = fixture("outer/evaluate.deny.gating.json");
        no_decision.as_object_mut().unwrap().remove("decision");
        assert!(answer(&no_decision).is_err());
        assert!(answer(&json!([1, 2])).is_err());
        assert!(answer(&json!({"decision": "deny", "findings": 5})).is_err());
        assert!(answer(&json!({"decision": "deny", "findings": null})).is_err());
        let text = r#"{"decision": "deny", "findings": [], "findings": []}"#;
        assert!(
            serde_json::from_str::<Answer>(text).is_err(),
            "a duplicate field"
        );
        let broken = json!({"decision": "deny", "findings": [{"diagnostic":
            {"location": {"path": "src/api.ts"}, "message": 5}}]});
        let error = answer(&broken).unwrap().at("src/api.ts").unwrap_err();
        assert!(error.to_string().contains("malformed"), "{error}");
    }

    #[test]
    fn a_malformed_finding_is_refused_only_in_its_own_document_wherever_it_comes() {
        let good = |path: &str, fingerprint: &str| json!({"diagnostic": {"location": {"path": path}, "fingerprint": fingerprint}});
        let bad = |path: &str| json!({"diagnostic": {"location": {"path": path}, "message": 5}});
        // After a finding of the document (decoded whole at once) and after one of another file
        // (probed first): the same outcome.
        for first in ["src/api.ts", "src/other.ts"] {
            let value = json!({"decision": "deny", "findings": [
                good(first, "a"), bad("src/other.ts"), good("src/api.ts", "b")]});
            let checked = answer(&value).unwrap().at("src/api.ts").unwrap();
            let expected: &[&str] = if first == "src/api.ts" {
                &["a", "b"]
            } else {
                &["b"]
            };
            assert_eq!(fingerprints(&checked), expected, "after {first}");
            assert_eq!(checked.elsewhere, 3 - expected.len(), "after {first}");
            let value = json!({"decision": "deny", "findings": [
                good(first, "a"), bad("src/api.ts")]});
            let error = answer(&value).unwrap().at("src/api.ts").unwrap_err();
            assert!(error.to_string().contains("malformed"), "{error}");
        }
    }

    #[test]
    fn escaped_keys_and_paths_are_read() {
        let text = r#"{"decis\u0069on": "deny", "findings": [{"diagnostic": {"location":
            {"path": "src\/api.ts"}, "fingerprint": "f"}}]}"#;
        let checked = serde_json::from_str::<Answer>(text)
            .unwrap()
            .at("src/api.ts")
            .unwrap();
        assert_eq!(fingerprints(&checked), ["f"]);
    }
}
