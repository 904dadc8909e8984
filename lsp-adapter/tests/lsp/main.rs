//! The language server in-process over a duplex, against a scripted host: what an editor sees.

mod host;
mod support;

mod diagnostics;
mod failures;
mod lifecycle;
