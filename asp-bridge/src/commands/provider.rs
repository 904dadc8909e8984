//! `asp-bridge provider hygiene` and `asp-bridge provider linters --linter JSON`: the built-in
//! check providers (hygiene-provider, linter-provider) on stdio, as the embedded host starts them.
//! Stdout carries the inner seam's frames only; logs go to stderr. They read the workspace only
//! through the host's callbacks.

use anyhow::Context as _;
use hygiene_provider::Identity;
use linter_provider::preset::Linter;
use rpc_peer::child::program::{self, BUILD_FINGERPRINT_ENV, is_sha256_digest};

use crate::flags::{ProviderArgs, ProviderKind};

pub(crate) async fn run(args: ProviderArgs) -> anyhow::Result<()> {
    match args.provider {
        ProviderKind::Hygiene => {
            let identity = identity().await?;
            // The provider owns this process's stdin and stdout: they are its transport.
            let (input, output) = crate::stdio::pipes();
            hygiene_provider::serve(input, output, identity).await?;
        }
        ProviderKind::Linters { linter } => {
            let entry: serde_json::Value =
                serde_json::from_str(&linter).context("--linter must be a JSON object")?;
            let mut linter = Linter::from_config(&entry)?;
            linter.command[0] = installed(&linter)?;
            // What a linter starts and leaves behind comes back to this process, which ends it.
            if let Err(error) = rpc_peer::child::strays::adopt() {
                tracing::warn!(%error, "what a linter leaves behind cannot be ended");
            }
            let identity = identity().await?;
            let (input, output) = crate::stdio::pipes();
            linter_provider::serve(input, output, linter, identity).await?;
        }
    }
    Ok(())
}

/// The linter's program, resolved once as the host resolves a provider's (so a relative name does
/// not change meaning in the scratch folder it runs in); a missing one is named with what to
/// install, and the provider does not start.
fn installed(linter: &Linter) -> anyhow::Result<String> {
    let program = &linter.command[0];
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    match program::resolve(program, &cwd) {
        Some(path) => Ok(path.to_string_lossy().into_owned()),
        None => Err(linter_provider::Error::NotInstalled {
            program: program.clone(),
            install: linter.install.clone(),
        }
        .into()),
    }
}

/// Who this build is: the host that runs it from its own executable hands over the digest it
/// computed of that file; run by hand, the provider hashes itself.
async fn identity() -> anyhow::Result<Identity> {
    let fingerprint = match std::env::var(BUILD_FINGERPRINT_ENV) {
        Ok(digest) if is_sha256_digest(&digest) => digest,
        _ => tokio::task::spawn_blocking(build_fingerprint)
            .await
            .context("hashing this executable stopped")??,
    };
    Ok(Identity {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        fingerprint,
    })
}

/// `sha256:<hex>` of this executable: a new build has a new fingerprint. The file itself is hashed
/// (the path resolved first, then opened no-follow), whatever link it was started through.
fn build_fingerprint() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot locate this executable")?;
    let exe =
        std::fs::canonicalize(&exe).with_context(|| format!("cannot resolve {}", exe.display()))?;
    let digest = repo_io::read::hash_file(&exe, None, None)
        .with_context(|| format!("cannot read {}", exe.display()))?
        .with_context(|| format!("{} is not a regular file", exe.display()))?;
    Ok(format!("sha256:{}", asp_wire::digest::hex(&digest)))
}
