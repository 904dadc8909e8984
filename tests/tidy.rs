//! Tidy checks that run with `cargo test`: file headers, module layout, stdout discipline, ignored
//! tests, file size, the dependency direction between the crates, the wire vocabulary named once,
//! and the one version.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Every tracked-or-new Rust file of the project, relative to the root.
/// The tracked Rust files for which `keep` is true.
fn rust_files_where(keep: impl Fn(&PathBuf) -> bool) -> Vec<PathBuf> {
    let mut files = rust_files();
    files.retain(keep);
    files
}

fn rust_files() -> Vec<PathBuf> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root())
        .args([
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "*.rs",
        ])
        .output()
        .expect("git ls-files");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(PathBuf::from)
        .filter(|p| root().join(p).exists())
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_default()
}

fn is_test_code(path: &Path) -> bool {
    let text = path.to_string_lossy();
    text.starts_with("tests/")
        || text.contains("/tests/")
        || text.starts_with("benches/")
        || text.contains("/benches/")
        || text.starts_with("fuzz/")
        || text.ends_with("/tests.rs")
}

/// The lines of `text` that are code (trimmed at the start, comments skipped), with their index,
/// up to its `#[cfg(test)]` module.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .map(str::trim_start)
        .enumerate()
        .take_while(|(_, code)| !code.starts_with("#[cfg(test)]"))
        .filter(|(_, code)| !code.starts_with("//"))
        .collect()
}

#[test]
fn every_rust_file_opens_with_a_module_doc_line() {
    let missing = rust_files_where(|p| !read(p).starts_with("//!"));
    assert!(
        missing.is_empty(),
        "files without a leading `//!` line: {missing:?}"
    );
}

#[test]
fn modules_are_foo_rs_and_foo_dir_never_mod_rs() {
    let mod_rs = rust_files_where(|p| p.ends_with("mod.rs"));
    assert!(mod_rs.is_empty(), "mod.rs files: {mod_rs:?}");
}

#[test]
fn nothing_prints_to_stdout_outside_the_transports() {
    // Files that own stdout: the commands that write a document there, and the fake host.
    let owners = [
        "asp-bridge/src/commands/status.rs",
        "asp-bridge/src/commands/sarif.rs",
    ];
    let mut offenders = Vec::new();
    for path in rust_files().into_iter().filter(|p| !is_test_code(p)) {
        let text = read(&path);
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let prints = ["println!(", "print!(", "dbg!("].iter().any(|m| {
                code.match_indices(m)
                    .any(|(at, _)| !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            let stdout =
                code.contains("io::stdout()") && !owners.iter().any(|o| path == Path::new(o));
            if prints || stdout {
                offenders.push(format!("{}:{}: {}", path.display(), n + 1, code));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "stdout belongs to the protocol:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn no_ignored_test_without_a_reason() {
    let mut offenders = Vec::new();
    for path in rust_files() {
        for (n, line) in read(&path).lines().enumerate() {
            if line.trim() == "#[ignore]" {
                offenders.push(format!("{}:{}", path.display(), n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "write #[ignore = \"why\"]: {offenders:?}"
    );
}

#[test]
fn files_stay_under_about_800_lines() {
    let big: Vec<_> = rust_files()
        .into_iter()
        .map(|p| (read(&p).lines().count(), p))
        .filter(|(lines, _)| *lines > 900)
        .collect();
    assert!(big.is_empty(), "split these files: {big:?}");
}

/// `cargo metadata` of the workspace's own packages.
fn metadata() -> serde_json::Value {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
            "--manifest-path",
        ])
        .arg(root().join("Cargo.toml"))
        .output()
        .expect("cargo metadata");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("metadata json")
}

/// Each workspace crate with every package it reaches through normal dependencies: the external
/// ones it names and, transitively, those of the workspace crates it depends on.
fn dependency_closure() -> BTreeMap<String, BTreeSet<String>> {
    let meta = metadata();
    let direct: BTreeMap<String, Vec<String>> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null());
            (
                p["name"].as_str().unwrap().to_owned(),
                deps.map(|d| d["name"].as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect();
    let mut closure = BTreeMap::new();
    for member in direct.keys() {
        let mut seen = BTreeSet::new();
        let mut stack = vec![member.clone()];
        while let Some(name) = stack.pop() {
            for dep in direct.get(&name).into_iter().flatten() {
                if seen.insert(dep.clone()) && direct.contains_key(dep) {
                    stack.push(dep.clone());
                }
            }
        }
        closure.insert(member.clone(), seen);
    }
    closure
}

#[test]
fn dependencies_point_one_way() {
    let closure = dependency_closure();
    let owners = [
        ("mcp-adapter", "rmcp"),
        ("lsp-adapter", "tower-lsp-server"),
        ("sarif-export", "serde-sarif"),
    ];
    let adapters = owners.map(|(crate_name, _)| crate_name);
    let mut problems = Vec::new();
    for (owner, library) in owners {
        for (name, deps) in &closure {
            if name != owner && name != "asp-bridge" && deps.contains(library) {
                problems.push(format!(
                    "{name} depends on {library}, which only {owner} may use"
                ));
            }
        }
    }
    for adapter in adapters {
        for other in adapters
            .iter()
            .chain(["rpc-peer", "asp-wire", "repo-io", "bridge-core"].iter())
        {
            let deps = &closure[*other];
            if deps.contains(adapter) {
                problems.push(format!("{other} depends on the adapter {adapter}"));
            }
        }
        assert!(
            closure[adapter].contains("bridge-core"),
            "{adapter} stands on bridge-core"
        );
    }
    // rpc-peer <- asp-wire <- repo-io <- bridge-core <- adapters <- asp-bridge: the peer and the
    // wire vocabulary depend on no workspace crate but rpc-peer (for asp-wire), and repo-io (git,
    // paths, no-follow reads, which the host and the providers share) on those two only.
    let workspace: BTreeSet<&String> = closure.keys().collect();
    for (name, allowed) in [
        ("rpc-peer", &[][..]),
        ("asp-wire", &["rpc-peer"][..]),
        ("repo-io", &["rpc-peer", "asp-wire"][..]),
    ] {
        for dep in &closure[name] {
            if workspace.contains(dep) && !allowed.contains(&dep.as_str()) {
                problems.push(format!("{name} depends on the workspace crate {dep}"));
            }
        }
    }
    for (name, base) in [
        ("bridge-core", "asp-wire"),
        ("bridge-core", "repo-io"),
        ("asp-wire", "rpc-peer"),
    ] {
        if !closure[name].contains(base) {
            problems.push(format!("{name} does not stand on {base}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The string literals of a line of code (plain `"…"` literals; enough for method names).
fn string_literals(code: &str) -> Vec<String> {
    let mut literals = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let mut end = None;
        let mut escaped = false;
        for (at, c) in after.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(at);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else { break };
        literals.push(after[..end].to_owned());
        rest = &after[end + 1..];
    }
    literals
}

#[test]
fn the_json_rpc_peer_knows_no_asp() {
    // The ASP method names, as `proto` and `inner` declare them, and their namespaces.
    let declared =
        read(Path::new("asp-wire/src/proto.rs")) + &read(Path::new("asp-wire/src/inner.rs"));
    let mut asp_methods: BTreeSet<String> = declared
        .lines()
        .filter(|l| l.starts_with("pub const ") && l.contains(": &str = \""))
        .flat_map(string_literals)
        .collect();
    // `shutdown` and `exit` are the child's fixed shutdown, for hosts and providers alike.
    let allowed = ["shutdown", "exit"];
    asp_methods.retain(|m| !allowed.contains(&m.as_str()));
    assert!(asp_methods.contains("host/status"), "{asp_methods:?}");
    assert!(asp_methods.contains("check/evaluate"), "{asp_methods:?}");
    let namespaces: BTreeSet<String> = asp_methods
        .iter()
        .filter_map(|m| m.split_once('/').map(|(ns, _)| format!("{ns}/")))
        .chain(["workspace/".to_owned(), "check/".to_owned()])
        .collect();

    let mut offenders = Vec::new();
    let peer_files = rust_files()
        .into_iter()
        .filter(|p| p.starts_with("rpc-peer/src/"));
    let mut checked = 0;
    for path in peer_files {
        checked += 1;
        for (n, line) in read(&path).lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let imports_asp = ["proto", "model"].iter().any(|m| {
                code.contains(&format!("crate::{m}"))
                    || code.contains(&format!("{m}::"))
                    || (code.starts_with("use crate::{") && code.contains(m))
            });
            let names_asp = string_literals(code).iter().any(|literal| {
                asp_methods.contains(literal)
                    || namespaces.iter().any(|ns| literal.starts_with(ns.as_str()))
            });
            if imports_asp || names_asp {
                offenders.push(format!("{}:{}: {}", path.display(), n + 1, code));
            }
        }
    }
    assert!(checked >= 10, "the rpc-peer crate was not found");
    assert!(
        offenders.is_empty(),
        "the peer is JSON-RPC only (no proto, model or ASP method names):\n{}",
        offenders.join("\n")
    );
}

/// The `pub const NAME: i64 = -N;` values of a file.
fn i64_constants(path: &str) -> BTreeSet<i64> {
    read(Path::new(path))
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .filter_map(|l| l.split_once(": i64 = ").map(|(_, v)| v))
        .filter_map(|v| v.trim_end_matches(';').parse().ok())
        .collect()
}

/// The integers of a line of code that look like error codes (-32xxx, -33xxx), outside string
/// literals.
fn error_code_literals(code: &str) -> Vec<i64> {
    let mut outside = String::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in code.chars() {
        match c {
            '\\' if in_string && !escaped => escaped = true,
            '"' if !escaped => in_string = !in_string,
            _ => escaped = false,
        }
        outside.push(if in_string { ' ' } else { c });
    }
    let bytes = outside.as_bytes();
    let mut found = Vec::new();
    for (at, _) in outside.match_indices("-3") {
        let digits = &bytes[at + 1..];
        let len = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        let before_ok = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        if len == 5
            && before_ok
            && let Ok(n) = outside[at..at + 6].parse::<i64>()
            && (-33099..=-32000).contains(&n)
        {
            found.push(n);
        }
    }
    found
}

#[test]
fn the_wire_vocabulary_is_named_once() {
    let asp_codes = i64_constants("asp-wire/src/code.rs");
    let json_rpc_codes = i64_constants("rpc-peer/src/jsonrpc.rs");
    assert!(asp_codes.contains(&-32011), "{asp_codes:?}");
    assert!(json_rpc_codes.contains(&-32700), "{json_rpc_codes:?}");
    let mut offenders = Vec::new();
    for path in rust_files_where(|p| !is_test_code(p)) {
        let text = path.to_string_lossy().into_owned();
        let owner = |code: i64| {
            if json_rpc_codes.contains(&code) {
                "rpc-peer/"
            } else {
                // The registry's codes and every other server code (-32000 to -32099, -330xx).
                "asp-wire/"
            }
        };
        for (n, code) in code_lines(&read(&path)) {
            for literal in error_code_literals(code) {
                let asp_range =
                    (-32099..=-32000).contains(&literal) || (-33099..=-33000).contains(&literal);
                if !asp_range && !json_rpc_codes.contains(&literal) && !asp_codes.contains(&literal)
                {
                    continue;
                }
                if !text.starts_with(owner(literal)) {
                    offenders.push(format!("{text}:{}: {literal}: {code}", n + 1));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "error codes are named once (asp_wire::code, rpc_peer::jsonrpc):\n{}",
        offenders.join("\n")
    );
}

/// The wire strings of `asp_wire::reason::Reason`, as its `wire_enum!` declares them
/// (`Variant = "text",`).
fn reason_strings() -> BTreeSet<String> {
    read(Path::new("asp-wire/src/reason.rs"))
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()) && l.contains(" = \""))
        .flat_map(string_literals)
        .collect()
}

#[test]
fn degradation_reasons_are_named_once() {
    let mut reasons = reason_strings();
    assert!(
        reasons.contains("blocking-diagnostic") && reasons.len() >= 20,
        "{reasons:?}"
    );
    // Reasons that are also other words of the wire, which a literal cannot tell apart: `error`
    // (a severity, an assessment status, JSON-RPC's member, a SARIF level), `incomplete` and
    // `unsupported` (members of answers: the MCP tools' `incomplete`, an assessment's
    // `coverage.unsupported`), `missing` (git's answer for an absent object, a `manifestState`).
    // Where the host and the providers write a reason it is typed (`Reason`), so these cannot slip
    // in there either.
    for other_sense in ["error", "incomplete", "unsupported", "missing"] {
        assert!(reasons.remove(other_sense), "{other_sense} is a reason");
    }
    let mut offenders = Vec::new();
    let files = rust_files_where(|p| !is_test_code(p) && !p.starts_with("asp-wire/"));
    for path in files {
        for (n, code) in code_lines(&read(&path)) {
            if string_literals(code).iter().any(|l| reasons.contains(l)) {
                offenders.push(format!("{}:{}: {code}", path.display(), n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "a degradation reason is written and compared as `asp_wire::reason::Reason`, never as a literal:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_embedded_host_stands_on_repo_io_and_apart_from_the_bridge_and_the_front_ends() {
    let closure = dependency_closure();
    let front_ends = ["mcp-adapter", "lsp-adapter", "sarif-export"];
    let mut problems = Vec::new();
    for front_end in front_ends {
        if closure["core-host"].contains(front_end) {
            problems.push(format!("core-host depends on the adapter {front_end}"));
        }
        if closure[front_end].contains("core-host") {
            problems.push(format!("{front_end} depends on core-host"));
        }
    }
    if closure["bridge-core"].contains("core-host") {
        problems.push("bridge-core depends on core-host".to_owned());
    }
    // The host is no client of a host: it shares git, paths and reads through repo-io, never
    // through the bridge's client.
    if closure["core-host"].contains("bridge-core") {
        problems.push("core-host depends on bridge-core (the bridge's host client)".to_owned());
    }
    for base in ["rpc-peer", "asp-wire", "repo-io"] {
        assert!(
            closure["core-host"].contains(base),
            "core-host stands on {base}"
        );
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Fails when `package` depends, directly or not, on one of `forbidden`.
fn assert_stands_on_none_of(package: &str, forbidden: &[&str]) {
    let closure = dependency_closure();
    let deps = &closure[package];
    let found: Vec<_> = forbidden.iter().filter(|f| deps.contains(**f)).collect();
    assert!(found.is_empty(), "{package} depends on {found:?}");
}

/// What no provider may stand on: a host, the bridge's client, a front end or the CLI.
const NOT_FOR_PROVIDERS: [&str; 6] = [
    "bridge-core",
    "core-host",
    "mcp-adapter",
    "lsp-adapter",
    "sarif-export",
    "asp-bridge",
];

#[test]
fn the_hygiene_provider_knows_no_host_and_no_front_end() {
    // It is a provider like any third-party one: one checker on the provider kit, which gives it
    // the inner seam (rpc-peer's peer, asp-wire's vocabulary); its rules are hygiene-rules'.
    assert_stands_on_none_of("hygiene-provider", &NOT_FOR_PROVIDERS);
    assert!(
        direct_dependencies("hygiene-provider").contains("provider-kit"),
        "hygiene-provider stands on provider-kit"
    );
}

#[test]
fn the_provider_kit_knows_no_host_and_no_front_end() {
    // What every provider stands on knows no provider, no host, not the bridge's client and no
    // front end: the JSON-RPC peer and the wire vocabulary only.
    assert_stands_on_none_of("provider-kit", &NOT_FOR_PROVIDERS);
    assert_stands_on_none_of("provider-kit", &["hygiene-rules", "hygiene-provider"]);
}

#[test]
fn the_linter_runner_knows_no_host_and_no_front_end() {
    assert_stands_on_none_of("linter-provider", &NOT_FOR_PROVIDERS);
    assert_stands_on_none_of("linter-provider", &["hygiene-rules", "hygiene-provider"]);
}

/// The normal dependencies `package` names itself.
fn direct_dependencies(package: &str) -> BTreeSet<String> {
    let meta = metadata();
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| p["name"] == package)
        .flat_map(|p| p["dependencies"].as_array().expect("dependencies").iter())
        .filter(|d| d["kind"].is_null())
        .map(|d| d["name"].as_str().expect("dependency name").to_owned())
        .collect()
}

/// `cargo install --path asp-bridge` installs every binary of the package, so the fake host is not
/// one: it lives in `test-support`, which is never published and which nothing depends on except as
/// a dev-dependency.
#[test]
fn installing_the_product_installs_no_test_tool() {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    let binaries = |package: &serde_json::Value| -> Vec<String> {
        package["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .filter(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "bin"))
            })
            .map(|t| t["name"].as_str().expect("target name").to_owned())
            .collect()
    };
    let product = packages
        .iter()
        .find(|p| p["name"] == "asp-bridge")
        .expect("the asp-bridge package");
    assert_eq!(
        binaries(product),
        ["asp-bridge"],
        "`cargo install --path asp-bridge` installs the product's one binary and no test tool"
    );
    for (binary, package) in [
        ("fake-provider", "fake-provider"),
        ("fake-host", "test-support"),
    ] {
        let builder = packages
            .iter()
            .find(|p| binaries(p).iter().any(|b| b == binary))
            .unwrap_or_else(|| panic!("a package builds {binary}"));
        assert_eq!(builder["name"], package, "{binary} is built by {package}");
        assert_eq!(
            builder["publish"],
            serde_json::json!([]),
            "{package} is never published"
        );
    }
    for package in packages {
        for dependency in package["dependencies"].as_array().expect("dependencies") {
            if dependency["name"] == "test-support" || dependency["name"] == "fake-provider" {
                assert_eq!(
                    dependency["kind"], "dev",
                    "{} depends on a test tool outside its tests",
                    package["name"]
                );
            }
        }
    }
}

/// The `fuzzing` modules (entry points for `fuzz/` into private code) are compiled only with their
/// crate's `fuzzing` feature (or in its own unit tests), and nothing the product is built from turns
/// the feature on: the release build compiles no fuzzing module.
#[test]
fn the_release_build_compiles_no_fuzzing_module() {
    let gates = [
        "#[cfg(feature = \"fuzzing\")]",
        "#[cfg(any(test, feature = \"fuzzing\"))]",
    ];
    let mut ungated = Vec::new();
    let mut found = 0;
    for path in rust_files().into_iter().filter(|p| !is_test_code(p)) {
        let text = read(&path);
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let line = line.trim();
            let declared = ["mod fuzzing", "pub mod fuzzing", "pub(crate) mod fuzzing"]
                .iter()
                .any(|d| line.strip_prefix(d).is_some_and(|r| r == ";" || r == " {"));
            if !declared {
                continue;
            }
            found += 1;
            // The attributes and comments right above the declaration.
            let above = lines[..n]
                .iter()
                .rev()
                .map(|l| l.trim())
                .take_while(|l| l.starts_with("#[") || l.starts_with("//"));
            if !above.clone().any(|l| gates.contains(&l)) {
                ungated.push(format!("{}:{}", path.display(), n + 1));
            }
        }
    }
    assert!(found > 0, "the check finds the fuzzing modules");
    assert!(
        ungated.is_empty(),
        "put these under #[cfg(feature = \"fuzzing\")]: {ungated:?}"
    );

    // No package asp-bridge is built from (through normal dependencies) asks for `fuzzing`, nor
    // has it among its default features.
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    let package = |name: &str| packages.iter().find(|p| p["name"] == name);
    let names = |value: &serde_json::Value| -> Vec<String> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect()
    };
    let mut problems = Vec::new();
    let mut stack = vec!["asp-bridge".to_owned()];
    let mut seen = BTreeSet::new();
    while let Some(name) = stack.pop() {
        let Some(p) = package(&name) else { continue };
        if !seen.insert(name.clone()) {
            continue;
        }
        let defaults = names(&p["features"]["default"]);
        if defaults.iter().any(|f| f.ends_with("fuzzing")) {
            problems.push(format!("{name} turns fuzzing on by default: {defaults:?}"));
        }
        for dependency in p["dependencies"].as_array().expect("dependencies") {
            if !dependency["kind"].is_null() {
                continue;
            }
            let dep = dependency["name"].as_str().expect("dependency name");
            let features = names(&dependency["features"]);
            if features.iter().any(|f| f == "fuzzing") {
                problems.push(format!("{name} turns on {dep}'s fuzzing feature"));
            }
            stack.push(dep.to_owned());
        }
    }
    assert!(seen.contains("core-host"), "the walk reaches the crates");
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The value of the first `key = "value"` line after the line `[table]` of a TOML file.
fn toml_string(text: &str, table: &str, key: &str) -> Option<String> {
    let header = format!("[{table}]");
    let lines = text.lines().skip_while(|l| l.trim() != header).skip(1);
    lines.take_while(|l| !l.starts_with('[')).find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// The workspace version is the one version: the action installs that release of the package
/// (`inputs.version` of `action.yml`), and the wheel (`pyproject.toml`) and the npm packages carry
/// it (`scripts/package.sh` names their files after Cargo.toml's).
#[test]
fn every_pinned_version_is_the_workspace_version() {
    let version = toml_string(
        &read(Path::new("Cargo.toml")),
        "workspace.package",
        "version",
    )
    .expect("the workspace version");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    // action.yml: the `default` of the input `version` (inputs are indented two spaces).
    let action = read(Path::new("action.yml"));
    let pinned = action
        .lines()
        .skip_while(|l| *l != "  version:")
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .find_map(|l| l.trim().strip_prefix("default:"))
        .map(|v| v.trim().trim_matches('"').to_owned());
    assert_eq!(pinned.as_deref(), Some(version.as_str()), "action.yml");
    let pyproject = toml_string(&read(Path::new("pyproject.toml")), "project", "version");
    assert_eq!(
        pyproject.as_deref(),
        Some(version.as_str()),
        "pyproject.toml"
    );
    let npm: serde_json::Value =
        serde_json::from_str(&read(Path::new("packaging/npm/asp-bridge/package.json"))).unwrap();
    assert_eq!(npm["version"], version.as_str(), "the npm launcher");
    let platforms = npm["optionalDependencies"].as_object().unwrap();
    assert!(!platforms.is_empty());
    for (name, pinned) in platforms {
        assert_eq!(pinned, version.as_str(), "the launcher's {name}");
    }
}
