//! The built-in ASP check provider: repository hygiene checks (after pre-commit-hooks) run on a
//! changeset, reading content only through the host's `workspace/readBlob` and `workspace/listTree`
//! callbacks. It runs in its own process (`asp-bridge provider hygiene`) like any other provider.

mod bounds;
mod changed;
mod checks;
mod digest;
mod error;
mod evaluate;
mod request;
mod rules;
mod server;
mod text;
mod wire;

pub use error::{Error, Result};
pub use rules::SOURCE;

use std::sync::Arc;
use std::time::Duration;

use rpc_peer::peer::{self, PeerConfig};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;

/// Largest frame read from the host: one `workspace/readBlob` answer carries up to
/// [`evaluate::CHUNK`] files, base64-encoded; a larger answer fails its call, and the provider
/// then reads the batch in halves.
const MAX_FRAME: usize = 64 * 1024 * 1024;
/// How long running evaluations may finish once the host closed its end.
const DRAIN: Duration = Duration::from_secs(2);

/// Who this provider is: shown in `initialize` and in every assessment.
#[derive(Clone, Debug)]
pub struct Identity {
    /// Its version.
    pub version: String,
    /// A content hash of its build (`sha256:<hex>`), which changes with every build.
    pub fingerprint: String,
}

/// Serves the inner seam over `reader`/`writer` (the host's output and input) until the host
/// closes its end or sends `exit`.
pub async fn serve<R, W>(reader: R, writer: W, identity: Identity) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let exit = Arc::new(Notify::new());
    let provider = server::Provider::new(
        evaluate::Provenance {
            version: identity.version,
            build_digest: identity.fingerprint,
        },
        exit.clone(),
    );
    let config = PeerConfig {
        max_frame: MAX_FRAME,
        ..PeerConfig::default()
    };
    tokio::select! {
        served = peer::serve(reader, writer, config, Arc::new(provider), DRAIN) => served?,
        () = exit.notified() => tracing::debug!("exit received"),
    }
    Ok(())
}
