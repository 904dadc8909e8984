//! The runner's hardening against a repository whose `.git/config` names programs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use test_support::git::Repo;
use test_support::runtime::block_on;

use super::*;

/// A script that appends its name and arguments to `marker`, passing stdin through (a filter that
/// does nothing but say it ran).
fn script(dir: &Path, name: &str, marker: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"{name} $*\" >> '{}'\ncat\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A repository whose configuration runs a program from `core.fsmonitor`, from two filter drivers
/// (one with a name only `GIT_CONFIG_PARAMETERS`' quoting can carry) and from a hook, with a
/// stat-dirty file those filters would clean.
fn hostile() -> (Repo, tempfile::TempDir, PathBuf) {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("marker");
    let repo = Repo::new(&[("a.txt", "hello\n"), ("b.bin", "bytes\n")]);
    repo.write(
        ".gitattributes",
        "*.txt filter=evil\n*.bin filter=o'dd=na!me\n",
    );
    repo.commit();
    let fsmonitor = script(outside.path(), "fsmonitor", &marker);
    let evil = script(outside.path(), "evil", &marker);
    let hook = script(outside.path(), "hook", &marker);
    let config = |key: &str, value: &Path| repo.git(&["config", key, value.to_str().unwrap()]);
    config("core.fsmonitor", &fsmonitor);
    config("filter.evil.clean", &evil);
    config("filter.evil.smudge", &evil);
    config("filter.o'dd=na!me.clean", &evil);
    config("filter.o'dd=na!me.process", &evil);
    repo.git(&["config", "filter.evil.required", "true"]);
    repo.git(&["config", "core.hooksPath", outside.path().to_str().unwrap()]);
    std::fs::copy(&hook, outside.path().join("post-index-change")).unwrap();
    // Same bytes, another mtime: git must compare the content, through the clean filter if any.
    for file in ["a.txt", "b.bin"] {
        let f = std::fs::File::options()
            .write(true)
            .open(repo.path().join(file))
            .unwrap();
        f.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
            .unwrap();
    }
    (repo, outside, marker)
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

#[test]
fn no_command_runs_a_program_the_repository_configuration_names() {
    let (repo, _outside, marker) = hostile();
    let git = Git::new(repo.path(), soon());
    let (filters, _) = block_on(git.lookup_filters(&[])).unwrap();
    assert_eq!(filters.drivers(), ["evil", "o'dd=na!me"]);
    let status =
        block_on(git.run(&["status", "--porcelain=v2", "-z", "--untracked-files=all"])).unwrap();
    assert!(
        status.is_empty(),
        "the same bytes are unmodified: {:?}",
        String::from_utf8_lossy(&status)
    );
    for args in [
        &["diff-index", "--raw", "-z", "HEAD", "--"][..],
        &["diff-files", "--raw", "-z"],
        &["ls-files", "-z", "--stage"],
        &["rev-parse", "HEAD"],
    ] {
        block_on(git.run(args)).unwrap();
    }
    let with_filters = Git {
        filters: Some(&filters),
        ..git
    };
    with_filters
        .run_blocking(&["status", "--porcelain=v2", "-z"])
        .unwrap();
    git.run_blocking(&["ls-tree", "-r", "-z", "HEAD"]).unwrap();
    assert!(
        !marker.exists(),
        "a program the repository named ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    // The same commands without the runner do run them (the repository is as hostile as it says).
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(repo.path())
        .args(["status", "--porcelain"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(marker.exists(), "the hostile repository is hostile");
}

#[test]
fn the_hardening_overrides_the_repository_and_reaches_what_git_reads_last() {
    let (repo, _outside, _marker) = hostile();
    let git = Git::new(repo.path(), soon());
    let (filters, _) = block_on(git.lookup_filters(&[])).unwrap();
    let git = Git {
        filters: Some(&filters),
        ..git
    };
    let get = |key: &str| {
        let out = git.run_blocking(&["config", "--get", key]);
        String::from_utf8(out.unwrap_or_default()).unwrap()
    };
    assert_eq!(get("core.fsmonitor"), "false\n");
    assert_eq!(get("core.hooksPath"), "/dev/null\n");
    assert_eq!(get("filter.evil.clean"), "\n");
    assert_eq!(get("filter.evil.required"), "false\n");
    assert_eq!(get("filter.o'dd=na!me.process"), "\n");
    let command = git.command(&["status"]);
    let env: Vec<_> = command.get_envs().collect();
    let value = |name: &str| {
        env.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
    };
    assert_eq!(value("GIT_TERMINAL_PROMPT"), Some(Some("0".into())));
    assert_eq!(value("GIT_PAGER"), Some(Some("cat".into())));
    assert_eq!(value("GIT_EXTERNAL_DIFF"), Some(None), "removed");
    let args: Vec<_> = command.get_args().collect();
    assert_eq!(
        args[..3],
        ["--no-pager", "--no-optional-locks", "--literal-pathspecs"]
    );
}

#[test]
fn a_command_that_reads_content_never_runs_without_the_filter_overrides() {
    let (repo, _outside, marker) = hostile();
    let err = Git::new(repo.path(), soon())
        .run_blocking(&["status"])
        .unwrap_err();
    assert!(err.to_string().contains("filter overrides"), "{err}");
    assert!(!marker.exists());
}

#[test]
fn an_allowed_driver_gets_the_trusted_programs_only() {
    let listing =
        b"global\0filter.lfs.clean\ngit-lfs clean -- %f\0global\0filter.lfs.required\ntrue\0\
local\0filter.lfs.smudge\n/tmp/evil\0local\0filter.lfs.process\n/tmp/evil\0\
local\0filter.other.clean\n/tmp/evil\0local\0include.path\n/tmp/more\0";
    let (filters, includes) = filters::parse(listing, &["lfs".to_owned()]);
    assert!(includes);
    let pairs: Vec<_> = filters.pairs().collect();
    assert_eq!(
        pairs,
        [
            ("filter.lfs.clean", "git-lfs clean -- %f"),
            ("filter.lfs.smudge", ""),
            ("filter.lfs.process", ""),
            ("filter.lfs.required", "true"),
            ("filter.other.clean", ""),
            ("filter.other.smudge", ""),
            ("filter.other.process", ""),
            ("filter.other.required", "false"),
        ],
        "the repository's own programs for an allowed driver are dropped"
    );
    let (only_local, _) = filters::parse(b"local\0filter.lfs.clean\n/tmp/evil\0", &["lfs".into()]);
    assert_eq!(
        only_local.pairs().collect::<Vec<_>>(),
        [("filter.lfs.clean", "")]
    );
    let (trusted_clean, _) = filters::parse(
        b"global\0filter.lfs.clean\ngit-lfs clean\0",
        &["lfs".into()],
    );
    assert_eq!(
        trusted_clean.pairs().collect::<Vec<_>>(),
        [("filter.lfs.clean", "git-lfs clean")],
        "an unset process stays unset, or git would not use clean"
    );
}

#[test]
fn a_blocking_run_past_its_deadline_is_killed_and_reaped() {
    let repo = Repo::new(&[("a.txt", "a\n")]);
    // `cat-file --batch` waits on its input: stdin is piped here and never closed.
    let git = Git::new(repo.path(), Instant::now() + Duration::from_millis(300));
    let mut command = git.command(&["cat-file", "--batch"]);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = git.spawn(&mut command).unwrap();
    let _stdin = child.stdin.take();
    let started = Instant::now();
    let result = output::capped_blocking(child, git.deadline);
    assert!(matches!(result, Err(output::Blocking::Late)));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn quoting_is_what_git_reads() {
    let mut out = String::new();
    quote_into(&mut out, "it's!");
    assert_eq!(out, r"'it'\''s'\!''");
}
