// A stand-in for vscode-languageclient's LanguageClient: records its options and lets a test play
// the server's side (initialize result, diagnostics through the middleware, showMessage, state).
"use strict";

const State = { Stopped: 1, Running: 2, Starting: 3 };
const clients = [];

class LanguageClient {
  constructor(id, name, server, options) {
    Object.assign(this, { id, name, server, options });
    this.features = [];
    this.notifications = new Map();
    this.stateListeners = [];
    this.initializeResult = undefined;
    this.startError = undefined;
    this.stopped = false;
    clients.push(this);
  }
  registerFeature(feature) {
    this.features.push(feature);
  }
  onNotification(type, handler) {
    this.notifications.set(type.method, handler);
  }
  onDidChangeState(listener) {
    this.stateListeners.push(listener);
  }
  async start() {
    this.setState(State.Starting);
    if (this.startError) {
      this.setState(State.Stopped);
      throw this.startError;
    }
    this.initializeResult = { capabilities: {}, serverInfo: { name: "asp-bridge", version: "0.1.0" } };
    this.setState(State.Running);
  }
  async stop() {
    this.stopped = true;
    this.setState(State.Stopped);
  }
  setState(newState) {
    for (const listener of this.stateListeners) listener({ oldState: undefined, newState });
  }
  // For the tests: the server's side.
  publish(uri, diagnostics) {
    const url = { toString: () => uri };
    this.options.middleware.handleDiagnostics(url, diagnostics, () => {});
  }
  showMessage(type, message) {
    this.notifications.get("window/showMessage")({ type, message });
  }
}

module.exports = {
  LanguageClient,
  State,
  TransportKind: { stdio: 0 },
  MessageType: { Error: 1, Warning: 2, Info: 3, Log: 4 },
  ShowMessageNotification: { type: { method: "window/showMessage" } },
  __clients: clients,
};
