// The VS Code extension: starts `asp-bridge lsp` over stdio with vscode-languageclient, shows the
// host's state and the last decision in a status bar item (src/status.js says what each state
// shows), and restarts the server on the `asp-bridge.restart` command or a change of its settings.
//
// The client declares push diagnostics only: the server both publishes and answers pulls, and VS
// Code's client keeps pulled and pushed diagnostics in two collections, so each finding would be
// shown twice.
"use strict";

const vscode = require("vscode");
const lsp = require("vscode-languageclient/node");

const { findBinary } = require("./binary");
const { documentSelector } = require("./languages");
const { Status } = require("./status");

/** How long a stopping server gets to answer `shutdown` before it is killed. */
const STOP_TIMEOUT_MS = 5000;

/** A client feature that removes the pull-diagnostics capabilities (see the file's header). */
class PushOnly {
  fillClientCapabilities(capabilities) {
    if (capabilities.textDocument) delete capabilities.textDocument.diagnostic;
    if (capabilities.workspace) delete capabilities.workspace.diagnostics;
  }
  initialize() {}
  getState() {
    return { kind: "static" };
  }
  clear() {}
}

class Extension {
  constructor(context) {
    this.context = context;
    this.client = undefined;
    /** Set while the extension itself stops the client: that stop is not a failure. */
    this.stopping = false;
    this.status = new Status();
    this.output = vscode.window.createOutputChannel("asp-bridge");
    this.item = vscode.window.createStatusBarItem("asp-bridge.status", vscode.StatusBarAlignment.Left, 0);
    this.item.name = "asp-bridge";
    this.item.command = "asp-bridge.showOutput";
    this.status.onChange(() => this.paint());
    /** Starts and stops run one after the other. */
    this.queue = Promise.resolve();
    context.subscriptions.push(
      this.output,
      this.item,
      vscode.commands.registerCommand("asp-bridge.restart", () => this.restart()),
      vscode.commands.registerCommand("asp-bridge.showOutput", () => this.output.show(true)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("asp-bridge")) void this.restart();
      }),
    );
    this.paint();
    this.item.show();
  }

  paint() {
    this.item.text = this.status.text();
    this.item.tooltip = this.status.tooltip();
    const background = this.status.background();
    this.item.backgroundColor = background ? new vscode.ThemeColor(background) : undefined;
  }

  /** Runs `step` after the steps before it; resolves when it is done. */
  serial(step) {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  start() {
    return this.serial(() => this.startNow());
  }

  restart() {
    return this.serial(async () => {
      await this.stopNow();
      await this.startNow();
    });
  }

  stop() {
    return this.serial(() => this.stopNow());
  }

  async startNow() {
    const config = vscode.workspace.getConfiguration("asp-bridge");
    this.status.starting("");
    let binary;
    try {
      binary = await findBinary({ setting: config.get("path"), extensionPath: this.context.extensionPath });
    } catch (e) {
      this.output.appendLine(e.message);
      this.status.failed(e.message);
      void vscode.window.showErrorMessage(`asp-bridge: ${e.message}`);
      return;
    }
    for (const line of binary.tried) this.output.appendLine(`passed over ${line}`);
    this.output.appendLine(`using ${binary.path} (${binary.source}): ${binary.version}`);
    this.status.starting(`${binary.path} (${binary.source})`);

    const env = { ...process.env };
    const hostConfig = config.get("config");
    if (typeof hostConfig === "string" && hostConfig.trim()) env.ASP_BRIDGE_CONFIG = hostConfig.trim();
    const hostCommand = config.get("hostCommand");
    if (typeof hostCommand === "string" && hostCommand.trim()) env.ASP_BRIDGE_HOST_COMMAND = hostCommand.trim();

    const server = { command: binary.path, args: ["lsp"], transport: lsp.TransportKind.stdio, options: { env } };
    const isOpen = (uri) => vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString());
    const client = new lsp.LanguageClient("asp-bridge", "asp-bridge", server, {
      documentSelector: documentSelector(),
      outputChannel: this.output,
      middleware: {
        handleDiagnostics: (uri, diagnostics, next) => {
          this.status.diagnostics(uri.toString(), diagnostics, isOpen(uri));
          next(uri, diagnostics);
        },
      },
    });
    client.registerFeature(new PushOnly());
    // Replaces the client's own handler (registered before it), so the status sees each message.
    client.onNotification(lsp.ShowMessageNotification.type, (params) => {
      this.status.message(params.message);
      show(params.type, params.message);
    });
    client.onDidChangeState(({ newState }) => {
      if (newState === lsp.State.Stopped && this.client === client && !this.stopping) {
        this.status.failed("the language server stopped; run \"asp-bridge: Restart the server\"");
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      const why = `the language server did not start (the output shows what it said): ${e && e.message ? e.message : e}`;
      this.output.appendLine(why);
      this.status.failed(why);
      return;
    }
    this.status.ready(client.initializeResult && client.initializeResult.serverInfo);
  }

  async stopNow() {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      await client.stop(STOP_TIMEOUT_MS);
    } catch (e) {
      this.output.appendLine(`the language server did not stop cleanly: ${e && e.message ? e.message : e}`);
    } finally {
      this.stopping = false;
    }
  }
}

function show(type, message) {
  switch (type) {
    case lsp.MessageType.Error:
      void vscode.window.showErrorMessage(message);
      break;
    case lsp.MessageType.Warning:
      void vscode.window.showWarningMessage(message);
      break;
    default:
      void vscode.window.showInformationMessage(message);
  }
}

let extension;

async function activate(context) {
  extension = new Extension(context);
  await extension.start();
  return extension;
}

async function deactivate() {
  if (extension) await extension.stop();
  extension = undefined;
}

module.exports = { activate, deactivate, Extension, PushOnly };
