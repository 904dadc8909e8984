// The `vscode` stub made lenient for the real language client: what the stub lacks is a stand-in
// that can be called, built, extended and read from, so the client can be constructed in Node.
"use strict";

const stub = require("./vscode");

/** A value that is anything: a function, a class, an object with every property. */
function anything(name) {
  return new Proxy(function () {}, {
    get(_, key) {
      if (key === "then") return undefined;
      if (key === Symbol.toPrimitive) return () => name;
      return anything(`${name}.${String(key)}`);
    },
    apply: () => anything(`${name}()`),
    construct: () => anything(`new ${name}`),
  });
}

function lenient(object, name) {
  return new Proxy(object, {
    get(target, key) {
      if (!(key in target)) return anything(`${name}.${String(key)}`);
      const value = target[key];
      return value && typeof value === "object" && !Array.isArray(value) ? lenient(value, `${name}.${String(key)}`) : value;
    },
  });
}

// The client extends these classes while it loads, and checks the version when it is built.
const base = { version: "1.95.0" };
for (const name of ["CompletionItem", "CodeLens", "DocumentLink", "CodeAction", "Diagnostic", "CallHierarchyItem", "TypeHierarchyItem", "SymbolInformation", "InlayHint", "CancellationError"]) {
  base[name] = class {};
}

module.exports = lenient(Object.assign(Object.create(null), stub, base), "vscode");
