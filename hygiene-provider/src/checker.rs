//! The hygiene checks as a checker on the provider kit: the rule catalogue, the configuration
//! (`maxAddedFileKb`, `yaml`), and each batch of file sides checked off the async threads, file by
//! file until the deadline or until the evaluation is gone.

use std::future::Future;
use std::time::Instant;

use provider_kit::{About, Checked, Checker, Finding, Run, Side, Stop, Workspace};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::checks::{self, Settings, Subject};
use crate::rules::{Rule, SOURCE};

/// The hygiene provider's checker.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Hygiene;

/// Serves the inner seam over `reader`/`writer` (the host's output and input) until the host
/// closes its end or sends `exit`.
pub async fn serve<R, W>(
    reader: R,
    writer: W,
    identity: provider_kit::Identity,
) -> provider_kit::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    provider_kit::serve(reader, writer, Hygiene, identity).await
}

impl Checker for Hygiene {
    type Rule = Rule;
    type Settings = Settings;

    fn about(&self) -> About {
        About {
            id: SOURCE,
            source: SOURCE,
            publisher: "asp-bridge",
            per_rule_cap: Some(checks::PER_RULE),
        }
    }

    fn rules(&self) -> Vec<Rule> {
        Rule::ALL.to_vec()
    }

    fn rule_id<'r>(&'r self, rule: &'r Rule) -> &'r str {
        rule.id()
    }

    fn parse_rule(&self, id: &str) -> Option<Rule> {
        Rule::parse(id)
    }

    fn configure(&self, configuration: Option<&Value>) -> Result<(Settings, Value), String> {
        crate::request::configuration(configuration)
    }

    fn check<W: Workspace>(
        &self,
        sides: Vec<Side>,
        run: &Run<'_, Self, W>,
    ) -> impl Future<Output = Result<Vec<Checked>, String>> + Send {
        let rules = run.rules.to_vec();
        let (settings, stop, deadline) = (*run.settings, run.stop.clone(), run.deadline);
        // On the blocking pool; the loop stops at the deadline or once the evaluation is dropped
        // (a `$/cancelRequest` aborts it), so no check outlives the request it serves.
        let checks = tokio::task::spawn_blocking(move || {
            check_sides(&sides, &rules, settings, &stop, deadline)
        });
        async move { checks.await.map_err(|e| e.to_string()) }
    }
}

/// Checks `sides` in order until the deadline passes or the evaluation is gone: one result per
/// side checked.
fn check_sides(
    sides: &[Side],
    rules: &[Rule],
    settings: Settings,
    stop: &Stop,
    deadline: Instant,
) -> Vec<Checked> {
    let mut out = Vec::with_capacity(sides.len());
    for side in sides {
        if stop.is_set() || Instant::now() >= deadline {
            break;
        }
        let found = checks::check(
            Subject {
                path: &side.path,
                bytes: &side.bytes,
                other: side.other.as_deref().map(Vec::as_slice),
                added: side.added,
            },
            rules,
            settings,
        );
        out.push(Checked {
            findings: found
                .findings
                .into_iter()
                .map(|f| Finding {
                    code: f.finding.rule.id().to_owned(),
                    severity: f.finding.rule.severity(),
                    message: f.finding.message,
                    range: f.finding.range,
                    fingerprint: f.fingerprint,
                    help: f.finding.rule.help().to_owned(),
                    help_uri: f.finding.rule.info().help_uri(),
                })
                .collect(),
            cut: found.cut,
            unchecked: found.unchecked,
            notes: Vec::new(),
        });
    }
    out
}

#[cfg(test)]
mod tests;
