//! The outer seam this host serves on its stdio: the Core profile's `host/status`,
//! `host/capabilities`, `host/evaluateChangeset`, plus `host/authority/status`; `host/queryInspect`
//! answers that inspect is unsupported; `host/requestEditPlan` and `host/applyProposal` are refused
//! (`policy`); `shutdown` stops the providers, `exit` ends the host.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use asp_wire::proto;
use rpc_peer::FailClass;
use rpc_peer::peer::{Answer, Handler, IncomingRequest, error_object, method_not_found};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::Notify;

use crate::evaluate;
use crate::host::Host;
use crate::outer_error::not_ready;
use crate::status;

pub(crate) struct Outer {
    pub(crate) host: Arc<Host>,
    /// Notified by `exit`.
    pub(crate) exit: Arc<Notify>,
    pub(crate) shutting_down: Arc<AtomicBool>,
}

impl Handler for Outer {
    fn request(&self, request: IncomingRequest) -> Answer {
        let host = self.host.clone();
        let shutting_down = self.shutting_down.clone();
        Box::pin(async move {
            let started = SystemTime::now();
            let method = request.method.as_str();
            if shutting_down.load(Ordering::Relaxed) && method != proto::SHUTDOWN {
                return Err(error_object(
                    asp_wire::code::HEALTH_NOT_READY,
                    "health_not_ready: the host is shutting down".into(),
                    FailClass::Health,
                    false,
                ));
            }
            let params: Value = request
                .params::<Option<Value>>()?
                .unwrap_or_else(|| Value::Object(Default::default()));
            let answer = match method {
                proto::STATUS
                | proto::CAPABILITIES
                | proto::AUTHORITY_STATUS
                | proto::QUERY_INSPECT => {
                    let snap = status::snapshot(&host).await.map_err(not_ready)?;
                    match method {
                        proto::STATUS => status::status(&host, &snap, &params, started),
                        proto::CAPABILITIES => {
                            status::capabilities_result(&host, &snap, &params, started)
                        }
                        proto::AUTHORITY_STATUS => {
                            status::authority_status(&host, &snap, &params, started)
                        }
                        _ => status::query_inspect(&host, &snap, &params, started),
                    }
                }
                proto::EVALUATE_CHANGESET => evaluate::evaluate(&host, params).await?,
                proto::REQUEST_EDIT_PLAN | proto::APPLY_PROPOSAL => {
                    return Err(error_object(
                        asp_wire::code::SCOPE_DENIED,
                        format!(
                            "scope_denied: {method} is refused: this embedded host is advisory and offers no edit plans and no apply"
                        ),
                        FailClass::Policy,
                        false,
                    ));
                }
                proto::SHUTDOWN => {
                    shutting_down.store(true, Ordering::Relaxed);
                    host.shutdown().await;
                    Value::Null
                }
                other => return Err(method_not_found(other)),
            };
            // Serialised once: the text is not parsed again to be checked.
            serde_json::value::to_raw_value(&answer).map_err(|e| {
                error_object(
                    rpc_peer::jsonrpc::INTERNAL_ERROR,
                    format!("internal error: {e}"),
                    FailClass::Health,
                    false,
                )
            })
        })
    }

    fn notification(&self, method: &str, _params: Option<Box<RawValue>>) {
        match method {
            proto::EXIT => self.exit.notify_one(),
            other => tracing::debug!(method = other, "notification ignored"),
        }
    }
}
