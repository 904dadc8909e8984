// The real vscode-languageclient with the extension's PushOnly feature: the capabilities it sends
// have no pull diagnostics (the server would then both push and answer pulls, and VS Code would show
// each finding twice), and keep what the server reads (data, codeDescription, work-done progress).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");

const { clientCapabilities } = require("./stub/real-client");

test("the client sends push diagnostics only, with data, links and progress", () => {
  const plain = clientCapabilities({ pushOnly: false });
  assert.ok(plain.textDocument.diagnostic, "vscode-languageclient pulls unless told otherwise");
  const sent = clientCapabilities();
  assert.equal(sent.textDocument.diagnostic, undefined);
  assert.equal(sent.workspace.diagnostics, undefined);
  assert.equal(sent.textDocument.publishDiagnostics.dataSupport, true);
  assert.equal(sent.textDocument.publishDiagnostics.codeDescriptionSupport, true);
  assert.equal(sent.window.workDoneProgress, true);
  assert.equal(sent.textDocument.synchronization.didSave, true);
});
