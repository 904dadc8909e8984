//! What an export holds, counted for a log line.

/// What an export holds, for a log line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// The host's decision, as sent.
    pub decision: String,
    pub results: usize,
    /// Findings left out to respect the limits (each counted in a notification).
    pub omitted_results: usize,
    pub rules: usize,
    /// Tool execution notifications: what did not run, what was left out.
    pub notifications: usize,
}
