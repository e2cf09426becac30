//! An agent run with an approval callback: every call of a tool that is not read-only nor
//! always allowed is shown to it first; a denied call never reaches the server and the model
//! is told the user declined it; edited arguments are what the server gets.

use std::sync::{Arc, Mutex};

use oxmcp::{
    ErrorKind,
    host::{AgentOptions, Approval, ApprovalHook, ApprovalRequest, ModelRequest},
    schema::Provider,
};
use serde_json::{Value, json};

use super::OldServer;

/// A model that calls each of `calls` (name, arguments) in its first turn, then answers.
fn model(
    calls: Vec<(&'static str, Value)>,
) -> impl Fn(ModelRequest) -> futures::future::Ready<oxmcp::Result<Value>> {
    move |req: ModelRequest| {
        futures::future::ready(Ok(if req.step == 1 {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"id": format!("c{i}"), "type": "function",
                           "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect();
            json!({"role": "assistant", "content": null, "tool_calls": calls})
        } else {
            json!({"role": "assistant", "content": "done"})
        }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_callback_allows_denies_and_edits_and_is_skipped_where_it_should_be() {
    let old = OldServer::new("approval");
    let host = old.host(json!({"alwaysAllow": ["secret"]})).await;
    let asked: Arc<Mutex<Vec<ApprovalRequest>>> = Arc::default();
    let seen = asked.clone();
    let approver = move |request: ApprovalRequest| {
        seen.lock().unwrap().push(request.clone());
        async move {
            Ok(match request.tool.as_str() {
                "wipe" => Approval::Deny(Some("not my files".into())),
                "write" if request.arguments["path"] == "/etc/passwd" => Approval::Deny(None),
                "write" => Approval::Edit(json!({"path": "/tmp/safe"})),
                _ => Approval::Allow,
            })
        }
    };
    let mut options = AgentOptions::new(Provider::OpenAi);
    options.approve = Some(ApprovalHook(Arc::new(approver)));
    let model = model(vec![
        ("old__peek", json!({"path": "/a"})),
        ("old__wipe", json!({"path": "/"})),
        ("old__write", json!({"path": "/home/me/notes"})),
        ("old__write", json!({"path": "/etc/passwd"})),
        ("old__secret", json!({})),
        ("old__snake", json!({"path": "/b"})),
    ]);
    let t = host.run_agent(&model, vec![], &options).await.unwrap();

    // Asked about wipe, both writes and snake (no annotations); not about the read-only peek
    // nor the always-allowed secret. Each request carries the tool's annotations.
    let asked = asked.lock().unwrap().clone();
    let tools: Vec<&str> = asked.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(tools.len(), 4, "{tools:?}");
    for t in ["wipe", "write", "snake"] {
        assert!(tools.contains(&t), "{tools:?}");
    }
    let wipe = asked.iter().find(|r| r.tool == "wipe").unwrap();
    assert_eq!(wipe.server, "old");
    assert_eq!(wipe.arguments, json!({"path": "/"}));
    assert_eq!(
        wipe.annotations.as_ref().and_then(|a| a.destructive_hint),
        Some(true)
    );

    // The server got peek, the edited write, secret and snake; never wipe nor the denied write.
    let mut called = old.calls();
    called.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        called,
        [
            ("peek".to_owned(), json!({"path": "/a"})),
            ("secret".to_owned(), json!({})),
            ("snake".to_owned(), json!({"path": "/b"})),
            ("write".to_owned(), json!({"path": "/tmp/safe"})),
        ]
    );
    // The model was told, with the reason when there was one.
    let record = |tool: &str, path: &str| {
        t.calls
            .iter()
            .find(|c| c.tool.as_deref() == Some(tool) && c.arguments["path"] == path)
            .unwrap_or_else(|| panic!("{tool} {path}: {:#?}", t.calls))
    };
    let wiped = record("wipe", "/");
    assert!(wiped.is_error);
    assert!(wiped.text.contains("The user declined") && wiped.text.contains("not my files"));
    let passwd = record("write", "/etc/passwd");
    assert!(
        passwd.is_error && passwd.text.contains("declined"),
        "{passwd:?}"
    );
    assert!(!record("peek", "/a").is_error);
    assert_eq!(t.final_text, "done");
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_callback_every_call_runs_and_a_failing_callback_runs_none() {
    let old = OldServer::new("approval-none");
    let host = old.host(json!({})).await;
    let calls = vec![
        ("old__wipe", json!({"path": "/x"})),
        ("old__write", json!({"path": "/y"})),
    ];
    let t = host
        .run_agent(
            &model(calls.clone()),
            vec![],
            &AgentOptions::new(Provider::OpenAi),
        )
        .await
        .unwrap();
    assert!(t.calls.iter().all(|c| !c.is_error), "{:#?}", t.calls);
    assert_eq!(old.calls().len(), 2);

    // A callback that fails, or answers with edited arguments that are not an object: the
    // call does not run, and the model is told why.
    for answer in [
        Err(oxmcp::Error::InvalidArgument("the dialog crashed".into())),
        Ok(Approval::Edit(json!(["not", "an", "object"]))),
    ] {
        let mut options = AgentOptions::new(Provider::OpenAi);
        let answer = Arc::new(answer);
        options.approve = Some(ApprovalHook(Arc::new(move |_req: ApprovalRequest| {
            let answer = answer.clone();
            async move {
                match &*answer {
                    Ok(a) => Ok(a.clone()),
                    Err(e) => Err(e.clone()),
                }
            }
        })));
        let t = host
            .run_agent(&model(calls.clone()), vec![], &options)
            .await
            .unwrap();
        assert!(
            t.calls
                .iter()
                .all(|c| c.is_error && c.text.contains("was not run")),
            "{:#?}",
            t.calls
        );
        assert_eq!(old.calls().len(), 2, "nothing more reached the server");
    }
    // The callback's kinds are the core's.
    assert_eq!(
        oxmcp::host::Approval::from_value(json!(3))
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    host.close().await;
}
