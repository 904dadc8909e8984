//! Load through the real binary: concurrent MCP tool calls and a burst of LSP edits.
