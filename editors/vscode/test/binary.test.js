// Finding the binary: the setting, then the bundled binary, then PATH, each asked for --version.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const { findBinary, askVersion } = require("../src/binary");

/** A `version` stand-in: answers for the files in `answers`, refuses the rest. */
function versions(answers) {
  const asked = [];
  const version = async (file) => {
    asked.push(file);
    if (Object.hasOwn(answers, file)) return answers[file];
    throw new Error("no such file");
  };
  return { version, asked };
}

const EXT = "/ext";
const BUNDLED = path.join(EXT, "bundled", "asp-bridge");
const base = { extensionPath: EXT, platform: "linux", home: "/home/me", env: { PATH: "/usr/local/bin:/usr/bin" } };

test("the setting comes first and is used as it is", async () => {
  const { version, asked } = versions({ "/opt/a/asp-bridge": "asp-bridge 9.9.9", [BUNDLED]: "asp-bridge 0.1.0" });
  const found = await findBinary({ ...base, setting: "/opt/a/asp-bridge", version, access: () => true });
  assert.deepEqual([found.path, found.source, found.version], ["/opt/a/asp-bridge", "setting", "asp-bridge 9.9.9"]);
  assert.deepEqual(asked, ["/opt/a/asp-bridge"]);
});

test("a setting that does not answer is an error, not replaced by another binary", async () => {
  const { version, asked } = versions({ [BUNDLED]: "asp-bridge 0.1.0" });
  await assert.rejects(findBinary({ ...base, setting: "~/bin/asp-bridge", version, access: () => true }), {
    message: "asp-bridge.path (/home/me/bin/asp-bridge) cannot be used: no such file",
  });
  assert.deepEqual(asked, ["/home/me/bin/asp-bridge"]);
});

test("without a setting the bundled binary comes next", async () => {
  const { version } = versions({ [BUNDLED]: "asp-bridge 0.1.0", "/usr/bin/asp-bridge": "asp-bridge 0.0.1" });
  const found = await findBinary({ ...base, setting: "  ", version, access: () => true });
  assert.deepEqual([found.path, found.source], [BUNDLED, "bundled"]);
});

test("a bundled binary that does not answer falls through to PATH, and says why", async () => {
  const { version } = versions({ "/usr/bin/asp-bridge": "asp-bridge 0.0.1" });
  const found = await findBinary({ ...base, version, access: (f) => f === "/usr/bin/asp-bridge" });
  assert.deepEqual([found.path, found.source], ["/usr/bin/asp-bridge", "PATH"]);
  assert.deepEqual(found.tried, [`bundled ${BUNDLED}: no such file`]);
});

test("no binary anywhere names every candidate tried", async () => {
  const { version } = versions({});
  await assert.rejects(findBinary({ ...base, version, access: () => false }), {
    message: `no usable asp-bridge binary (set asp-bridge.path): bundled ${BUNDLED}: no such file; PATH: no asp-bridge`,
  });
});

test("windows looks for asp-bridge.exe", async () => {
  const bundled = path.join(EXT, "bundled", "asp-bridge.exe");
  const { version } = versions({ [bundled]: "asp-bridge 0.1.0" });
  const found = await findBinary({ ...base, platform: "win32", version });
  assert.equal(found.path, bundled);
});

test("--version is asked of the real file and its answer checked", { skip: process.platform === "win32" }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "asp-bridge-binary-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const script = (name, body, mode = 0o755) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode });
    return file;
  };
  assert.equal(await askVersion(script("good", 'echo "asp-bridge 0.1.0"')), "asp-bridge 0.1.0");
  await assert.rejects(askVersion(script("other", 'echo "ruff 0.5.0"')), { message: /not "asp-bridge <version>"/ });
  await assert.rejects(askVersion(script("fails", "exit 3")), { message: /^--version failed/ });
  await assert.rejects(askVersion(script("plain", 'echo "asp-bridge 0.1.0"', 0o644)), { message: "it is not executable" });
  await assert.rejects(askVersion(path.join(dir, "missing")), { message: "no such file" });
  const found = await findBinary({ extensionPath: dir, env: { PATH: dir }, setting: "" }).catch((e) => e);
  assert.match(found.message, /PATH: no asp-bridge/);
});
