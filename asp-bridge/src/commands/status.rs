//! `asp-bridge status`: one `host/status`, printed for a person or as one JSON document, with what
//! `sarif` given the same `--base`/`--all-files` would evaluate (the changeset is built, the host is
//! not asked to evaluate it).

use bridge_core::model::NotRunView;
use std::fmt::Write as _;
use std::io::Write as _;

use asp_wire::proto::{AdvisoryCallSite, Status};
use asp_wire::text::one_line;
use bridge_core::model::{NotRun, canonical_capability};
use bridge_core::worktree::{Evaluate, Plan, Scope};
use bridge_core::{HostProcess, Reply, Worktree};
use serde_json::json;

use crate::flags::StatusArgs;

/// Longest piece of host text shown on one line.
const TEXT_MAX: usize = 200;
/// Longest server detail shown (what the configuration leaves out comes last).
const DETAIL_MAX: usize = 1000;

pub(crate) async fn run(args: StatusArgs) -> anyhow::Result<()> {
    let repo = crate::setup::workspace_root(args.repo.as_deref())?;
    // The handshake is the only call: `--timeout-ms` bounds it too.
    let config = crate::setup::one_shot_config(&args.host, &repo)?;
    let (process, reply) = HostProcess::start(&config).await?;
    process.shutdown().await;
    let request = args.sweep.apply(Evaluate {
        baseline: Some(reply.value.workspace.baseline.clone()),
        ..Evaluate::at(AdvisoryCallSite::Sweep)
    });
    let plan = match Worktree::new(repo).plan(&request).await {
        Ok(plan) => Ok(plan),
        // An option asked for this: failing to honour it is the command's failure.
        Err(error) => match args.sweep.option() {
            Some(option) => return Err(anyhow::Error::new(error).context(option)),
            None => Err(error),
        },
    };
    let text = if args.json {
        json_document(&reply, &request, &plan)?
    } else {
        human(&reply.value, &evaluate_line(&request, &plan))
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// `{"bridge": {...}, "status": <the host's status result as received>, "evaluate": {...}}`.
fn json_document(
    reply: &Reply<Status>,
    request: &Evaluate,
    plan: &bridge_core::Result<Plan>,
) -> anyhow::Result<String> {
    let status: serde_json::Value = serde_json::from_str(reply.raw.get())?;
    let evaluate = match plan {
        Ok(plan) => {
            let base = plan.merge_base.as_ref().map(|found| {
                json!({"rev": found.rev, "commit": found.commit, "mergeBase": found.base, "tree": found.tree})
            });
            let skipped: Vec<serde_json::Value> = plan
                .built
                .skipped
                .iter()
                .map(|s| json!({"path": s.path, "why": s.why}))
                .collect();
            json!({
                "scope": scope_name(request),
                "base": base,
                "baseline": plan.built.changeset.baseline.get("rev"),
                "files": plan.built.changeset.changes.len(),
                "batches": plan.batches,
                "batchFiles": request.batch_files,
                "batchBytes": request.batch_bytes,
                "skipped": skipped,
            })
        }
        Err(error) => json!({"scope": scope_name(request), "error": error.to_string()}),
    };
    let document = json!({
        "bridge": {"name": "asp-bridge", "version": env!("CARGO_PKG_VERSION"), "authoritative": false},
        "status": status,
        "evaluate": evaluate,
    });
    Ok(format!("{}\n", serde_json::to_string_pretty(&document)?))
}

fn scope_name(request: &Evaluate) -> &'static str {
    if request.scope == Scope::AllFiles {
        "all-files"
    } else {
        "changes"
    }
}

/// What `sarif` with the same options would send, on one line.
fn evaluate_line(request: &Evaluate, plan: &bridge_core::Result<Plan>) -> String {
    let plan = match plan {
        Ok(plan) => plan,
        Err(error) => return format!("unknown ({})", clean(&error.to_string())),
    };
    let files = plan.built.changeset.changes.len();
    let baseline = plan
        .built
        .changeset
        .baseline
        .get("rev")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("none");
    let mut line = match (&plan.merge_base, &request.scope) {
        (_, Scope::AllFiles) => {
            format!("{files} file(s): every tracked file, against the empty tree")
        }
        (Some(found), _) => format!(
            "{files} file(s) changed since {}, the merge base of {:?} and HEAD ({})",
            found.base.get(..12).unwrap_or(&found.base),
            clean(&found.rev),
            clean(baseline)
        ),
        (None, _) => format!(
            "{files} file(s) changed against the host's baseline ({})",
            clean(baseline)
        ),
    };
    line.push_str(&format!(
        "; {} request(s) of at most {} file(s) and {} byte(s)",
        plan.batches, request.batch_files, request.batch_bytes
    ));
    if !plan.built.skipped.is_empty() {
        line.push_str(&format!("; {} path(s) left out", plan.built.skipped.len()));
    }
    line
}

/// A host string as it is shown: untrusted text, on one line (a line break in a host identifier
/// would forge a line of this output).
fn clean(text: &str) -> String {
    one_line(text, TEXT_MAX).into_owned()
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "-".to_owned()
    } else {
        items
            .iter()
            .map(|i| clean(i))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn human(status: &Status, evaluate: &str) -> String {
    let mut out = String::new();
    let host = &status.host;
    let state = if status.is_degraded() {
        format!("degraded (host state: {})", clean(host.state.as_str()))
    } else {
        clean(host.state.as_str())
    };
    let [name, version, protocol] =
        [&host.name, &host.version, &host.outer_protocol].map(|s| clean(s));
    let _ = writeln!(out, "host       {name} {version} [{protocol}]: {state}");
    let policy = &status.policy;
    let [source, activation, digest] =
        [&policy.source, &policy.activation, &policy.policy_digest].map(|s| clean(s));
    let _ = writeln!(out, "policy     {source} ({activation}, {digest})");
    for server in &status.servers {
        let caps: Vec<String> = server
            .capabilities
            .iter()
            .map(|c| canonical_capability(c).to_owned())
            .collect();
        let _ = writeln!(
            out,
            "server     {}: {}, enrollment {}; capabilities {}; required for {}",
            clean(&server.id),
            clean(&server.state),
            clean(&server.enrollment_state),
            list(&caps),
            list(&server.required_for),
        );
        // How the host describes it: for the embedded host, where it comes from, the program it
        // runs and what the configuration leaves out of what it is sent and says.
        if let Some(detail) = server.detail.as_deref().filter(|d| !d.trim().is_empty()) {
            let _ = writeln!(out, "           {}", one_line(detail, DETAIL_MAX));
        }
    }
    for (call_site, gate) in status.gates() {
        let line = match gate {
            None => "not reported".to_owned(),
            Some(g) if g.available => {
                format!("available; requires {}", list(&g.required_providers))
            }
            Some(g) => format!("UNAVAILABLE; requires {}", list(&g.required_providers)),
        };
        let _ = writeln!(out, "call site  {call_site}: {line}");
    }
    let not_run = status.not_run();
    if not_run.is_empty() {
        let _ = writeln!(out, "coverage   complete");
    }
    for NotRun {
        source,
        reason,
        detail,
    } in &not_run
    {
        let [source, reason, detail] = [source, reason, detail].map(|s| clean(s));
        let _ = writeln!(out, "degraded   {source}: {reason} ({detail})");
    }
    let _ = writeln!(out, "receipt    {}", clean(&status.receipt.receipt_id));
    let _ = writeln!(out, "evaluate   {evaluate}");
    let _ = writeln!(
        out,
        "note       asp-bridge relays the host's answers; it never decides and never gates"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(path: &str) -> Status {
        serde_json::from_value(test_support::fixture(path)).unwrap()
    }

    #[test]
    fn a_ready_host_reads_plainly() {
        let text = human(&status("outer/status.response.json"), "0 file(s)");
        assert!(
            text.starts_with(
                "host       @the-open-engine/asp 0.1.0-alpha.0 [asp-outer/1.0]: ready\n"
            ),
            "{text}"
        );
        assert!(text.contains("policy     .asp/asp.json (active, sha256:policyabc123)"));
        assert!(text.contains("server     lattice: ready, enrollment enrolled; capabilities inspect, check, edit; required for gate"));
        assert!(text.contains("call site  gate: available; requires lattice"));
        assert!(text.contains("coverage   complete"));
    }

    #[test]
    fn a_degraded_host_says_degraded_with_reasons() {
        let mut s = status("outer/status.response.json");
        s.host.state = asp_wire::proto::Open::Known(asp_wire::proto::HostState::Degraded);
        s.receipt.failures.push(asp_wire::proto::Degradation {
            source: "lattice".into(),
            reason: "crashed".into(),
            detail: "exit 9\u{1b}[2J".into(),
            ..Default::default()
        });
        let text = human(&s, "0 file(s)");
        assert!(text.contains(": degraded (host state: degraded)"), "{text}");
        assert!(
            text.contains("degraded   lattice: crashed (exit 9[2J)"),
            "escape characters are stripped: {text}"
        );
    }

    #[test]
    fn line_breaks_in_host_identifiers_cannot_forge_lines() {
        let mut s = status("outer/status.response.json");
        s.host.name = "evil\ncall site  gate: available; requires nobody\r".into();
        s.servers[0].id = "x\ncoverage   complete\u{2028}".into();
        s.receipt.receipt_id = "r\n\u{1b}[1Aasp-bridge: ok".into();
        let text = human(&s, "0 file(s)");
        let labels = [
            "host",
            "policy",
            "server",
            "call site",
            "coverage",
            "degraded",
            "receipt",
            "evaluate",
            "note",
        ];
        for line in text.lines() {
            // Each line starts with one of the labels, padded to 11 columns.
            let label = line[..11].trim_end();
            assert!(
                labels.contains(&label),
                "a line the bridge did not write: {line:?}"
            );
        }
        assert!(
            text.contains("host       evil call site  gate: available; requires nobody "),
            "{text}"
        );
        assert_eq!(text.matches("call site  gate").count(), 2, "{text}");
        assert!(!text.contains('\u{1b}'));
    }
}
