//! The degradation reasons front ends and hosts read, and the detail prefix of what a host's configuration left out.

/// The degradation reason of required coverage that ran and found a blocking finding: a verdict,
/// not a gap.
pub const BLOCKING_DIAGNOSTIC: &str = "blocking-diagnostic";

/// How a host says that something was left out by the user's own trusted configuration (an
/// `exclude`d path, `disable`d rules, a `min-severity` floor): a degradation of reason
/// `optional-degraded` whose `detail` starts with this. It does not change the decision and is no
/// gap the user did not choose, so it does not make a decision incomplete; it is still listed with
/// what did not run, and a changed path named as its `source` is reported left out, never clean.
pub const LEFT_OUT_BY_CONFIGURATION: &str = "left out by the host's configuration: ";

/// The reason of such a degradation.
pub const OPTIONAL_DEGRADED: &str = "optional-degraded";
