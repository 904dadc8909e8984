//! Repository policy for this front end: `.asp/asp.json` `adapters.mcp` (`asp-config.schema.json`).
//!
//! `enabled: false` turns every tool into a refusal that names the policy. Any `mode` still gets only
//! `inspect-status-only` behaviour, because the bridge never offers more. A policy file that cannot
//! be read or does not parse is a refusal too: when the bridge cannot tell whether the workspace
//! allows it, it fails closed. The file is read on every call, so an edit applies at once: off the
//! async threads, only as a regular file (a link, a FIFO or a device is refused, never followed or
//! opened), at most 1 MiB.

use bridge_core::Worktree;
use serde_json::Value;

use crate::error::Error;

/// Where the policy lives, relative to the workspace root.
pub(crate) const POLICY_FILE: &str = ".asp/asp.json";
/// The only behaviour this front end has, whatever the policy's `mode` says.
pub(crate) const EFFECTIVE_MODE: &str = "inspect-status-only";
/// Largest policy file read.
const MAX_POLICY_BYTES: u64 = 1024 * 1024;

/// What the workspace's policy says about the MCP adapter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct McpPolicy {
    /// Whether `.asp/asp.json` exists.
    pub(crate) file_present: bool,
    /// `adapters.mcp.mode` as written, when written.
    pub(crate) configured_mode: Option<String>,
}

/// Reads the policy of the workspace; `Err` is the refusal every tool returns.
pub(crate) async fn check(workspace: &Worktree) -> Result<McpPolicy, Error> {
    let bytes = match workspace.read_config(POLICY_FILE, MAX_POLICY_BYTES).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(McpPolicy::default()),
        Err(e) => return Err(unreadable(&format!("cannot read it: {e}"))),
    };
    let config: Value =
        serde_json::from_slice(&bytes).map_err(|e| unreadable(&format!("invalid JSON: {e}")))?;
    let mcp = config.get("adapters").and_then(|a| a.get("mcp"));
    let Some(mcp) = mcp else {
        return Ok(McpPolicy {
            file_present: true,
            configured_mode: None,
        });
    };
    let enabled = match mcp.get("enabled") {
        Some(Value::Bool(enabled)) => *enabled,
        None => return Err(unreadable("adapters.mcp has no boolean `enabled`")),
        Some(_) => return Err(unreadable("adapters.mcp.enabled is not a boolean")),
    };
    if !enabled {
        return Err(Error::Policy(format!(
            "repository policy {POLICY_FILE} sets adapters.mcp.enabled to false: the ASP MCP tools \
             are disabled for this workspace"
        )));
    }
    Ok(McpPolicy {
        file_present: true,
        configured_mode: mcp
            .get("mode")
            .and_then(Value::as_str)
            .map(|m| asp_wire::text::untrusted(m, 64).into_owned()),
    })
}

fn unreadable(why: &str) -> Error {
    Error::Policy(format!(
        "repository policy {POLICY_FILE} cannot be applied ({why}); the ASP MCP tools refuse until \
         it is fixed"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpc_peer::FailClass;

    fn workspace(policy: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = policy {
            std::fs::create_dir(dir.path().join(".asp")).unwrap();
            std::fs::write(dir.path().join(POLICY_FILE), text).unwrap();
        }
        dir
    }

    #[tokio::test]
    async fn no_policy_file_allows_the_tools() {
        let dir = workspace(None);
        assert_eq!(
            check(&Worktree::new(dir.path())).await.unwrap(),
            McpPolicy::default()
        );
    }

    #[tokio::test]
    async fn a_policy_without_an_mcp_entry_allows_the_tools() {
        let dir = workspace(Some(r#"{"aspVersion": "1.0"}"#));
        assert!(
            check(&Worktree::new(dir.path()))
                .await
                .unwrap()
                .file_present
        );
    }

    #[tokio::test]
    async fn enabled_false_is_a_policy_refusal_naming_the_file() {
        let dir = workspace(Some(r#"{"adapters": {"mcp": {"enabled": false}}}"#));
        let err = check(&Worktree::new(dir.path())).await.unwrap_err();
        assert_eq!(err.fail_class(), FailClass::Policy);
        assert!(err.to_string().contains(".asp/asp.json"), "{err}");
        assert!(err.to_string().contains("adapters.mcp.enabled"), "{err}");
    }

    #[tokio::test]
    async fn any_mode_is_kept_as_written_but_changes_nothing() {
        let dir = workspace(Some(
            r#"{"adapters": {"mcp": {"enabled": true, "mode": "full-outer-seam"}}}"#,
        ));
        let policy = check(&Worktree::new(dir.path())).await.unwrap();
        assert_eq!(policy.configured_mode.as_deref(), Some("full-outer-seam"));
    }

    #[tokio::test]
    async fn an_unreadable_policy_fails_closed() {
        for text in [
            "{not json",
            r#"{"adapters": {"mcp": {"enabled": "no"}}}"#,
            r#"{"adapters": {"mcp": {}}}"#,
        ] {
            let dir = workspace(Some(text));
            let err = check(&Worktree::new(dir.path())).await.unwrap_err();
            assert_eq!(err.fail_class(), FailClass::Policy, "{text}");
        }
    }

    /// A committed policy that is a link to `/dev/stdin` or a FIFO, or is a FIFO, used to block the
    /// server on a runtime thread; a link to a readable file was followed.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_policy_that_is_not_a_regular_file_is_refused_without_being_opened() {
        use std::os::unix::fs::symlink;
        let fifo_dir = tempfile::tempdir().unwrap();
        let fifo = fifo_dir.path().join("fifo");
        test_support::process::mkfifo(&fifo);
        type Make<'a> = Box<dyn Fn(&std::path::Path) + 'a>;
        let cases: [(&str, Make); 5] = [
            (
                "symbolic link",
                Box::new(|p| symlink("/dev/stdin", p).unwrap()),
            ),
            ("symbolic link", Box::new(|p| symlink(&fifo, p).unwrap())),
            (
                "symbolic link",
                Box::new(|p| symlink("/etc/passwd", p).unwrap()),
            ),
            ("a FIFO", Box::new(test_support::process::mkfifo)),
            ("directory", Box::new(|p| std::fs::create_dir(p).unwrap())),
        ];
        for (why, make) in cases {
            let dir = workspace(None);
            std::fs::create_dir(dir.path().join(".asp")).unwrap();
            make(&dir.path().join(POLICY_FILE));
            let err = check(&Worktree::new(dir.path())).await.unwrap_err();
            assert_eq!(err.fail_class(), FailClass::Policy, "{err}");
            assert!(err.to_string().contains(why), "{why}: {err}");
            assert!(err.to_string().contains(POLICY_FILE), "{err}");
        }
        let dir = workspace(None);
        symlink(fifo_dir.path(), dir.path().join(".asp")).unwrap();
        let err = check(&Worktree::new(dir.path())).await.unwrap_err();
        assert!(
            err.to_string().contains("symbolic link"),
            "a linked .asp directory: {err}"
        );
    }

    #[tokio::test]
    async fn a_policy_over_1_mib_is_refused() {
        let big = format!("{{\"pad\": \"{}\"}}", "x".repeat(1024 * 1024));
        let dir = workspace(Some(&big));
        let err = check(&Worktree::new(dir.path())).await.unwrap_err();
        assert!(err.to_string().contains("larger than"), "{err}");
    }
}
