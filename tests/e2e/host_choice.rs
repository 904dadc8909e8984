//! Which host each command starts: `--host-command` / `ASP_BRIDGE_HOST_COMMAND`, else `asp` on
//! `PATH`, else the embedded host; `--host-command embedded` names it; the choice is one stderr line;
//! `--config` is accepted by every command and passed to the embedded host only.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::{Run, Scratch, bridge_bin, fake_host_bin, host_command, run_bridge_with};

const LIMIT: Duration = Duration::from_secs(60);

/// The system directories the commands need (git, sh), without any `asp`.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// A directory holding an executable `asp` that records its arguments and runs the fake host.
fn asp_on_path(scratch: &Scratch) -> std::path::PathBuf {
    let bin = scratch.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$@\" >> {args}\nexec {fake} --record {record}\n",
        args = scratch.path().join("asp-args.txt").display(),
        fake = shlex::try_quote(fake_host_bin()).unwrap(),
        record = scratch.marker().display(),
    );
    let asp = bin.join("asp");
    std::fs::write(&asp, script).unwrap();
    std::fs::set_permissions(&asp, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Runs the bridge with `PATH` set to `path`, an empty configuration home and no host settings.
fn bridge(scratch: &Scratch, path: &str, args: &[&str]) -> Run {
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    run_bridge_with(args, scratch.path(), LIMIT, |command: &mut Command| {
        command
            .env("PATH", path)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env_remove("ASP_BRIDGE_CONFIG");
    })
}

/// A git repository with a `host.toml` holding `text`: the scratch, the file and the root.
fn with_config(text: &str) -> (Scratch, std::path::PathBuf, String) {
    let scratch = Scratch::git_repo();
    let config = scratch.path().join("host.toml");
    std::fs::write(&config, text).unwrap();
    let repo = scratch.path().to_str().unwrap().to_owned();
    (scratch, config, repo)
}

/// The one line that names the host.
fn choice(run: &Run) -> String {
    run.one_line_starting("asp-bridge uses ").to_owned()
}

fn no_asp_in(path: &str) {
    for dir in path.split(':') {
        assert!(
            !Path::new(dir).join("asp").exists(),
            "this test needs a PATH without `asp`, found one in {dir}"
        );
    }
}

#[test]
fn asp_on_path_is_used_when_no_host_command_is_given() {
    let scratch = Scratch::new();
    let bin = asp_on_path(&scratch);
    let path = format!("{}:{SYSTEM_PATH}", bin.display());
    let repo = scratch.path().canonicalize().unwrap();
    let run = bridge(
        &scratch,
        &path,
        &["status", "--repo", repo.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        choice(&run),
        format!(
            "asp-bridge uses the host `asp` found on PATH: {}/asp host serve --repo {{repo}}",
            bin.display()
        )
    );
    let args = std::fs::read_to_string(scratch.path().join("asp-args.txt")).unwrap();
    assert_eq!(args, format!("host serve --repo {}\n", repo.display()));
    assert!(
        run.stdout.starts_with("host       @the-open-engine/asp"),
        "{}",
        run.stdout
    );
    scratch.assert_no_orphans();
}

#[test]
fn a_host_command_wins_over_asp_on_path_from_the_flag_or_the_environment() {
    let scratch = Scratch::new();
    let bin = asp_on_path(&scratch);
    let path = format!("{}:{SYSTEM_PATH}", bin.display());
    let repo = scratch.path().to_str().unwrap().to_owned();
    let fake = host_command("");
    let by_flag = bridge(
        &scratch,
        &path,
        &["status", "--repo", &repo, "--host-command", &fake],
    );
    assert_eq!(by_flag.code, Some(0), "{}", by_flag.stderr);
    assert!(
        choice(&by_flag).starts_with(
            "asp-bridge uses the host given by --host-command or ASP_BRIDGE_HOST_COMMAND: "
        ),
        "{}",
        by_flag.stderr
    );
    let home = scratch.path().join("home");
    let by_env = run_bridge_with(&["status", "--repo", &repo], scratch.path(), LIMIT, |c| {
        c.env("PATH", &path)
            .env("HOME", &home)
            .env("ASP_BRIDGE_HOST_COMMAND", &fake);
    });
    assert_eq!(by_env.code, Some(0), "{}", by_env.stderr);
    assert!(
        choice(&by_env).contains("given by --host-command"),
        "{}",
        by_env.stderr
    );
    assert!(
        !scratch.path().join("asp-args.txt").exists(),
        "the `asp` on PATH was not started"
    );
}

#[test]
fn without_asp_on_path_every_command_chooses_the_embedded_host() {
    let scratch = Scratch::git_repo();
    no_asp_in(SYSTEM_PATH);
    let repo = scratch.path().to_str().unwrap().to_owned();
    let expected = format!(
        "asp-bridge uses the embedded host (no host command given and no `asp` on PATH): {} host \
         serve --repo {{repo}}",
        shlex::try_quote(bridge_bin()).unwrap()
    );
    let out = scratch.path().join("out.sarif");
    for args in [
        vec!["status", "--repo", &repo],
        vec!["sarif", "--repo", &repo, "--output", out.to_str().unwrap()],
    ] {
        let run = bridge(&scratch, SYSTEM_PATH, &args);
        assert_eq!(choice(&run), expected, "{args:?}");
    }
    // The long-running commands announce it at start, before any client speaks (stdin is empty).
    for args in [vec!["mcp", "--repo", &repo], vec!["lsp"]] {
        let run = bridge(&scratch, SYSTEM_PATH, &args);
        assert_eq!(choice(&run), expected, "{args:?}");
    }
    scratch.assert_no_orphans();
}

#[test]
fn host_command_embedded_names_it_and_passes_the_config_file() {
    let (scratch, config, repo) = with_config("[hygiene]\nenabled = true\n");
    let bin = asp_on_path(&scratch);
    let path = format!("{}:{SYSTEM_PATH}", bin.display());
    let status_with_config = |host: &str| {
        let args = [
            "status",
            "--repo",
            &repo,
            "--host-command",
            host,
            "--config",
            "host.toml",
        ];
        bridge(&scratch, &path, &args)
    };
    // A relative --config is made absolute: the host runs in the workspace.
    let run = status_with_config("embedded");
    assert_eq!(
        choice(&run),
        format!(
            "asp-bridge uses the embedded host (--host-command embedded): {} host serve --repo \
             {{repo}} --config {}",
            shlex::try_quote(bridge_bin()).unwrap(),
            shlex::try_quote(config.to_str().unwrap()).unwrap()
        )
    );
    assert!(
        !scratch.path().join("asp-args.txt").exists(),
        "`asp` was not started"
    );
    // With another host, the configuration is not passed on, and the line says so.
    let run = status_with_config(&host_command(""));
    assert!(
        choice(&run).ends_with("; --config applies to the embedded host only and is not passed on"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_missing_or_invalid_config_file_is_an_input_error_for_every_command() {
    let (scratch, invalid, repo) = with_config("[hygiene]\nenabled = \"yes\"\n");
    // The command's own input error, not the health error of a host that exits at start; an
    // invalid file is named with its line and key.
    let at = format!(
        "asp-bridge: input: the embedded host's configuration: {}:2: enabled: invalid type",
        invalid.display()
    );
    for (config, expected) in [
        (
            "missing.toml",
            "asp-bridge: input: cannot read the configuration file",
        ),
        ("host.toml", at.as_str()),
    ] {
        for args in [
            vec!["status", "--repo", &repo],
            vec!["sarif", "--repo", &repo],
            vec!["mcp", "--repo", &repo],
            vec!["lsp"],
        ] {
            let mut args = args.clone();
            args.extend(["--config", config]);
            let run = bridge(&scratch, SYSTEM_PATH, &args);
            assert_eq!(run.code, Some(6), "{args:?}: {}", run.stderr);
            assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
            assert!(run.stdout.is_empty());
        }
    }
    scratch.assert_no_orphans();
}

#[test]
fn a_folder_outside_git_is_an_input_error_with_the_embedded_host_and_health_with_another() {
    let scratch = Scratch::new();
    let folder = scratch.path().to_str().unwrap().to_owned();
    let out = scratch.path().join("out.sarif");
    for args in [
        vec!["status", "--repo", &folder],
        vec![
            "sarif",
            "--repo",
            &folder,
            "--output",
            out.to_str().unwrap(),
        ],
    ] {
        // The embedded host is this executable: its exit code 6 is the command's input error.
        let run = bridge(&scratch, SYSTEM_PATH, &args);
        assert_eq!(run.code, Some(6), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("asp-bridge: input: ")
                && run.stderr.contains("is not inside a git repository"),
            "{args:?}: {}",
            run.stderr
        );
        // Another host's exit code means nothing here: that host is down, a health error.
        let mut args = args.clone();
        args.extend(["--host-command", "sh -c 'exit 6'"]);
        let run = bridge(&scratch, SYSTEM_PATH, &args);
        assert_eq!(run.code, Some(3), "{args:?}: {}", run.stderr);
    }
    assert!(!out.exists(), "no log is written");
    // The MCP server does not start to fail every tool call as if the host were down.
    let run = bridge(&scratch, SYSTEM_PATH, &["mcp", "--repo", &folder]);
    assert_eq!(run.code, Some(6), "{}", run.stderr);
    assert!(
        run.stderr.contains("asp-bridge: input: ")
            && run.stderr.contains("is not inside a git repository")
            && run.stdout.is_empty(),
        "{}",
        run.stderr
    );
}

#[test]
fn a_repo_that_is_missing_or_a_file_is_an_input_error_for_every_command() {
    let scratch = Scratch::git_repo();
    std::fs::write(scratch.path().join("a.txt"), "a\n").unwrap();
    for (repo, why) in [
        ("a.txt", "is not a directory"),
        ("missing", "No such file or directory"),
    ] {
        for command in [&["status"][..], &["sarif"], &["mcp"], &["host", "serve"]] {
            let mut args = command.to_vec();
            args.extend(["--repo", repo]);
            let run = bridge(&scratch, SYSTEM_PATH, &args);
            assert_eq!(run.code, Some(6), "{args:?}: {}", run.stderr);
            assert!(
                run.stderr
                    .contains(&format!("asp-bridge: input: workspace root {repo}"))
                    && run.stderr.contains(why),
                "{args:?}: {}",
                run.stderr
            );
        }
    }
    scratch.assert_no_orphans();
}
