//! The paths an `asp_diagnostics` call names: confined to the workspace, and refused when they are
//! not in the working tree (a path that is neither on disk nor a deleted tracked file is a mistake
//! to say, not an all-clear).

use asp_wire::proto::AdvisoryCallSite;
use bridge_core::confine::confine;
use bridge_core::worktree::{Base, Evaluate, Scope};

use super::MAX_PATHS;
use crate::error::Error;
use crate::to_mcp::text;
use crate::tools::run::Call;

/// Refuses, as an `input` error naming them, paths that are not in the working tree: not on disk
/// and, with scope `changes`, not a tracked file that was deleted either (a deletion is a change).
pub(super) async fn missing_paths(call: &Call, scope: &Scope, base: &Base) -> Result<(), Error> {
    let (paths, whole) = match scope {
        Scope::Paths(paths) => (paths, false),
        Scope::Files(paths) => (paths, true),
        _ => return Ok(()),
    };
    let absent: Vec<String> = paths
        .iter()
        .filter(|p| {
            let path = call.state.repo.join(p);
            matches!(path.symlink_metadata(), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        })
        .cloned()
        .collect();
    if absent.is_empty() {
        return Ok(());
    }
    if !whole {
        // A path gone from the disk may be a deletion: the changes under it say.
        let plan = Evaluate {
            scope: Scope::Paths(absent.clone()),
            base: base.clone(),
            ..Evaluate::at(AdvisoryCallSite::Interactive)
        };
        let changes = call
            .state
            .worktree
            .plan(&plan)
            .await?
            .built
            .changeset
            .changes;
        let missing: Vec<&String> = absent
            .iter()
            .filter(|p| !changes.iter().any(|c| under(&c.path, p)))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        return Err(not_found(&missing));
    }
    Err(not_found(&absent.iter().collect::<Vec<_>>()))
}

/// Whether `path` is `dir` or lies under it (`.` holds everything).
/// Whether `path` is `dir` or under it; `.` is the whole workspace.
fn under(path: &str, dir: &str) -> bool {
    dir == "." || bridge_core::confine::is_within(path, dir)
}

fn not_found(paths: &[&String]) -> Error {
    let named: Vec<String> = paths.iter().take(5).map(|p| text(p)).collect();
    let more = match paths.len().saturating_sub(named.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Error::Input(format!(
        "no such file or directory in the workspace: {}{more} (nothing was checked; paths are \
         relative to the workspace root)",
        named.join(", ")
    ))
}

pub(super) fn confined_paths(
    call: &Call,
    paths: Option<Vec<String>>,
) -> Result<Option<Vec<String>>, Error> {
    let Some(paths) = paths else {
        return Ok(None);
    };
    if paths.is_empty() {
        return Err(Error::Input(
            "paths is empty; omit it to evaluate every working-tree change".to_owned(),
        ));
    }
    if paths.len() > MAX_PATHS {
        return Err(Error::Input(format!(
            "{} paths given; the limit is {MAX_PATHS}",
            paths.len()
        )));
    }
    let mut confined = Vec::with_capacity(paths.len());
    for raw in &paths {
        let path = confine(&call.state.repo, raw).map_err(Error::path)?;
        if !confined.contains(&path) {
            confined.push(path);
        }
    }
    Ok(Some(confined))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_under_itself_its_directories_and_the_root_only() {
        assert!(under("src/a.rs", "src"));
        assert!(under("src/a.rs", "src/a.rs"));
        assert!(under("src/a.rs", "."));
        assert!(!under("src2/a.rs", "src"));
        assert!(!under("src", "src/a.rs"));
    }
}
