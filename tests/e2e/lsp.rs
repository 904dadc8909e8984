//! End-to-end tests of `asp-bridge lsp`.
