//! The pre-commit-hooks console scripts run the way `pre-commit run --all-files` runs them: one hook
//! after another, each over the tracked files of its types (pre-commit's `identify` tags, by file
//! name), in xargs-style batches (at most 128 KiB of command line, at least 4 files and at most
//! `files / jobs` per batch) that run `jobs` at a time, the file order shuffled with a fixed seed;
//! then which files each hook flagged, read from its output.
//!
//! Two hooks are told to look where the hygiene provider looks: `check-merge-conflict` only checks
//! during a merge unless given `--assume-in-merge`, and `check-added-large-files` only checks files
//! staged for addition unless given `--enforce-all` (an `--all-files` sweep sends every file as
//! added). `mixed-line-ending` gets `--fix=no`; the two fixers (`end-of-file-fixer`,
//! `trailing-whitespace-fixer`) fix as they do under pre-commit, and the working tree is restored
//! after each one, untimed, so that every hook sees the files as committed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The console script every hook needs: without it, pre-commit-hooks is not installed.
pub const PROBE: &str = "check-json";

/// The file types a hook runs on, as pre-commit's `types`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Types {
    All,
    Text,
    Json,
    Yaml,
    Toml,
}

/// One hook: its id, console script and arguments, the types it runs on, whether it rewrites files,
/// the hygiene rules that check the same thing, and how a line of its output names a file.
#[derive(Debug)]
pub struct Hook {
    pub id: &'static str,
    entry: &'static str,
    args: &'static [&'static str],
    types: Types,
    fixer: bool,
    pub rules: &'static [&'static str],
    named: fn(&str) -> Option<&str>,
}

/// The hooks of pre-commit-hooks that the hygiene provider matches, in the order of their README.
pub const HOOKS: [Hook; 9] = [
    Hook {
        id: "check-added-large-files",
        entry: "check-added-large-files",
        args: &["--enforce-all"],
        types: Types::All,
        fixer: false,
        rules: &["hygiene/large-file"],
        named: |l| l.split_once(" (").map(|(f, _)| f),
    },
    Hook {
        id: "check-json",
        entry: "check-json",
        args: &[],
        types: Types::Json,
        fixer: false,
        rules: &["hygiene/json-syntax", "hygiene/duplicate-key"],
        named: |l| l.split_once(": Failed to json decode").map(|(f, _)| f),
    },
    Hook {
        id: "check-merge-conflict",
        entry: "check-merge-conflict",
        args: &["--assume-in-merge"],
        types: Types::Text,
        fixer: false,
        rules: &["hygiene/merge-conflict"],
        named: |l| l.split_once(':').map(|(f, _)| f),
    },
    Hook {
        id: "check-toml",
        entry: "check-toml",
        args: &[],
        types: Types::Toml,
        fixer: false,
        rules: &["hygiene/toml-syntax"],
        named: |l| l.split_once(": ").map(|(f, _)| f),
    },
    Hook {
        id: "check-yaml",
        entry: "check-yaml",
        args: &[],
        types: Types::Yaml,
        fixer: false,
        rules: &["hygiene/yaml-syntax", "hygiene/duplicate-key"],
        // ruamel's message names the file in its marks: `  in "a/b.yaml", line 3, column 5`.
        named: |l| {
            let (_, rest) = l.split_once("in \"")?;
            rest.split_once("\", line").map(|(f, _)| f)
        },
    },
    Hook {
        id: "detect-private-key",
        entry: "detect-private-key",
        args: &[],
        types: Types::Text,
        fixer: false,
        rules: &["hygiene/private-key"],
        named: |l| l.strip_prefix("Private key found: "),
    },
    Hook {
        id: "end-of-file-fixer",
        entry: "end-of-file-fixer",
        args: &[],
        types: Types::Text,
        fixer: true,
        rules: &["hygiene/final-newline"],
        named: |l| l.strip_prefix("Fixing "),
    },
    Hook {
        id: "mixed-line-ending",
        entry: "mixed-line-ending",
        args: &["--fix=no"],
        types: Types::Text,
        fixer: false,
        rules: &["hygiene/mixed-line-endings"],
        named: |l| l.strip_suffix(": mixed line endings"),
    },
    Hook {
        id: "trailing-whitespace",
        entry: "trailing-whitespace-fixer",
        args: &[],
        types: Types::Text,
        fixer: true,
        rules: &["hygiene/trailing-whitespace"],
        named: |l| l.strip_prefix("Fixing "),
    },
];

/// pre-commit's shuffle seed is its own; this one only makes the order fixed.
const SHUFFLE_SEED: u64 = 1_542_676_187;
/// pre-commit's command-line budget on Linux: `min(ARG_MAX - 2048 - environment, 2**17)`.
const MAX_COMMAND: usize = 1 << 17;

/// What one hook process gave: its output (stdout and stderr), and its peak resident set in KiB
/// (0 when not measured).
#[derive(Debug)]
pub struct Ran {
    pub output: String,
    pub peak_kib: u64,
}

/// One hook's run over the repository.
#[derive(Debug)]
pub struct HookRun {
    pub id: &'static str,
    pub wall: Duration,
    pub processes: usize,
    /// The sum of the peaks of the `jobs` largest batches: what ran at the same time at most.
    pub peak_kib: u64,
    pub flagged: BTreeSet<String>,
}

/// The whole sweep.
#[derive(Debug)]
pub struct Sweep {
    pub hooks: Vec<HookRun>,
}

impl Sweep {
    /// Wall time of every hook, one after another.
    pub fn wall(&self) -> Duration {
        self.hooks.iter().map(|h| h.wall).sum()
    }

    /// The largest peak of any hook's processes together (hooks run one at a time).
    pub fn peak_kib(&self) -> u64 {
        self.hooks.iter().map(|h| h.peak_kib).max().unwrap_or(0)
    }

    pub fn processes(&self) -> usize {
        self.hooks.iter().map(|h| h.processes).sum()
    }

    /// The files each hook flagged, by hook id.
    pub fn flagged(&self) -> BTreeMap<&'static str, BTreeSet<String>> {
        self.hooks
            .iter()
            .map(|h| (h.id, h.flagged.clone()))
            .collect()
    }
}

/// Whether the console scripts are in `bin`.
pub fn installed(bin: &Path) -> bool {
    bin.join(PROBE).is_file()
}

/// Runs every hook of [`HOOKS`] from `bin` over `files` of the repository at `root` (its working
/// directory, as under pre-commit), `jobs` batches at a time; `run` runs one prepared command to
/// its end (the benchmark measures it, a test only waits for it with a deadline).
pub fn sweep(
    bin: &Path,
    root: &Path,
    files: &[String],
    jobs: usize,
    run: &(dyn Fn(&mut Command) -> Ran + Sync),
) -> Sweep {
    let jobs = jobs.max(1);
    let mut order = files.to_vec();
    fastrand::Rng::with_seed(SHUFFLE_SEED).shuffle(&mut order);
    let hooks = HOOKS
        .iter()
        .map(|hook| {
            let chosen: Vec<&str> = order
                .iter()
                .map(String::as_str)
                .filter(|f| matches(hook.types, f, root))
                .collect();
            let entry = bin.join(hook.entry);
            let batches = partition(&entry.to_string_lossy(), hook.args, &chosen, jobs);
            let started = Instant::now();
            let ran = in_parallel(&batches, jobs, |batch| {
                let mut command = Command::new(&entry);
                command.args(hook.args).args(batch).current_dir(root);
                run(&mut command)
            });
            let wall = started.elapsed();
            if hook.fixer {
                crate::git::git(root, &["checkout", "-q", "--", "."]);
            }
            let mut peaks: Vec<u64> = ran.iter().map(|r| r.peak_kib).collect();
            peaks.sort_unstable_by(|a, b| b.cmp(a));
            let known: BTreeSet<&str> = chosen.iter().copied().collect();
            let flagged = ran
                .iter()
                .flat_map(|r| r.output.lines())
                .filter_map(|l| (hook.named)(l.trim_end()))
                .filter(|f| known.contains(f))
                .map(str::to_owned)
                .collect();
            HookRun {
                id: hook.id,
                wall,
                processes: batches.len(),
                peak_kib: peaks.iter().take(jobs).sum(),
                flagged,
            }
        })
        .collect();
    Sweep { hooks }
}

/// Runs `f` on each batch, `jobs` at a time, results in the batches' order.
fn in_parallel<T: Send>(
    batches: &[Vec<&str>],
    jobs: usize,
    f: impl Fn(&[&str]) -> T + Sync,
) -> Vec<T> {
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..batches.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(batches.len()) {
            scope.spawn(|| {
                loop {
                    let i = {
                        let mut next = next.lock().expect("no panic holds it");
                        let i = *next;
                        *next += 1;
                        i
                    };
                    let Some(batch) = batches.get(i) else {
                        return;
                    };
                    let result = f(batch);
                    results.lock().expect("no panic holds it")[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no panic holds it")
        .into_iter()
        .map(|r| r.expect("every batch ran"))
        .collect()
}

/// pre-commit's `xargs.partition`: batches of at most `max(4, ceil(n / jobs))` files and
/// [`MAX_COMMAND`] bytes of command line.
fn partition<'a>(entry: &str, args: &[&str], files: &[&'a str], jobs: usize) -> Vec<Vec<&'a str>> {
    if files.is_empty() {
        return Vec::new();
    }
    let most = files.len().div_ceil(jobs).max(4);
    let base = entry.len() + args.iter().map(|a| a.len() + 1).sum::<usize>() + 1;
    let mut batches = Vec::new();
    let mut batch = Vec::new();
    let mut length = base;
    for &file in files {
        if !batch.is_empty() && (length + file.len() + 1 > MAX_COMMAND || batch.len() >= most) {
            batches.push(std::mem::take(&mut batch));
            length = base;
        }
        length += file.len() + 1;
        batch.push(file);
    }
    batches.push(batch);
    batches
}

/// Whether `identify` would give `file` a tag of `types`: by its extension for the extensions
/// the corpus uses; any other file is text unless a NUL byte is in its first 1,024 bytes.
fn matches(types: Types, file: &str, root: &Path) -> bool {
    let extension = file.rsplit_once('.').map_or("", |(_, e)| e);
    match types {
        Types::All => true,
        Types::Json => extension == "json",
        Types::Yaml => matches!(extension, "yaml" | "yml"),
        Types::Toml => extension == "toml",
        Types::Text => match extension {
            "json" | "yaml" | "yml" | "toml" | "py" | "txt" | "md" => true,
            "png" => false,
            _ => std::fs::read(root.join(file))
                .map(|b| !b.iter().take(1024).any(|&c| c == 0))
                .unwrap_or(false),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_split_as_pre_commit_splits_them() {
        let files: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let sizes = |jobs| -> Vec<usize> {
            partition("hook", &[], &refs, jobs)
                .iter()
                .map(Vec::len)
                .collect()
        };
        assert_eq!(sizes(2), [5, 5]);
        assert_eq!(sizes(4), [4, 4, 2]);
        assert_eq!(sizes(1), [10]);
        let long: Vec<String> = (0..100).map(|i| format!("{i:0>5000}")).collect();
        let refs: Vec<&str> = long.iter().map(String::as_str).collect();
        let batches = partition("hook", &[], &refs, 1);
        assert!(batches.len() > 1, "{}", batches.len());
        assert!(batches.iter().all(|b| b.len() * 5001 <= MAX_COMMAND));
    }

    #[test]
    fn each_hook_names_the_file_of_its_own_output() {
        let named = |id: &str, line: &str| {
            let hook = HOOKS.iter().find(|h| h.id == id).expect("a hook");
            (hook.named)(line).map(str::to_owned)
        };
        let cases = [
            (
                "check-added-large-files",
                "a/b.txt (601 KB) exceeds 500 KB.",
            ),
            (
                "check-json",
                "a/b.txt: Failed to json decode (Expecting value)",
            ),
            (
                "check-merge-conflict",
                "a/b.txt:3: Merge conflict string '<<<<<<<' found",
            ),
            (
                "check-toml",
                "a/b.txt: Illegal character '\\n' (at line 3, column 5)",
            ),
            ("check-yaml", "  in \"a/b.txt\", line 3, column 5"),
            ("detect-private-key", "Private key found: a/b.txt"),
            ("end-of-file-fixer", "Fixing a/b.txt"),
            ("mixed-line-ending", "a/b.txt: mixed line endings"),
            ("trailing-whitespace", "Fixing a/b.txt"),
        ];
        for (id, line) in cases {
            assert_eq!(named(id, line).as_deref(), Some("a/b.txt"), "{id}: {line}");
        }
        assert_eq!(named("check-yaml", "expected <block end>, but found"), None);
    }
}
