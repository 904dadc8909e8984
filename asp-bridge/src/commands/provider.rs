//! `asp-bridge provider hygiene`: the built-in check provider (hygiene-provider) on stdio, as the
//! embedded host starts it. Stdout carries the inner seam's frames only; logs go to stderr. It reads
//! the workspace only through the host's callbacks.

use std::io::Read as _;

use anyhow::Context as _;
use hygiene_provider::Identity;
use rpc_peer::child::program::{BUILD_FINGERPRINT_ENV, is_sha256_digest};
use sha2::{Digest as _, Sha256};

use crate::flags::{ProviderArgs, ProviderKind};

pub(crate) async fn run(args: ProviderArgs) -> anyhow::Result<()> {
    match args.provider {
        ProviderKind::Hygiene => {
            // The host that runs this from its own executable hands over the digest it computed
            // of that file; run by hand, the provider hashes itself.
            let fingerprint = match std::env::var(BUILD_FINGERPRINT_ENV) {
                Ok(digest) if is_sha256_digest(&digest) => digest,
                _ => tokio::task::spawn_blocking(build_fingerprint)
                    .await
                    .context("hashing this executable stopped")??,
            };
            let identity = Identity {
                version: env!("CARGO_PKG_VERSION").to_owned(),
                fingerprint,
            };
            // The provider owns this process's stdin and stdout: they are its transport.
            let (input, output) = crate::stdio::pipes();
            hygiene_provider::serve(input, output, identity).await?;
        }
    }
    Ok(())
}

/// `sha256:<hex>` of this executable: a new build has a new fingerprint.
fn build_fingerprint() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot locate this executable")?;
    let mut file =
        std::fs::File::open(&exe).with_context(|| format!("cannot read {}", exe.display()))?;
    let mut hash = Sha256::new();
    let mut buffer = vec![0; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hash.update(&buffer[..n]);
    }
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}
