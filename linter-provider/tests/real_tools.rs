//! Each preset run for real (ruff, shellcheck and hadolint from the test venv, as
//! `scripts/test.sh` installs them) on a file whose finding comes after `😀é` on its line: the
//! mapped finding lands on the token the tool names, as a 0-based UTF-16 offset found here
//! independently of the column conversion.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use linter_provider::from_sarif::{self, Context, Finding, Level};
use linter_provider::preset::{self, Output, Placeholders};
use linter_provider::scratch::Scratch;
use linter_provider::{from_shellcheck, tool};
use test_support::skip::skip;

/// The folder of the venv's console scripts, if the tool is there.
fn installed(tool: &str) -> Option<PathBuf> {
    let python = std::env::var_os("ASP_BRIDGE_PYTHON")?;
    let program = Path::new(&python).parent()?.join(tool);
    program.is_file().then_some(program)
}

/// The 0-based UTF-16 offset of `token` in `line`.
fn utf16_offset(line: &str, token: &str) -> u32 {
    let byte = line.find(token).expect("the token is on the line");
    line[..byte].encode_utf16().count() as u32
}

/// Runs preset `name` on `path` holding `text` and maps what it printed.
async fn lint(name: &str, path: &str, text: &str) -> Option<Vec<Finding>> {
    let Some(program) = installed(name) else {
        skip(&format!(
            "`{name}` is not installed in the test venv (scripts/test.sh installs it)"
        ));
        return None;
    };
    let mut linter = preset::named(name).unwrap();
    linter.command[0] = program.to_string_lossy().into_owned();
    let scratch = Scratch::new().unwrap();
    scratch.write(path, text.as_bytes()).unwrap();
    let files = [path.to_owned()];
    let root = scratch.root().to_string_lossy().into_owned();
    let argv = linter.argv(&Placeholders {
        files: &files,
        root: &root,
        out: "",
    });
    let limits = tool::Limits {
        deadline: Duration::from_secs(60),
        max_stdout: 16 << 20,
        max_stderr: 8192,
    };
    let ran = tool::run(&argv, scratch.root(), limits).await.unwrap();
    assert!(
        ran.code.is_some_and(|c| linter.ok_exit.contains(&c)),
        "{name} exited {:?}: {}",
        ran.code,
        String::from_utf8_lossy(&ran.stderr)
    );
    let given = HashMap::from([(path.to_owned(), text.as_bytes())]);
    let cx = Context {
        linter: &linter.id,
        root: scratch.root(),
        files: &given,
        columns: linter.columns,
        max_results: 100,
        rule_uri: linter.rule_uri.as_deref(),
    };
    let mapped = match linter.output {
        Output::Sarif => from_sarif::read(&ran.stdout, &cx),
        Output::ShellcheckJson1 => from_shellcheck::read(&ran.stdout, &cx),
    }
    .unwrap();
    assert_eq!((mapped.outside, mapped.not_given), (0, 0), "{mapped:?}");
    Some(mapped.findings)
}

fn one<'a>(findings: &'a [Finding], code: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.code == code)
        .unwrap_or_else(|| panic!("no {code}: {findings:#?}"))
}

#[tokio::test]
async fn ruff_an_unused_import_after_an_emoji() {
    let text = "import os\nx = \"😀é\"; import sys\n";
    let Some(findings) = lint("ruff", "pkg/a.py", text).await else {
        return;
    };
    let sys = findings
        .iter()
        .find(|f| f.code == "ruff/F401" && f.message.contains("sys"))
        .unwrap_or_else(|| panic!("{findings:#?}"));
    let span = sys.span.unwrap();
    let line = "x = \"😀é\"; import sys";
    assert_eq!(
        (span.start_line, span.start_char),
        (1, utf16_offset(line, "sys"))
    );
    assert_eq!(span.end_char, span.start_char + 3);
    assert_eq!(sys.level, Level::Error);
    assert!(
        sys.help_uri
            .starts_with("https://docs.astral.sh/ruff/rules/"),
        "{sys:?}"
    );
}

#[tokio::test]
async fn shellcheck_an_unquoted_variable_after_an_emoji_and_a_tab() {
    let text = "#!/bin/sh\necho \"😀é\" $1\n\techo \"$2\" $3\n";
    let Some(findings) = lint("shellcheck", "bin/run.sh", text).await else {
        return;
    };
    let mut unquoted: Vec<_> = findings
        .iter()
        .filter(|f| f.code == "shellcheck/SC2086")
        .collect();
    unquoted.sort_by_key(|f| f.span.map(|s| s.start_line));
    let spans: Vec<(u32, u32)> = unquoted
        .iter()
        .map(|f| f.span.map(|s| (s.start_line, s.start_char)).unwrap())
        .collect();
    assert_eq!(
        spans,
        [
            (1, utf16_offset("echo \"😀é\" $1", "$1")),
            (2, utf16_offset("\techo \"$2\" $3", "$3"))
        ]
    );
    assert_eq!(
        one(&findings, "shellcheck/SC2086").help_uri,
        "https://www.shellcheck.net/wiki/SC2086"
    );
}

#[tokio::test]
async fn hadolint_an_unpinned_base_image_is_a_whole_line() {
    let text = "FROM debian\nRUN echo \"😀é\"\n";
    let Some(findings) = lint("hadolint", "Dockerfile", text).await else {
        return;
    };
    let image = one(&findings, "hadolint/DL3006");
    let span = image.span.unwrap();
    assert_eq!(
        (
            span.start_line,
            span.start_char,
            span.end_line,
            span.end_char
        ),
        (0, 0, 0, 11)
    );
    assert_eq!(image.level, Level::Warning);
    assert_eq!(
        image.help_uri,
        "https://github.com/hadolint/hadolint/wiki/DL3006"
    );
}
