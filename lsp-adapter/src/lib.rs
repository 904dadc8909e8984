//! LSP front end.
