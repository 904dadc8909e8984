// The status bar item's state, derived only from what `asp-bridge lsp` already sends (the server is
// not changed for it):
//
// - the `initialize` result's `serverInfo` (name and version): the server is up;
// - `textDocument/publishDiagnostics`: a finding's `data` carries the decision and the receipt id;
//   a bridge notice (source `asp-bridge`, at the top of the document) says what did not run:
//   code `incomplete` (coverage not whole; `data.decision`, `data.notRun`), `left-out` (the file was
//   left out of the changeset), `not-run/<class>` (the evaluation got no answer; `data.failClass`);
//   an empty list for an open document is a complete check with no finding located there;
// - `window/showMessage`, sent once per outage: "… did not run (<class>) …" or "… is incomplete
//   (decision: <d>) …" (before any document is open this is the only sign that there is no host);
// - the client's own state: starting, running, stopped (a binary not found, a server that did not
//   start or stopped for good).
//
// The last event wins, whichever document it is for, as the server's own outage message does.
"use strict";

const BRIDGE_SOURCE = "asp-bridge";
/** Longest piece of server text put in the tooltip. */
const TEXT_MAX = 300;

const ICONS = Object.freeze({
  starting: "$(sync~spin)",
  ready: "$(check)",
  degraded: "$(warning)",
  failed: "$(error)",
});

function clip(value, max = TEXT_MAX) {
  const text = String(value ?? "").replace(/[\u0000-\u001f\u007f]+/g, " ");
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A diagnostic's code as a string: VS Code's `{ value, target }` or a plain string or number. */
function codeOf(diagnostic) {
  const code = diagnostic && diagnostic.code;
  if (code && typeof code === "object") return String(code.value ?? "");
  return code === undefined || code === null ? "" : String(code);
}

function dataOf(diagnostic) {
  const data = diagnostic && diagnostic.data;
  return data && typeof data === "object" ? data : {};
}

function plural(n, one) {
  return `${n} ${one}${n === 1 ? "" : "s"}`;
}

class Status {
  constructor() {
    /** "starting" | "ready" | "degraded" | "failed" */
    this.state = "starting";
    /** What the status bar says after the state, e.g. "deny · 2 findings". */
    this.detail = "";
    /** Tooltip lines about the last event. */
    this.why = "";
    this.server = "";
    this.binary = "";
    this.receipt = "";
    this.file = "";
    this.listeners = [];
  }

  onChange(listener) {
    this.listeners.push(listener);
  }

  changed() {
    for (const listener of this.listeners) listener(this);
  }

  set(state, detail, why, extra = {}) {
    this.state = state;
    this.detail = detail;
    this.why = why;
    this.receipt = extra.receipt ?? "";
    this.file = extra.file ?? "";
    this.changed();
  }

  /** The binary is being looked for, or the server started (`binary`: what was found). */
  starting(binary) {
    if (binary !== undefined) this.binary = binary;
    this.set("starting", "", "the language server is starting");
  }

  /** `initialize` answered: `serverInfo` from its result. */
  ready(serverInfo) {
    const name = clip(serverInfo && serverInfo.name, 80) || "asp-bridge";
    const version = clip(serverInfo && serverInfo.version, 80);
    this.server = version ? `${name} ${version}` : name;
    this.set("ready", "", "the server is up; no check has run yet (one runs on open and on save)");
  }

  /** The server is not running: `why` says what happened. */
  failed(why) {
    this.set("failed", "stopped", clip(why));
  }

  /** `textDocument/publishDiagnostics` for `uri`; `open`: the document is open in the editor. */
  diagnostics(uri, diagnostics, open) {
    const list = (Array.isArray(diagnostics) ? diagnostics : []).filter((d) => d && typeof d === "object");
    const file = fileName(uri);
    const notices = list.filter((d) => d.source === BRIDGE_SOURCE);
    const findings = list.filter((d) => d.source !== BRIDGE_SOURCE);
    const notRun = notices.find((d) => codeOf(d).startsWith("not-run/"));
    if (notRun) {
      const failClass = clip(dataOf(notRun).failClass || codeOf(notRun).slice("not-run/".length), 40);
      this.set("failed", failClass, clip(notRun.message), { file });
      return;
    }
    const receipt = findings.map((d) => dataOf(d).receiptId).find(Boolean);
    const incomplete = notices.find((d) => codeOf(d) === "incomplete");
    if (incomplete) {
      const data = dataOf(incomplete);
      const decision = clip(data.decision, 40) || "incomplete";
      this.set("degraded", withCount(decision, findings.length), clip(incomplete.message), {
        receipt: clip(data.receiptId || receipt || "", 80),
        file,
      });
      return;
    }
    if (notices.some((d) => codeOf(d) === "left-out")) {
      const leftOut = notices.find((d) => codeOf(d) === "left-out");
      this.set("degraded", "left out", clip(leftOut.message), { file });
      return;
    }
    if (findings.length === 0) {
      // A closed document's list is emptied: that says nothing about the last check.
      if (!open) return;
      this.set("ready", "no findings", `the last check found nothing in ${file}`, { file });
      return;
    }
    const decision = clip(findings.map((d) => dataOf(d).decision).find(Boolean), 40) || "findings";
    this.set("ready", withCount(decision, findings.length), `the last check of ${file}: ${plural(findings.length, "finding")}`, {
      receipt: clip(receipt || "", 80),
      file,
    });
  }

  /** `window/showMessage`: the server's once-per-outage message. */
  message(text) {
    const message = String(text ?? "");
    const failed = /did not run \(([a-z]+)\)/.exec(message);
    if (failed) {
      this.set("failed", failed[1], clip(message));
      return;
    }
    const incomplete = /is incomplete \(decision: ([^)\s]+)\)/.exec(message);
    if (incomplete) this.set("degraded", clip(incomplete[1], 40), clip(message));
  }

  /** The status bar text. */
  text() {
    const base = `${ICONS[this.state]} ASP`;
    switch (this.state) {
      case "starting":
        return `${base} starting`;
      case "ready":
        return this.detail ? `${base}: ${this.detail}` : `${base} ready`;
      default:
        return this.detail ? `${base} ${this.state}: ${this.detail}` : `${base} ${this.state}`;
    }
  }

  /** The tooltip, as plain lines. */
  tooltip() {
    const lines = [`asp-bridge: ${this.state}`];
    if (this.server) lines.push(`server: ${this.server}`);
    if (this.binary) lines.push(`binary: ${this.binary}`);
    if (this.why) lines.push(this.why);
    if (this.file) lines.push(`file: ${this.file}`);
    if (this.receipt) lines.push(`receipt: ${this.receipt}`);
    return lines.join("\n");
  }

  /** The status bar's background: none, or VS Code's warning or error theme colour id. */
  background() {
    if (this.state === "degraded") return "statusBarItem.warningBackground";
    if (this.state === "failed") return "statusBarItem.errorBackground";
    return undefined;
  }
}

function withCount(decision, findings) {
  return findings > 0 ? `${decision} · ${plural(findings, "finding")}` : decision;
}

function fileName(uri) {
  const text = clip(uri, 2000);
  const last = text.split("/").pop() || text;
  try {
    return clip(decodeURIComponent(last), 120);
  } catch {
    return clip(last, 120);
  }
}

module.exports = { Status, BRIDGE_SOURCE, codeOf };
