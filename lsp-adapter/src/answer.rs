//! The host's decision, read only as far as one document needs it.
//!
//! An evaluation is shown in one document, but the host's answer may hold findings for many files
//! (thousands on a large repository): decoding all of them into typed findings cost more than
//! everything else the language server does with the answer. [`Answer`] keeps the answer's text and
//! decodes everything but the findings, which are only located (a scan, no allocation per finding);
//! [`Answer::at`] then decodes the findings of one document, and just counts the others.

use std::borrow::Cow;
use std::ops::Range;

use bridge_core::proto::{Decision, DecisionKind, Finding};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The method whose answer this is, for a malformed-answer error.
const METHOD: &str = "host/evaluateChangeset";

/// A `host/evaluateChangeset` result whose findings are still raw.
#[derive(Debug)]
pub(crate) struct Answer {
    text: Box<RawValue>,
    /// The decision without its findings.
    head: Decision,
    /// Where each finding is in `text`.
    findings: Vec<Range<usize>>,
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
    same_path(path, document) || bridge_core::proto::is_workspace_path(path)
}

/// Whether the host's `path` names the document at `document` (repo-relative, `/`-separated).
pub(crate) fn same_path(host: &str, document: &str) -> bool {
    let host = host.strip_prefix("./").unwrap_or(host);
    host == document || (host.contains('\\') && host.replace('\\', "/") == document)
}

impl Answer {
    /// Reads `text`, a decision: everything but the findings, which are only located.
    pub(crate) fn parse(text: Box<RawValue>) -> serde_json::Result<Answer> {
        let base = text.get().as_ptr() as usize;
        let fields: Fields<'_> = serde_json::from_str(text.get())?;
        let mut head = String::with_capacity(fields.head_len + 2);
        head.push('{');
        let mut findings_text = None;
        for (key, value) in &fields.pairs {
            if key == "findings" {
                if findings_text.replace(*value).is_some() {
                    return Err(de::Error::duplicate_field("findings"));
                }
                continue;
            }
            if head.len() > 1 {
                head.push(',');
            }
            head.push_str(&serde_json::to_string(key)?);
            head.push(':');
            head.push_str(value.get());
        }
        head.push('}');
        let head: Decision = serde_json::from_str(&head)?;
        let findings = match findings_text {
            None => Vec::new(),
            // Anything but an array (`null` too) is refused, as the typed decision refuses it.
            Some(list) => serde_json::from_str::<Vec<&RawValue>>(list.get())?
                .into_iter()
                .map(|finding| {
                    let at = finding.get().as_ptr() as usize - base;
                    at..at + finding.get().len()
                })
                .collect(),
        };
        Ok(Answer {
            text,
            head,
            findings,
        })
    }

    /// The decision as the document at `path` shows it: its findings decoded, the others counted.
    pub(crate) fn at(self, path: &str) -> bridge_core::Result<Checked> {
        let malformed = |e: serde_json::Error| bridge_core::Error::Malformed {
            role: bridge_core::Role::Host,
            method: METHOD.to_owned(),
            detail: e.to_string(),
        };
        let mut decision = self.head;
        let mut elsewhere = 0;
        for range in &self.findings {
            let text = &self.text.get()[range.clone()];
            let probe: Probe<'_> = serde_json::from_str(text).map_err(malformed)?;
            if shown_in(&probe.diagnostic.location.path, path) {
                decision
                    .findings
                    .push(serde_json::from_str::<Finding>(text).map_err(malformed)?);
            } else {
                elsewhere += 1;
            }
        }
        Ok(Checked {
            decision,
            elsewhere,
            left_out: None,
        })
    }
}

impl<'de> Deserialize<'de> for Answer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Answer, D::Error> {
        let text = Box::<RawValue>::deserialize(deserializer)?;
        Answer::parse(text).map_err(de::Error::custom)
    }
}

/// The top-level fields of the answer, each value raw, in order (duplicates kept, so the typed
/// decode of the head still refuses them).
struct Fields<'a> {
    pairs: Vec<(Cow<'a, str>, &'a RawValue)>,
    head_len: usize,
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Fields<'a>, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = Fields<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a decision object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Fields<'de>, M::Error> {
                let mut pairs = Vec::new();
                let mut head_len = 0;
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    if key.0 != "findings" {
                        head_len += key.0.len() + value.get().len() + 4;
                    }
                    pairs.push((key.0, value));
                }
                Ok(Fields { pairs, head_len })
            }
        }
        deserializer.deserialize_map(Pairs)
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
