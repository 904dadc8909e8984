// The real vscode-languageclient, loaded with a lenient `vscode` stub (what the client touches
// while it is built and lists its capabilities, and stand-ins for the rest), so the tests can ask
// it which client capabilities VS Code's client sends to the server: the e2e test initializes the
// real server with exactly these.
"use strict";

const Module = require("node:module");
const path = require("node:path");

const LENIENT = path.join(__dirname, "vscode-lenient.js");

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? LENIENT : resolve.call(this, request, ...rest);
};

const lsp = require("vscode-languageclient/node");
const { PushOnly } = require("../../src/extension");
const { documentSelector } = require("../../src/languages");

/** The capabilities the extension's client sends in `initialize`; `pushOnly`: with its feature. */
function clientCapabilities({ pushOnly = true } = {}) {
  const vscode = require("vscode");
  const client = new lsp.LanguageClient(
    "asp-bridge",
    "asp-bridge",
    { command: "asp-bridge", args: ["lsp"] },
    { documentSelector: documentSelector(), outputChannel: vscode.window.createOutputChannel("asp-bridge") },
  );
  if (pushOnly) client.registerFeature(new PushOnly());
  // What `start()` sends as `initialize`'s capabilities (the client's own method).
  return client.computeClientCapabilities();
}

module.exports = { clientCapabilities };
