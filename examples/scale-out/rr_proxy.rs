//! A round-robin TCP proxy for trying scale-out on one machine: each accepted connection goes
//! to the next backend in turn, so a client that opens a connection per request (or a pool
//! of them) spreads its requests over every replica, the way a load balancer without sticky
//! sessions does.
//!
//! `cargo run --example rr_proxy -- --port 8080 --backend 127.0.0.1:3001 --backend 127.0.0.1:3002`
//! prints `proxy listening on 127.0.0.1:PORT` on stderr once it listens (`--port 0` picks a
//! free port), then one line per connection saying which backend it went to. A backend that
//! refuses the connection is skipped for that connection.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use tokio::net::{TcpListener, TcpStream};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut port = 8080u16;
    let mut backends = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--port" => port = it.next().ok_or("--port needs a value")?.parse()?,
            "--backend" => backends.push(it.next().ok_or("--backend needs HOST:PORT")?.clone()),
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    if backends.is_empty() {
        return Err("give at least one --backend HOST:PORT".into());
    }
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("proxy listening on {}", listener.local_addr()?);
    let backends = Arc::new(backends);
    let next = Arc::new(AtomicUsize::new(0));
    loop {
        let (client, _) = listener.accept().await?;
        let _ = client.set_nodelay(true);
        let backends = backends.clone();
        let first = next.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            // The next backend in turn; a dead one is skipped so the client still gets served.
            for k in 0..backends.len() {
                let backend = &backends[(first + k) % backends.len()];
                if let Ok(mut upstream) = TcpStream::connect(backend).await {
                    eprintln!("proxy: connection {first} -> {backend}");
                    let _ = upstream.set_nodelay(true);
                    let mut client = client;
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    return;
                }
            }
        });
    }
}
