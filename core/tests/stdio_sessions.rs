//! The protocol over real child processes: our client spawns the protocol test server (and
//! the weather example) and runs both eras, every handshake revision, an unsupported one,
//! cancellation both ways, progress, timeouts, 1,000 concurrent calls and slow-vs-fast
//! handlers through real pipes. Every frame is validated against the official schema.

mod common;

use std::time::Duration;

use common::{concurrent::*, *};
use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode},
    session::RequestOptions,
    transport::{
        Transport,
        child::{ChildCommand, ChildTransport, StderrHandle},
        tap::tap,
    },
};
use serde_json::json;

struct Spawned {
    client: Client,
    stderr: StderrHandle,
    wire: Wire,
}

async fn spawn(args: &[&str], options: ClientOptions) -> Result<Spawned, Error> {
    let child =
        ChildTransport::spawn(ChildCommand::new(example_bin("protocol_server")).args(args)).await?;
    let stderr = child.stderr();
    let wire = Wire::new();
    let client =
        Client::connect(tap(child.into_link(), wire.observer(Side::Client)), options).await?;
    Ok(Spawned {
        client,
        stderr,
        wire,
    })
}

impl Spawned {
    async fn wait_for_stderr(&self, needle: &str) {
        for _ in 0..500 {
            if self.stderr.tail(1 << 20).contains(needle) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "`{needle}` never appeared on the server's stderr:\n{}",
            self.stderr.tail(4096)
        );
    }

    async fn finish(self) {
        self.client.close().await;
        self.wire.assert_valid();
    }
}

#[tokio::test]
async fn both_eras_and_every_revision_over_stdio() {
    let mut modes: Vec<ProtocolMode> = ProtocolVersion::handshake_versions()
        .map(ProtocolMode::Handshake)
        .collect();
    modes.push(ProtocolMode::Auto);
    for mode in modes {
        let s = spawn(&[], client_options().protocol(mode.clone()))
            .await
            .unwrap();
        let expected = match mode {
            ProtocolMode::Handshake(v) => v,
            _ => ProtocolVersion::V2026_07_28,
        };
        assert_eq!(s.client.protocol_version(), expected);
        let tools = s.client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        assert_echo(&s.client, expected.as_str()).await;
        s.client.ping().await.unwrap();
        s.finish().await;
    }
}

#[tokio::test]
async fn auto_mode_falls_back_against_a_handshake_only_process() {
    let s = spawn(&["--versions", "2025-03-26"], client_options())
        .await
        .unwrap();
    assert_eq!(s.client.protocol_version(), ProtocolVersion::V2025_03_26);
    s.finish().await;
}

#[tokio::test]
async fn an_unsupported_version_is_a_typed_error() {
    let mut options =
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25));
    options.accepted_versions = vec![ProtocolVersion::V2025_11_25];
    let e = spawn(&["--versions", "2024-11-05"], options)
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(&e, Error::UnsupportedProtocolVersion { requested, .. } if requested == "2024-11-05"),
        "{e:?}"
    );
    let e = spawn(
        &["--versions", "2025-06-18"],
        client_options().protocol(ProtocolMode::Stateless(ProtocolVersion::V2026_07_28)),
    )
    .await
    .err()
    .expect("refused");
    assert!(
        matches!(e, Error::UnsupportedProtocolVersion { .. }),
        "{e:?}"
    );
}

#[tokio::test]
async fn cancellation_crosses_the_pipe() {
    let s = spawn(&[], client_options()).await.unwrap();
    // Dropping the call: the server process sees its handler's token fire.
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        s.client.call_tool("wait_for_cancel", json!({})),
    )
    .await;
    assert!(dropped.is_err());
    s.wait_for_stderr("probe: token fired").await;
    s.wait_for_stderr("probe: dropped").await;
    // A cancellation token does the same and the call returns Cancelled.
    let token = tokio_util::sync::CancellationToken::new();
    let client = s.client.clone();
    let t = token.clone();
    let call = tokio::spawn(async move {
        client
            .call_tool_with(
                "sleep",
                json!({"ms": 60_000}),
                RequestOptions::default().cancel_with(t),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    token.cancel();
    assert!(matches!(call.await.unwrap(), Err(Error::Cancelled)));
    s.wait_for_stderr("probe: cancelled:").await;
    let cancels = s
        .wire
        .sent_with_method(Side::Client, "notifications/cancelled")
        .len();
    assert_eq!(cancels, 2);
    s.finish().await;
}

#[tokio::test]
async fn a_peer_cancel_reaches_the_server_handler() {
    let child = ChildTransport::spawn(ChildCommand::new(example_bin("protocol_server")))
        .await
        .unwrap();
    let stderr = child.stderr();
    let mut peer = RawPeer::over(child);
    peer.initialize("2025-11-25").await;
    let wait_for = |needle: &'static str| {
        let stderr = stderr.clone();
        async move {
            for _ in 0..500 {
                if stderr.tail(4096).contains(needle) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("`{needle}` not on stderr: {}", stderr.tail(4096));
        }
    };
    peer.send(json!({"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"wait_for_cancel","arguments":{}}})).await;
    wait_for("probe: started").await;
    peer.send(
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41}}),
    )
    .await;
    let r = peer
        .request(json!(42), "ping", serde_json::Value::Null)
        .await;
    assert_eq!(
        r["id"], 42,
        "no response for the cancelled request came first"
    );
    wait_for("probe: token fired").await;
    wait_for("probe: dropped").await;
    peer.close().await;
    peer.wire.assert_valid();
}

#[tokio::test]
async fn progress_and_timeouts_over_stdio() {
    let s = spawn(
        &[],
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
    )
    .await
    .unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let r = s
        .client
        .call_tool_with(
            "progress",
            json!({"steps": 5}),
            RequestOptions::default().on_progress(move |p| sink.lock().unwrap().push(p.progress)),
        )
        .await
        .unwrap();
    assert_eq!(r.text_content(), "done");
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    // A short timeout fails the call, tells the server, and the session carries on.
    let e = s
        .client
        .call_tool_with(
            "sleep",
            json!({"ms": 60_000}),
            RequestOptions::with_timeout(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
    s.wait_for_stderr("probe: cancelled:").await;
    // Progress keeps a call alive past its timeout.
    let r = s
        .client
        .call_tool_with(
            "tick",
            json!({"interval_ms": 150, "steps": 6}),
            RequestOptions::with_timeout(Duration::from_millis(400)),
        )
        .await
        .unwrap();
    assert_eq!(r.text_content(), "ticked 6");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_over_one_pipe() {
    let s = spawn(&[], client_options()).await.unwrap();
    echo_concurrently(&s.client, 1000).await;
    assert_eq!(s.client.session().pending(), 0);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_does_not_hold_up_fast_ones_over_stdio() {
    let s = spawn(&[], client_options()).await.unwrap();
    fast_calls_pass_a_slow_one(&s.client, 100).await.abort();
    s.finish().await;
}

#[tokio::test]
async fn the_weather_example_in_both_eras() {
    for mode in [
        ProtocolMode::Auto,
        ProtocolMode::Handshake(ProtocolVersion::V2025_06_18),
    ] {
        let child = ChildTransport::spawn(ChildCommand::new(example_bin("weather_server")))
            .await
            .unwrap();
        let wire = Wire::new();
        let client = Client::connect(
            tap(child.into_link(), wire.observer(Side::Client)),
            client_options().protocol(mode),
        )
        .await
        .unwrap();
        let r = client
            .call_tool("get_weather", json!({"city": "oslo"}))
            .await
            .unwrap();
        assert_eq!(r.structured_content.as_ref().unwrap()["city"], "Oslo");
        let r = client
            .call_tool("get_weather", json!({"city": "Atlantis"}))
            .await
            .unwrap();
        assert!(r.is_error());
        let r = client
            .call_tool("get_weather", json!({"town": "Oslo"}))
            .await
            .unwrap();
        assert!(
            r.is_error() && r.text_content().contains("Invalid arguments"),
            "{}",
            r.text_content()
        );
        client.close().await;
        wire.assert_valid();
    }
}
