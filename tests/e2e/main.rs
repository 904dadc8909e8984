//! End-to-end tests: the real `asp-bridge` binary against the scriptable fake host.
//!
//! One test binary (it owns `CARGO_BIN_EXE_*`), one module per command.

mod support;

mod embedded;
mod faults;
mod host_choice;
mod hostile;
mod hostile_git;
mod leave_out;
mod linters;
mod load;
mod lsp;
mod mcp;
mod opcore;
mod precommit;
mod provider;
mod sarif;
mod status;
mod sweeps;
