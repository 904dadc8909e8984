//! The built-in hygiene provider's rule catalogue, in a crate of its own so that the provider and
//! the SARIF exporter read one table without either standing on the other: see [`rules`].

mod rules;

pub use rules::{DOCS, RULES, RuleInfo, SOURCE, rule};
