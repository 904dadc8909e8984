//! The fault matrix: every host fault against every front end (status, sarif, mcp, lsp).
