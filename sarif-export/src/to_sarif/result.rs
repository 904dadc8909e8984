//! One finding as one SARIF result: rule, level, message with the next step, location, fingerprints,
//! baseline state and the finding's own properties. A path outside the workspace is never a
//! location: the result is located on the workspace root (`.`, no region) and says why
//! (`locationRefused`), as GitHub refuses results without a location. A finding that names no file
//! (a project-level finding) is located on the workspace root too, marked `projectLevel`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use asp_wire::proto::{Finding, Range};
use serde_json::{Value, json};
use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, PhysicalLocation, Region, Result as SarifResult,
};

use super::catalogue::Catalogue;
use super::level::level;
use super::{TEXT_MAX, bag};
use crate::line_hash::FileHashes;
use crate::uri;
use crate::values::clean;

/// The key of the host's own fingerprint in `partialFingerprints`.
pub(crate) const ASP_FINGERPRINT: &str = "aspFingerprint/v1";
/// The key GitHub computes (and dedups alerts by) when it is absent.
pub(crate) const LINE_HASH: &str = "primaryLocationLineHash";

pub(crate) fn result(
    finding: &Finding,
    catalogue: &Catalogue,
    repo: Option<&Path>,
    hashes: &mut FileHashes,
) -> SarifResult {
    let d = &finding.diagnostic;
    let (rule_id, rule_index) = match catalogue.rule_of(finding) {
        Some((id, index)) => (id.to_owned(), i64::try_from(index).ok()),
        None => (super::catalogue::rule_id(&d.code), None),
    };
    let Place {
        refused,
        workspace,
        artifact,
        region,
    } = place(finding, repo);
    let mut fingerprints = BTreeMap::new();
    if !d.fingerprint.is_empty() {
        fingerprints.insert(ASP_FINGERPRINT.to_owned(), d.fingerprint.clone());
    }
    if let Some((path, line)) = hashed_line(artifact.as_ref(), region.as_ref())
        && let Some(hash) = hashes.get(path, line)
    {
        fingerprints.insert(LINE_HASH.to_owned(), hash.to_string());
    }
    let location = artifact.map(|artifact| {
        let artifact_location = ArtifactLocation::builder()
            .uri(artifact.uri)
            .opt_uri_base_id(artifact.relative.then(|| uri::SRCROOT.to_owned()))
            .build();
        Location::builder()
            .physical_location(
                PhysicalLocation::builder()
                    .artifact_location(artifact_location)
                    .opt_region(region)
                    .build(),
            )
            .build()
    });
    SarifResult::builder()
        .rule_id(rule_id)
        .opt_rule_index(rule_index)
        .level(level(finding))
        .message(Message::builder().text(message(finding)).build())
        .opt_locations(location.map(|l| vec![l]))
        .opt_partial_fingerprints((!fingerprints.is_empty()).then_some(fingerprints))
        .opt_baseline_state((d.introduced == Some(true)).then(|| json!("new")))
        .properties(properties(
            finding,
            catalogue.provider(finding),
            refused,
            workspace,
        ))
        .build()
}

/// Where a result points.
struct Place {
    /// Why the finding's own path is not shown.
    refused: Option<String>,
    /// A project-level finding, on the workspace root.
    workspace: bool,
    artifact: Option<uri::Artifact>,
    region: Option<Region>,
}

fn place(finding: &Finding, repo: Option<&Path>) -> Place {
    let d = &finding.diagnostic;
    let confined = bridge_core::confine::host_path(repo, &d.location.path);
    let refused = confined
        .as_ref()
        .err()
        .map(|why| refusal(&d.location.path, why));
    let workspace = d.location.is_workspace();
    let artifact = match confined {
        _ if workspace => Some(uri::workspace()),
        Ok(path) => uri::artifact(&path, repo),
        Err(_) => Some(uri::workspace()),
    };
    let on_root = workspace || refused.is_some();
    let region = d.location.range.as_ref().filter(|_| !on_root).map(region);
    Place {
        refused,
        workspace,
        artifact,
        region,
    }
}

/// The workspace file and 1-based line whose hash a result carries, if it has one.
fn hashed_line<'a>(
    artifact: Option<&'a uri::Artifact>,
    region: Option<&Region>,
) -> Option<(&'a str, usize)> {
    let path = artifact?.path.as_deref()?;
    let line = usize::try_from(region?.start_line?).ok()?;
    Some((path, line))
}

/// The workspace files the results of `kept` take line hashes from.
pub(crate) fn hashed_files(kept: &[&Finding], repo: Option<&Path>) -> BTreeSet<String> {
    kept.iter()
        .filter_map(|finding| {
            let Place {
                artifact, region, ..
            } = place(finding, repo);
            hashed_line(artifact.as_ref(), region.as_ref()).map(|(path, _)| path.to_owned())
        })
        .collect()
}

/// Why a finding's path is not shown as its location, when it names a place outside the workspace
/// (`..`, an absolute path or `file:` URI elsewhere): the result is kept, on the workspace root.
pub(crate) fn refused_path(finding: &Finding, repo: Option<&Path>) -> Option<String> {
    let path = &finding.diagnostic.location.path;
    let why = bridge_core::confine::host_path(repo, path).err()?;
    Some(refusal(path, why))
}

/// What a result says of the host's `path` it does not show, and `why`.
fn refusal(path: &str, why: &str) -> String {
    let shown = clean(path, 200, "");
    format!("the host's path {shown:?} is not shown: {why}")
}

/// The message, then the next step when the host gives one that the message does not already say.
fn message(finding: &Finding) -> String {
    let mut text = clean(&finding.diagnostic.message, TEXT_MAX, "(no message)");
    if let Some(next) = finding.next_step.as_deref() {
        let next = clean(next, TEXT_MAX, "");
        if !next.is_empty() && next != text {
            text.push_str("\n\nNext step: ");
            text.push_str(&next);
        }
    }
    text
}

/// A 0-based UTF-16 range as a 1-based region, end column exclusive; an end before the start is
/// read as the start (an empty region).
fn region(range: &Range) -> Region {
    let start = (
        i64::from(range.start.line) + 1,
        i64::from(range.start.char) + 1,
    );
    let end = (i64::from(range.end.line) + 1, i64::from(range.end.char) + 1);
    let end = end.max(start);
    Region::builder()
        .start_line(start.0)
        .start_column(start.1)
        .end_line(end.0)
        .end_column(end.1)
        .build()
}

/// What SARIF has no field for: the ASP severity, disposition, next step and its origin, the
/// severity note, whether the finding is new, the provider and whether its authority was granted.
fn properties(
    finding: &Finding,
    provider: String,
    refused: Option<String>,
    workspace: bool,
) -> serde_sarif::sarif::PropertyBag {
    let d = &finding.diagnostic;
    let text = |t: &Option<String>| {
        t.as_deref()
            .map(|t| clean(t, TEXT_MAX, ""))
            .filter(|t| !t.is_empty())
            .map_or(Value::Null, Value::String)
    };
    bag([
        (
            "severity",
            Some(d.severity.as_str())
                .filter(|s| !s.is_empty())
                .map_or(Value::Null, |s| json!(clean(s, 100, ""))),
        ),
        (
            "disposition",
            finding
                .disposition
                .as_ref()
                .map_or(Value::Null, |d| json!(d.as_str())),
        ),
        ("nextStep", text(&finding.next_step)),
        ("nextStepOrigin", text(&finding.next_step_origin)),
        ("severityNote", text(&finding.severity_note)),
        ("introduced", d.introduced.map_or(Value::Null, Value::Bool)),
        ("provider", Value::String(provider)),
        (
            "authorityGranted",
            finding
                .authority
                .as_ref()
                .map_or(Value::Null, |a| Value::Bool(a.authority.granted)),
        ),
        (
            "locationRefused",
            refused.map_or(Value::Null, Value::String),
        ),
        (
            "projectLevel",
            if workspace {
                Value::Bool(true)
            } else {
                Value::Null
            },
        ),
    ])
}
