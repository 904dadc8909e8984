-- Headless Neovim as an asp-bridge user: open a file in the workspace (the current directory), let
-- `asp-bridge lsp` report the host's findings, print them, then stop the client and quit.
-- Works with Neovim 0.7 (`vim.lsp.start_client`) and later (`vim.lsp.start`).
-- Environment: ASP_BRIDGE_LSP_CMD (the server command line, JSON array), ASP_BRIDGE_LSP_FILE.
-- Output (stdout): `DIAG <lnum> <col> <end_lnum> <end_col> <severity> <code> <source>` per diagnostic,
-- then `STOPPED <true|false>`. Exit status 0 only if diagnostics came and the client stopped.

local function say(line)
  io.stdout:write(line .. "\n")
  io.stdout:flush()
end

local cmd = vim.fn.json_decode(os.getenv("ASP_BRIDGE_LSP_CMD"))
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("ASP_BRIDGE_LSP_FILE")))
local buf = vim.api.nvim_get_current_buf()
local config = { name = "asp-bridge", cmd = cmd, root_dir = vim.fn.getcwd() }

local id
if vim.lsp.start then
  id = vim.lsp.start(config)
else
  id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(buf, id)
end

local received = vim.wait(30000, function()
  return #vim.diagnostic.get(buf) > 0
end, 20)

for _, d in ipairs(vim.diagnostic.get(buf)) do
  say(string.format("DIAG %d %d %d %d %d %s %s", d.lnum, d.col, d.end_lnum, d.end_col, d.severity,
    tostring(d.code), tostring(d.source)))
end

vim.lsp.stop_client(id)
local stopped = vim.wait(15000, function()
  return vim.lsp.get_client_by_id(id) == nil
end, 20)
say("STOPPED " .. tostring(stopped))

if received and stopped then
  vim.cmd("qall!")
else
  vim.cmd("cquit 1")
end
