//! Language server front end of asp-bridge: the host's diagnostics in every editor.
//!
//! [`serve`] runs a language server (tower-lsp-server) over any byte-stream pair. The workspace root
//! comes from the client's `initialize`; the host is built then ([`Options::host`]) and started
//! lazily. Layers: [`server`] (the `LanguageServer` impl, thin) delegates to a [`session`]: the
//! document store ([`documents`], updated synchronously in every `did*` handler), one evaluation
//! worker per document ([`scheduler`]: debounce, one host call in flight, re-run flag), the host calls
//! ([`evaluate`]), and one ordered [`outbox`] for everything the server pushes. [`from_lsp`] and
//! [`to_lsp`] hold the conversions; [`frames`] reads LSP framing (the crate's one parser) and checks
//! the client's frames, and the server catches handler panics, so that a malformed message gets an
//! error instead of ending the server. The server relays the host's answers; it never decides or gates.

mod answer;
mod documents;
mod error;
mod evaluate;
mod frames;
mod from_lsp;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod host;
mod outbox;
mod progress;
mod scheduler;
mod server;
mod session;
mod to_lsp;

pub use error::Error;
pub use host::{HostFactory, supervised};
pub use server::{Options, Outcome, serve};
