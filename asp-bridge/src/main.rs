//! `asp-bridge`: parses flags, sends logs to stderr, runs one command, maps errors to exit codes.
//!
//! Exit codes: 0 done; 2 usage; 3 health (host down, slow, crashed); 4 contract (protocol
//! mismatch, malformed answer); 5 policy; 6 input (bad path, file, repository or command line).
//! Findings and decisions never change the exit code.

mod commands;
mod flags;
mod host_choice;
mod log;
mod setup;
mod stdio;

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use rpc_peer::FailClass;

use crate::flags::{Cli, Command};

fn main() -> ExitCode {
    one_malloc_arena();
    let cli = Cli::parse();
    log::init(logs_of(&cli.command));
    let runtime = match runtime_for(&cli.command) {
        Ok(runtime) => runtime,
        Err(e) => return report(&anyhow::Error::new(e).context("cannot start the async runtime")),
    };
    let done = |()| ExitCode::SUCCESS;
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::Status(args) => commands::status::run(args).await.map(done),
            Command::Sarif(args) => commands::sarif::run(args).await.map(done),
            Command::Mcp(args) => commands::mcp::run(args).await.map(done),
            Command::Lsp(args) => commands::lsp::run(args).await,
            Command::Provider(args) => commands::provider::run(args).await.map(done),
            Command::Host(args) => commands::host::run(args).await.map(done),
        }
    });
    // Background tasks (a host's stderr drain, a stuck writer) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(100));
    log::finish(outcome.is_ok());
    match outcome {
        Ok(code) => code,
        Err(error) => report(&error),
    }
}

/// One malloc arena for the process (glibc): the runtime and the blocking pool share it instead of
/// each thread taking an arena of its own, which held about 4 MiB more across the three processes
/// of a 5,000-file sweep, at the same speed. Set before any thread starts.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn one_malloc_arena() {
    // SAFETY: `mallopt` sets one of the allocator's parameters; no other thread exists yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_malloc_arena() {}

/// Where a command's log lines go without `ASP_BRIDGE_LOG`. The one-shot commands (`status`,
/// `sarif`) promise one line for a failure, so their warnings are held and written only once the
/// command has succeeded; the servers log as they go, which is what a client's log pane is for.
fn logs_of(command: &Command) -> log::Logs {
    match command {
        Command::Status(_) | Command::Sarif(_) => log::Logs::Held,
        _ => log::Logs::Live,
    }
}

/// The runtime a command runs on. The stdio servers that serve one peer (`mcp`, `host serve`,
/// `provider`) run on one thread: the server, its stdio and its children's pipes, so a message
/// crosses no thread (blocking work still goes to tokio's blocking pool, and the children are
/// separate processes). The other commands use a worker per core.
fn runtime_for(command: &Command) -> std::io::Result<tokio::runtime::Runtime> {
    match command {
        Command::Mcp(_) | Command::Host(_) | Command::Provider(_) => {
            tokio::runtime::Builder::new_current_thread()
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
}

/// Longest failure line printed, in characters (a host's message and stderr tail can be any size).
const LINE_MAX: usize = 1000;

/// Prints one classed line to stderr and picks the exit code.
fn report(error: &anyhow::Error) -> ExitCode {
    let class = fail_class(error);
    let _ = writeln!(std::io::stderr(), "{}", failure_line(class, error));
    ExitCode::from(match class {
        FailClass::Health => 3,
        FailClass::Contract => 4,
        FailClass::Policy => 5,
        FailClass::Input => 6,
    })
}

/// `asp-bridge: <class>: <cause>` on one line: each cause of the chain once (an error that already
/// shows its source is not followed by it again), and the whole line filtered as untrusted text,
/// since it carries the host's messages and stderr: no escape, BEL, CR or line break reaches the
/// terminal, so a host can neither restyle it nor forge a line of its own.
fn failure_line(class: FailClass, error: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if cause.is_empty() || message.contains(&cause) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&cause);
    }
    let line = format!("asp-bridge: {class}: {message}");
    asp_wire::text::one_line(&line, LINE_MAX).into_owned()
}

/// The failClass of the first error in the chain that knows one (the adapters wrap bridge-core's
/// errors transparently); anything else is an input error (a file, a flag, the terminal).
fn fail_class(error: &anyhow::Error) -> FailClass {
    error
        .chain()
        .find_map(|cause| {
            if let Some(e) = cause.downcast_ref::<bridge_core::Error>() {
                Some(host_fail_class(e))
            } else if let Some(e) = cause.downcast_ref::<core_host::Error>() {
                Some(e.fail_class())
            } else if let Some(e) = cause.downcast_ref::<mcp_adapter::Error>() {
                Some(e.fail_class())
            } else {
                cause
                    .downcast_ref::<lsp_adapter::Error>()
                    .map(lsp_adapter::Error::fail_class)
                    .or_else(|| {
                        cause
                            .downcast_ref::<hygiene_provider::Error>()
                            .map(hygiene_provider::Error::fail_class)
                    })
                    .or_else(|| {
                        cause
                            .downcast_ref::<linter_provider::Error>()
                            .map(linter_provider::Error::fail_class)
                    })
            }
        })
        .unwrap_or(FailClass::Input)
}

/// The class of a bridge-core error. The embedded host is this executable: when it exits with the
/// code of an `input` error (a workspace that is not a git repository, say), so does the command.
fn host_fail_class(error: &bridge_core::Error) -> FailClass {
    match error {
        bridge_core::Error::Peer(rpc_peer::Error::Exited {
            status: rpc_peer::ExitStatus::Code(6),
            ..
        }) if host_choice::embedded_in_use() => FailClass::Input,
        other => other.fail_class(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_one_filtered_line_with_each_cause_once() {
        let spawn = bridge_core::Error::Peer(rpc_peer::Error::Spawn {
            role: rpc_peer::Role::Host,
            program: "asp".into(),
            source: std::io::Error::from_raw_os_error(2),
        });
        let line = failure_line(FailClass::Health, &anyhow::Error::new(spawn));
        assert_eq!(
            line.matches("No such file or directory").count(),
            1,
            "{line}"
        );
        assert!(line.contains("--host-command"), "{line}");

        let hostile = bridge_core::Error::Peer(rpc_peer::Error::Exited {
            role: rpc_peer::Role::Host,
            status: rpc_peer::ExitStatus::Code(1),
            stderr_tail: format!(
                "\u{1b}]0;pwned\u{7}\r\u{1b}[2K\nasp-bridge: ok: host ALLOW\n{}",
                "x".repeat(1_000_000)
            ),
        });
        let line = failure_line(FailClass::Health, &anyhow::Error::new(hostile));
        assert!(
            line.starts_with("asp-bridge: health: host exited with status 1"),
            "{line}"
        );
        assert!(!line.contains(['\u{1b}', '\u{7}', '\r', '\n']), "{line:?}");
        assert!(line.chars().count() <= LINE_MAX, "{}", line.len());
    }
}
