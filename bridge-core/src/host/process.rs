//! The host as a child process: its command line, and the `host/status` handshake above a
//! [`ChildPeer`] (which owns the spawn, the stderr drain, the process group and the shutdown
//! escalation).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::{CallOptions, ClientConfig, HostClient, Reply};
use crate::error::{Error, Result};
use asp_wire::proto;
use rpc_peer::ExitStatus;
use rpc_peer::child::{ChildPeer, ChildSpec};
use rpc_peer::peer::NoRequests;

/// The command line used when none is given: the reference host.
pub const DEFAULT_HOST_COMMAND: &str = "asp host serve --repo {repo}";

/// A host command line, split like a shell splits words, with `{repo}` replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCommand {
    pub program: String,
    pub args: Vec<String>,
}

impl HostCommand {
    pub fn parse(line: &str, repo: &Path) -> Result<HostCommand> {
        let words = shlex::split(line)
            .ok_or_else(|| Error::HostCommand(format!("unbalanced quotes in {line:?}")))?;
        let repo = repo.to_string_lossy();
        let mut words = words.into_iter().map(|w| w.replace("{repo}", &repo));
        let program = words
            .next()
            .ok_or_else(|| Error::HostCommand("empty command".into()))?;
        Ok(HostCommand {
            program,
            args: words.collect(),
        })
    }
}

/// Everything needed to start and talk to a host.
#[derive(Clone, Debug)]
pub struct HostConfig {
    pub command: HostCommand,
    /// The workspace root; the host's working directory.
    pub repo: PathBuf,
    pub client: ClientConfig,
    /// Deadline of the first `host/status` (default 10 s).
    pub handshake_timeout: Duration,
}

impl HostConfig {
    pub fn new(command: HostCommand, repo: PathBuf) -> HostConfig {
        HostConfig {
            command,
            repo,
            client: ClientConfig::default(),
            handshake_timeout: Duration::from_secs(10),
        }
    }
}

/// A running host process and its connection.
pub struct HostProcess {
    child: ChildPeer,
    client: HostClient,
}

impl std::fmt::Debug for HostProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostProcess")
            .field("pid", &self.child.pid())
            .finish()
    }
}

impl HostProcess {
    /// Spawns the host; no message is sent yet.
    pub fn spawn(config: &HostConfig) -> Result<HostProcess> {
        let spec = ChildSpec::new(
            config.command.program.clone(),
            config.command.args.clone(),
            config.repo.clone(),
        );
        let child = ChildPeer::spawn(spec, config.client.clone(), Arc::new(NoRequests))?;
        let client = HostClient::from_peer(child.peer().clone());
        Ok(HostProcess { child, client })
    }

    /// Spawns the host and completes the handshake: `host/status` within the handshake deadline, with
    /// a supported `outerProtocol`. On failure the host is shut down before the error is returned.
    pub async fn start(config: &HostConfig) -> Result<(HostProcess, Reply<proto::Status>)> {
        let process = HostProcess::spawn(config)?;
        let options = CallOptions {
            timeout: Some(config.handshake_timeout),
            progress: None,
        };
        let handshake = process
            .client
            .call(proto::STATUS, Some(&super::EMPTY), options)
            .await;
        let outcome = handshake.and_then(|reply: Reply<proto::Status>| {
            check_outer_protocol(&reply.value.host.outer_protocol)?;
            Ok(reply)
        });
        match outcome {
            Ok(reply) => Ok((process, reply)),
            Err(error) => {
                // A host that did not answer `host/status` is not asked to shut down: stdin is closed
                // at once and the escalation runs from there.
                process.child.stop().await;
                Err(error)
            }
        }
    }

    pub fn client(&self) -> &HostClient {
        &self.client
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.pid()
    }

    /// Stops the host with the fixed escalation and returns how it ended; at most about 5 s.
    pub async fn shutdown(self) -> ExitStatus {
        self.child.shutdown().await
    }
}

/// Accepts `asp-outer/1`, `asp-outer/1.x` and `asp-outer/1.x.y`; refuses anything else with a
/// contract error.
pub fn check_outer_protocol(found: &str) -> Result<()> {
    if protocol_major(found, "asp-outer") == Some(1) {
        Ok(())
    } else {
        Err(Error::UnsupportedProtocol {
            found: found.to_owned(),
        })
    }
}

/// The major version of a protocol id `NAME/VERSION`, where VERSION is a whole or partial semantic
/// version (`1`, `1.7`, `1.7.2`): no operator, wildcard, pre-release or white space.
fn protocol_major(id: &str, name: &str) -> Option<u64> {
    let version = id.strip_prefix(name)?.strip_prefix('/')?;
    if !version.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    semver::Comparator::parse(version).ok().map(|v| v.major)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell_and_fills_in_the_repo() {
        let cmd = HostCommand::parse(
            "asp host serve --repo {repo} --name 'a b'",
            Path::new("/w/my repo"),
        )
        .unwrap();
        assert_eq!(cmd.program, "asp");
        assert_eq!(
            cmd.args,
            ["host", "serve", "--repo", "/w/my repo", "--name", "a b"]
        );
    }

    #[test]
    fn refuses_a_broken_command_line() {
        assert!(HostCommand::parse("asp 'open", Path::new("/")).is_err());
        assert!(HostCommand::parse("   ", Path::new("/")).is_err());
    }

    #[test]
    fn accepts_only_outer_protocol_major_1() {
        assert!(check_outer_protocol("asp-outer/1.0").is_ok());
        assert!(check_outer_protocol("asp-outer/1.7").is_ok());
        assert!(check_outer_protocol("asp-outer/1").is_ok());
        assert!(check_outer_protocol("asp-outer/1.7.2").is_ok());
        for bad in [
            "asp-outer/2.0",
            "asp-outer/10.0",
            "asp/1.0",
            "",
            "asp-outer/",
            "asp-outer/01.0",
            "asp-outer/1.x",
            "asp-outer/1.0-rc",
            "asp-outer/1..0",
            "asp-outer/1.0 ",
        ] {
            let err = check_outer_protocol(bad).unwrap_err();
            assert_eq!(err.fail_class(), rpc_peer::FailClass::Contract, "{bad}");
        }
    }
}
