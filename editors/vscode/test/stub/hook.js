// Makes `require("vscode")` and `require("vscode-languageclient/node")` load the stubs beside this
// file: VS Code cannot be downloaded here, so the extension's unit tests run in plain Node.
"use strict";

const Module = require("node:module");
const path = require("node:path");

const STUBS = {
  vscode: path.join(__dirname, "vscode.js"),
  "vscode-languageclient/node": path.join(__dirname, "languageclient.js"),
};

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return Object.hasOwn(STUBS, request) ? STUBS[request] : resolve.call(this, request, ...rest);
};
