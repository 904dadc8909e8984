// Finds the asp-bridge binary the way rust-analyzer and ruff find theirs: the `asp-bridge.path`
// setting, then the binary bundled in the extension (`bundled/asp-bridge`), then `PATH`. Each
// candidate must answer `--version` with `asp-bridge <version>` within VERSION_TIMEOUT_MS. A
// setting that does not answer is an error (it is never silently replaced by another binary); a
// bundled binary that does not answer (another platform's, no exec bit) falls through to PATH.
"use strict";

const childProcess = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const VERSION_TIMEOUT_MS = 5000;
/** Longest `--version` output read. */
const VERSION_MAX_BYTES = 64 * 1024;

/** The executable's file name on `platform`. */
function exeName(platform) {
  return platform === "win32" ? "asp-bridge.exe" : "asp-bridge";
}

/** Runs `file --version`; resolves to its first line, rejects with a one-line reason. */
function askVersion(file) {
  return new Promise((resolve, reject) => {
    childProcess.execFile(
      file,
      ["--version"],
      { timeout: VERSION_TIMEOUT_MS, maxBuffer: VERSION_MAX_BYTES, windowsHide: true, encoding: "utf8" },
      (error, stdout) => {
        if (error) {
          const why = error.killed
            ? `it did not answer --version within ${VERSION_TIMEOUT_MS} ms`
            : error.code === "ENOENT"
              ? "no such file"
              : error.code === "EACCES"
                ? "it is not executable"
                : `--version failed: ${firstLine(error.message)}`;
          reject(new Error(why));
          return;
        }
        const line = firstLine(stdout);
        if (!/^asp-bridge \S+/.test(line)) {
          reject(new Error(`--version answered ${JSON.stringify(line.slice(0, 80))}, not "asp-bridge <version>"`));
          return;
        }
        resolve(line);
      },
    );
  });
}

function firstLine(text) {
  return String(text).split(/\r?\n/, 1)[0].trim();
}

/** `~` and `~/…` made absolute. */
function expandHome(file, home) {
  if (file === "~") return home;
  if (file.startsWith("~/") || file.startsWith("~\\")) return path.join(home, file.slice(2));
  return file;
}

/** The first executable named `name` on `pathVar`, or undefined. */
function onPath(name, pathVar, access) {
  for (const dir of (pathVar || "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    if (access(file)) return file;
  }
  return undefined;
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Finds the binary. Resolves to `{ path, version, source, tried }` (`source`: "setting", "bundled"
 * or "PATH"; `tried`: one line per candidate passed over); rejects with an Error whose message
 * names every candidate tried and why it was refused.
 */
async function findBinary({
  setting,
  extensionPath,
  env = process.env,
  platform = process.platform,
  home = os.homedir(),
  version = askVersion,
  access = isExecutable,
}) {
  const tried = [];
  const name = exeName(platform);
  const configured = typeof setting === "string" ? setting.trim() : "";
  if (configured) {
    const file = path.resolve(expandHome(configured, home));
    try {
      return { path: file, version: await version(file), source: "setting", tried };
    } catch (e) {
      throw new Error(`asp-bridge.path (${file}) cannot be used: ${e.message}`);
    }
  }
  const bundled = path.join(extensionPath, "bundled", name);
  try {
    return { path: bundled, version: await version(bundled), source: "bundled", tried };
  } catch (e) {
    tried.push(`bundled ${bundled}: ${e.message}`);
  }
  const found = onPath(name, env.PATH ?? env.Path, access);
  if (found) {
    try {
      return { path: found, version: await version(found), source: "PATH", tried };
    } catch (e) {
      tried.push(`PATH ${found}: ${e.message}`);
    }
  } else {
    tried.push(`PATH: no ${name}`);
  }
  throw new Error(`no usable asp-bridge binary (set asp-bridge.path): ${tried.join("; ")}`);
}

module.exports = { findBinary, askVersion, exeName, VERSION_TIMEOUT_MS };
