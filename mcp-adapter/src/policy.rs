//! Repository policy for this front end: `.asp/asp.json` `adapters.mcp` (`asp-config.schema.json`).
//!
//! `enabled: false` turns every tool into a refusal that names the policy. Any `mode` still gets only
//! `inspect-status-only` behaviour, because the bridge never offers more. A policy file that cannot
//! be read or does not parse is a refusal too: when the bridge cannot tell whether the workspace
//! allows it, it fails closed. The file is read on every call, so an edit applies at once.

use std::io::Read as _;
use std::path::Path;

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

/// Reads the policy of the workspace at `repo`; `Err` is the refusal every tool returns.
pub(crate) fn check(repo: &Path) -> Result<McpPolicy, Error> {
    let path = repo.join(POLICY_FILE);
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(McpPolicy::default()),
        Err(e) => return Err(unreadable(&format!("cannot open it: {e}"))),
    };
    let mut text = String::new();
    file.take(MAX_POLICY_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| unreadable(&format!("cannot read it: {e}")))?;
    if text.len() as u64 > MAX_POLICY_BYTES {
        return Err(unreadable("it is larger than 1 MiB"));
    }
    let config: Value =
        serde_json::from_str(&text).map_err(|e| unreadable(&format!("invalid JSON: {e}")))?;
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
            .map(|m| bridge_core::text::untrusted(m, 64).into_owned()),
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
    use bridge_core::FailClass;

    fn workspace(policy: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = policy {
            std::fs::create_dir(dir.path().join(".asp")).unwrap();
            std::fs::write(dir.path().join(POLICY_FILE), text).unwrap();
        }
        dir
    }

    #[test]
    fn no_policy_file_allows_the_tools() {
        let dir = workspace(None);
        assert_eq!(check(dir.path()).unwrap(), McpPolicy::default());
    }

    #[test]
    fn a_policy_without_an_mcp_entry_allows_the_tools() {
        let dir = workspace(Some(r#"{"aspVersion": "1.0"}"#));
        assert!(check(dir.path()).unwrap().file_present);
    }

    #[test]
    fn enabled_false_is_a_policy_refusal_naming_the_file() {
        let dir = workspace(Some(r#"{"adapters": {"mcp": {"enabled": false}}}"#));
        let err = check(dir.path()).unwrap_err();
        assert_eq!(err.fail_class(), FailClass::Policy);
        assert!(err.to_string().contains(".asp/asp.json"), "{err}");
        assert!(err.to_string().contains("adapters.mcp.enabled"), "{err}");
    }

    #[test]
    fn any_mode_is_kept_as_written_but_changes_nothing() {
        let dir = workspace(Some(
            r#"{"adapters": {"mcp": {"enabled": true, "mode": "full-outer-seam"}}}"#,
        ));
        let policy = check(dir.path()).unwrap();
        assert_eq!(policy.configured_mode.as_deref(), Some("full-outer-seam"));
    }

    #[test]
    fn an_unreadable_policy_fails_closed() {
        for text in [
            "{not json",
            r#"{"adapters": {"mcp": {"enabled": "no"}}}"#,
            r#"{"adapters": {"mcp": {}}}"#,
        ] {
            let dir = workspace(Some(text));
            let err = check(dir.path()).unwrap_err();
            assert_eq!(err.fail_class(), FailClass::Policy, "{text}");
        }
    }
}
