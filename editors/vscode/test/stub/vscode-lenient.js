// The `vscode` stub made lenient for the real language client (see lenient.js), enough for it to be
// built and to list its capabilities.
"use strict";

const stub = require("./vscode");
const { lenient } = require("./lenient");

// The client extends these classes while it loads, and checks the version when it is built.
const base = { version: "1.95.0" };
for (const name of ["CompletionItem", "CodeLens", "DocumentLink", "CodeAction", "Diagnostic", "CallHierarchyItem", "TypeHierarchyItem", "SymbolInformation", "InlayHint", "CancellationError"]) {
  base[name] = class {};
}

module.exports = lenient(Object.assign(Object.create(null), stub, base), "vscode");
