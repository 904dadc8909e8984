//! The built-in ASP check provider: repository hygiene checks (after pre-commit-hooks) run on a
//! changeset, reading content only through the host's `workspace/readBlob` and `workspace/listTree`
//! callbacks. It runs in its own process (`asp-bridge provider hygiene`) like any other provider:
//! one [`provider_kit::Checker`] on the provider kit, which does everything around the checks.

mod checker;
mod checks;
mod request;
mod rules;

pub use checker::serve;
pub use provider_kit::{Error, Identity, Result};
pub use rules::SOURCE;
