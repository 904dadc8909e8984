-- Headless Neovim after a user's init.lua has set asp-bridge up: waits for the current buffer's
-- diagnostics, prints them, stops every client and quits. Works with Neovim 0.7 and later.
-- Environment: ASP_BRIDGE_LSP_WAIT_MS (how long to wait; 30000 by default).
-- Output (stdout): `CLIENTS <n>` (asp-bridge clients attached), then
-- `DIAG <lnum> <col> <end_lnum> <end_col> <severity> <code> <source>` per diagnostic.
-- Exit status 0 only if diagnostics came.

local function say(line)
  io.stdout:write(line .. "\n")
  io.stdout:flush()
end

local buf = vim.api.nvim_get_current_buf()
local wait_ms = tonumber(os.getenv("ASP_BRIDGE_LSP_WAIT_MS") or "30000")
local received = vim.wait(wait_ms, function()
  return #vim.diagnostic.get(buf) > 0
end, 20)

local attached = 0
for _, client in pairs(vim.lsp.buf_get_clients(buf)) do
  if client.name == "asp-bridge" then
    attached = attached + 1
  end
end
say("CLIENTS " .. attached)
for _, d in ipairs(vim.diagnostic.get(buf)) do
  say(string.format("DIAG %d %d %d %d %d %s %s", d.lnum, d.col, d.end_lnum, d.end_col, d.severity,
    tostring(d.code), tostring(d.source)))
end

vim.lsp.stop_client(vim.lsp.get_active_clients())
vim.wait(15000, function()
  return #vim.lsp.get_active_clients() == 0
end, 20)
if received then
  vim.cmd("qall!")
else
  vim.cmd("cquit 1")
end
