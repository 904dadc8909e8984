// A small in-memory VS Code for the real language client: URIs, ranges, diagnostics, events, open
// documents, diagnostic collections, settings and messages, recorded for the tests. Whatever else
// the client touches is a lenient stand-in (vscode-lenient.js).
"use strict";

const path = require("node:path");
const { pathToFileURL, fileURLToPath } = require("node:url");

const { lenient } = require("./lenient");

class Uri {
  constructor(href) {
    const url = new URL(href);
    this.href = url.href;
    this.scheme = url.protocol.replace(/:$/, "");
    this.path = decodeURIComponent(url.pathname);
  }
  static parse(href) {
    return new Uri(href);
  }
  static file(file) {
    return new Uri(pathToFileURL(file).href);
  }
  get fsPath() {
    return fileURLToPath(this.href);
  }
  toString() {
    return this.href;
  }
  toJSON() {
    return this.href;
  }
}

class Position {
  constructor(line, character) {
    Object.assign(this, { line, character });
  }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") [a, b] = [new Position(a, b), new Position(c, d)];
    Object.assign(this, { start: a, end: b });
  }
}

class Diagnostic {
  constructor(range, message, severity) {
    Object.assign(this, { range, message, severity });
  }
}

class Disposable {
  constructor(dispose) {
    this.dispose = dispose || (() => {});
  }
  static from(...items) {
    return new Disposable(() => items.forEach((d) => d && d.dispose && d.dispose()));
  }
}

class EventEmitter {
  constructor() {
    this.listeners = new Set();
    this.event = (listener, thisArg) => {
      const bound = thisArg ? listener.bind(thisArg) : listener;
      this.listeners.add(bound);
      return new Disposable(() => this.listeners.delete(bound));
    };
  }
  fire(value) {
    for (const listener of [...this.listeners]) listener(value);
  }
  dispose() {
    this.listeners.clear();
  }
}

class CancellationTokenSource {
  constructor() {
    const cancelled = new EventEmitter();
    this.cancelled = cancelled;
    this.token = { isCancellationRequested: false, onCancellationRequested: cancelled.event };
  }
  cancel() {
    if (this.token.isCancellationRequested) return;
    this.token.isCancellationRequested = true;
    this.cancelled.fire();
  }
  dispose() {
    this.cancelled.dispose();
  }
}

const events = {};
for (const name of ["open", "close", "change", "save", "willSave", "config", "folders", "editor", "message"]) events[name] = new EventEmitter();

const recorded = { messages: [], collections: [], items: [], settings: new Map() };

function collection(name) {
  const entries = new Map();
  const c = {
    name,
    entries,
    set(uri, diagnostics) {
      if (Array.isArray(uri)) for (const [u, d] of uri) entries.set(u.toString(), d || []);
      else entries.set(uri.toString(), diagnostics || []);
    },
    get: (uri) => entries.get(uri.toString()),
    has: (uri) => entries.has(uri.toString()),
    delete: (uri) => entries.delete(uri.toString()),
    clear: () => entries.clear(),
    forEach: (f) => entries.forEach((d, u) => f(Uri.parse(u), d, c)),
    dispose: () => entries.clear(),
  };
  recorded.collections.push(c);
  return c;
}

function matches(selector, document) {
  const filters = Array.isArray(selector) ? selector : [selector];
  return filters.some((f) =>
    typeof f === "string" ? f === document.languageId : (!f.language || f.language === document.languageId) && (!f.scheme || f.scheme === document.uri.scheme),
  )
    ? 10
    : 0;
}

function document(file, languageId, text) {
  return {
    uri: Uri.file(file),
    fileName: file,
    languageId,
    version: 1,
    isClosed: false,
    isDirty: false,
    isUntitled: false,
    getText: () => text,
  };
}

const vscode = {
  version: "1.95.0",
  Uri,
  Position,
  Range,
  Diagnostic,
  Disposable,
  EventEmitter,
  CancellationTokenSource,
  ThemeColor: class {
    constructor(id) {
      this.id = id;
    }
  },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  StatusBarAlignment: { Left: 1, Right: 2 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  workspace: {
    workspaceFolders: [],
    textDocuments: [],
    onDidOpenTextDocument: events.open.event,
    onDidCloseTextDocument: events.close.event,
    onDidChangeTextDocument: events.change.event,
    onDidSaveTextDocument: events.save.event,
    onWillSaveTextDocument: events.willSave.event,
    onDidChangeConfiguration: events.config.event,
    onDidChangeWorkspaceFolders: events.folders.event,
    getConfiguration: (section) => ({ get: (key, fallback) => recorded.settings.get(`${section}.${key}`) ?? fallback }),
    getWorkspaceFolder: (uri) => vscode.workspace.workspaceFolders.find((f) => uri.fsPath.startsWith(f.uri.fsPath + path.sep)),
  },
  languages: { createDiagnosticCollection: collection, match: matches },
  window: {
    activeTextEditor: undefined,
    onDidChangeActiveTextEditor: events.editor.event,
    createOutputChannel: (name) => ({ name, lines: [], append(t) { this.lines.push(String(t)); }, appendLine(l) { this.lines.push(l); }, clear() {}, show() {}, hide() {}, replace() {}, dispose() {} }),
    createStatusBarItem: (id) => {
      const item = { id, text: "", tooltip: "", show() {}, hide() {}, dispose() {} };
      recorded.items.push(item);
      return item;
    },
    showErrorMessage: async (m) => void (recorded.messages.push(["error", m]), events.message.fire(m)),
    showWarningMessage: async (m) => void (recorded.messages.push(["warning", m]), events.message.fire(m)),
    showInformationMessage: async (m) => void (recorded.messages.push(["info", m]), events.message.fire(m)),
    withProgress: async (_options, task) => task({ report() {} }, { isCancellationRequested: false, onCancellationRequested: () => new Disposable() }),
  },
  commands: {
    registered: new Map(),
    registerCommand(id, run) {
      this.registered.set(id, run);
      return new Disposable(() => this.registered.delete(id));
    },
    executeCommand: async (id, ...args) => vscode.commands.registered.get(id)?.(...args),
  },
  env: { appName: "Visual Studio Code", language: "en", machineId: "e2e", openExternal: async () => false },
  // For the tests.
  __recorded: recorded,
  __events: events,
  __document: document,
};

// The classes the client extends while it loads.
for (const name of ["CompletionItem", "CodeLens", "DocumentLink", "CodeAction", "CallHierarchyItem", "TypeHierarchyItem", "SymbolInformation", "InlayHint", "CancellationError"]) {
  vscode[name] = class {};
}

module.exports = lenient(vscode, "vscode");
