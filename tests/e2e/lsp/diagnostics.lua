-- Headless Neovim as an asp-bridge user: open a file in the workspace (the current directory), let
-- `asp-bridge lsp` report the host's findings, print them, then stop the client and quit.
-- Works with Neovim 0.7 (`vim.lsp.start_client`) and later (`vim.lsp.start`).
-- Environment: ASP_BRIDGE_LSP_CMD (the server command line, JSON array), ASP_BRIDGE_LSP_FILE; optional:
-- ASP_BRIDGE_LSP_WRITE (text that replaces the buffer, saved with :write once the server is up),
-- ASP_BRIDGE_LSP_WANT (wait for a diagnostic whose code starts with it, rather than for any),
-- ASP_BRIDGE_LSP_WAIT_MS (how long to wait for them; 30000 by default).
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

local wait_ms = tonumber(os.getenv("ASP_BRIDGE_LSP_WAIT_MS") or "30000")
local want = os.getenv("ASP_BRIDGE_LSP_WANT")
local write = os.getenv("ASP_BRIDGE_LSP_WRITE")

if write then
  vim.wait(wait_ms, function()
    local client = vim.lsp.get_client_by_id(id)
    return client ~= nil and client.initialized == true
  end, 20)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(write, "\n", { plain = true, trimempty = true }))
  vim.cmd("write")
end

local received = vim.wait(wait_ms, function()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if want == nil or (type(d.code) == "string" and d.code:sub(1, #want) == want) then
      return true
    end
  end
  return false
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
