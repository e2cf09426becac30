//! A revision pinned in the config (`protocolVersion`, `era`) skips the `server/discover`
//! probe, which an old server ignores (costing the probe's timeout at every start); and a
//! server the host already spoke to is not probed again when it restarts.

use oxmcp::{
    ErrorKind,
    host::{Config, HostOptions},
};
use serde_json::json;

use super::OldServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_revision_or_era_skips_the_probe() {
    for (extra, spoken) in [
        (json!({"protocolVersion": "2025-06-18"}), "2025-06-18"),
        (json!({"protocolVersion": "2024-11-05"}), "2024-11-05"),
        (json!({"era": "handshake"}), "2025-11-25"),
    ] {
        let old = OldServer::new("pinned");
        // The default probe timeout (10 s): were the probe sent, this start would wait for it.
        let host = old.host_with(extra.clone(), HostOptions::default()).await;
        let status = host.status().await;
        assert_eq!(status[0].state, "connected", "{extra}: {status:?}");
        assert_eq!(status[0].protocol_version.as_deref(), Some(spoken));
        let messages = old.messages();
        assert_eq!(messages[0].1, "initialize", "{extra}: {messages:?}");
        assert_eq!(messages[0].2["protocolVersion"], spoken);
        assert!(
            !old.methods().iter().any(|m| m == "server/discover"),
            "{extra}: {messages:?}"
        );
        host.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_speaks_what_it_spoke_without_a_new_probe() {
    let old = OldServer::new("remembered");
    let host = old.host(json!({})).await;
    assert_eq!(host.status().await[0].state, "connected");
    // Probed first (and the probe cancelled when it timed out), then the handshake.
    let first: Vec<String> = old
        .methods()
        .into_iter()
        .filter(|m| !m.starts_with("notifications/"))
        .collect();
    assert_eq!(first[..2], ["server/discover", "initialize"], "{first:?}");

    // The server dies in the middle of a call; the next call starts it again.
    assert!(host.call_tool("old", "crash", json!({})).await.is_err());
    let r = host.call_tool("old", "peek", json!({})).await.unwrap();
    assert_eq!(r.is_error, None);
    assert_eq!(host.status().await[0].restarts, 1);
    let messages = old.messages();
    let second_pid = messages.last().unwrap().0;
    assert_ne!(second_pid, messages[0].0, "a new process");
    let second: Vec<(&str, &serde_json::Value)> = messages
        .iter()
        .filter(|(pid, _, _)| *pid == second_pid)
        .map(|(_, m, p)| (m.as_str(), p))
        .collect();
    assert_eq!(second[0].0, "initialize", "{second:?}");
    assert_eq!(second[0].1["protocolVersion"], "2025-11-25");
    assert!(
        !second.iter().any(|(m, _)| *m == "server/discover"),
        "{second:?}"
    );
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_stateless_era_against_an_old_server_fails_clearly_and_bad_pins_are_config_errors()
{
    let old = OldServer::new("pinned-stateless");
    // Pinned to the stateless era, there is no fallback to wait for: the server's own
    // `timeout` (1 s here) bounds the start.
    let host = old.host(json!({"era": "stateless", "timeout": 1})).await;
    let status = host.status().await;
    assert_eq!(status[0].state, "failed", "{status:?}");
    let error = status[0].error.as_deref().unwrap_or_default();
    assert!(error.contains("timed out after 1s"), "{error}");
    // It was not quietly spoken to in the old way.
    assert!(
        !old.methods().iter().any(|m| m == "initialize"),
        "{:?}",
        old.methods()
    );
    host.close().await;

    for (extra, field) in [
        (json!({"protocolVersion": "2023-01-01"}), "protocolVersion"),
        (json!({"protocolVersion": 20250618}), "protocolVersion"),
        (json!({"era": "modern"}), "era"),
        (
            json!({"era": "handshake", "protocolVersion": "2025-06-18"}),
            "protocolVersion",
        ),
    ] {
        let e = Config::from_value(&old.config(extra.clone()), &|_| None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{extra}");
        assert!(e.to_string().contains(field), "{extra}: {e}");
    }
}
