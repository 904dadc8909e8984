//! The embedded advisory ASP Core-profile host (`asp-bridge host serve`).

mod assessment;
pub mod config;
mod decide;
mod error;
mod glob;
mod json;
mod policy;
mod receipt;
mod schema;
mod snapshot;

pub use error::{Error, Result};
