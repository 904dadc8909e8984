// External tools for the tests: a missing one skips the test and is recorded in the file
// ASP_BRIDGE_SKIP_LOG names (`test<TAB>why`, as test-support/src/skip.rs writes), or fails it when
// ASP_BRIDGE_REQUIRE_TOOLS is set.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const REPO = path.resolve(__dirname, "..", "..", "..");

/** Skips test `t` because of `why`, or throws when every tool is required. */
function skip(t, why) {
  const test = `editors/vscode::${t.name}`;
  if (process.env.ASP_BRIDGE_REQUIRE_TOOLS) {
    throw new Error(`${test}: ${why} (ASP_BRIDGE_REQUIRE_TOOLS is set: every external tool is required here)`);
  }
  process.stderr.write(`\n*** SKIPPED ${test}: ${why} ***\n\n`);
  const log = process.env.ASP_BRIDGE_SKIP_LOG;
  if (log) fs.appendFileSync(log, `${test}\t${why.replace(/[\t\n]/g, " ")}\n`);
  t.skip(why);
}

/** The asp-bridge binary: ASP_BRIDGE_BIN, else the workspace's debug build; undefined if neither. */
function binary() {
  const named = process.env.ASP_BRIDGE_BIN;
  if (named) return fs.existsSync(named) ? named : undefined;
  const built = path.join(REPO, "target", "debug", process.platform === "win32" ? "asp-bridge.exe" : "asp-bridge");
  return fs.existsSync(built) ? built : undefined;
}

/** Resolves when `promise` does, rejects with `what` after `ms`. */
function deadline(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

module.exports = { skip, binary, deadline, REPO };
