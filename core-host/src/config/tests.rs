//! The configuration format of the issue, and errors that name file, line and key.

use super::*;
use serde_json::json;

fn exe() -> Vec<String> {
    vec![
        "/usr/bin/asp-bridge".into(),
        "provider".into(),
        "hygiene".into(),
    ]
}

/// How the built-in providers are started: [`exe`] for hygiene.
fn launcher() -> Launcher<'static> {
    static COMMAND: std::sync::LazyLock<Vec<String>> =
        std::sync::LazyLock::new(|| exe()[..2].to_vec());
    Launcher::new(&COMMAND)
}

fn parse(text: &str) -> Result<Config> {
    Config::parse(
        text,
        Path::new("/home/u/.config/asp-bridge/host.toml"),
        launcher(),
    )
}

fn error(text: &str) -> (usize, String, String) {
    match parse(text).unwrap_err() {
        Error::Config {
            line, key, message, ..
        } => (line, key, message),
        other => panic!("{other}"),
    }
}

#[test]
fn the_format_of_the_issue_is_read() {
    let config = parse(
        r#"
[hygiene]
enabled = true                          # the built-in provider; default true
[[provider]]
id = "opcore"
command = ["node", "/opt/opcore/opcore-asp-provider.mjs", "--stdio"]
protocol = "asp/1.0"                    # or "asp/0.1" (the opcore issue)
required-for = ["interactive", "sweep"] # call sites whose decisions need it; default [] (optional)
timeout-ms = 30000
configuration = { checks = ["typescript.types"] }   # passed to the provider with check/evaluate
read = ["src/**", "!**/.env*"]
"#,
    )
    .unwrap();
    assert_eq!(config.providers.len(), 2);
    let hygiene = &config.providers[0];
    assert_eq!(
        (hygiene.id.as_str(), hygiene.builtin),
        ("hygiene", Some(&HYGIENE))
    );
    assert_eq!(hygiene.command, exe());
    let opcore = &config.providers[1];
    assert_eq!(opcore.id, "opcore");
    assert_eq!(opcore.command[0], "node");
    assert_eq!(opcore.protocol, Protocol::V1_0);
    assert_eq!(
        opcore.required_for,
        [CallSite::Interactive, CallSite::Sweep]
    );
    assert_eq!(opcore.timeout, Duration::from_secs(30));
    assert_eq!(
        opcore.configuration,
        Some(json!({"checks": ["typescript.types"]}))
    );
    assert_eq!(opcore.read, ["src/**", "!**/.env*"]);
}

#[test]
fn defaults_enroll_the_hygiene_provider_and_a_provider_is_optional_by_default() {
    let config = parse("[[provider]]\nid = \"x\"\ncommand = [\"x\"]\n").unwrap();
    assert_eq!(config.providers[0].id, HYGIENE_ID);
    assert!(config.providers[1].required_for.is_empty());
    assert_eq!(config.providers[1].protocol, Protocol::V1_0);
    assert_eq!(config.providers[1].read, ["**"]);
    assert_eq!(Config::defaults(launcher()).providers.len(), 1);
}

#[test]
fn hygiene_can_be_turned_off_and_asp_0_1_is_accepted() {
    let config = parse("[hygiene]\nenabled = false\n[[provider]]\nid = \"o\"\ncommand = [\"node\"]\nprotocol = \"asp/0.1\"\n").unwrap();
    assert_eq!(config.providers.len(), 1);
    assert_eq!(config.providers[0].protocol, Protocol::V0_1);
}

#[test]
fn errors_name_the_line_and_the_key() {
    assert_eq!(error("[hygiene]\nenabled = \"yes\"\n").0, 2);
    assert_eq!(error("[hygiene]\nenabled = \"yes\"\n").1, "enabled");
    let (line, key, message) = error("[[provider]]\nid = \"a\"\ncommand = [\"a\"]\ntimeout = 5\n");
    assert_eq!((line, key.as_str()), (4, "timeout"), "{message}");
    let (line, key, _) = error("[[provider]]\nid = \"a\"\n\ncommand = []\n");
    assert_eq!((line, key.as_str()), (4, "provider[0].command"));
    let (line, key, message) =
        error("[[provider]]\nid = \"a\"\ncommand = [\"a\"]\nprotocol = \"asp/2\"\n");
    assert_eq!(
        (line, key.as_str()),
        (4, "provider[0].protocol"),
        "{message}"
    );
    let (line, key, _) =
        error("[[provider]]\nid = \"a\"\ncommand = [\"a\"]\nrequired-for = [\"ci\"]\n");
    assert_eq!((line, key.as_str()), (4, "provider[0].required-for"));
    let (line, key, _) = error("[[provider]]\nid = \"hygiene\"\ncommand = [\"a\"]\n");
    assert_eq!((line, key.as_str()), (2, "provider[0].id"));
    let (line, key, _) = error("[[provider]]\nid = \"a\"\ncommand = [\"a\"]\ntimeout-ms = 0\n");
    assert_eq!((line, key.as_str()), (4, "provider[0].timeout-ms"));
    let (line, key, _) = error("[[provider]]\nid = \"a\"\n");
    assert_eq!((line, key.as_str()), (1, "command"));
    assert_eq!(error("x = [\n").0, 1);
}

#[test]
fn the_message_names_the_file() {
    let err = parse("[hygiene]\nenabled = 1\n").unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("/home/u/.config/asp-bridge/host.toml:2: enabled: "),
        "{text}"
    );
    assert_eq!(err.fail_class(), rpc_peer::FailClass::Input);
}

#[test]
fn an_explicit_file_must_exist_and_a_default_one_may_be_missing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.toml");
    assert!(Config::load(Some(&missing), launcher()).is_err());
    let config_file = dir.path().join("host.toml");
    std::fs::write(&config_file, "[hygiene]\nenabled = false\n").unwrap();
    assert!(
        Config::load(Some(&config_file), launcher())
            .unwrap()
            .providers
            .is_empty()
    );
}

#[test]
fn a_configuration_that_is_a_fifo_or_a_folder_is_refused_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("host.toml");
    test_support::process::mkfifo(&fifo);
    // Opening a FIFO to read waits for a writer: the load must not open it so.
    for path in [fifo, dir.path().to_path_buf()] {
        let (done, loaded) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(Config::load(Some(&path), launcher()).map(drop)));
        let err = loaded
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the load waited for a writer")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not a regular file") || err.contains("Is a directory"),
            "{err}"
        );
    }
}

#[test]
fn the_hygiene_section_takes_the_large_file_limit_its_finding_names() {
    let config = parse("[hygiene]\nmax-added-file-kb = 2048\n").unwrap();
    assert_eq!(
        config.providers[0].configuration,
        Some(json!({"maxAddedFileKb": 2048}))
    );
    assert_eq!(parse("").unwrap().providers[0].configuration, None);
    let (line, key, message) = error("[hygiene]\n\nmax-added-file-kb = 0\n");
    assert_eq!((line, key.as_str()), (3, "hygiene.max-added-file-kb"));
    assert!(message.contains("between 1 and"), "{message}");
}

#[test]
fn git_filters_the_user_trusts_are_named_in_the_git_table() {
    let config = parse("[git]\nfilters = [\"lfs\"]\n").unwrap();
    assert_eq!(config.git_filters, ["lfs"]);
    assert!(parse("").unwrap().git_filters.is_empty());
    let (line, key, _) = error("\n[git]\nfilters = [\"\"]\n");
    assert_eq!((line, key.as_str()), (3, "git.filters"));
    let (_, key, _) = error("[git]\nprograms = [\"x\"]\n");
    assert!(key.contains("programs"), "{key}");
}

#[test]
fn a_read_list_past_the_glob_caps_is_refused() {
    let many: Vec<String> = (0..300).map(|i| format!("\"src/{i}/**\"")).collect();
    let text = format!(
        "[[provider]]\nid = \"a\"\ncommand = [\"a\"]\nread = [{}]\n",
        many.join(", ")
    );
    let (line, key, message) = error(&text);
    assert_eq!((line, key.as_str()), (4, "provider[0].read"), "{message}");
    assert!(message.contains("300 read globs"), "{message}");
    let long = format!("[hygiene]\nread = [\"{}\"]\n", "*".repeat(2000));
    let (line, key, message) = error(&long);
    assert_eq!((line, key.as_str()), (2, "hygiene.read"), "{message}");
    assert!(message.contains("2000 bytes"), "{message}");
}

#[test]
fn exclusions_apply_everywhere_and_a_section_narrows_its_own_provider_only() {
    let config = parse(
        r#"
exclude = ["vendor/**"]
min-severity = "info"

[hygiene]
exclude = ["tests/fixtures/**"]
disable = ["hygiene/trailing-whitespace"]
min-severity = "warning"

[[provider]]
id = "opcore"
command = ["node"]
min-severity = "error"
"#,
    )
    .unwrap();
    let hygiene = &config.providers[0].leave_out;
    let globs: Vec<&str> = hygiene.exclude.iter().map(|e| e.glob.as_str()).collect();
    assert_eq!(globs, ["vendor/**", "tests/fixtures/**"]);
    assert_eq!(hygiene.exclude[1].key, "hygiene.exclude");
    assert_eq!(hygiene.disable, ["hygiene/trailing-whitespace"]);
    assert_eq!(hygiene.min_severity, Some(Severity::Warning));
    let opcore = &config.providers[1].leave_out;
    assert_eq!(opcore.exclude.len(), 1);
    assert_eq!(opcore.exclude[0].key, "exclude");
    assert!(opcore.disable.is_empty());
    assert_eq!(opcore.min_severity, Some(Severity::Error));
    assert!(parse("").unwrap().providers[0].leave_out.is_empty());
}

#[test]
fn an_invalid_exclusion_glob_rule_or_severity_is_an_input_error_naming_the_key() {
    let (line, key, message) = error("exclude = [\"src/*.{js,ts}\"]\n");
    assert_eq!((line, key.as_str()), (1, "exclude"), "{message}");
    assert!(message.contains("`{` is not supported"), "{message}");
    let (line, key, message) = error("[hygiene]\n\nexclude = [\"!vendor/**\"]\n");
    assert_eq!((line, key.as_str()), (3, "hygiene.exclude"), "{message}");
    let (_, key, _) = error("exclude = [\"\"]\n");
    assert_eq!(key, "exclude");
    let (_, key, _) = error("exclude = [\"../x\"]\n");
    assert_eq!(key, "exclude");
    let (line, key, message) =
        error("[[provider]]\nid = \"a\"\ncommand = [\"a\"]\nmin-severity = \"hint\"\n");
    assert_eq!(
        (line, key.as_str()),
        (4, "provider[0].min-severity"),
        "{message}"
    );
    assert!(
        message.contains("\"error\", \"warning\" or \"info\""),
        "{message}"
    );
    let (line, key, message) = error("disable = [\"trailing-whitespace\"]\n");
    assert_eq!((line, key.as_str()), (1, "disable"), "{message}");
    assert!(message.contains("namespaced rule id"), "{message}");
    let err = parse("min-severity = \"fatal\"\n").unwrap_err();
    assert_eq!(err.fail_class(), rpc_peer::FailClass::Input);
    assert!(
        err.to_string()
            .contains(":1: min-severity: unknown severity `fatal`"),
        "{err}"
    );
    // Unknown keys stay refused.
    let (_, key, _) = error("[hygiene]\nexcludes = [\"x\"]\n");
    assert!(key.contains("excludes"), "{key}");
}

/// Every `toml` block of the README's embedded-host sections, as a user would copy it.
fn readme_host_toml_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
    )
    .expect("the README");
    let start = readme
        .find("### The embedded host")
        .expect("an embedded host section");
    let end = readme[start..]
        .find("### Claude Code")
        .map_or(readme.len(), |i| start + i);
    readme[start..end]
        .split("```toml\n")
        .skip(1)
        .map(|block| {
            block
                .split_once("```")
                .expect("a closed toml block")
                .0
                .to_owned()
        })
        .collect()
}

#[test]
fn the_readmes_host_toml_examples_are_read() {
    let blocks = readme_host_toml_blocks();
    assert!(blocks.len() >= 3, "the README shows its host.toml examples");
    for block in &blocks {
        if let Err(e) = parse(block) {
            panic!("{e}\nin the README's block:\n{block}");
        }
    }
    assert!(
        blocks.iter().any(|b| b.contains("min-severity")),
        "the README's leaving-things-out example is among them"
    );
}

#[test]
fn the_hygiene_section_takes_the_yaml_reading() {
    let config = parse("[hygiene]\nyaml = \"strict\"\nmax-added-file-kb = 64\n").unwrap();
    assert_eq!(
        config.providers[0].configuration,
        Some(json!({"maxAddedFileKb": 64, "yaml": "strict"}))
    );
    let (line, key, message) = error("[hygiene]\nyaml = \"loose\"\n");
    assert_eq!((line, key.as_str()), (2, "hygiene.yaml"));
    assert!(message.contains("\"strict\""), "{message}");
}

#[test]
fn every_built_in_provider_is_required_for_call_sites_that_exist() {
    for row in crate::builtin::BUILTINS {
        for site in row.required_for {
            assert!(CallSite::parse(site).is_some(), "{}: {site}", row.id);
        }
    }
    assert_eq!(
        Config::defaults(launcher()).providers[0].required_for,
        [CallSite::Interactive, CallSite::Sweep]
    );
}

#[test]
fn a_linter_entry_enrolls_the_built_in_runner_with_its_own_keys_handed_over() {
    let config = parse(
        r#"
exclude = ["vendor/**"]
[[linter]]
preset = "ruff"
[[linter]]
id = "shellcheck-strict"
preset = "shellcheck"
ok-exit = [0, 1]
required-for = ["sweep"]
timeout-ms = 5000
disable = ["shellcheck-strict/SC2086"]
"#,
    )
    .unwrap();
    let ids: Vec<&str> = config.providers.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["hygiene", "ruff", "shellcheck-strict"]);
    let ruff = &config.providers[1];
    assert_eq!(ruff.builtin, Some(&crate::builtin::LINTERS));
    assert_eq!(
        ruff.command[..4],
        ["/usr/bin/asp-bridge", "provider", "linters", "--linter"]
    );
    let handed: Value = serde_json::from_str(&ruff.command[4]).unwrap();
    assert_eq!(handed, json!({"id": "ruff", "preset": "ruff"}));
    assert!(ruff.required_for.is_empty(), "advisory unless it says so");
    assert_eq!(
        ruff.leave_out.exclude[0].glob, "vendor/**",
        "the top level's exclude"
    );
    let strict = &config.providers[2];
    let handed: Value = serde_json::from_str(&strict.command[4]).unwrap();
    assert_eq!(
        handed,
        json!({"id": "shellcheck-strict", "preset": "shellcheck", "ok-exit": [0, 1]}),
        "the host's own keys stay with the host"
    );
    assert_eq!(strict.required_for, [CallSite::Sweep]);
    assert_eq!(strict.leave_out.disable, ["shellcheck-strict/SC2086"]);
    assert_eq!(strict.timeout, Duration::from_millis(5000));
}

#[test]
fn a_linter_entry_in_error_is_named_by_line_and_key() {
    let (line, key, message) = error("[[linter]]\nfiles = [\"*.py\"]\n");
    assert_eq!((line, key.as_str()), (1, "linter[0].id"), "{message}");
    assert!(message.contains("an `id` or a `preset`"), "{message}");
    let (line, key, _) = error("[[linter]]\npreset = \"ruff\"\n[[linter]]\npreset = \"ruff\"\n");
    assert_eq!((line, key.as_str()), (4, "linter[1].id"));
    let (line, key, _) = error("[[linter]]\npreset = \"ruff\"\nok-exit = \"0\"\n");
    assert_eq!((line, key.as_str()), (3, "ok-exit"));
    let (line, key, _) = error("[[linter]]\npreset = \"ruff\"\ncolums = \"utf8\"\n");
    assert_eq!((line, key.as_str()), (3, "colums"));
    let (line, key, _) = error("[[linter]]\npreset = \"hygiene\"\n");
    assert_eq!(
        (line, key.as_str()),
        (2, "linter[0].id"),
        "hygiene's id is taken"
    );
}

#[test]
fn the_runners_check_of_a_linters_keys_stops_the_load_at_the_entry() {
    fn check(entry: &Value) -> Result<(), String> {
        match entry["preset"].as_str() {
            Some("eslint") => Err("unknown linter preset \"eslint\"".into()),
            _ => Ok(()),
        }
    }
    let launcher = Launcher {
        check_linter: check,
        ..launcher()
    };
    let text = "[[linter]]\npreset = \"ruff\"\n\n[[linter]]\npreset = \"eslint\"\n";
    let error = Config::parse(text, Path::new("host.toml"), launcher).unwrap_err();
    assert_eq!(
        error.to_string(),
        "host.toml:4: linter[1]: unknown linter preset \"eslint\""
    );
}
