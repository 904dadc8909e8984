// Stand-ins for the parts of the `vscode` API a stub does not model: a value that can be called,
// built, extended and read from, so the real language client can be constructed in Node.
"use strict";

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

/** `object`, with a stand-in for each property it lacks, at any depth of plain objects. */
function lenient(object, name) {
  return new Proxy(object, {
    get(target, key) {
      if (!(key in target)) return anything(`${name}.${String(key)}`);
      const value = target[key];
      const plain = value && typeof value === "object" && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
      return plain ? lenient(value, `${name}.${String(key)}`) : value;
    },
  });
}

module.exports = { anything, lenient };
