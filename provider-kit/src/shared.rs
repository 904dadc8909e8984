//! What the kit passes on from bridge-core to its checkers (the rule catalogues every front end
//! describes the same way), so that a checker names bridge-core nowhere: when that vocabulary moves
//! to its own crate, only these lines follow it.

pub use bridge_core::hygiene;
