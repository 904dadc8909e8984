//! A host decision as one SARIF 2.1.0 log: the only place the mapping lives.
//!
//! - one run; `tool.driver` is the host (name, version, `semanticVersion` when semver) with a rules
//!   catalogue, `tool.extensions` are the providers (diagnostic `source`) with their authority
//!   evidence, `conversion.tool` is asp-bridge ([`catalogue`]);
//! - one result per kept finding, pointing at its rule with `ruleIndex` ([`result`]);
//! - `invocations[0]` with `executionSuccessful: true` and one notification per thing that did not
//!   run, and run `properties` with the decision, advisory only ([`invocation`]);
//! - relative URIs against `%SRCROOT%`, `columnKind: utf16CodeUnits`, `automationDetails` only with a
//!   category, GitHub's limits respected with a notification ([`crate::limits`]).

mod catalogue;
mod invocation;
mod level;
mod result;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use asp_wire::proto::{Decision, Finding};
use serde_json::{Value, json};
use serde_sarif::sarif::{
    ArtifactLocation, Conversion, PropertyBag, Result as SarifResult, Run, RunAutomationDetails,
    Sarif, Tool, ToolComponent,
};

use crate::line_hash::FileHashes;
use crate::options::Options;
use crate::summary::Summary;
use crate::{limits, uri};

/// Where the SARIF 2.1.0 schema is published (GitHub's documented `$schema`).
pub(crate) const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Longest message, help or next-step text kept, in characters.
const TEXT_MAX: usize = 8_000;
/// Longest rule description (GitHub: 1,024).
const DESCRIPTION_MAX: usize = 1_000;
/// Longest rule, tool or extension name (GitHub: 255).
const NAME_MAX: usize = 255;
/// Longest degraded-coverage detail.
const DETAIL_MAX: usize = 2_000;

/// A decision ready to be written: the whole log but its results (the run's `results` is left
/// empty), and what the results are made from when the log is written, one at a time, so that no
/// second owned copy of every finding is ever built.
pub(crate) struct Prepared<'a> {
    /// The log without results: one run, whose `results` the writer fills.
    pub(crate) head: Sarif,
    results: Results<'a>,
}

/// What the results are built from.
struct Results<'a> {
    kept: Vec<&'a Finding>,
    catalogue: catalogue::Catalogue<'a>,
    repo: Option<&'a Path>,
    /// Files read for line hashes (each once), filled as results are written.
    hashes: RefCell<FileHashes>,
}

impl Prepared<'_> {
    /// The run's results, in host order, each built just before it is written.
    pub(crate) fn results(&self) -> impl Iterator<Item = SarifResult> + '_ {
        let Results {
            kept,
            catalogue,
            repo,
            hashes,
        } = &self.results;
        kept.iter()
            .map(move |finding| result::result(finding, catalogue, *repo, &mut hashes.borrow_mut()))
    }
}

/// Converts `decision`; never fails, whatever the host sent.
pub(crate) fn prepare<'a>(decision: &'a Decision, options: &'a Options) -> (Prepared<'a>, Summary) {
    let selection = limits::select(&decision.findings, &options.limits);
    let kept: Vec<&Finding> = selection
        .kept
        .iter()
        .map(|&i| &decision.findings[i])
        .collect();
    let catalogue = catalogue::Catalogue::build(&kept);
    let (extensions, extensions_omitted) =
        catalogue::extensions(&decision.findings, options.limits.extensions_per_run);
    let mut notifications = invocation::not_run(decision, &options.left_out);
    notifications.extend(invocation::limit_notices(
        &selection,
        decision.findings.len(),
        extensions_omitted,
        &options.limits,
    ));
    let refused = kept
        .iter()
        .filter(|f| result::refused_path(f, options.repo.as_deref()).is_some())
        .count();
    notifications.extend(invocation::refused_locations(refused));
    notifications.extend(invocation::left_out(&options.left_out));
    let summary = Summary {
        decision: decision.decision.as_str().to_owned(),
        results: kept.len(),
        omitted_results: selection.omitted(),
        rules: catalogue.len(),
        notifications: notifications.len(),
    };
    let driver = catalogue::driver(decision, options.host.as_ref(), catalogue.rules());
    let tool = Tool::builder()
        .driver(driver)
        .opt_extensions((!extensions.is_empty()).then_some(extensions))
        .build();
    let run = Run::builder()
        .tool(tool)
        .invocations(vec![invocation::invocation(
            decision,
            options,
            notifications,
        )])
        .column_kind(json!("utf16CodeUnits"))
        .opt_original_uri_base_ids(options.repo.as_deref().map(|repo| {
            BTreeMap::from([(
                uri::SRCROOT.to_owned(),
                ArtifactLocation::builder()
                    .uri(uri::directory_uri(repo))
                    .build(),
            )])
        }))
        .opt_automation_details(automation_details(options.category.as_deref()))
        .conversion(conversion())
        .properties(invocation::run_properties(decision, &selection))
        .build();
    let head = Sarif::builder()
        .schema(SCHEMA_URI)
        .version("2.1.0")
        .runs(vec![run])
        .build();
    let mut hashes = FileHashes::new(options.repo.as_deref());
    if options.repo.is_some() {
        hashes.prefetch(&result::hashed_files(&kept, options.repo.as_deref()));
    }
    let results = Results {
        kept,
        catalogue,
        repo: options.repo.as_deref(),
        hashes: RefCell::new(hashes),
    };
    (Prepared { head, results }, summary)
}

/// `automationDetails.id` from a code-scanning category: GitHub reads the part before the last `/`
/// as the category, so a category without a trailing `/` gets one (as `upload-sarif` does).
fn automation_details(category: Option<&str>) -> Option<RunAutomationDetails> {
    let category = category.map(str::trim).filter(|c| !c.is_empty())?;
    let id = if category.ends_with('/') {
        category.to_owned()
    } else {
        format!("{category}/")
    };
    Some(RunAutomationDetails::builder().id(id).build())
}

/// asp-bridge converted the host's answer into SARIF: it is the converter, not the analysis tool.
fn conversion() -> Conversion {
    let bridge = ToolComponent::builder()
        .name("asp-bridge")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .build();
    Conversion::builder()
        .tool(Tool::builder().driver(bridge).build())
        .properties(bag([("authoritative", json!(false))]))
        .build()
}

/// A property bag of the pairs whose value is not null.
pub(crate) fn bag<'a>(pairs: impl IntoIterator<Item = (&'a str, Value)>) -> PropertyBag {
    PropertyBag::builder()
        .additional_properties(
            pairs
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<BTreeMap<_, _>>(),
        )
        .build()
}

#[cfg(test)]
mod tests;
