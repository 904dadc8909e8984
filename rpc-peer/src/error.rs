//! The one error type of rpc-peer; every variant knows its failure class.
//!
//! Only a failure to get an answer from the other side (or to build a request for it) is an `Error`.

use std::fmt;

use crate::jsonrpc;

/// The ASP failure classes (`error.data.failClass`), which the front ends show verbatim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailClass {
    /// The host is down, slow or not ready.
    Health,
    /// The host and the bridge disagree on the protocol.
    Contract,
    /// Repository policy refuses the request.
    Policy,
    /// The request itself is invalid.
    Input,
}

impl FailClass {
    pub fn as_str(self) -> &'static str {
        match self {
            FailClass::Health => "health",
            FailClass::Contract => "contract",
            FailClass::Policy => "policy",
            FailClass::Input => "input",
        }
    }

    /// Reads a wire `failClass`; `None` for values the spec does not define.
    pub fn parse(value: &str) -> Option<FailClass> {
        Some(match value {
            "health" => FailClass::Health,
            "contract" => FailClass::Contract,
            "policy" => FailClass::Policy,
            "input" => FailClass::Input,
            _ => return None,
        })
    }

    /// The class of a JSON-RPC error code, for an error reply that omits `failClass`: JSON-RPC's
    /// own codes; any other is `health`. A protocol with codes of its own (ASP's registry,
    /// `asp_wire::code::fail_class`) classes them first and falls back on this
    /// ([`crate::peer::PeerConfig::classify`]).
    pub fn of_json_rpc_code(code: i64) -> FailClass {
        match code {
            jsonrpc::INVALID_PARAMS | jsonrpc::INVALID_REQUEST => FailClass::Input,
            jsonrpc::METHOD_NOT_FOUND | jsonrpc::PARSE_ERROR => FailClass::Contract,
            _ => FailClass::Health,
        }
    }
}

impl fmt::Display for FailClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who the other side of a connection is, as error messages name it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Role {
    /// An ASP host (the bridge's side of the outer seam).
    #[default]
    Host,
    /// A provider (the embedded host's side of the core seam).
    Provider,
    /// Whoever called a server (the bridge, for a host; a host, for a provider).
    Client,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Host => "host",
            Role::Provider => "provider",
            Role::Client => "client",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the host process is gone, as far as the bridge could tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// The process exited with this status code.
    Code(i32),
    /// The process was ended by this signal.
    Signal(i32),
    /// Its stdout closed but the process is still running.
    StillRunning,
    /// The byte stream ended and there is no process to ask (an in-process host).
    Unknown,
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitStatus::Code(code) => write!(f, "exited with status {code}"),
            ExitStatus::Signal(signal) => write!(f, "killed by signal {signal}"),
            ExitStatus::StillRunning => f.write_str("closed its stdout but is still running"),
            ExitStatus::Unknown => f.write_str("closed its stdout"),
        }
    }
}

/// Every way a call to the other side can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The other side is gone (its output ended); `role` names it.
    #[error("{role} {status}{}", tail_suffix(.stderr_tail))]
    Exited {
        role: Role,
        status: ExitStatus,
        stderr_tail: String,
    },

    #[error("{role} did not answer {method} within {ms} ms")]
    Timeout { role: Role, method: String, ms: u64 },

    /// The program could not be run at all (not found, not executable): trying again does not
    /// help until someone installs it or names another command, so it is not retryable. For a
    /// host, the text says how to name another one.
    #[error("could not start {role} `{program}`: {source}{}", spawn_hint(*.role))]
    Spawn {
        role: Role,
        program: String,
        #[source]
        source: std::io::Error,
    },

    #[error("{role} refused {method}: {message} (code {code})")]
    Refused {
        role: Role,
        method: String,
        code: i64,
        message: String,
        /// `error.data.detail`, when the peer gives one: untrusted text, filter before showing it.
        detail: Option<String>,
        fail_class: FailClass,
        retryable: bool,
    },

    #[error("{role} answered {method} with a malformed result: {detail}")]
    Malformed {
        role: Role,
        method: String,
        detail: String,
    },

    /// The other side cannot take the call now (it is not reading, it is hung, or it could not
    /// be watched).
    #[error("{role} unavailable: {why}")]
    Unavailable { role: Role, why: String },

    /// A request this side could not build (params that do not encode).
    #[error("{0}")]
    Input(String),
}

/// What to do when the host program cannot be run (providers are named by the host's
/// configuration, which says where they come from).
fn spawn_hint(role: Role) -> &'static str {
    match role {
        Role::Host => {
            "; install an ASP host, or give its command line with --host-command or \
             ASP_BRIDGE_HOST_COMMAND"
        }
        Role::Provider => "; check the provider's command in the host configuration",
        Role::Client => "",
    }
}

fn tail_suffix(tail: &str) -> String {
    let tail = tail.trim();
    if tail.is_empty() {
        String::new()
    } else {
        format!("; stderr: {tail}")
    }
}

impl Error {
    /// A JSON-RPC error response of `role` to `method`: classed by `data.failClass` (else by its
    /// code, through `classify`), retryable as `data.retryable` says (else when it is a health
    /// failure), with `data.detail` kept.
    pub fn refused(
        role: Role,
        method: &str,
        error: jsonrpc::ErrorObject,
        classify: fn(i64) -> FailClass,
    ) -> Error {
        let data = error.data.as_ref();
        let text = |key: &str| data.and_then(|d| d.get(key)).and_then(|v| v.as_str());
        let fail_class = text("failClass")
            .and_then(FailClass::parse)
            .unwrap_or_else(|| classify(error.code));
        let retryable = data
            .and_then(|d| d.get("retryable"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(fail_class == FailClass::Health);
        Error::Refused {
            role,
            method: method.to_owned(),
            code: error.code,
            detail: text("detail").map(str::to_owned),
            message: error.message,
            fail_class,
            retryable,
        }
    }

    /// The failure class reported for this error.
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Exited { .. }
            | Error::Timeout { .. }
            | Error::Spawn { .. }
            | Error::Unavailable { .. } => FailClass::Health,
            Error::Refused { fail_class, .. } => *fail_class,
            Error::Malformed { .. } => FailClass::Contract,
            Error::Input(_) => FailClass::Input,
        }
    }

    /// Whether trying again later may succeed.
    pub fn retryable(&self) -> bool {
        match self {
            Error::Refused { retryable, .. } => *retryable,
            Error::Spawn { .. } => false,
            other => other.fail_class() == FailClass::Health,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_reply_keeps_its_class_retryable_flag_and_detail() {
        let reply = |data: serde_json::Value| crate::jsonrpc::ErrorObject {
            code: -32012,
            message: "no".into(),
            data: Some(data),
        };
        // A classifier that knows -32012, as a protocol with codes of its own would.
        let classify = |code| match code {
            -32012 => FailClass::Policy,
            other => FailClass::of_json_rpc_code(other),
        };
        let error = Error::refused(
            Role::Provider,
            "evaluate",
            reply(serde_json::json!({"failClass": "health", "detail": "disk quota"})),
            classify,
        );
        let Error::Refused { detail, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(detail.as_deref(), Some("disk quota"));
        assert_eq!(error.fail_class(), FailClass::Health);
        assert!(
            error.retryable(),
            "a health failure is retryable unless it says otherwise"
        );
        let classed_by_code =
            Error::refused(Role::Host, "m", reply(serde_json::json!({})), classify);
        assert_eq!(classed_by_code.fail_class(), FailClass::Policy);
        assert!(!classed_by_code.retryable());
    }

    #[test]
    fn each_error_names_its_fail_class() {
        let exited = Error::Exited {
            role: Role::Host,
            status: ExitStatus::Code(3),
            stderr_tail: "boom\n".into(),
        };
        assert_eq!(exited.fail_class(), FailClass::Health);
        assert_eq!(
            exited.to_string(),
            "host exited with status 3; stderr: boom"
        );
        let refused = Error::Refused {
            role: Role::Provider,
            method: "status".into(),
            code: -32012,
            message: "no".into(),
            detail: None,
            fail_class: FailClass::Policy,
            retryable: false,
        };
        assert_eq!(refused.fail_class(), FailClass::Policy);
        assert!(
            refused.to_string().starts_with("provider refused"),
            "{refused}"
        );
        assert_eq!(
            Error::Input("bad path".into()).fail_class(),
            FailClass::Input
        );
    }

    #[test]
    fn a_host_that_cannot_be_run_is_not_retryable_and_says_what_to_do() {
        let spawn = Error::Spawn {
            role: Role::Host,
            program: "asp".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(spawn.fail_class(), FailClass::Health);
        assert!(!spawn.retryable());
        let text = spawn.to_string();
        assert!(text.contains("--host-command"), "{text}");
        assert!(text.contains("ASP_BRIDGE_HOST_COMMAND"), "{text}");
    }

    #[test]
    fn a_provider_that_cannot_be_run_is_named_as_a_provider_without_the_host_hint() {
        let spawn = Error::Spawn {
            role: Role::Provider,
            program: "/opt/missing".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        let text = spawn.to_string();
        assert!(
            text.starts_with("could not start provider `/opt/missing`"),
            "{text}"
        );
        assert!(!text.contains("--host-command"), "{text}");
        assert!(text.contains("host configuration"), "{text}");
    }

    #[test]
    fn an_unavailable_peer_is_named_by_its_role() {
        let hung = Error::Unavailable {
            role: Role::Provider,
            why: "it missed 3 deadlines in a row".into(),
        };
        assert_eq!(
            hung.to_string(),
            "provider unavailable: it missed 3 deadlines in a row"
        );
        assert_eq!(hung.fail_class(), FailClass::Health);
        assert!(hung.retryable());
    }

    #[test]
    fn json_rpc_codes_map_to_classes_and_wire_classes_parse() {
        assert_eq!(
            FailClass::of_json_rpc_code(jsonrpc::INVALID_PARAMS),
            FailClass::Input
        );
        assert_eq!(
            FailClass::of_json_rpc_code(jsonrpc::METHOD_NOT_FOUND),
            FailClass::Contract
        );
        assert_eq!(
            FailClass::of_json_rpc_code(jsonrpc::INTERNAL_ERROR),
            FailClass::Health
        );
        assert_eq!(FailClass::parse("policy"), Some(FailClass::Policy));
        assert_eq!(FailClass::parse("fatal"), None);
    }
}
