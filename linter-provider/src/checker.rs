//! The linter runner as a checker on the provider kit: it wants the files its globs name, finds
//! the configuration files that apply to them (the baseline's, or the change's where the change
//! touches them), answers from what it kept for files it linted already, and lints the rest in
//! one run. The kit does everything around it (the grant, reading the files, both sides of the
//! comparison, the caps and the Assessment).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use provider_kit::{About, Blob, Checked, Checker, Named, Run, Side, Workspace};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::{Error, Result};
use crate::kept::{Kept, Key};
use crate::preset::Linter;
use crate::{lint, to_kit};

/// One linter as a checker.
pub(crate) struct Lint {
    linter: Linter,
    files: GlobSet,
    about: About,
    kept: Mutex<Kept>,
    /// The linter's program as last seen: what was kept is forgotten when another file stands
    /// there (the tool was upgraded while the provider ran), so no answer mixes two versions.
    program: Mutex<Option<Stamp>>,
    /// One run of the linter at a time: evaluations that overlap (an agent's calls made together,
    /// an editor's save during an agent's call) take turns, so its memory is never spent twice.
    turn: tokio::sync::Semaphore,
}

/// What tells one installed program from another at the same path: its file's device, inode,
/// size and modification time.
type Stamp = (u64, u64, u64, Option<std::time::SystemTime>);

/// Serves the inner seam over `reader`/`writer` with `linter`'s checks until the host closes its
/// end or sends `exit`.
pub async fn serve<R, W>(
    reader: R,
    writer: W,
    linter: Linter,
    identity: provider_kit::Identity,
) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let checker = Lint::new(linter)?;
    let served = provider_kit::serve(reader, writer, checker, identity).await;
    // What the linters left behind does not outlive the provider.
    crate::strays::sweep().await;
    Ok(served?)
}

impl Lint {
    pub(crate) fn new(linter: Linter) -> Result<Lint> {
        let mut globs = GlobSetBuilder::new();
        for glob in &linter.files {
            let glob = GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|e| Error::Config(format!("`files`: {e}")))?;
            globs.add(glob);
        }
        let files = globs
            .build()
            .map_err(|e| Error::Config(format!("`files`: {e}")))?;
        // One linter per process: its id lives as long as the process.
        let id: &'static str = Box::leak(linter.id.clone().into_boxed_str());
        Ok(Lint {
            linter,
            files,
            about: About {
                id,
                source: id,
                publisher: "asp-bridge",
                per_rule_cap: None,
            },
            kept: Mutex::new(Kept::default()),
            program: Mutex::new(None),
            turn: tokio::sync::Semaphore::new(1),
        })
    }

    /// Forgets what was kept if the linter's program is not the file it was when it was kept.
    async fn forget_if_replaced(&self) {
        use std::os::unix::fs::MetadataExt as _;
        let program = self.linter.command[0].clone();
        let stamp = tokio::task::spawn_blocking(move || std::fs::metadata(program))
            .await
            .ok()
            .and_then(Result::ok)
            .map(|m| (m.dev(), m.ino(), m.size(), m.modified().ok()));
        let mut seen = rpc_peer::lock(&self.program);
        if *seen != stamp {
            if seen.is_some() {
                tracing::info!(linter = %self.linter.id, "the linter's program changed; what was kept is forgotten");
            }
            self.kept().clear();
            *seen = stamp;
        }
    }

    /// The rule that stands for all of this linter's own (`ruff/*`).
    fn every_rule(&self) -> String {
        format!("{}/*", self.linter.id)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a linted file is kept by: its path, its blob and the configuration files of `configs`
    /// that apply to it.
    fn key(path: &str, blob: &str, configs: &BTreeMap<String, String>) -> Key {
        Key {
            path: path.to_owned(),
            blob: blob.to_owned(),
            configs: configs
                .iter()
                .filter(|(config, _)| applies(config, path))
                .map(|(p, b)| (p.clone(), b.clone()))
                .collect(),
        }
    }

    /// The findings of the rules asked for (every rule when `linter/*` is asked).
    fn asked<W: Workspace>(
        &self,
        findings: Vec<provider_kit::Finding>,
        run: &Run<'_, Self, W>,
    ) -> Vec<provider_kit::Finding> {
        let all_rules = run.rules.contains(&self.every_rule());
        findings
            .into_iter()
            .filter(|f| all_rules || run.rules.contains(&f.code))
            .collect()
    }

    /// The configuration files that apply to `paths` (named by `config-files`, in a folder on the
    /// way to one of them): the change's version where the change touches them, else the
    /// baseline's; by path, with their blob ids. When the host cannot list the baseline's, the
    /// change's alone, and a note that says so (the linter still runs: its findings may include
    /// some that the repository's settings turn off, never fewer).
    async fn configs<W: Workspace>(
        &self,
        paths: &[&str],
        run: &Run<'_, Self, W>,
    ) -> (BTreeMap<String, String>, Option<String>) {
        let mut found = BTreeMap::new();
        if self.linter.config_files.is_empty() {
            return (found, None);
        }
        let wanted: Vec<String> = paths
            .iter()
            .flat_map(|path| folders_of(path))
            .flat_map(|folder| {
                self.linter
                    .config_files
                    .iter()
                    .map(move |name| join(folder, name))
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let globs = self
            .linter
            .config_files
            .iter()
            .map(|name| format!("**/{}", globset::escape(name)))
            .collect();
        let (entries, unlisted) = match run.list_globs(globs).await {
            Ok((entries, false)) => (entries, None),
            Ok((entries, true)) => (entries, Some("the host cut the list short".to_owned())),
            Err(e) => (Vec::new(), Some(e)),
        };
        let note = unlisted.map(|why| {
            format!(
                "{}: the baseline's configuration files ({}) could not all be listed ({why}); the files were linted with those the change holds, so findings their settings turn off may be shown",
                self.linter.id,
                self.linter.config_files.join(", ")
            )
        });
        let baseline: HashMap<String, String> = entries
            .into_iter()
            .filter(|e| e.kind == "file")
            .map(|e| (e.path, e.blob_id))
            .collect();
        for path in wanted {
            let blob = match run.changed(&path) {
                Some(after) => after.map(str::to_owned),
                None => baseline.get(&path).cloned(),
            };
            if let Some(blob) = blob {
                found.insert(path, blob);
            }
        }
        (found, note)
    }
}

/// The folders a repository path is in, from the root down (`""`, `src`, `src/pkg`).
fn folders_of(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once("").chain(path.match_indices('/').map(|(i, _)| &path[..i]))
}

fn join(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_owned()
    } else {
        format!("{folder}/{name}")
    }
}

/// Whether the configuration file at `config` applies to `path` (it is in one of its folders).
fn applies(config: &str, path: &str) -> bool {
    match config.rsplit_once('/') {
        None => true,
        Some((folder, _)) => path.starts_with(folder) && path[folder.len()..].starts_with('/'),
    }
}

impl Checker for Lint {
    type Rule = String;
    type Settings = ();

    fn about(&self) -> About {
        self.about
    }

    fn rules(&self) -> Vec<String> {
        vec![self.every_rule()]
    }

    fn rule_id<'r>(&'r self, rule: &'r String) -> &'r str {
        rule
    }

    fn parse_rule(&self, id: &str) -> Option<String> {
        id.strip_prefix(self.linter.id.as_str())
            .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
            .then(|| id.to_owned())
    }

    fn configure(&self, configuration: Option<&Value>) -> Result<((), Value), String> {
        match configuration {
            Some(Value::Object(settings)) if !settings.is_empty() => Err(format!(
                "{} takes its settings from the host's configuration, not from the request",
                self.linter.id
            )),
            _ => Ok(((), self.linter.to_config())),
        }
    }

    fn wants(&self, _settings: &(), path: &str) -> bool {
        self.files.is_match(path)
    }

    /// The findings kept for a side whose path, blob and configuration files were linted before
    /// (nothing is listed while nothing is kept). When the host cannot list the configuration
    /// files, nothing is recalled: the check lints and says why.
    async fn recall<W: Workspace>(
        &self,
        sides: &[Named],
        run: &Run<'_, Self, W>,
    ) -> Vec<Option<Checked>> {
        let nothing = || sides.iter().map(|_| None).collect();
        self.forget_if_replaced().await;
        if self.kept().is_empty() {
            return nothing();
        }
        let paths: Vec<&str> = sides.iter().map(|s| s.path.as_str()).collect();
        let (configs, unlisted) = self.configs(&paths, run).await;
        if unlisted.is_some() {
            return nothing();
        }
        let found: Vec<Option<Vec<provider_kit::Finding>>> = {
            let kept = self.kept();
            sides
                .iter()
                .map(|side| kept.get(&Self::key(&side.path, &side.blob, &configs)))
                .collect()
        };
        found
            .into_iter()
            .map(|findings| {
                findings.map(|findings| Checked {
                    findings: self.asked(findings, run),
                    ..Checked::default()
                })
            })
            .collect()
    }

    async fn check<W: Workspace>(
        &self,
        sides: Vec<Side>,
        run: &Run<'_, Self, W>,
    ) -> Result<Vec<Checked>, String> {
        if sides.is_empty() {
            return Ok(Vec::new());
        }
        self.forget_if_replaced().await;
        let paths: Vec<&str> = sides.iter().map(|s| s.path.as_str()).collect();
        let (configs, unlisted) = self.configs(&paths, run).await;
        let key = |side: &Side| Self::key(&side.path, &side.blob, &configs);
        let mut found: Vec<Option<Vec<provider_kit::Finding>>> = {
            let kept = self.kept();
            sides.iter().map(|side| kept.get(&key(side))).collect()
        };
        let todo: Vec<usize> = (0..sides.len()).filter(|&i| found[i].is_none()).collect();
        let mut checked_notes: Vec<String> = unlisted.into_iter().collect();
        let mut unchecked: Vec<Option<String>> = vec![None; sides.len()];
        let mut cut = 0;
        if !todo.is_empty() {
            let read = run.read_blobs(configs.values().cloned().collect()).await;
            if let Some((id, why)) = read.failures.iter().next() {
                return Err(format!("could not read a configuration file ({id}): {why}"));
            }
            let config_bytes: Vec<(String, Blob)> = configs
                .iter()
                .filter_map(|(path, id)| {
                    read.blobs
                        .get(id)
                        .map(|bytes| (path.clone(), Blob::new(bytes.clone())))
                })
                .collect();
            let files: Vec<(String, Blob)> = todo
                .iter()
                .map(|&i| (sides[i].path.clone(), sides[i].bytes.clone()))
                .collect();
            let deadline = tokio::time::Instant::from_std(run.deadline);
            let Ok(Ok(_turn)) = tokio::time::timeout_at(deadline, self.turn.acquire()).await else {
                return Err(format!(
                    "{}: another evaluation was running it until this one's deadline",
                    self.linter.id
                ));
            };
            let mut linted = lint::lint(&self.linter, files, config_bytes, run.deadline).await?;
            cut = linted.cut;
            checked_notes.append(&mut linted.notes);
            let mut kept = self.kept();
            for &i in &todo {
                let side = &sides[i];
                if let Some(why) = linted.unchecked.remove(&side.path) {
                    unchecked[i] = Some(why);
                    continue;
                }
                let findings = to_kit::findings(
                    linted.found.remove(&side.path).unwrap_or_default(),
                    &side.bytes,
                );
                // A run that dropped findings is not kept: the next one may keep them all.
                if cut == 0 {
                    kept.put(key(side), findings.clone());
                }
                found[i] = Some(findings);
            }
        }
        let mut checked: Vec<Checked> = found
            .into_iter()
            .zip(unchecked)
            .map(|(findings, unchecked)| Checked {
                findings: self.asked(findings.unwrap_or_default(), run),
                unchecked: unchecked.into_iter().collect(),
                ..Checked::default()
            })
            .collect();
        if let Some(first) = checked.first_mut() {
            first.cut = cut;
            first.notes = checked_notes;
        }
        Ok(checked)
    }
}

#[cfg(test)]
mod tests;
