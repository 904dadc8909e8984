//! The degradation reasons (`coverageDegradationReason` of `assurance.schema.json`), and the detail
//! prefix of what a host's configuration left out.
//!
//! Written by the embedded host and the providers as a [`Reason`]. Read from a host as the string
//! it sent (`proto::Degradation::reason`): a third-party host may send a reason this list does not
//! know, and the front ends relay it as sent; they compare it with a [`Reason`] only
//! (`proto::Degradation::is`), never with a literal.

use crate::open::wire_enum;

wire_enum!(
    /// Why coverage is degraded.
    Reason {
        FailOpen = "fail-open",
        Quarantined = "quarantined",
        Crashed = "crashed",
        Skewed = "skewed",
        Missing = "missing",
        Stale = "stale",
        MissingRequiredProvider = "missing-required-provider",
        StaleBaseline = "stale-baseline",
        /// Required coverage that ran and found a blocking finding: a verdict, not a gap.
        BlockingDiagnostic = "blocking-diagnostic",
        MissingAuthority = "missing-authority",
        InsufficientAssurance = "insufficient-assurance",
        Incomplete = "incomplete",
        Unsupported = "unsupported",
        Error = "error",
        Cancelled = "cancelled",
        Malformed = "malformed",
        TimedOut = "timed-out",
        /// Optional coverage that did not run; also what the host's configuration left out
        /// ([`LEFT_OUT_BY_CONFIGURATION`]).
        OptionalDegraded = "optional-degraded",
        Unavailable = "unavailable",
        Incompatible = "incompatible",
        UnsupportedAssurance = "unsupported-assurance",
        PolicySelfAuthorization = "policy-self-authorization",
        DirectWriteRisk = "direct-write-risk",
        LatticeFastPath = "lattice-fast-path",
    }
);

/// How a host says that something was left out by the user's own trusted configuration (an
/// `exclude`d path, `disable`d rules, a `min-severity` floor): a degradation of reason
/// [`Reason::OptionalDegraded`] whose `detail` starts with this. It does not change the decision and is no
/// gap the user did not choose, so it does not make a decision incomplete; it is still listed with
/// what did not run, and a changed path named as its `source` is reported left out, never clean.
pub const LEFT_OUT_BY_CONFIGURATION: &str = "left out by the host's configuration: ";

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::open::Wire;

    /// The strings of an `enum` of the project's copy of an ASP schema.
    pub(crate) fn schema_enum(file: &str, pointer: &str) -> Vec<String> {
        let path = format!("{}/../schemas/asp/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("the ASP schemas are in the project");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("a schema is JSON");
        let values = schema.pointer(pointer).and_then(|v| v.as_array());
        let values = values.unwrap_or_else(|| panic!("{file}#{pointer} is an enum"));
        values
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    /// That a wire enum has exactly the values of a schema's enum, in its order.
    pub(crate) fn assert_is_schema_enum<T: Wire>(file: &str, pointer: &str) {
        let ours: Vec<&str> = T::ALL.iter().map(Wire::wire).collect();
        assert_eq!(ours, schema_enum(file, pointer), "{file}#{pointer}");
    }

    #[test]
    fn the_reasons_are_the_schemas() {
        assert_is_schema_enum::<Reason>(
            "assurance.schema.json",
            "/$defs/coverageDegradationReason/enum",
        );
        assert_eq!(
            Reason::BlockingDiagnostic.to_string(),
            "blocking-diagnostic"
        );
        assert_eq!(
            serde_json::to_string(&Reason::TimedOut).unwrap(),
            r#""timed-out""#
        );
    }
}
