// The extension as VS Code runs it, as far as can be done without VS Code: src/extension.js with the
// real vscode-languageclient, in a small in-memory VS Code (stub/vscode-host.js), against the real
// `asp-bridge lsp` and the embedded host. The status bar item shows the decision of a real check,
// then a failed host after a settings change restarts the server, and the server's message is shown
// once (the extension's handler replaces the client's own).
"use strict";

const Module = require("node:module");
const path = require("node:path");

const HOST = path.join(__dirname, "stub", "vscode-host.js");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? HOST : resolve.call(this, request, ...rest);
};

const test = require("node:test");
const assert = require("node:assert/strict");

const vscode = require("vscode");
const { activate, deactivate } = require("../src/extension");
const { binary, deadline, environment, ready, workspace, WAIT_MS } = require("./tools");

/** Resolves when the status bar item's text matches `pattern`. */
function statusText(item, extension, pattern) {
  return deadline(
    new Promise((resolve) => {
      const check = () => pattern.test(item.text) && resolve(item.text);
      extension.status.onChange(check);
      check();
    }),
    WAIT_MS,
    `status bar ${pattern} (it says ${JSON.stringify(item.text)}; output: ${extension.output.lines.slice(-10).join(" | ")})`,
  );
}

test("the extension shows a real check's decision, then a failed host after a restart", async (t) => {
  const bin = ready(t, binary());
  if (!bin) return;
  const { repo, home, text } = workspace(t);
  Object.assign(process.env, environment(home));
  delete process.env.ASP_BRIDGE_HOST_COMMAND;
  const settings = vscode.__recorded.settings;
  settings.set("asp-bridge.path", bin);
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(repo), name: "repo", index: 0 }];
  const notes = vscode.__document(path.join(repo, "notes.txt"), "plaintext", text);
  vscode.workspace.textDocuments = [notes];

  const extension = await deadline(activate({ extensionPath: path.join(home, "no-extension"), subscriptions: [] }), WAIT_MS, "activate");
  t.after(() => deadline(deactivate(), WAIT_MS, "deactivate"));
  const item = vscode.__recorded.items.at(-1);
  assert.match(extension.output.lines.join("\n"), /using .* \(setting\): asp-bridge \d/);
  const shown = await statusText(item, extension, /^\$\(check\) ASP: \S+ · \d+ findings?$/);
  t.diagnostic(`status bar: ${shown}`);

  // The finding as the client put it in its collection: code, range and data converted.
  const pushed = vscode.__recorded.collections.flatMap((c) => [...c.entries.values()]).flat();
  const conflict = pushed.find((d) => (d.code && d.code.value) === "hygiene/merge-conflict" || d.code === "hygiene/merge-conflict");
  assert.ok(conflict, `a merge-conflict diagnostic in VS Code's collection (${JSON.stringify(pushed)})`);
  assert.equal(conflict.range.start.line, 1);
  assert.equal(shown, `$(check) ASP: ${conflict.data.decision} · ${pushed.length} finding${pushed.length === 1 ? "" : "s"}`);
  assert.deepEqual(vscode.__recorded.messages, []);

  // A host that cannot start, through the setting and the restart a settings change makes.
  settings.set("asp-bridge.hostCommand", `${path.join(home, "no-such-host")} serve --repo {repo}`);
  for (const listener of vscode.__events.config.listeners) listener({ affectsConfiguration: (s) => s === "asp-bridge" });
  const failed = await statusText(item, extension, /^\$\(error\) ASP failed: health$/);
  t.diagnostic(`status bar: ${failed}`);
  await deadline(
    new Promise((resolve) => (vscode.__recorded.messages.length > 0 ? resolve() : vscode.__events.message.event(resolve))),
    WAIT_MS,
    "the outage message",
  );
  await extension.queue;
  assert.equal(vscode.__recorded.messages.filter(([, m]) => /did not run \(health\)/.test(m)).length, 1, JSON.stringify(vscode.__recorded.messages));
});
