//! SARIF export.
