//! What an export is asked for: the workspace, the category, the host's identity when the receipt
//! lacks it, the timing, the limits and the layout.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::limits::Limits;

/// How to export.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The workspace root (absolute and canonical): artifact URIs are relative to it, it becomes
    /// `originalUriBaseIds["%SRCROOT%"]`, and its files are read for line hashes. `None` for a saved
    /// answer converted without a workspace.
    pub repo: Option<PathBuf>,
    /// A GitHub code-scanning category: `runAutomationDetails.id` (with a trailing `/`).
    pub category: Option<String>,
    /// The host's name and version when the receipt does not say them (e.g. from `host/status`).
    pub host: Option<HostIdentity>,
    /// When the bridge asked the host, for an invocation whose receipt has no timing.
    pub started_at: Option<SystemTime>,
    pub ended_at: Option<SystemTime>,
    pub limits: Limits,
    /// Indented JSON, for people; compact otherwise (what tools read, and smaller).
    pub pretty: bool,
    /// Working-tree paths left out of the evaluation (FIFOs, sockets, devices: never opened); one
    /// notification names them.
    pub left_out: Vec<bridge_core::changeset::Skipped>,
}

/// A host's name and version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostIdentity {
    pub name: String,
    pub version: String,
}

/// Options with GitHub's limits changed by `change`, for the tests of the limits.
#[cfg(test)]
pub(crate) fn limited(change: impl FnOnce(&mut Limits)) -> Options {
    let mut limits = Limits::GITHUB;
    change(&mut limits);
    Options {
        limits,
        ..Options::default()
    }
}
