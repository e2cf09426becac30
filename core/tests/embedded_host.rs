//! A session run by a host's own event loop (`oxmcp::embed`): the host thread reads the pipe,
//! the session's driver and writer run on it, and handlers that are ready at once are answered
//! there, with no tokio thread in between. Over real pipes and a real child process, driven by
//! a `poll(2)` loop (tests/common/host.rs) as Node's and asyncio's loops drive the bindings.

mod common;

use std::{
    io::{BufRead, BufReader, Write},
    os::fd::{FromRawFd, OwnedFd},
    sync::{Arc, Mutex, mpsc},
    time::Duration,
};

use common::host::{PollHost, watch};
use oxmcp::{
    Error, ErrorKind,
    client::{Client, ClientOptions},
    embed::Spawner,
    protocol::{CallToolResult, Tool},
    server::Server,
    session::RequestOptions,
    transport::{
        child::{ChildCommand, ChildTransport},
        stdio::StdioTransport,
    },
};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-element array with fresh descriptors (checked).
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// A server whose `where` tool says which thread ran it, and whose `later` tool waits for a
/// tokio timer before answering (so it is not ready at its first poll).
fn server() -> Server {
    let server = Server::builder("hosted", "1.0.0").build();
    let object = json!({"type": "object"});
    server
        .add_tool(
            Tool::new("where", "", object.clone()),
            |_args: Value, _ctx| async move {
                Ok(CallToolResult::text(format!(
                    "{:?}",
                    std::thread::current().id()
                )))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("later", "", object),
            |_args: Value, _ctx| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(CallToolResult::text(format!(
                    "{:?}",
                    std::thread::current().id()
                )))
            },
        )
        .unwrap();
    server
}

/// The raw peer on the other ends of the pipes.
struct Peer {
    to_server: std::fs::File,
    from_server: BufReader<std::fs::File>,
}

impl Peer {
    fn send(&mut self, line: &str) {
        self.to_server.write_all(line.as_bytes()).unwrap();
        self.to_server.write_all(b"\n").unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.from_server.read_line(&mut line).unwrap();
        assert!(n > 0, "the server closed its output");
        serde_json::from_str(&line).unwrap()
    }

    fn call(&mut self, id: u64, tool: &str) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": {}}})
            .to_string(),
        );
        self.recv()
    }

    fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string(),
        );
        assert_eq!(self.recv()["result"]["protocolVersion"], "2025-11-25");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}

/// Serves `server` on the host thread over fresh pipes (input capped at `max`); returns the
/// peer, the host thread's id, and a receiver told when the session has closed.
fn serve_hosted(
    host: &PollHost,
    server: Server,
    max: usize,
) -> (Peer, String, mpsc::Receiver<Option<Error>>) {
    let (server_in, peer_out) = pipe();
    let (peer_in, server_out) = pipe();
    let (ready_tx, ready_rx) = mpsc::channel();
    let (closed_tx, closed_rx) = mpsc::channel();
    host.run(move |host| {
        let (transport, feeder) = StdioTransport::from_fds(server_in, server_out)
            .max_message_bytes(max)
            .hosted(host);
        watch(feeder);
        let session = server.serve_on(transport, Spawner::Host(host.clone()));
        host.spawn(async move {
            let _ = closed_tx.send(session.closed().await);
        });
        ready_tx
            .send(format!("{:?}", std::thread::current().id()))
            .unwrap();
    });
    let host_thread = ready_rx.recv().unwrap();
    let peer = Peer {
        to_server: std::fs::File::from(peer_out),
        from_server: BufReader::new(std::fs::File::from(peer_in)),
    };
    (peer, host_thread, closed_rx)
}

/// The session closed because the input ended, not because reading or writing failed.
fn assert_clean_close(closed: &mpsc::Receiver<Option<Error>>) {
    let reason = closed.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        reason
            .as_ref()
            .is_none_or(|e| e.kind() == ErrorKind::ConnectionClosed),
        "{reason:?}"
    );
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap()
}

#[test]
fn a_ready_handler_is_answered_on_the_host_thread_and_a_waiting_one_still_answers() {
    let rt = runtime();
    let host = PollHost::start(rt.handle().clone());
    let (mut peer, host_thread, closed) = serve_hosted(&host, server(), 4 << 20);
    peer.initialize();
    assert_eq!(text(&peer.call(1, "where")), host_thread);
    // Not ready at its first poll: it becomes a task of the host loop, woken by a tokio timer.
    assert_eq!(text(&peer.call(2, "later")), host_thread);
    // Many pipelined requests, written in one go: each answered once, in order of ids.
    let mut burst = String::new();
    for id in 10..2010 {
        burst.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
        ));
    }
    peer.to_server.write_all(burst.as_bytes()).unwrap();
    let ids: Vec<u64> = (10..2010)
        .map(|_| peer.recv()["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, (10..2010).collect::<Vec<_>>());
    // End of input: the session closes cleanly.
    drop(peer.to_server);
    assert_clean_close(&closed);
    host.stop();
}

#[test]
fn bad_input_on_a_hosted_pipe_is_answered_or_dropped_and_the_next_message_read() {
    let rt = runtime();
    let host = PollHost::start(rt.handle().clone());
    let (mut peer, _, closed) = serve_hosted(&host, server(), 1024);
    peer.initialize();
    // Not JSON: dropped (logged), never answered.
    peer.send("this is not json {");
    // A line over the cap, in several writes: skipped without being buffered.
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}",
        "y".repeat(100_000)
    );
    for piece in long.as_bytes().chunks(7_000) {
        peer.to_server.write_all(piece).unwrap();
    }
    peer.to_server.write_all(b"\n").unwrap();
    // Valid JSON-RPC with a wrong shape: answered with an error naming the problem.
    peer.send(r#"{"jsonrpc":"2.0","id":6,"method":7}"#);
    let error = peer.recv();
    assert_eq!(error["id"], 6);
    assert_eq!(error["error"]["code"], -32600);
    // And the session is still there.
    assert!(text(&peer.call(7, "where")).starts_with("ThreadId"));
    // A last line cut off by end of input is still read as a message.
    peer.to_server
        .write_all(br#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#)
        .unwrap();
    let Peer {
        to_server,
        from_server,
    } = peer;
    drop(to_server);
    let mut peer_rest = from_server;
    let mut line = String::new();
    peer_rest.read_line(&mut line).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["id"], 8);
    assert_clean_close(&closed);
    host.stop();
}

/// A hosted client of a real child process: `mcp_fixture server`.
fn fixture() -> ChildCommand {
    ChildCommand::new(common::example_bin("mcp_fixture")).arg("server")
}

/// Runs `body` with a client connected to the fixture on the host thread.
fn with_hosted_client<F, Fut>(host: &PollHost, body: F) -> Result<Value, Error>
where
    F: FnOnce(Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
{
    let (done_tx, done_rx) = mpsc::channel();
    let loop_ = host.host().clone();
    host.run(move |_| {
        let spawner = Spawner::Host(loop_.clone());
        let for_child = loop_.clone();
        loop_.spawn(async move {
            let connected = async {
                let child = ChildTransport::spawn(fixture()).await?;
                let (child, feeder) = child.hosted(&for_child)?;
                watch(feeder);
                let mut options = ClientOptions::new("hosted-client", "1.0.0");
                options.spawner = spawner;
                Client::connect(child, options).await
            };
            let outcome = match connected.await {
                Ok(client) => body(client).await,
                Err(e) => Err(e),
            };
            let _ = done_tx.send(outcome);
        });
    });
    done_rx.recv_timeout(Duration::from_secs(30)).unwrap()
}

#[test]
fn a_hosted_client_calls_a_child_and_closes_it() {
    let rt = runtime();
    let host = PollHost::start(rt.handle().clone());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let out = with_hosted_client(&host, move |client| async move {
        let mut texts = Vec::new();
        for i in 0..50 {
            let result = client
                .call_tool("echo", json!({"text": format!("hi {i}")}))
                .await?;
            texts.push(json!(result.content[0]));
            record
                .lock()
                .unwrap()
                .push(format!("{:?}", std::thread::current().id()));
        }
        // The ladder closes stdin; the fixture exits on EOF.
        client.close().await;
        Ok(json!(texts))
    })
    .unwrap();
    assert_eq!(out[49]["text"], "hi 49");
    let threads = seen.lock().unwrap().clone();
    assert!(threads.windows(2).all(|w| w[0] == w[1]), "{threads:?}");
    host.stop();
}

#[test]
fn a_hosted_client_sees_its_child_die_mid_call_and_times_out_a_silent_one() {
    let rt = runtime();
    let host = PollHost::start(rt.handle().clone());
    // The child exits in the middle of the call: the call fails at once with its status and
    // the stderr it wrote.
    let died = with_hosted_client(&host, |client| async move {
        client
            .call_tool("die", json!({"code": 3, "message": "boom on stderr"}))
            .await
            .map(|r| json!(r.content))
    })
    .unwrap_err();
    assert_eq!(died.kind(), ErrorKind::ConnectionClosed, "{died}");
    assert!(died.to_string().contains("exit"), "{died}");
    // A call that never gets an answer times out by a tokio timer, which wakes the host loop.
    let silent = with_hosted_client(&host, |client| async move {
        let options = RequestOptions {
            timeout: Some(Duration::from_millis(200)),
            ..Default::default()
        };
        let out = client
            .call_tool_with("hang", json!({}), options)
            .await
            .map(|r| json!(r.content));
        client.close().await;
        out
    })
    .unwrap_err();
    assert_eq!(silent.kind(), ErrorKind::Timeout, "{silent}");
    host.stop();
}
