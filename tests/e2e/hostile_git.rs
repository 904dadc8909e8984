//! A workspace whose `.git` is hostile: its configuration names programs (`core.fsmonitor`, a
//! `filter.<driver>.clean` that `.gitattributes` applies to every file, with a stat-dirty file to
//! clean). No command runs them: `status`, `sarif` (plain, `--base HEAD`, `--all-files`), MCP
//! `asp_diagnostics` and an editor opening a file, all on the embedded host. And a real submodule
//! checked out at another commit, with a key nobody tracks inside it, beside a file named with byte
//! 0xff: the evaluation decides on the rest and says what it left out, never `indeterminate`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::embedded::{
    KEY, clean_env, lsp_diagnostics, mcp_diagnostics, outside_with_home, run, sarif_run,
};
use crate::support::Scratch;

/// A script outside the workspace that appends a line to `marker` and passes stdin through.
fn script(dir: &Path, name: &str, marker: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    let body = format!(
        "#!/bin/sh\necho \"{name} $*\" >> '{}'\ncat\n",
        marker.display()
    );
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Gives `path` a modification time `ahead` of now, its bytes unchanged: git must look at its
/// content to know it is unchanged.
fn stat_dirty(path: &Path, ahead: Duration) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(std::time::SystemTime::now() + ahead)
        .unwrap();
}

/// A repository whose `.git/config` runs programs that write `marker`, with a private key among
/// its changes (so every front end has something to show) and a committed file made stat-dirty.
fn hostile(outside: &Path) -> (Scratch, PathBuf) {
    let marker = outside.join("marker");
    let scratch = Scratch::git_repo();
    let root = scratch.path();
    std::fs::write(root.join(".gitattributes"), "* filter=evil\n").unwrap();
    std::fs::write(root.join("notes.txt"), "notes\n").unwrap();
    scratch.git(&["add", "."]);
    scratch.git(&["commit", "-q", "-m", "attributes"]);
    let fsmonitor = script(outside, "fsmonitor", &marker);
    let evil = script(outside, "evil", &marker);
    scratch.git(&["config", "core.fsmonitor", fsmonitor.to_str().unwrap()]);
    scratch.git(&["config", "filter.evil.clean", evil.to_str().unwrap()]);
    scratch.git(&["config", "filter.evil.smudge", evil.to_str().unwrap()]);
    // The same bytes with another modification time: git compares the content, cleaning it first.
    stat_dirty(&root.join("notes.txt"), Duration::from_secs(5));
    std::fs::write(root.join("id_rsa"), KEY).unwrap();
    (scratch, marker)
}

fn assert_nothing_ran(marker: &Path, what: &str) {
    assert!(
        !marker.exists(),
        "{what} ran a program the repository named: {}",
        std::fs::read_to_string(marker).unwrap_or_default()
    );
}

#[test]
fn no_command_runs_a_program_that_the_repository_configuration_names() {
    let (outside, home) = outside_with_home();
    let (scratch, marker) = hostile(outside.path());
    let repo = scratch.path().canonicalize().unwrap();
    let repo_arg = repo.to_str().unwrap();
    let log = outside.path().join("out.sarif");
    let log_arg = log.to_str().unwrap();
    let status = run(&repo, &home, &["status", "--repo", repo_arg]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert_nothing_ran(&marker, "status");
    for extra in [&[][..], &["--base", "HEAD"], &["--all-files"]] {
        let mut args = vec!["sarif", "--repo", repo_arg, "--output", log_arg];
        args.extend_from_slice(extra);
        let sarif = run(&repo, &home, &args);
        assert_eq!(sarif.code, Some(0), "{extra:?}: {}", sarif.stderr);
        assert_nothing_ran(&marker, &format!("sarif {extra:?}"));
    }
    let diagnostics = mcp_diagnostics(&repo, &home);
    assert!(
        diagnostics.to_string().contains("hygiene/private-key"),
        "{diagnostics:#}"
    );
    assert_nothing_ran(&marker, "asp_diagnostics");
    let published = lsp_diagnostics(&repo, &home, "id_rsa", KEY);
    assert!(
        published.to_string().contains("private-key"),
        "{published:#}"
    );
    assert_nothing_ran(&marker, "the language server");
    // The repository is as hostile as it says: plain git runs them.
    let mut plain = std::process::Command::new("git");
    plain.arg("-C").arg(&repo).args(["status", "--porcelain"]);
    clean_env(&mut plain, &home);
    assert!(plain.output().unwrap().status.success());
    assert!(marker.exists(), "git itself runs the repository's programs");
}

#[test]
fn a_submodule_at_another_commit_and_a_name_that_is_not_utf8_are_left_out_and_the_rest_decided() {
    use std::os::unix::ffi::OsStrExt as _;
    let (outside, home) = outside_with_home();
    let upstream = Scratch::git_repo();
    let first = test_support::git::rev_parse(upstream.path(), "HEAD");
    std::fs::write(upstream.path().join("README.txt"), "second\n").unwrap();
    upstream.git(&["commit", "-q", "-am", "second"]);
    let scratch = Scratch::git_repo();
    test_support::git::add_submodule(scratch.path(), upstream.path(), "sub");
    scratch.git(&["commit", "-q", "-m", "a submodule"]);
    let repo = scratch.path().canonicalize().unwrap();
    // Nothing else changed, only a key nobody tracks inside the submodule.
    std::fs::write(repo.join("sub/id_rsa"), KEY).unwrap();
    let log = outside.path().join("out.sarif");
    let (_, stderr) = sarif_run(&repo, &home, &log);
    assert!(
        !stderr.contains("the working tree equals"),
        "the submodule was not looked at: {stderr}"
    );
    assert!(
        stderr.contains("sub (submodule: its own repository, not evaluated)"),
        "{stderr}"
    );
    // The submodule at another commit, a file named with byte 0xff, and a key in the workspace.
    test_support::git::git(&repo.join("sub"), &["checkout", "-q", &first]);
    std::fs::write(
        repo.join(std::ffi::OsStr::from_bytes(b"caf\xff.txt")),
        "x\n",
    )
    .unwrap();
    std::fs::write(repo.join("id_rsa"), KEY).unwrap();
    let (log, stderr) = sarif_run(&repo, &home, &log);
    let line = stderr.lines().last().unwrap_or_default();
    assert!(
        line.contains("(host decision deny"),
        "decided on the rest: {line}"
    );
    assert!(line.contains("2 path(s) left out"), "{line}");
    assert!(line.contains("sub"), "{line}");
    let text = log.to_string();
    assert!(text.contains("hygiene/private-key"), "{text}");
    assert!(!text.contains("asp/coverage/stale"), "{text}");
}

#[test]
fn a_filter_the_trusted_configuration_allows_runs_with_the_users_program_never_the_repositorys() {
    let (outside, home) = outside_with_home();
    let (scratch, marker) = hostile(outside.path());
    let repo = scratch.path().canonicalize().unwrap();
    std::fs::write(repo.join(".gitattributes"), "* filter=lfs\n").unwrap();
    scratch.git(&["commit", "-q", "-am", "lfs"]);
    stat_dirty(&repo.join("notes.txt"), Duration::from_secs(9));
    let evil = script(outside.path(), "repository-lfs", &marker);
    scratch.git(&["config", "filter.lfs.clean", evil.to_str().unwrap()]);
    let trusted = script(outside.path(), "user-lfs", &marker);
    let global = format!("[filter \"lfs\"]\n\tclean = {}\n", trusted.display());
    std::fs::write(home.join(".gitconfig"), global).unwrap();
    // The set-up's own git commands ran the repository's fsmonitor.
    let _ = std::fs::remove_file(&marker);
    let args = ["status", "--repo", repo.to_str().unwrap()];
    let status = run(&repo, &home, &args);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert_nothing_ran(&marker, "status without [git] filters");
    std::fs::create_dir_all(home.join("asp-bridge")).unwrap();
    std::fs::write(
        home.join("asp-bridge/host.toml"),
        "[git]\nfilters = [\"lfs\"]\n",
    )
    .unwrap();
    let status = run(&repo, &home, &args);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(ran.contains("user-lfs"), "the allowed driver runs: {ran:?}");
    assert!(
        !ran.contains("repository-lfs"),
        "never the repository's program: {ran}"
    );
}
