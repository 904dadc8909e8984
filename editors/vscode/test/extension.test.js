// The extension's wiring with a stubbed `vscode` and language client: the status bar item follows
// the server's messages, the client declares push diagnostics only, restart starts a new client.
"use strict";

require("./stub/hook");

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const vscode = require("vscode");
const lsp = require("vscode-languageclient/node");
const { Extension, PushOnly } = require("../src/extension");
const { LANGUAGES } = require("../src/languages");
const manifest = require("../package.json");

/** A folder standing for the installed extension, with `bundled/asp-bridge` answering --version. */
function installed(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "asp-bridge-ext-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "bundled"));
  fs.writeFileSync(path.join(dir, "bundled", "asp-bridge"), '#!/bin/sh\necho "asp-bridge 0.1.0"\n', { mode: 0o755 });
  return { extensionPath: dir, subscriptions: [] };
}

function lastItem() {
  return vscode.__calls.items.at(-1);
}

test("the status bar follows a ready, a degraded and a failed host", { skip: process.platform === "win32" }, async (t) => {
  const context = installed(t);
  const extension = new Extension(context);
  assert.equal(lastItem().text, "$(sync~spin) ASP starting");
  assert.ok(lastItem().shown);
  await extension.start();
  const client = lsp.__clients.at(-1);
  assert.equal(client.server.command, path.join(context.extensionPath, "bundled", "asp-bridge"));
  assert.deepEqual(client.server.args, ["lsp"]);
  assert.equal(lastItem().text, "$(check) ASP ready");
  assert.match(lastItem().tooltip, /server: asp-bridge 0\.1\.0/);

  const uri = "file:///w/a.txt";
  vscode.workspace.textDocuments = [{ uri: { toString: () => uri } }];
  client.publish(uri, [{ source: "hygiene", code: "hygiene/merge-conflict", data: { decision: "deny", receiptId: "r1" } }]);
  assert.equal(lastItem().text, "$(check) ASP: deny · 1 finding");

  client.publish(uri, [{ source: "asp-bridge", code: "incomplete", message: "incomplete", data: { decision: "indeterminate" } }]);
  assert.equal(lastItem().text, "$(warning) ASP degraded: indeterminate");
  assert.equal(lastItem().backgroundColor.id, "statusBarItem.warningBackground");

  client.showMessage(lsp.MessageType.Warning, "asp-bridge: the ASP host check did not run (health): host exited. Diagnostics stay as last checked until it runs again.");
  assert.equal(lastItem().text, "$(error) ASP failed: health");
  assert.equal(lastItem().backgroundColor.id, "statusBarItem.errorBackground");
  assert.deepEqual(vscode.__calls.messages.at(-1)[0], "warning", "the message is still shown to the user");

  client.setState(lsp.State.Stopped);
  assert.equal(lastItem().text, "$(error) ASP failed: stopped");
  await extension.stop();
});

test("the client declares push diagnostics only and covers the hygiene provider's file types", { skip: process.platform === "win32" }, async (t) => {
  const extension = new Extension(installed(t));
  await extension.start();
  const client = lsp.__clients.at(-1);
  const selected = client.options.documentSelector.map((s) => s.language);
  for (const id of ["typescript", "javascript", "python", "rust", "go", "shellscript", "dockerfile", "json", "jsonc", "yaml", "toml", "markdown", "plaintext"]) {
    assert.ok(selected.includes(id), id);
  }
  assert.ok(client.options.documentSelector.every((s) => s.scheme === "file"));
  assert.deepEqual(manifest.activationEvents, LANGUAGES.map((l) => `onLanguage:${l}`));
  const capabilities = { textDocument: { diagnostic: {}, publishDiagnostics: {} }, workspace: { diagnostics: {} } };
  assert.ok(client.features.some((f) => f instanceof PushOnly));
  for (const f of client.features) f.fillClientCapabilities(capabilities);
  assert.deepEqual(capabilities, { textDocument: { publishDiagnostics: {} }, workspace: {} });
  await extension.stop();
});

test("restart stops the client and starts a new one with the settings read again", { skip: process.platform === "win32" }, async (t) => {
  const context = installed(t);
  const extension = new Extension(context);
  await extension.start();
  const first = lsp.__clients.at(-1);
  vscode.__settings.set("asp-bridge.config", "/home/me/host.toml");
  t.after(() => vscode.__settings.clear());
  await vscode.__calls.commands.get("asp-bridge.restart")();
  const second = lsp.__clients.at(-1);
  assert.notEqual(first, second);
  assert.ok(first.stopped);
  assert.equal(second.server.options.env.ASP_BRIDGE_CONFIG, "/home/me/host.toml");
  assert.equal(lastItem().text, "$(check) ASP ready", "a deliberate stop is not shown as a failure");
  await extension.stop();
});

test("a missing binary or a server that does not start is failed", async (t) => {
  const context = { extensionPath: fs.mkdtempSync(path.join(os.tmpdir(), "asp-bridge-none-")), subscriptions: [] };
  t.after(() => fs.rmSync(context.extensionPath, { recursive: true, force: true }));
  const saved = process.env.PATH;
  process.env.PATH = context.extensionPath;
  t.after(() => (process.env.PATH = saved));
  const extension = new Extension(context);
  await extension.start();
  assert.equal(lastItem().text, "$(error) ASP failed: stopped");
  assert.match(lastItem().tooltip, /no usable asp-bridge binary/);
  assert.match(vscode.__calls.messages.at(-1)[1], /^asp-bridge: no usable asp-bridge binary/);

  if (process.platform === "win32") return;
  fs.mkdirSync(path.join(context.extensionPath, "bundled"));
  fs.writeFileSync(path.join(context.extensionPath, "bundled", "asp-bridge"), '#!/bin/sh\necho "asp-bridge 0.1.0"\n', { mode: 0o755 });
  const original = lsp.LanguageClient.prototype.start;
  lsp.LanguageClient.prototype.start = async function () {
    throw new Error("initialize failed: the workspace is not a git repository");
  };
  t.after(() => (lsp.LanguageClient.prototype.start = original));
  await extension.restart();
  assert.equal(lastItem().text, "$(error) ASP failed: stopped");
  assert.match(lastItem().tooltip, /did not start \(the output shows what it said\): initialize failed/);
});

test("the extension's version is the workspace's, so a VSIX names the binary it bundles", () => {
  const cargo = fs.readFileSync(path.join(__dirname, "..", "..", "..", "Cargo.toml"), "utf8");
  const workspace = /\[workspace\.package\][^[]*?\nversion = "([^"]+)"/.exec(cargo);
  assert.ok(workspace, "Cargo.toml has [workspace.package] version");
  assert.equal(manifest.version, workspace[1]);
});
