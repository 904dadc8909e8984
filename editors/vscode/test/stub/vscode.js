// The part of the `vscode` API the extension uses, recording what it is asked to do.
"use strict";

const calls = { messages: [], commands: new Map(), items: [], outputs: [], configListeners: [] };
const settings = new Map();

class ThemeColor {
  constructor(id) {
    this.id = id;
  }
}

const window = {
  createOutputChannel(name) {
    const channel = { name, lines: [], appendLine: (l) => channel.lines.push(l), show() {}, dispose() {} };
    calls.outputs.push(channel);
    return channel;
  },
  createStatusBarItem(id, alignment, priority) {
    const item = { id, alignment, priority, text: "", tooltip: "", shown: false, show() { this.shown = true; }, dispose() {} };
    calls.items.push(item);
    return item;
  },
  showErrorMessage: async (m) => void calls.messages.push(["error", m]),
  showWarningMessage: async (m) => void calls.messages.push(["warning", m]),
  showInformationMessage: async (m) => void calls.messages.push(["info", m]),
};

const commands = {
  registerCommand(id, run) {
    calls.commands.set(id, run);
    return { dispose: () => calls.commands.delete(id) };
  },
};

const workspace = {
  textDocuments: [],
  getConfiguration(section) {
    return { get: (key) => settings.get(`${section}.${key}`) };
  },
  onDidChangeConfiguration(listener) {
    calls.configListeners.push(listener);
    return { dispose() {} };
  },
};

module.exports = {
  StatusBarAlignment: { Left: 1, Right: 2 },
  ThemeColor,
  window,
  commands,
  workspace,
  // For the tests.
  __calls: calls,
  __settings: settings,
};
