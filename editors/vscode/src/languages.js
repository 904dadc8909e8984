// The VS Code language ids the extension starts the server for. The built-in hygiene provider checks
// any text file (merge-conflict markers, private keys, JSON/TOML/YAML syntax, whitespace), so the
// list covers the common languages and plain text; package.json's activationEvents name the same ids
// (a unit test keeps them in step).
"use strict";

const LANGUAGES = Object.freeze([
  "typescript",
  "typescriptreact",
  "javascript",
  "javascriptreact",
  "python",
  "rust",
  "go",
  "java",
  "c",
  "cpp",
  "csharp",
  "ruby",
  "php",
  "shellscript",
  "dockerfile",
  "makefile",
  "json",
  "jsonc",
  "yaml",
  "toml",
  "ini",
  "xml",
  "html",
  "css",
  "markdown",
  "plaintext",
]);

/** The client's document selector: files on disk only (the server checks what is saved). */
function documentSelector() {
  return LANGUAGES.map((language) => ({ scheme: "file", language }));
}

module.exports = { LANGUAGES, documentSelector };
