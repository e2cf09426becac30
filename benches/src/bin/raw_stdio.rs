//! The stdio limit: answers MCP lines with serde_json and nothing else, blocking std I/O,
//! flushing only when no more input is buffered. `--io pipe` uses tokio's non-blocking pipe
//! driver instead (the best an async runtime can do), for comparison.

use std::io::{BufRead, BufWriter, Write};

use oxmcp_bench::raw::answer;

fn main() {
    let pipe = std::env::args().any(|a| a == "pipe");
    if pipe {
        tokio_pipe();
        return;
    }
    // Our own buffer (larger than std's 8 KiB, which then reads straight into it), so that
    // "nothing more is buffered" can be asked before flushing.
    let mut input = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(16 * 1024);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some(out) = answer(&line) {
            if output.write_all(&out).is_err() || output.write_all(b"\n").is_err() {
                break;
            }
        }
        if input.buffer().is_empty() && output.flush().is_err() {
            break;
        }
    }
    let _ = output.flush();
}

fn tokio_pipe() {
    use std::os::fd::AsRawFd;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        // Reopen the pipes so O_NONBLOCK stays private to this process.
        let reopen = |fd: i32, write: bool| {
            std::fs::OpenOptions::new()
                .read(!write)
                .write(write)
                .open(format!("/proc/self/fd/{fd}"))
                .expect("reopen")
        };
        let rx = tokio::net::unix::pipe::Receiver::from_file(reopen(
            std::io::stdin().as_raw_fd(),
            false,
        ))
        .expect("stdin pipe");
        let mut tx =
            tokio::net::unix::pipe::Sender::from_file(reopen(std::io::stdout().as_raw_fd(), true))
                .expect("stdout pipe");
        let mut input = BufReader::with_capacity(64 * 1024, rx);
        let mut out = Vec::with_capacity(64 * 1024);
        let mut line = Vec::with_capacity(16 * 1024);
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if let Some(a) = answer(&line) {
                out.extend_from_slice(&a);
                out.push(b'\n');
            }
            if input.buffer().is_empty() && !out.is_empty() {
                if tx.write_all(&out).await.is_err() {
                    break;
                }
                out.clear();
            }
        }
    });
}
