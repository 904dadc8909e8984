//! The inner seam's method names (host ↔ provider, `asp/1.0`): what the host asks a provider and
//! what a provider asks back of the workspace. The outer seam's are in [`crate::proto`], with
//! `shutdown` and `exit`, which both seams share.

/// The handshake: the host's `initialize` request and its `initialized` notification.
pub const INITIALIZE: &str = "initialize";
pub const INITIALIZED: &str = "initialized";
/// A check of a changeset.
pub const CHECK_EVALUATE: &str = "check/evaluate";
/// `check/evaluate` under its legacy name, still answered by the provider kit.
pub const JUDGE_EVALUATE: &str = "judge/evaluate";
/// The provider's reads of the workspace, through the host.
pub const READ_BLOB: &str = "workspace/readBlob";
pub const LIST_TREE: &str = "workspace/listTree";
/// The host's notice that the baseline moved.
pub const BASELINE_CHANGED: &str = "workspace/baselineChanged";

crate::open::wire_enum! {
    /// What a `check/evaluate` asks a provider to report: what the changes introduced (the default),
    /// everything on the after-side, or what they resolved. The outer seam asks the host for `all`
    /// or `introduced` only ([`crate::proto::Comparison`]).
    Comparison {
        Introduced = "introduced",
        All = "all",
        Resolved = "resolved",
    }
}
