// What the tests share: external tools (a missing one skips the test and is recorded in the file
// ASP_BRIDGE_SKIP_LOG names, `test<TAB>why` as test-support/src/skip.rs writes, or fails it when
// ASP_BRIDGE_REQUIRE_TOOLS is set), deadlines, and the e2e tests' git workspace and environment.
"use strict";

const childProcess = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
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

/** Resolves when `promise` does, rejects with `what` after `ms` (a function is asked then, so the
 * message can say what had happened by the deadline). */
function deadline(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${typeof what === "function" ? what() : what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const WAIT_MS = 30_000;

function git(cwd, ...args) {
  childProcess.execFileSync("git", args, { cwd, stdio: "pipe", timeout: WAIT_MS });
}

/** A git repository whose one committed file now holds a merge conflict; HOME an empty folder. */
function workspace(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "asp-bridge-vscode-e2e-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const repo = path.join(dir, "repo");
  const home = path.join(dir, "home");
  fs.mkdirSync(repo);
  fs.mkdirSync(home);
  git(repo, "init", "-q");
  git(repo, "config", "user.email", "e2e@example.test");
  git(repo, "config", "user.name", "e2e");
  git(repo, "config", "commit.gpgsign", "false");
  fs.writeFileSync(path.join(repo, "notes.txt"), "one\ntwo\n");
  git(repo, "add", "notes.txt");
  git(repo, "commit", "-q", "-m", "first");
  const text = "one\n<<<<<<< HEAD\ntwo\n=======\nzwei\n>>>>>>> other\n";
  fs.writeFileSync(path.join(repo, "notes.txt"), text);
  return { repo: fs.realpathSync(repo), home, text };
}

/** PATH without any folder that holds an `asp`, so the embedded host is the one used. */
function pathWithoutAsp() {
  return (process.env.PATH || "")
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, "asp")))
    .join(path.delimiter);
}

/** The server's environment: the embedded host (no `asp` on PATH), HOME and XDG_CONFIG_HOME the
 * empty folder `home` (no host.toml: the built-in hygiene provider alone), and `extra`. */
function environment(home, extra = {}) {
  const env = { ...process.env, PATH: pathWithoutAsp(), HOME: home, XDG_CONFIG_HOME: home };
  for (const name of ["ASP_BRIDGE_CONFIG", "ASP_BRIDGE_HOST_COMMAND", "ASP_BRIDGE_LOG", "RUST_LOG"]) delete env[name];
  return { ...env, ...extra };
}

/** The binary `bin` and git, or undefined when one is missing (the test is then skipped). */
function ready(t, bin) {
  if (!bin) {
    skip(t, "no asp-bridge binary: set ASP_BRIDGE_BIN or build it (cargo build -p asp-bridge)");
    return undefined;
  }
  try {
    childProcess.execFileSync("git", ["--version"], { stdio: "pipe", timeout: WAIT_MS });
  } catch {
    skip(t, "`git` is not installed");
    return undefined;
  }
  return bin;
}

module.exports = { skip, binary, deadline, environment, ready, workspace, REPO, WAIT_MS };
