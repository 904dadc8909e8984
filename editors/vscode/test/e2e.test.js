// The real `asp-bridge lsp`, driven through vscode-jsonrpc (the transport VS Code's language client
// uses) with the capabilities the extension's client sends (the real vscode-languageclient's, see
// stub/real-client.js): a file holding a merge-conflict marker in a git repository gets its
// diagnostic from the embedded host (no `asp` on PATH, HOME and XDG_CONFIG_HOME an empty folder),
// and the status bar text follows; a host that cannot start is shown as failed.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const childProcess = require("node:child_process");
const path = require("node:path");
const { pathToFileURL } = require("node:url");

const rpc = require("vscode-jsonrpc/node");

const { Status } = require("../src/status");
const { binary, deadline, environment, ready, workspace, WAIT_MS } = require("./tools");
const { clientCapabilities } = require("./stub/real-client");

/** The server started in `repo` with `env`, spoken to through vscode-jsonrpc. */
function serve(t, bin, repo, env) {
  const child = childProcess.spawn(bin, ["lsp"], { cwd: repo, env, stdio: ["pipe", "pipe", "pipe"] });
  // The last 64 KiB of the server's log (debug level: see `serve`'s callers), for a failure's message.
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-64 * 1024);
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const connection = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const published = [];
  const messages = [];
  const waiters = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  connection.onNotification("textDocument/publishDiagnostics", (params) => {
    published.push(params);
    wake();
  });
  connection.onNotification("window/showMessage", (params) => {
    messages.push(params);
    wake();
  });
  connection.onNotification("$/progress", () => {});
  connection.onNotification("window/logMessage", () => {});
  connection.onRequest("window/workDoneProgress/create", () => null);
  connection.onRequest("workspace/configuration", (params) => params.items.map(() => null));
  connection.onRequest("client/registerCapability", () => null);
  connection.onRequest("workspace/diagnostic/refresh", () => null);
  connection.listen();
  t.after(() => {
    connection.dispose();
    child.kill("SIGKILL");
  });
  /** Resolves when `found()` returns something, checked after each notification. The wait is
   * longer than the host's own deadlines (30 s), so that a failure's message shows what they did. */
  const until = (what, found) =>
    deadline(
      new Promise((resolve) => {
        const check = () => {
          const value = found();
          if (value) resolve(value);
          else waiters.push(check);
        };
        check();
      }),
      2 * WAIT_MS,
      () => `${what}; published: ${JSON.stringify(published).slice(-4000)}; shown: ${JSON.stringify(messages).slice(-2000)}; stderr: ${stderr.slice(-8000)}`,
    );
  return { child, connection, published, messages, until, exited, stderr: () => stderr };
}

/** `initialize` as the extension's client sends it: the real vscode-languageclient's capabilities. */
function initializeParams(repo) {
  const uri = pathToFileURL(repo).href;
  return {
    processId: process.pid,
    clientInfo: { name: "Visual Studio Code", version: "1.95.0" },
    rootUri: uri,
    workspaceFolders: [{ uri, name: path.basename(repo) }],
    capabilities: JSON.parse(JSON.stringify(clientCapabilities())),
  };
}

async function shutDown(server) {
  await deadline(server.connection.sendRequest("shutdown"), WAIT_MS, "shutdown");
  await server.connection.sendNotification("exit");
  const { code } = await deadline(server.exited, WAIT_MS, "exit");
  assert.equal(code, 0, server.stderr());
}

test("a merge-conflict marker reaches the client as a diagnostic from the embedded host", async (t) => {
  const bin = ready(t, binary());
  if (!bin) return;
  const { repo, home, text } = workspace(t);
  const server = serve(t, bin, repo, environment(home, { ASP_BRIDGE_LOG: "debug" }));
  const status = new Status();

  const result = await deadline(server.connection.sendRequest("initialize", initializeParams(repo)), WAIT_MS, "initialize");
  const version = childProcess.execFileSync(bin, ["--version"], { encoding: "utf8", timeout: WAIT_MS }).trim();
  assert.equal(`${result.serverInfo.name} ${result.serverInfo.version}`, version);
  assert.equal(result.capabilities.diagnosticProvider, undefined, "no pull for a client that does not pull");
  status.ready(result.serverInfo);
  assert.equal(status.text(), "$(check) ASP ready");
  await server.connection.sendNotification("initialized", {});

  const uri = pathToFileURL(path.join(repo, "notes.txt")).href;
  await server.connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "plaintext", version: 1, text } });
  const publish = await server.until("a diagnostic for notes.txt", () =>
    server.published.find((p) => p.uri === uri && p.diagnostics.some((d) => d.code === "hygiene/merge-conflict")),
  );
  const conflict = publish.diagnostics.find((d) => d.code === "hygiene/merge-conflict");
  assert.equal(conflict.severity, 1);
  assert.equal(conflict.range.start.line, 1);
  assert.match(conflict.data.receiptId, /\S/);
  assert.equal(conflict.data.assurance, "advisory");

  status.diagnostics(uri, publish.diagnostics, true);
  const decision = conflict.data.decision;
  const n = publish.diagnostics.length;
  assert.equal(status.text(), `$(check) ASP: ${decision} · ${n} finding${n === 1 ? "" : "s"}`);
  assert.match(status.tooltip(), new RegExp(`receipt: ${conflict.data.receiptId}`));
  t.diagnostic(`status bar: ${status.text()}`);
  assert.deepEqual(server.messages, [], "a whole check sends no outage message");
  await shutDown(server);
});

test("a host that cannot start is shown as failed, with its class", async (t) => {
  const bin = ready(t, binary());
  if (!bin) return;
  const { repo, home, text } = workspace(t);
  const missing = path.join(home, "no-such-host");
  const server = serve(t, bin, repo, environment(home, { ASP_BRIDGE_HOST_COMMAND: `${missing} serve --repo {repo}` }));
  const status = new Status();
  const result = await deadline(server.connection.sendRequest("initialize", initializeParams(repo)), WAIT_MS, "initialize");
  status.ready(result.serverInfo);
  await server.connection.sendNotification("initialized", {});
  const uri = pathToFileURL(path.join(repo, "notes.txt")).href;
  await server.connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "plaintext", version: 1, text } });
  const publish = await server.until("a not-run notice for notes.txt", () =>
    server.published.find((p) => p.uri === uri && p.diagnostics.some((d) => String(d.code).startsWith("not-run/"))),
  );
  const notice = publish.diagnostics.find((d) => String(d.code).startsWith("not-run/"));
  status.diagnostics(uri, publish.diagnostics, true);
  assert.equal(status.text(), `$(error) ASP failed: ${notice.data.failClass}`);
  t.diagnostic(`status bar: ${status.text()}`);
  const message = await server.until("an outage message", () => server.messages[0]);
  const fromMessage = new Status();
  fromMessage.message(message.message);
  assert.equal(fromMessage.text(), `$(error) ASP failed: ${notice.data.failClass}`);
  await shutDown(server);
});
