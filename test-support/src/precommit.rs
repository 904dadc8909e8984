//! The side-by-side comparison with pre-commit-hooks: a seeded repository with planted problems
//! ([`corpus`]), the hooks run over it as pre-commit runs them ([`hooks`]), and the agreement of
//! their findings with those of `asp-bridge sarif`, check by check ([`agreement`]).
//!
//! `benches/precommit.rs` times both sides on 5,000 files; `tests/e2e/precommit.rs` runs the same
//! pieces on 50.

pub mod agreement;
pub mod corpus;
pub mod hooks;
