// The VSIX that package.sh built (ASP_BRIDGE_VSIX names it): extension/package.json names an entry
// point that is in the VSIX, the manifest names its target, nothing but the built extension is
// packed, and the bundled binary keeps its exec bit and answers --version once unpacked.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const childProcess = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { pipeline } = require("node:stream/promises");

const yauzl = require("yauzl");

const { skip } = require("./tools");

/** Longest entry read into memory (the manifests; the binary is streamed to a file). */
const TEXT_MAX = 1024 * 1024;

function open(file) {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (e, zip) => (e ? reject(e) : resolve(zip))),
  );
}

/** Every entry of `zip`, by name. */
function entries(zip) {
  return new Promise((resolve, reject) => {
    const found = new Map();
    zip.on("entry", (entry) => {
      found.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.on("end", () => resolve(found));
    zip.on("error", reject);
    zip.readEntry();
  });
}

function stream(zip, entry) {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (e, s) => (e ? reject(e) : resolve(s))));
}

async function text(zip, entry) {
  assert.ok(entry.uncompressedSize <= TEXT_MAX, `${entry.fileName} is ${entry.uncompressedSize} bytes`);
  const chunks = [];
  for await (const chunk of await stream(zip, entry)) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** The Unix mode bits a zip entry carries (the upper half of its external attributes). */
function mode(entry) {
  return (entry.externalFileAttributes >>> 16) & 0o7777;
}

test("the VSIX names its entry point and bundles a binary that keeps its exec bit and answers --version", async (t) => {
  const vsix = process.env.ASP_BRIDGE_VSIX;
  if (!vsix || !fs.existsSync(vsix)) {
    skip(t, "no VSIX: run editors/vscode/package.sh BINARY and set ASP_BRIDGE_VSIX to the file it wrote");
    return;
  }
  const zip = await open(vsix);
  t.after(() => zip.close());
  const found = await entries(zip);

  const manifest = JSON.parse(await text(zip, found.get("extension/package.json")));
  const main = path.posix.normalize(path.posix.join("extension", manifest.main));
  assert.ok(found.has(main), `the entry point ${main} is in the VSIX (it has ${[...found.keys()].join(", ")})`);
  assert.match(await text(zip, found.get(main)), /activate/);
  const target = process.env.ASP_BRIDGE_VSIX_TARGET || "linux-x64";
  assert.ok((await text(zip, found.get("extension.vsixmanifest"))).includes(`TargetPlatform="${target}"`), `the manifest names ${target}`);
  for (const name of found.keys()) {
    assert.doesNotMatch(name, /^extension\/(node_modules|src|test)\//, `${name} is not packed`);
  }

  const bundled = found.get("extension/bundled/asp-bridge");
  assert.ok(bundled, "extension/bundled/asp-bridge is in the VSIX");
  assert.equal(mode(bundled) & 0o111, 0o111, `the bundled binary is executable (mode ${mode(bundled).toString(8)})`);

  // Unpacked as VS Code does, with the entry's own mode.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "asp-bridge-vsix-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const binary = path.join(dir, "asp-bridge");
  await pipeline(await stream(zip, bundled), fs.createWriteStream(binary, { mode: mode(bundled) }));
  fs.chmodSync(binary, mode(bundled));
  const version = childProcess.execFileSync(binary, ["--version"], { encoding: "utf8", timeout: 10_000 }).trim();
  assert.match(version, /^asp-bridge \d+\.\d+\.\d+/);
  assert.equal(version, `asp-bridge ${manifest.version}`, "the extension's version is the binary's");
});
