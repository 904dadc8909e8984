// The status bar text for each host state, from diagnostics and messages shaped as
// lsp-adapter/src/to_lsp.rs writes them.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");

const { Status } = require("../src/status");

const URI = "file:///w/src/api.ts";

function finding(decision, code = "hygiene/merge-conflict") {
  return {
    source: "hygiene",
    code,
    message: "merge-conflict marker",
    data: { fingerprint: "sha256:1", receiptId: "rcpt-1", decision, assurance: "advisory", authoritative: false },
  };
}

function notice(code, message, data) {
  return { source: "asp-bridge", code, message, data: { ...data, authoritative: false } };
}

function ready() {
  const status = new Status();
  status.ready({ name: "asp-bridge", version: "0.1.0" });
  return status;
}

test("a starting server says so", () => {
  const status = new Status();
  status.starting("/opt/asp-bridge (bundled)");
  assert.equal(status.text(), "$(sync~spin) ASP starting");
  assert.match(status.tooltip(), /binary: \/opt\/asp-bridge \(bundled\)/);
  assert.equal(status.background(), undefined);
});

test("a ready host shows ready, then the last decision with its findings", () => {
  const status = ready();
  assert.equal(status.text(), "$(check) ASP ready");
  assert.match(status.tooltip(), /server: asp-bridge 0\.1\.0/);
  status.diagnostics(URI, [finding("deny"), finding("deny", "hygiene/private-key")], true);
  assert.equal(status.text(), "$(check) ASP: deny · 2 findings");
  assert.match(status.tooltip(), /receipt: rcpt-1/);
  assert.match(status.tooltip(), /file: api\.ts/);
  assert.equal(status.background(), undefined);
  status.diagnostics(URI, [], true);
  assert.equal(status.text(), "$(check) ASP: no findings");
});

test("a closed document's emptied list leaves the status as it was", () => {
  const status = ready();
  status.diagnostics(URI, [finding("allow")], true);
  status.diagnostics(URI, [], false);
  assert.equal(status.text(), "$(check) ASP: allow · 1 finding");
});

test("a degraded host shows the incomplete decision, in the warning colour", () => {
  const status = ready();
  const incomplete = notice("incomplete", "ASP host check incomplete (decision: indeterminate): not run or degraded: opcore: timeout", {
    decision: "indeterminate",
    notRun: [{ source: "opcore", reason: "timeout", detail: "" }],
    receiptId: "rcpt-2",
  });
  status.diagnostics(URI, [incomplete, finding("indeterminate")], true);
  assert.equal(status.text(), "$(warning) ASP degraded: indeterminate · 1 finding");
  assert.equal(status.background(), "statusBarItem.warningBackground");
  assert.match(status.tooltip(), /receipt: rcpt-2/);
  assert.match(status.tooltip(), /opcore: timeout/);

  status.diagnostics(URI, [notice("left-out", "ASP host check left this file out (ignored): it was not checked", { why: "ignored" })], true);
  assert.equal(status.text(), "$(warning) ASP degraded: left out");
});

test("a failed host shows the failure class, in the error colour, and a later check clears it", () => {
  const status = ready();
  const notRun = notice("not-run/health", "ASP host check did not run (health): host exited with status 3; no check of this document has run yet", {
    failClass: "health",
  });
  status.diagnostics(URI, [notRun], true);
  assert.equal(status.text(), "$(error) ASP failed: health");
  assert.equal(status.background(), "statusBarItem.errorBackground");
  assert.match(status.tooltip(), /host exited with status 3/);
  status.diagnostics(URI, [finding("deny")], true);
  assert.equal(status.text(), "$(check) ASP: deny · 1 finding");
});

test("the server's outage messages set the state before any document is checked", () => {
  const status = ready();
  status.message("asp-bridge: the ASP host check did not run (input): host.toml:5: provider[0].command: missing. Diagnostics stay as last checked until it runs again.");
  assert.equal(status.text(), "$(error) ASP failed: input");
  status.message("asp-bridge: the ASP host check is incomplete (decision: indeterminate): not run or degraded: opcore: timeout");
  assert.equal(status.text(), "$(warning) ASP degraded: indeterminate");
  status.message("an unrelated message");
  assert.equal(status.text(), "$(warning) ASP degraded: indeterminate");
});

test("a server that stopped is failed", () => {
  const status = ready();
  status.failed("the language server stopped");
  assert.equal(status.text(), "$(error) ASP failed: stopped");
  assert.equal(status.background(), "statusBarItem.errorBackground");
});

test("hostile server text is clipped and kept on one line", () => {
  const status = ready();
  const long = "x".repeat(10_000);
  status.diagnostics(URI, [notice(`not-run/${long}`, `line\nbreak ${long}`, { failClass: `a\u0007${long}` })], true);
  assert.ok(status.text().length < 80, status.text());
  assert.ok(status.tooltip().length < 1000);
  assert.doesNotMatch(status.text(), /[\u0000-\u001f]/);
  status.diagnostics(URI, [null, 7, { source: 3, code: { value: null }, data: "no" }], true);
  assert.equal(status.text(), "$(check) ASP: findings · 1 finding");
  status.diagnostics(URI, "not a list", true);
  assert.equal(status.text(), "$(check) ASP: no findings");
});
