//! MCP front end.
