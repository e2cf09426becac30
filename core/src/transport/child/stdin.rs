//! The writer to a child's stdin, which must see the session's `Close` even while a write
//! is stuck on a child that stopped reading, so that the shutdown ladder can start.

use tokio::{io::AsyncWriteExt, process::ChildStdin, sync::mpsc};
use tokio_util::sync::CancellationToken;

use crate::transport::Outbound;

/// How many bytes of frames the writer takes in behind a write the child has not accepted
/// yet. Beyond this, senders wait (back-pressure).
const STDIN_BACKLOG: usize = 1 << 20;

/// Frames → the child's stdin, until `Close` (or every sender is gone) and everything queued
/// has been written, or until a write fails.
///
/// The writer keeps taking frames in while a write is pending, so that `Close` is seen even
/// when the child has stopped reading and the pipe is full: `close_requested` fires as soon as
/// `Close` arrives, and the ladder's clock starts then. Waiting for the write to finish first
/// would wait forever on a child that never reads, and the session's close with it. What is
/// queued is still flushed, within the ladder's first wait; a child that never takes it is
/// signalled, and its death fails the write.
pub(super) async fn write_stdin(
    mut stdin: ChildStdin,
    mut outbound: mpsc::Receiver<Outbound>,
    close_requested: CancellationToken,
    write_failed: CancellationToken,
) {
    // `writing[written..]` is going out now; `queued` collects the frames behind it.
    let mut writing: Vec<u8> = Vec::new();
    let mut written = 0;
    let mut queued: Vec<u8> = Vec::new();
    let mut closing = false;
    loop {
        if written == writing.len() {
            if queued.is_empty() && closing {
                break;
            }
            writing.clear();
            // Do not keep a huge buffer around after one huge message.
            writing.shrink_to(STDIN_BACKLOG);
            written = 0;
            std::mem::swap(&mut writing, &mut queued);
        }
        tokio::select! {
            // Take in what is queued first: `Close` must not wait behind a stuck write, and
            // frames that arrive together go out in one write.
            biased;
            item = outbound.recv(), if !closing && queued.len() < STDIN_BACKLOG => match item {
                Some(Outbound::Frame(frame)) => {
                    crate::jsonrpc::push_line(&mut queued, &frame.bytes);
                }
                Some(Outbound::CloseStream(_)) => {}
                Some(Outbound::Close) | None => {
                    closing = true;
                    close_requested.cancel();
                }
            },
            // Cancel-safe: a write that loses the race has written nothing.
            result = stdin.write(&writing[written..]), if written < writing.len() => match result {
                Ok(n) if n > 0 => written += n,
                _ => {
                    write_failed.cancel();
                    return;
                }
            },
            // Unreachable (when nothing is being written, `queued` was just emptied, so
            // receiving is enabled unless closing, and closing with nothing left breaks above);
            // ending is the safe answer all the same.
            else => break,
        }
    }
    // Closing our end is what the child sees as EOF.
    let _ = stdin.shutdown().await;
}

#[cfg(test)]
mod tests {
    use std::{process::Stdio, time::Duration};

    use tokio::{io::AsyncReadExt, process::Command};

    use super::*;

    fn frame(bytes: &[u8]) -> Outbound {
        Outbound::Frame(crate::transport::OutFrame {
            bytes: bytes.to_vec(),
            route: crate::transport::Route::Unrelated,
        })
    }

    /// Frames go out in order, newline-terminated, and `Close` closes stdin after them (`cat`
    /// echoes what it read and exits on EOF).
    #[tokio::test]
    async fn writer_flushes_then_closes_stdin() {
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("cat starts");
        let stdin = cat.stdin.take().expect("stdin");
        let mut stdout = cat.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel(8);
        let (closed, failed) = (CancellationToken::new(), CancellationToken::new());
        let writer = tokio::spawn(write_stdin(stdin, rx, closed.clone(), failed.clone()));
        for item in [frame(b"{\"a\":1}"), frame(b"{\"b\":2}"), Outbound::Close] {
            tx.send(item).await.expect("queued");
        }
        let mut echoed = String::new();
        tokio::time::timeout(Duration::from_secs(5), stdout.read_to_string(&mut echoed))
            .await
            .expect("cat sees EOF")
            .expect("read");
        assert_eq!(echoed, "{\"a\":1}\n{\"b\":2}\n");
        writer.await.expect("the writer ends");
        assert!(closed.is_cancelled() && !failed.is_cancelled());
        let status = cat.wait().await.expect("cat is reaped");
        assert_eq!(status.code(), Some(0));
    }

    /// `Close` is seen while a write is stuck on a child that never reads (`sleep`): the
    /// ladder can start. The stuck write then fails once the child is gone.
    #[tokio::test]
    async fn close_is_seen_behind_a_write_the_child_never_reads() {
        let mut sleep = Command::new("sleep")
            .arg("30")
            .stdin(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("sleep starts");
        let stdin = sleep.stdin.take().expect("stdin");
        let (tx, rx) = mpsc::channel(8);
        let (closed, failed) = (CancellationToken::new(), CancellationToken::new());
        let writer = tokio::spawn(write_stdin(stdin, rx, closed.clone(), failed.clone()));
        // Far more than a pipe holds.
        tx.send(frame(&vec![b'x'; 4 << 20])).await.expect("queued");
        tx.send(Outbound::Close).await.expect("queued");
        tokio::time::timeout(Duration::from_secs(5), closed.cancelled())
            .await
            .expect("Close is seen although the write cannot finish");
        assert!(!writer.is_finished(), "the write is still pending");

        sleep.start_kill().expect("kill sleep");
        sleep.wait().await.expect("sleep is reaped");
        tokio::time::timeout(Duration::from_secs(5), failed.cancelled())
            .await
            .expect("the pending write fails once nobody can read it");
        writer.await.expect("the writer ends");
    }
}
