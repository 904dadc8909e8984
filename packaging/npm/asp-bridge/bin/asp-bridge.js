#!/usr/bin/env node
// The `asp-bridge` command of the npm package: runs the binary of this platform's package (one of
// the optionalDependencies, which npm installs only where its os, cpu and libc match), as biome and
// esbuild ship theirs. No install script: nothing runs at install time. ASP_BRIDGE_BINARY names
// another binary. stdin, stdout and stderr are the binary's own (stdout is the MCP or LSP protocol);
// a signal to this process is passed on, and the binary's exit is this process's exit.
"use strict";

const { spawn } = require("node:child_process");

function libc() {
  if (process.platform !== "linux") return "";
  const report = process.report && process.report.getReport();
  return report && report.header && report.header.glibcVersionRuntime ? "" : "-musl";
}

function binary() {
  if (process.env.ASP_BRIDGE_BINARY) return process.env.ASP_BRIDGE_BINARY;
  const name = `asp-bridge-${process.platform}-${process.arch}${libc()}`;
  try {
    return require.resolve(`${name}/bin/asp-bridge`);
  } catch {
    process.stderr.write(
      `asp-bridge: input: no asp-bridge binary for ${process.platform}-${process.arch}${libc()}: ` +
        `the package ${name} is not installed (npm skips optional dependencies when installing with ` +
        `--omit=optional or --no-optional); reinstall asp-bridge, or set ASP_BRIDGE_BINARY\n`,
    );
    process.exit(6);
  }
}

const child = spawn(binary(), process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`asp-bridge: health: could not start the asp-bridge binary: ${error.message}\n`);
  process.exit(3);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code === null ? 1 : code);
  }
});
