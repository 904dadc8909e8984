//! Exists for `fuzz/` (the cargo-fuzz crate outside the workspace): a provider's `check/evaluate`
//! answer through what the host does with it (the asp/0.1 mapping for opcore, the checks of an
//! Assessment, its outcome, the decision and its receipt) without a provider process or a
//! repository; and a client's changeset through intake against a real repository. Not for other
//! callers.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::assessment::{self, Expected};
use crate::config::CallSite;
use crate::decide::{self, Item, Outcome, Request};
use crate::provider::{Failure, from_asp01};
use crate::snapshot::{self, Workspace};

const BASELINE: &str = "git:tree:4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const CHANGESET_DIGEST: &str =
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const BLOB: &str = "blob:sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae";

/// The `validAsOf` of a fresh answer: the baseline and changeset digest the host sent, and the one
/// blob it served.
pub fn fresh_valid_as_of() -> Value {
    json!({
        "baseline": {"rev": BASELINE, "stampedAt": "2026-01-01T00:00:00.000Z"},
        "changesetDigest": CHANGESET_DIGEST,
        "blobs": [BLOB],
    })
}

/// What the host made of one answer.
#[derive(Debug)]
pub struct Decided {
    /// Whether the answer was accepted as a fresh, well-formed Assessment (of any status).
    pub accepted: bool,
    /// The decision envelope the host would send on the outer seam.
    pub decision: Value,
}

/// `answer` as the `check/evaluate` result of the one provider of an evaluation, required for the
/// call site and authorized by the trusted configuration: at `interactive`, or at `gate` when
/// `gate` is set; mapped from asp/0.1 first when `asp01` is set, as for opcore.
pub fn provider_answer(mut answer: Value, gate: bool, asp01: bool) -> Decided {
    if asp01 {
        answer = from_asp01::assessment(answer, &mut from_asp01::Applied::new());
    }
    let valid_as_of = fresh_valid_as_of();
    let served = BTreeSet::from([BLOB.to_owned()]);
    let expected = Expected {
        baseline: &valid_as_of["baseline"],
        changeset_digest: CHANGESET_DIGEST,
        blobs_read: &served,
    };
    let accepted = assessment::accept(answer, &expected);
    let was_accepted = accepted.is_ok();
    let outcome = match accepted {
        Ok(accepted) => decide::outcome_of(accepted),
        Err(rejection) => Failure::rejected(rejection).into(),
    };
    let item = authorized_item("fuzz", true, outcome);
    let request = Request {
        call_site: if gate {
            CallSite::Gate
        } else {
            CallSite::Interactive
        },
        request_digest: "sha256:0".into(),
        changeset_digest: CHANGESET_DIGEST,
        policy_digest: "sha256:0",
        baseline: &valid_as_of["baseline"],
        started: SystemTime::now(),
        host_degraded: Vec::new(),
    };
    Decided {
        accepted: was_accepted,
        decision: decide::decide(request, vec![item]),
    }
}

/// The coverage entry of provider `name`, enrolled and authorized by the trusted configuration,
/// with `outcome` (also the entry of the decision tests).
pub(crate) fn authorized_item(name: &str, required: bool, outcome: Outcome) -> Item {
    Item {
        requirement: name.into(),
        provider: name.into(),
        required,
        authorized: true,
        authority: json!({"identity": name, "integrity": "sha256:1", "conformance": "unverified",
            "isolation": "advisory", "authority": {"granted": true, "requirement": "trusted-config"}}),
        provenance: Some(
            json!({"provider": name, "capability": "check", "identity": name, "integrity": "sha256:1"}),
        ),
        outcome,
    }
}

/// `Ok` when `decision` is a valid `evaluateChangesetResult` of `outer-host.schema.json`, else the
/// violations.
pub fn check_decision(decision: &Value) -> Result<(), String> {
    crate::schema::check_outer("evaluateChangesetResult", decision)
}

/// The workspace of [`intake`]: a git work tree.
#[derive(Debug)]
pub struct IntakeWorkspace(Workspace);

impl IntakeWorkspace {
    /// Opens the work tree at `root`. Blocking.
    pub fn open(root: &Path) -> Result<IntakeWorkspace, String> {
        Workspace::open(root)
            .map(IntakeWorkspace)
            .map_err(|e| e.to_string())
    }

    /// The `rev` of the host's own baseline, which a changeset must name to be checked.
    pub fn baseline_rev(&self) -> String {
        self.0.baseline().rev().to_owned()
    }
}

/// A blob intake kept for the providers' reads.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Kept {
    pub id: String,
    pub path: String,
    /// `None` past the size cap.
    pub bytes: Option<Vec<u8>>,
}

/// What intake made of a changeset: the blobs kept and the `stale` reasons, or the `input` error.
pub fn intake(
    workspace: &IntakeWorkspace,
    changeset: &Value,
) -> Result<(Vec<Kept>, usize), String> {
    let baseline = workspace.0.baseline();
    let deadline = Instant::now() + Duration::from_secs(20);
    let intake = snapshot::intake(&workspace.0, &baseline, changeset, deadline)?;
    let mut kept: Vec<Kept> = intake
        .blobs
        .into_iter()
        .map(|(id, blob)| Kept {
            id,
            path: blob.path,
            bytes: blob.bytes.map(|b| b.to_vec()),
        })
        .collect();
    kept.sort();
    Ok((
        kept,
        intake.stale.len() + usize::from(intake.stale_baseline.is_some()),
    ))
}

/// [`intake`] as the host tries it first: on the calling thread, with reads that cannot wait.
/// `None` when the attempt was refused (the host then runs [`intake`] on its blocking pool); an
/// answer must be the one [`intake`] gives.
pub fn intake_without_waiting(
    workspace: &IntakeWorkspace,
    changeset: &Value,
) -> Option<Result<(Vec<Kept>, usize), String>> {
    snapshot::nowait::attempt(|| intake(workspace, changeset))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean() -> Value {
        json!({
            "status": "complete",
            "diagnostics": [],
            "coverage": {
                "requested": {"scope": "changeset", "diagnosticSources": ["f"], "rules": [], "comparison": "all"},
                "covered": {"scope": "changeset", "diagnosticSources": ["f"], "rules": [], "comparison": "all"},
                "degraded": [], "unsupported": [], "exhaustive": true, "truncated": false
            },
            "validAsOf": fresh_valid_as_of(),
            "provider": {"id": "f", "version": "1", "configDigest": "sha256:0", "capabilityVersion": "check/1.0"},
            "timing": {"elapsedMs": 1},
            "cache": {"status": "disabled"}
        })
    }

    // Reads at hand are Linux's: elsewhere every attempt that reads refuses.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_intake_at_hand_gives_what_the_blocking_intake_gives() {
        let repo = test_support::git::Repo::new(&[("a.txt", "a\n")]);
        repo.write("a.txt", "b\n");
        let workspace = IntakeWorkspace::open(repo.path()).unwrap();
        let id = |text: &str| snapshot::blob_of(text.as_bytes().to_vec()).id;
        let changeset = json!({"baseline": {"rev": workspace.baseline_rev()}, "changes": [
            {"path": "a.txt", "kind": "modify", "before": id("a\n"), "after": id("b\n")}]});
        let blocking = intake(&workspace, &changeset);
        assert_eq!(blocking.as_ref().unwrap().0.len(), 2);
        let at_hand = intake_without_waiting(&workspace, &changeset).expect("cached by now");
        assert_eq!(at_hand, blocking);
    }

    #[test]
    fn a_fresh_clean_answer_is_allowed_at_interactive_and_never_at_gate() {
        let decided = provider_answer(clean(), false, false);
        assert!(decided.accepted);
        assert_eq!(
            decided.decision["decision"], "allow",
            "{:#}",
            decided.decision
        );
        check_decision(&decided.decision).unwrap();
        let gated = provider_answer(clean(), true, false);
        assert_eq!(gated.decision["decision"], "indeterminate");
        check_decision(&gated.decision).unwrap();
    }

    #[test]
    fn a_host_owned_field_the_schema_lets_through_is_refused_by_the_host_itself() {
        // A fix's `args` are free-form, and the schema's list of forbidden names lacks this one.
        let mut answer = clean();
        answer["diagnostics"] = json!([{"code": "f/x", "severity": "warning", "source": "f",
            "message": "m", "location": {"path": "a.txt"}, "fingerprint": "f1",
            "fix": {"editRef": "f/fix", "args": {"shellCommand": "rm -rf /"}}}]);
        let decided = provider_answer(answer, false, false);
        assert!(!decided.accepted, "{:#}", decided.decision);
        let reasons = &decided.decision["coverage"]["degraded"];
        assert_eq!(reasons[0]["reason"], "malformed", "{reasons:#}");
    }

    #[test]
    fn a_host_owned_field_anywhere_is_malformed() {
        let mut answer = clean();
        answer["diagnostics"] = json!([{"data": [{"verdict": "pass"}]}]);
        let decided = provider_answer(answer, false, true);
        assert!(!decided.accepted);
        assert_eq!(decided.decision["decision"], "indeterminate");
        check_decision(&decided.decision).unwrap();
    }
}
