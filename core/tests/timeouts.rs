//! Request timeouts on tokio's paused clock: the default 60 s fires exactly, sends one
//! `notifications/cancelled` and frees the entry; progress restarts the clock; the 10-minute
//! cap holds despite progress; a per-call timeout overrides the default.

mod common;

use std::time::Duration;

use common::*;
use oxmcp::{Error, session::RequestOptions};
use serde_json::json;
use tokio::time::Instant;

#[tokio::test(start_paused = true)]
async fn the_default_timeout_fires_at_sixty_seconds_and_cancels_the_request() {
    let (probe, _server, pair) = test_pair(client_options()).await;
    let started = Instant::now();
    let result = pair
        .client
        .call_tool("sleep", json!({"ms": 3_600_000}))
        .await;
    let elapsed = started.elapsed();
    match result {
        Err(Error::Timeout { method, after }) => {
            assert_eq!(method, "tools/call");
            assert_eq!(after, Duration::from_secs(60));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(elapsed, Duration::from_secs(60));
    assert_eq!(pair.client.session().pending(), 0);
    // The server heard about it exactly once and stopped the handler.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let cancels = pair
        .wire
        .sent_with_method(Side::Client, "notifications/cancelled")
        .len();
    assert_eq!(cancels, 1);
    assert!(
        probe.events().iter().any(|e| e.starts_with("cancelled:")),
        "{:?}",
        probe.events()
    );
    pair.finish().await;
}

#[tokio::test(start_paused = true)]
async fn progress_restarts_the_clock() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    let started = Instant::now();
    // Five ticks 40 s apart: 200 s in all, never 60 s of silence.
    let r = pair
        .call("tick", json!({"interval_ms": 40_000, "steps": 5}))
        .await;
    assert_eq!(r.text_content(), "ticked 5");
    assert_eq!(started.elapsed(), Duration::from_secs(200));
    pair.finish().await;
}

#[tokio::test(start_paused = true)]
async fn without_reset_progress_does_not_extend() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    let options = RequestOptions {
        reset_timeout_on_progress: false,
        ..Default::default()
    };
    let result = pair
        .client
        .call_tool_with("tick", json!({"interval_ms": 40_000, "steps": 5}), options)
        .await;
    assert!(
        matches!(result, Err(Error::Timeout { after, .. }) if after == Duration::from_secs(60)),
        "{result:?}"
    );
    pair.finish().await;
}

#[tokio::test(start_paused = true)]
async fn the_total_cap_holds_despite_progress() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    let started = Instant::now();
    // Progress every 30 s forever (well, for 100 steps): only the 10-minute cap stops it.
    let result = pair
        .client
        .call_tool("tick", json!({"interval_ms": 30_000, "steps": 100}))
        .await;
    assert!(matches!(result, Err(Error::Timeout { .. })), "{result:?}");
    assert_eq!(started.elapsed(), Duration::from_secs(600));
    // Progress arriving after the cap does not revive anything.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(pair.client.session().pending(), 0);
    pair.finish().await;
}

#[tokio::test(start_paused = true)]
async fn a_per_call_timeout_overrides_the_default() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    let started = Instant::now();
    let options = RequestOptions::with_timeout(Duration::from_millis(1500));
    let result = pair
        .client
        .call_tool_with("sleep", json!({"ms": 10_000}), options)
        .await;
    assert!(matches!(result, Err(Error::Timeout { .. })), "{result:?}");
    assert_eq!(started.elapsed(), Duration::from_millis(1500));
    // A call that fits in its timeout completes.
    let r = pair
        .client
        .call_tool_with(
            "sleep",
            json!({"ms": 500}),
            RequestOptions::with_timeout(Duration::from_secs(1)),
        )
        .await
        .unwrap();
    assert_eq!(r.text_content(), "slept 500");
    pair.finish().await;
}
