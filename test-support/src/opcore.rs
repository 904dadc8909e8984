//! opcore-asp-provider 0.2.1, the independent provider the embedded host is tested against: its
//! bundle (found in `shared/providers/` beside the repository, as CI lays it out), unpacked into a
//! temporary folder and run with Node.js 20 or later; the TypeScript repository the tests evaluate;
//! the `host.toml` that enrolls it.
//!
//! A missing Node.js or bundle skips the calling test ([`crate::skip::skip`]: recorded, and a failure
//! where every tool is required).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::git::Repo;

/// The archive's name in `shared/providers/`.
pub const BUNDLE: &str = "opcore-asp-provider-0.2.1.tar.xz";
/// sha256 of the archive (`shared/providers/README.md`).
pub const BUNDLE_SHA256: &str = "2d959af212bfe45b45c88fffa880b34ac971ca59db1e3fc72b3de7441bcc445f";
/// The oldest Node.js major version the bundle runs on.
pub const NODE_MAJOR: u32 = 20;

/// `src/math.ts`, committed.
pub const MATH_TS: &str =
    "export function add(a: number, b: number): number {\n  return a + b;\n}\n";
/// `src/index.ts` as committed.
pub const INDEX_TS: &str =
    "import { add } from \"./math\";\n\nexport const total: number = add(1, 2);\n";
/// `src/index.ts` as changed: TS2345 (`"two"` is no number) and TS2322 (a number is no string).
pub const INDEX_TS_CHANGED: &str = "import { add } from \"./math\";\n\nexport const total = add(1, \"two\");\nexport const label: string = total;\n";
const TSCONFIG: &str = "{\n  \"compilerOptions\": {\n    \"strict\": true,\n    \"target\": \"ES2022\",\n    \"module\": \"ESNext\",\n    \"moduleResolution\": \"Bundler\",\n    \"noEmit\": true\n  },\n  \"include\": [\"src\"]\n}\n";
const PACKAGE_JSON: &str = "{\n  \"name\": \"fixture\",\n  \"version\": \"0.0.0\",\n  \"private\": true,\n  \"type\": \"module\"\n}\n";

/// The unpacked bundle and the Node.js that runs it; the folder is removed when dropped.
#[derive(Debug)]
pub struct Opcore {
    dir: tempfile::TempDir,
    /// The `node` executable (20 or later).
    pub node: PathBuf,
}

impl Opcore {
    /// Unpacks the bundle; `None` after a loud `SKIPPED` line naming `test` when Node.js 20+ or the
    /// bundle is missing (recorded by [`crate::skip::skip`]; a failure where every tool is required).
    pub fn unpack(test: &str) -> Option<Opcore> {
        let found = node().and_then(|node| Ok((node, bundle()?)));
        let (node, bundle) = match found {
            Ok(found) => found,
            Err(why) => {
                crate::skip::skip(&format!("{test}: {why}"));
                return None;
            }
        };
        let digest = run(Command::new("sha256sum").arg(&bundle));
        assert!(
            digest.starts_with(BUNDLE_SHA256),
            "{} is not the bundle the tests were written for (sha256 {digest})",
            bundle.display()
        );
        let dir = tempfile::tempdir().expect("a temporary folder");
        run(Command::new("tar")
            .arg("-xJf")
            .arg(&bundle)
            .arg("-C")
            .arg(dir.path()));
        assert!(dir.path().join("opcore-asp-provider.mjs").is_file());
        Some(Opcore { dir, node })
    }

    /// The folder the bundle was unpacked into.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The provider's command line: `node …/opcore-asp-provider.mjs --stdio`.
    pub fn command(&self) -> Vec<String> {
        vec![
            self.node.to_string_lossy().into_owned(),
            self.dir
                .path()
                .join("opcore-asp-provider.mjs")
                .to_string_lossy()
                .into_owned(),
            "--stdio".to_owned(),
        ]
    }

    /// A `host.toml` that enrolls opcore as `asp/0.1`, required for `interactive` and `sweep`,
    /// with the TypeScript syntax and type checks, and the hygiene provider off.
    pub fn host_toml(&self) -> String {
        let command: Vec<String> = self.command().iter().map(|c| format!("{c:?}")).collect();
        format!(
            "[hygiene]\nenabled = false\n\n[[provider]]\nid = \"opcore\"\ncommand = [{}]\n\
             protocol = \"asp/0.1\"\nrequired-for = [\"interactive\", \"sweep\"]\n\
             configuration = {{ checks = [\"typescript.syntax\", \"typescript.types\"] }}\n",
            command.join(", ")
        )
    }

    /// Writes [`Opcore::host_toml`] into the bundle's folder and returns its path.
    pub fn write_host_toml(&self) -> PathBuf {
        let path = self.dir.path().join("host.toml");
        std::fs::write(&path, self.host_toml()).expect("write host.toml");
        path
    }
}

/// The TypeScript repository: `src/math.ts`, `src/index.ts`, a strict `tsconfig.json` and a
/// `package.json` committed; with `changed`, `src/index.ts` then holds [`INDEX_TS_CHANGED`].
pub fn typescript_repo(changed: bool) -> Repo {
    let repo = Repo::new(&[
        ("src/math.ts", MATH_TS),
        ("src/index.ts", INDEX_TS),
        ("tsconfig.json", TSCONFIG),
        ("package.json", PACKAGE_JSON),
    ]);
    if changed {
        repo.write("src/index.ts", INDEX_TS_CHANGED);
    }
    repo
}

/// `ASP_BRIDGE_NODE`, else `node` on `PATH`, if it is Node.js 20 or later.
pub fn node() -> Result<PathBuf, String> {
    let node = match std::env::var_os("ASP_BRIDGE_NODE").filter(|v| !v.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => std::env::var_os("PATH")
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join("node"))
                    .find(|candidate| candidate.is_file())
            })
            .ok_or("`node` is not installed (Node.js 20 or later runs the opcore bundle)")?,
    };
    let output = Command::new(&node)
        .arg("--version")
        .output()
        .map_err(|e| format!("{} --version: {e}", node.display()))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| format!("{} --version printed {version:?}", node.display()))?;
    if major < NODE_MAJOR {
        return Err(format!(
            "{} is Node.js {version}; the opcore bundle needs {NODE_MAJOR} or later",
            node.display()
        ));
    }
    Ok(node)
}

/// The bundle: `ASP_BRIDGE_OPCORE_BUNDLE`, else `shared/providers/` beside the repository (CI
/// clones next to `shared/`), else beside the main checkout when this one is a git worktree.
pub fn bundle() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("ASP_BRIDGE_OPCORE_BUNDLE").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository root")
        .to_path_buf();
    let mut roots = vec![root.clone()];
    let common = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(main) = common.as_deref().and_then(Path::parent) {
        roots.push(main.to_path_buf());
    }
    let candidates: Vec<PathBuf> = roots
        .iter()
        .filter_map(|r| r.parent())
        .map(|dir| dir.join("shared/providers").join(BUNDLE))
        .collect();
    candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .ok_or_else(|| {
            let tried: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
            format!(
                "the opcore bundle is not found (tried {}; ASP_BRIDGE_OPCORE_BUNDLE names another)",
                tried.join(", ")
            )
        })
}

fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
