//! ruff as the repository configures it: its own configuration files, folder by folder, and a
//! configuration that names a file outside the repository.

use super::*;

/// ruff reads the repository's own configuration as it would on the command line: the committed
/// `pyproject.toml` at the root for the files under it, the nearer `ruff.toml` of a folder for
/// the files in that folder; and the answer is complete (what it read is what it is valid for).
#[test]
fn ruff_follows_the_repositorys_own_configuration_files_folder_by_folder() {
    let Some(bin) = linters() else { return };
    let user = User::new(&bin, "[[linter]]\npreset = \"ruff\"\n");
    let scratch = Scratch::git_repo();
    let repo = scratch.path().canonicalize().unwrap();
    std::fs::write(
        repo.join("pyproject.toml"),
        "[tool.ruff.lint]\nextend-select = [\"E711\"]\nignore = [\"F401\"]\n",
    )
    .unwrap();
    std::fs::create_dir(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/ruff.toml"), "[lint]\nselect = [\"F401\"]\n").unwrap();
    scratch.git(&["add", "."]);
    scratch.git(&["commit", "-q", "-m", "configuration"]);
    let code = "import os\nimport sys\nx = os.sep == None\n";
    std::fs::write(repo.join("app.py"), code).unwrap();
    std::fs::write(repo.join("src/lib.py"), code).unwrap();
    // What ruff itself finds, run in the repository on the same files.
    let direct = Command::new(bin.join("ruff"))
        .args([
            "check",
            "--no-cache",
            "--output-format",
            "json",
            "app.py",
            "src/lib.py",
        ])
        .current_dir(&repo)
        .env("HOME", &user.home)
        .env("XDG_CONFIG_HOME", &user.home)
        .output()
        .unwrap();
    let printed: Value = serde_json::from_slice(&direct.stdout).unwrap();
    let expected: BTreeSet<(String, String, u64)> = printed
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = Path::new(f["filename"].as_str().unwrap());
            (
                format!("ruff/{}", f["code"].as_str().unwrap()),
                file.strip_prefix(&repo).unwrap().display().to_string(),
                f["location"]["row"].as_u64().unwrap(),
            )
        })
        .collect();
    let codes = |file: &str| -> BTreeSet<String> {
        expected
            .iter()
            .filter(|(_, f, _)| f == file)
            .map(|(c, _, _)| c.clone())
            .collect()
    };
    // The configuration mattered: the root's ignores F401 and adds E711; the folder's selects F401 alone.
    assert!(
        codes("app.py").contains("ruff/E711") && !codes("app.py").contains("ruff/F401"),
        "{expected:?}"
    );
    assert_eq!(
        codes("src/lib.py"),
        BTreeSet::from(["ruff/F401".to_owned()]),
        "{expected:?}"
    );
    let log = user.sarif(&repo, &[]);
    let shown: BTreeSet<(String, String, u64)> = crate::embedded::results(&log);
    assert_eq!(shown, expected, "{log:#}");
    let findings = user.mcp_findings(&repo, json!({}));
    assert_eq!(findings.len(), expected.len(), "{findings:#?}");
    let run = user.run(&repo, &["sarif", "--output", "/dev/null"]);
    assert!(
        run.stderr.contains("everything required ran") && !run.stderr.contains("ruff ("),
        "ruff's answer was taken whole: {}",
        run.stderr
    );
}

/// A repository's configuration that makes ruff read a file outside the repository (ruff's
/// `extend`) gets an error that names ruff and its exit, and nothing of that file reaches the
/// answer (its stderr, which quotes the line it could not parse, goes to the log only).
#[test]
fn a_repository_configuration_that_reads_a_file_outside_leaks_nothing_of_it() {
    let Some(bin) = linters() else { return };
    let user = User::new(&bin, "[[linter]]\npreset = \"ruff\"\n");
    let outside = Scratch::new();
    let secret = outside.path().join("token");
    std::fs::write(&secret, "SECRET-TOKEN-4711 not toml\n").unwrap();
    let scratch = Scratch::git_repo();
    let repo = scratch.path().canonicalize().unwrap();
    std::fs::write(
        repo.join("pyproject.toml"),
        format!("[tool.ruff]\nextend = \"{}\"\n", secret.display()),
    )
    .unwrap();
    std::fs::write(repo.join("app.py"), PYTHON).unwrap();
    let log_path = repo.join(".git/leak.sarif");
    let run = user.run(&repo, &["sarif", "--output", log_path.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        log.contains("exited with status 2"),
        "ruff's failure is said: {log}"
    );
    assert!(log.contains("its stderr is in the log"), "{log}");
    let findings = user.mcp_diagnostics(&repo, json!({})).to_string();
    for (what, text) in [
        ("the SARIF log", &log),
        ("the stderr line", &run.stderr),
        ("MCP", &findings),
    ] {
        assert!(
            !text.contains("SECRET-TOKEN-4711"),
            "{what} quotes the file: {text}"
        );
    }
    scratch.assert_no_orphans();
}
