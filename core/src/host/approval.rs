//! Asking before a tool runs: an agent run with an approval callback shows it each tool call
//! the model makes (server, tool, arguments, the tool's annotations), and the callback lets
//! it run, refuses it, or runs it with edited arguments. A refused call never reaches the
//! server; the model gets an error result saying the user declined it.
//!
//! Without a callback every call runs, as before. With one, a tool the server marks
//! `readOnlyHint: true`, or that the config lists in `alwaysAllow` / `autoApprove`, skips it.
//! (Annotations are the server's word: they are used only to ask *less* for a read-only
//! tool, as Claude Desktop and VS Code do; a tool that says nothing is asked about.)

use std::{future::Future, pin::Pin, sync::Arc};

use serde::Serialize;
use serde_json::Value;

use super::ServerSpec;
use crate::{
    Result,
    protocol::{CallToolResult, Tool, ToolAnnotations},
};

/// One tool call waiting for approval.
#[derive(Clone, Debug, Serialize)]
pub struct ApprovalRequest {
    /// The server it goes to.
    pub server: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The arguments the model gave (a JSON object).
    pub arguments: Value,
    /// The tool's annotations as the server listed them, if any.
    pub annotations: Option<ToolAnnotations>,
}

/// What the callback decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Approval {
    /// Run it as asked.
    Allow,
    /// Do not run it; the reason, if any, goes to the model.
    Deny(Option<String>),
    /// Run it with these arguments instead (a JSON object).
    Edit(Value),
}

impl Approval {
    /// A callback's answer as the bindings pass it on: `true` allows; `false`, a reason string
    /// or nothing at all (a callback that forgot to return) denies; an object runs the call
    /// with those arguments. Anything else is the callback's mistake, named.
    pub fn from_value(answer: Value) -> Result<Self> {
        match answer {
            Value::Bool(true) => Ok(Self::Allow),
            Value::Bool(false) | Value::Null => Ok(Self::Deny(None)),
            Value::String(reason) => Ok(Self::Deny(Some(reason))),
            Value::Object(arguments) => Ok(Self::Edit(Value::Object(arguments))),
            other => Err(crate::Error::InvalidArgument(format!(
                "an approval is true, false, a reason (a string) or the edited arguments (an \
                 object), not `{}`",
                crate::sanitize::line(&other.to_string())
            ))),
        }
    }
}

/// A boxed approval.
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = Result<Approval>> + Send + 'a>>;

/// Decides whether a tool call runs.
pub trait Approver: Send + Sync {
    /// Decides one call.
    fn approve(&self, request: ApprovalRequest) -> ApprovalFuture<'_>;
}

impl<F, Fut> Approver for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Approval>> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest) -> ApprovalFuture<'_> {
        Box::pin(self(request))
    }
}

/// An approval callback in [`AgentOptions`](super::AgentOptions).
#[derive(Clone)]
pub struct ApprovalHook(pub Arc<dyn Approver>);

impl std::fmt::Debug for ApprovalHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApprovalHook(..)")
    }
}

/// Whether a call of `tool` on the server of `spec` must be approved: not when the server
/// marks it read-only, nor when the config always allows it.
pub(crate) fn needs_approval(spec: &ServerSpec, tool: &str, definition: Option<&Tool>) -> bool {
    let read_only = definition
        .and_then(|t| t.annotations.as_ref())
        .and_then(|a| a.read_only_hint)
        == Some(true);
    !read_only && !spec.always_allow.iter().any(|t| t == tool)
}

/// What the model gets for a call the user declined.
pub(crate) fn declined(server: &str, tool: &str, reason: Option<&str>) -> CallToolResult {
    let reason = reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    CallToolResult::error(format!(
        "The user declined the call to `{tool}` on server `{server}`{reason}. It was not run."
    ))
}

/// What the gate let through: the arguments to send, or the result the model gets instead.
pub(crate) type Gated = std::result::Result<Value, CallToolResult>;

impl super::Host {
    /// Puts one routed call through the approval callback, unless it skips approval.
    pub(crate) async fn gate(
        &self,
        hook: &ApprovalHook,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Gated {
        let Ok(slot) = self.slot(server) else {
            return Ok(arguments);
        };
        let definition = slot
            .conn
            .lock()
            .await
            .tools
            .as_ref()
            .and_then(|tools| tools.iter().find(|t| t.name == tool).cloned());
        if !needs_approval(&slot.spec, tool, definition.as_ref()) {
            return Ok(arguments);
        }
        let request = ApprovalRequest {
            server: server.to_owned(),
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            annotations: definition.and_then(|t| t.annotations),
        };
        match hook.0.approve(request).await {
            Ok(Approval::Allow) => Ok(arguments),
            Ok(Approval::Deny(reason)) => Err(declined(server, tool, reason.as_deref())),
            Ok(Approval::Edit(edited)) if edited.is_object() => Ok(edited),
            Ok(Approval::Edit(other)) => Err(CallToolResult::error(format!(
                "The approval of `{tool}` on server `{server}` gave arguments that are not an \
                 object (`{}`); the call was not run.",
                crate::sanitize::line(&other.to_string())
            ))),
            Err(e) => Err(CallToolResult::error(format!(
                "Asking for approval of `{tool}` on server `{server}` failed ({e}); the call \
                 was not run."
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_read_as_the_bindings_document_them() {
        assert_eq!(
            Approval::from_value(json!(true)).ok(),
            Some(Approval::Allow)
        );
        assert_eq!(
            Approval::from_value(json!(false)).ok(),
            Some(Approval::Deny(None))
        );
        assert_eq!(
            Approval::from_value(Value::Null).ok(),
            Some(Approval::Deny(None))
        );
        assert_eq!(
            Approval::from_value(json!("too risky")).ok(),
            Some(Approval::Deny(Some("too risky".into())))
        );
        assert_eq!(
            Approval::from_value(json!({"path": "/tmp/x"})).ok(),
            Some(Approval::Edit(json!({"path": "/tmp/x"})))
        );
        for bad in [json!(1), json!([true]), json!(0.5)] {
            let err = Approval::from_value(bad).err().map(|e| e.kind());
            assert_eq!(err, Some(crate::ErrorKind::InvalidArgument));
        }
    }

    #[test]
    fn a_declined_call_says_so_and_carries_the_reason() {
        let text = |r: &CallToolResult| serde_json::to_string(r).unwrap_or_default();
        let plain = declined("fs", "rm", None);
        assert_eq!(plain.is_error, Some(true));
        assert!(text(&plain).contains("The user declined the call to `rm` on server `fs`. It"));
        let why = declined("fs", "rm", Some("  not today "));
        assert!(text(&why).contains("`fs`: not today. It was not run."));
    }
}
