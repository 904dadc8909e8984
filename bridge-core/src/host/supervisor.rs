//! The host as a supervised child ([`HostLaunch`]: spawn and `host/status` handshake) under
//! rpc-peer's [`Supervisor`](rpc_peer::supervisor::Supervisor), which the long-running front ends
//! use, and the supervisor's outages said in the bridge's words.

use rpc_peer::peer::{BoxFuture, Peer};
use rpc_peer::supervisor::{Launch, Outage, StartFailure};
use rpc_peer::{ExitStatus, FailClass};

use super::HostClient;
use super::process::{HostConfig, HostProcess};
use crate::error::{Error, Result};
use asp_wire::proto;

/// rpc-peer's supervisor, by default of the host.
pub type Supervisor<L = HostLaunch> = rpc_peer::supervisor::Supervisor<L>;

/// The ASP host as a supervised child: spawn and `host/status` handshake.
#[derive(Clone, Debug)]
pub struct HostLaunch(pub HostConfig);

impl Launch for HostLaunch {
    type Process = HostProcess;
    type Client = HostClient;
    type Status = proto::Status;
    type Error = Error;

    fn launch(&self) -> BoxFuture<'static, Result<(HostProcess, proto::Status)>> {
        let config = self.0.clone();
        Box::pin(async move {
            let (process, reply) = HostProcess::start(&config).await?;
            Ok((process, reply.value))
        })
    }

    fn client(process: &HostProcess) -> HostClient {
        process.client().clone()
    }

    fn peer(process: &HostProcess) -> &Peer {
        process.client().peer()
    }

    fn shutdown(process: HostProcess) -> BoxFuture<'static, ExitStatus> {
        Box::pin(process.shutdown())
    }

    /// A host that speaks another protocol is given up on at once; a program that cannot be run
    /// is not a crash (the next call tries again at once); any other failed start is a crash.
    fn start_failure(error: &Error) -> StartFailure {
        match error {
            error if error.fail_class() == FailClass::Contract => {
                StartFailure::Final(FailClass::Contract)
            }
            Error::Peer(rpc_peer::Error::Spawn { .. }) => StartFailure::Uncounted,
            _ => StartFailure::Counted,
        }
    }
}

impl From<Outage> for Error {
    fn from(outage: Outage) -> Error {
        match outage {
            Outage::Restarting => Error::Unavailable("restarting; try again shortly".into()),
            Outage::Down { last, retry_in } => {
                Error::Unavailable(format!("{last}; restarting in {} ms", retry_in.as_millis()))
            }
            Outage::GaveUp {
                failures,
                last,
                fail_class,
            } => Error::GaveUp {
                failures,
                last,
                fail_class,
            },
            Outage::ShuttingDown => Error::Unavailable("the bridge is shutting down".into()),
            Outage::Interrupted(why) => Error::Unavailable(format!("the start failed: {why}")),
        }
    }
}
