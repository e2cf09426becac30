//! The machinery under every child-lifecycle test: one test at a time on a runtime of its
//! own, the `mcp_fixture` binary, and a [`Run`] that marks its processes and checks through
//! `/proc` that a scenario left nothing behind (no zombie child, no marked process, no extra
//! descriptor).

use std::{
    future::Future,
    sync::{Mutex, PoisonError},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use oxmcp::transport::child::{ChildCommand, ChildTransport, StderrHandle};

use crate::SHORT;

/// The environment variable that marks every process of one run.
pub const MARKER: &str = "MCP_TEST_RUN";

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs one test alone (the `/proc` checks see the whole process), on a fresh runtime, within
/// 30 s.
pub fn serial(test: impl Future<Output = ()>) {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(30), test)
            .await
            .expect("the test finished within 30 s (a hang is a failure)");
    });
}

/// The fixture binary, built next to this test (`target/<profile>/examples/mcp_fixture`).
pub fn fixture() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    // target/<profile>/deps/<test> → target/<profile>/examples/mcp_fixture
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("examples").join("mcp_fixture"))
        .expect("the target directory");
    assert!(
        path.exists(),
        "{} is not built: `cargo test` builds examples only when no target is selected; run \
         `cargo build --example mcp_fixture` before `cargo test --test child_lifecycle`",
        path.display()
    );
    path
}

/// One scenario: its marker, the descriptor baseline, and a guard that kills what is left.
pub struct Run {
    name: &'static str,
    pub marker: String,
    pub fds: Vec<String>,
}

impl Run {
    pub fn start(name: &'static str) -> Run {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let marker = format!("{name}-{}-{nanos}", std::process::id());
        Run {
            name,
            marker,
            fds: open_fds(),
        }
    }

    /// The fixture in `mode`, marked, with the short ladder.
    pub fn command(&self, mode: &str) -> ChildCommand {
        ChildCommand::new(fixture())
            .arg(mode)
            .env(MARKER, &self.marker)
            .shutdown_timeouts(SHORT)
    }

    pub async fn spawn(&self, command: ChildCommand) -> ChildTransport {
        command.spawn().await.expect("the fixture starts")
    }

    /// Live processes carrying this run's marker.
    pub fn processes(&self) -> Vec<u32> {
        marked_processes(&self.marker)
    }

    /// Waits for a grandchild fixture to say its SIGTERM handler is in place, and for the
    /// two processes of the run; returns their pids.
    pub async fn expect_grandchild(&self, stderr: &StderrHandle) -> Vec<u32> {
        wait_for_stderr(stderr, "sleeper: ready", "the grandchild starts").await;
        self.expect_processes(2).await
    }

    /// Waits until `n` marked processes are alive; returns their pids.
    pub async fn expect_processes(&self, n: usize) -> Vec<u32> {
        let found = poll(Duration::from_secs(5), || {
            let pids = self.processes();
            (pids.len() == n).then_some(pids)
        })
        .await;
        found.unwrap_or_else(|| {
            panic!(
                "expected {n} marked processes, found {:?}",
                self.processes()
            )
        })
    }

    /// Nothing left: no zombie child, no marked process, no extra descriptor. Waits a little,
    /// as the kernel delivers group signals and tokio reaps orphans asynchronously.
    pub async fn assert_clean(&self) {
        let clean = poll(Duration::from_secs(5), || {
            (zombie_children().is_empty() && self.processes().is_empty() && open_fds() == self.fds)
                .then_some(())
        })
        .await;
        if clean.is_none() {
            panic!(
                "[{}] left behind: zombies {:?}, marked processes {:?}, descriptors {:?} \
                 (baseline {:?})",
                self.name,
                zombie_children(),
                self.processes(),
                open_fds(),
                self.fds
            );
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        // Even when the test failed: take down whatever carries our marker.
        for _ in 0..100 {
            let pids = self.processes();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                signal(pid, libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Polls `probe` every 10 ms until it yields or `within` has passed.
pub async fn poll<T>(within: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits up to 5 s for a fixture to write `note` to stderr; `what` names the step for the
/// failure message.
pub async fn wait_for_stderr(stderr: &StderrHandle, note: &str, what: &str) {
    poll(Duration::from_secs(5), || {
        stderr.tail(usize::MAX).contains(note).then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("{what}: `{note}` never appeared on stderr"));
}

pub fn signal(pid: u32, sig: libc::c_int) {
    let pid = libc::pid_t::try_from(pid).expect("pid fits pid_t");
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// `/proc/self/fd`, each descriptor with what it points at, sorted.
pub fn open_fds() -> Vec<String> {
    let mut fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let target = std::fs::read_link(e.path()).ok()?;
            Some(format!(
                "{}->{}",
                e.file_name().to_string_lossy(),
                target.display()
            ))
        })
        .collect();
    fds.sort();
    fds
}

fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
}

/// (state, parent pid) from `/proc/<pid>/stat`; `None` once the process is gone.
pub fn proc_state(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain anything, spaces and parentheses included: skip past it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

fn zombie_children() -> Vec<u32> {
    let me = std::process::id();
    pids()
        .filter(|&pid| proc_state(pid) == Some(('Z', me)))
        .collect()
}

/// Live processes whose environment holds `MCP_TEST_RUN=<marker>` (a zombie has no
/// environment left, and is counted by `zombie_children` when it is ours).
fn marked_processes(marker: &str) -> Vec<u32> {
    let needle = format!("{MARKER}={marker}");
    pids()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle.as_bytes()))
        })
        .collect()
}
