//! Servers launched as `docker run …` / `podman run …`: what the host checks in the argv, the
//! name it gives the container, and the `stop` it runs when the container outlives SIGTERM.
//!
//! **A stand-in, not docker.** Most tests put a shell script named `docker` (or `podman`)
//! first on the server's `PATH` (`StandIn`). It is not the docker CLI. It records its argv, one
//! line per invocation, and fakes what these tests need: `run` starts a "container" (the
//! `mcp_fixture ignore-sigterm` server: it ignores stdin EOF and SIGTERM) in a session of its
//! own, outside the CLI's process group, as the daemon's containers are, and waits for it as
//! the CLI does. So the ladder's SIGKILL to the group ends the CLI and leaves the container,
//! which is the leak being fixed (`a_command_that_is_not_a_container_cli_is_left_alone` shows
//! it happening). `stop`/`kill` end the container found by the name it was given. The last
//! test uses the real docker CLI, as far as this machine lets it, and says why it skips the
//! rest.
//!
//! The stand-in's container is killed when a test ends, whatever happened.

#[path = "common/examples.rs"]
mod examples;

use std::{
    io::Write,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use oxmcp::{
    Error, ErrorKind,
    host::{Config, Host, HostOptions, TransportSpec},
};
use serde_json::{Value, json};

/// A hang guard for `Host::close`, not a speed check: the ladder's 2 s + 2 s, `stop`'s 2 s,
/// and room for a loaded 2-core machine. A close that hangs would take the session's 15 s.
const CLOSE_BOUND: Duration = Duration::from_secs(12);

/// The stand-in script. `{dir}` is where it logs and keeps the containers' pid files,
/// `{fixture}` the server the container runs.
const STAND_IN: &str = r#"#!/bin/sh
# A STAND-IN for the docker / podman CLI, written by core/tests/host_docker.rs. NOT docker.
# It records its argv, fakes `run` (a container that ignores stdin EOF and SIGTERM, in a
# session of its own as the daemon's containers are; STANDIN_MODE=server: one that exits on
# EOF) and `stop` / `kill` (which end that container by name; STANDIN_STOP=hang: never).
dir='{dir}'
printf '%s\n' "$*" >> "$dir/argv.log"
sub=''; name=''; prev=''; last=''
for a in "$@"; do
  if [ "$prev" = --name ] && [ -z "$name" ]; then name=$a; fi
  case $a in --name=*) [ -n "$name" ] || name=${a#--name=};; esac
  if [ -z "$sub" ]; then case $a in run|stop|kill) sub=$a;; esac; fi
  prev=$a; last=$a
done
case $sub in
run)
  [ -n "$name" ] || name=unnamed-$$
  # The CLI passes SIGTERM on to the container, which ignores it: the CLI stays.
  trap '' TERM
  # An asynchronous command's stdin would be /dev/null: hand it ours explicitly.
  exec 3<&0
  setsid -w sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$dir/$name.pid" \
    '{fixture}' "${STANDIN_MODE:-ignore-sigterm}" <&3 3<&- &
  exec 3<&-
  wait $!
  ;;
stop|kill)
  pid=$(cat "$dir/$last.pid" 2>/dev/null)
  if [ -z "$pid" ]; then echo "Error response from daemon: No such container: $last" >&2; exit 1; fi
  # A daemon that never answers.
  if [ "${STANDIN_STOP:-}" = hang ]; then exec sleep 60; fi
  if [ "$sub" = stop ]; then
    kill -TERM "$pid" 2>/dev/null
    n=0
    while [ $n -lt 20 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; n=$((n+1)); done
  fi
  kill -KILL "$pid" 2>/dev/null
  echo "$last"
  ;;
*)
  echo "stand-in docker: unsupported: $*" >&2; exit 125
  ;;
esac
"#;

/// A directory with the stand-in under one or more names; kills every container it started
/// when dropped.
struct StandIn {
    dir: PathBuf,
}

impl StandIn {
    fn new(tag: &str, names: &[&str]) -> StandIn {
        let dir = std::env::temp_dir().join(format!("oxmcp-docker-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fixture = examples::example_bin("mcp_fixture");
        let script = STAND_IN
            .replace("{dir}", &dir.display().to_string())
            .replace("{fixture}", &fixture.display().to_string());
        for name in names {
            let path = dir.join(name);
            std::fs::write(&path, &script).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        StandIn { dir }
    }

    /// `PATH` for the server: the stand-in first, then ours (for `sh`, `setsid`, `sleep`).
    fn path(&self) -> String {
        let ours = std::env::var("PATH").unwrap_or_default();
        format!("{}:{ours}", self.dir.display())
    }

    /// Every invocation so far, one argv per line.
    fn argv(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("argv.log"))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    /// The pid of the container named `name`.
    fn container(&self, name: &str) -> i32 {
        let text = std::fs::read_to_string(self.dir.join(format!("{name}.pid")))
            .unwrap_or_else(|e| panic!("no container named {name}: {e}"));
        text.trim().parse().unwrap()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        for entry in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "pid")
                && let Some(pid) = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| t.trim().parse::<i32>().ok())
            {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `pid` runs (a zombie waiting to be reaped has ended).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_owned())
        })
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

/// Waits up to 3 s for `pid` to end (the CLI reaps its container a moment after the kill).
async fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

fn config(json: Value) -> Config {
    Config::from_value(&json, &|k| std::env::var(k).ok()).unwrap()
}

/// One stdio server entry with the stand-in on its `PATH`.
fn entry(stand_in: &StandIn, command: &str, args: &[&str]) -> Value {
    json!({"command": command, "args": args, "env": {"PATH": stand_in.path(), "API_KEY": "k"}})
}

/// The value after `--name` in one recorded argv.
fn name_in(argv: &str) -> String {
    let words: Vec<&str> = argv.split(' ').collect();
    let at = words.iter().position(|w| *w == "--name");
    at.and_then(|i| words.get(i + 1))
        .unwrap_or_else(|| panic!("no --name in `{argv}`"))
        .to_string()
}

/// `oxmcp-<server>-<8 hex>`.
fn assert_ours(name: &str, server: &str) {
    let hex = name
        .strip_prefix(&format!("oxmcp-{server}-"))
        .unwrap_or_else(|| panic!("`{name}` is not oxmcp-{server}-…"));
    assert!(
        hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "`{name}`"
    );
}

/// A call goes through the CLI to the server and back (starting it again if it crashed).
async fn connected(host: &Host, server: &str) {
    let out = match host
        .call_tool(server, "echo", json!({"text": "through the CLI"}))
        .await
    {
        Ok(out) => out,
        Err(e) => panic!("{e}: {:?}", host.status().await),
    };
    assert!(
        serde_json::to_string(&out)
            .unwrap()
            .contains("through the CLI")
    );
    let status = host.status().await;
    let s = status.iter().find(|s| s.name == server).unwrap();
    assert_eq!(s.state, "connected", "{s:?}");
}

/// Closes the host, within [`CLOSE_BOUND`].
async fn close(host: &Host) {
    let started = Instant::now();
    tokio::time::timeout(CLOSE_BOUND, host.close())
        .await
        .expect("closing the host hung");
    eprintln!("[timing] close took {:?}", started.elapsed());
}

/// What `tracing` printed while `f` ran (on this thread).
fn logged<T>(f: impl FnOnce() -> T) -> (T, String) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let sink = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || Sink(sink.clone()))
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8_lossy(&buf.lock().unwrap()).into_owned();
    (out, text)
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_gets_a_name_and_a_stop_that_ends_a_container_ignoring_sigterm() {
    let docker = StandIn::new("named", &["docker"]);
    let c = config(json!({"mcpServers": {
        "gh": entry(&docker, "docker", &["run", "-i", "--rm", "-e", "API_KEY", "ghcr.io/x/gh"])
    }}));
    let host = Host::start(c, HostOptions::default()).await;
    connected(&host, "gh").await;

    let argv = docker.argv();
    assert_eq!(argv.len(), 1, "{argv:?}");
    let name = name_in(&argv[0]);
    assert_ours(&name, "gh");
    // Right after `run`; the rest as written.
    assert_eq!(
        argv[0],
        format!("run --name {name} -i --rm -e API_KEY ghcr.io/x/gh")
    );
    let container = docker.container(&name);
    assert!(alive(container));

    close(&host).await;
    assert!(gone(container).await, "the container outlived the host");
    assert_eq!(docker.argv()[1..], [format!("stop -t 2 {name}")]);
}

/// A server that exits on stdin EOF ends at the ladder's first step: no `stop` is run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_that_exits_on_eof_needs_no_stop() {
    let docker = StandIn::new("eof", &["docker"]);
    let c = config(json!({"mcpServers": {"gh": {
        "command": "docker",
        "args": ["run", "-i", "--rm", "img"],
        "env": {"PATH": docker.path(), "STANDIN_MODE": "server"},
    }}}));
    let host = Host::start(c, HostOptions::default()).await;
    connected(&host, "gh").await;
    let name = name_in(&docker.argv()[0]);
    let container = docker.container(&name);
    close(&host).await;
    assert!(gone(container).await);
    assert_eq!(docker.argv().len(), 1, "ran {:?}", docker.argv());
}

/// Two hosts on one config (two agent sessions): each container has a name of its own, so
/// closing one session stops its container and leaves the other's serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_one_session_leaves_another_sessions_container_running() {
    let docker = StandIn::new("two", &["docker"]);
    let json =
        json!({"mcpServers": {"gh": entry(&docker, "docker", &["run", "-i", "--rm", "img"])}});
    let first = Host::start(config(json.clone()), HostOptions::default()).await;
    let second = Host::start(config(json), HostOptions::default()).await;
    connected(&first, "gh").await;
    connected(&second, "gh").await;
    let argv = docker.argv();
    let (a, b) = (name_in(&argv[0]), name_in(&argv[1]));
    assert_ne!(a, b);
    let (pa, pb) = (docker.container(&a), docker.container(&b));

    close(&first).await;
    let stopped: Vec<String> = docker.argv()[2..].to_vec();
    assert_eq!(stopped.len(), 1, "{stopped:?}");
    let (closed, open) = if stopped[0].ends_with(&a) {
        (pa, pb)
    } else {
        (pb, pa)
    };
    assert!(gone(closed).await);
    assert!(alive(open), "the other session's container was stopped too");
    connected(&second, "gh").await;
    close(&second).await;
    assert!(gone(open).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_path_global_flags_and_the_users_own_name_are_kept() {
    let docker = StandIn::new("own-name", &["docker"]);
    let cli = docker.dir.join("docker").display().to_string();
    // No `PATH` help: the command is the full path, and `stop` must use it too.
    let c = config(json!({"mcpServers": {"gh": {
        "command": cli,
        "args": ["--context", "ctx", "run", "--name=my-gh", "-it", "--rm", "img"],
    }}}));
    let host = Host::start(c, HostOptions::default()).await;
    connected(&host, "gh").await;
    assert_eq!(
        docker.argv(),
        ["--context ctx run --name=my-gh -it --rm img"]
    );
    let container = docker.container("my-gh");

    close(&host).await;
    assert!(gone(container).await, "the container outlived the host");
    assert_eq!(docker.argv()[1..], ["--context ctx stop -t 2 my-gh"]);
}

/// Podman, recognised the same, as `container run` and without `--rm`: it starts (with one
/// warning, when the config is read), a restart after a crash gets a fresh name and no
/// second warning, and the close stops the container of the current start.
#[tokio::test(flavor = "current_thread")]
async fn podman_without_rm_warns_once_and_every_start_gets_a_fresh_name() {
    let podman = StandIn::new("podman", &["podman"]);
    let json =
        json!({"mcpServers": {"pg": entry(&podman, "podman", &["container", "run", "-i", "img"])}});
    let (c, at_load) = logged(|| config(json));
    let warning = "without `--rm`";
    assert_eq!(at_load.matches(warning).count(), 1, "{at_load}");
    assert!(at_load.contains("pg"), "{at_load}");

    // Everything the host logs from here on, on this (only) thread.
    let buf = Arc::new(Mutex::new(Vec::new()));
    let sink = buf.clone();
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || Sink(sink.clone()))
            .finish(),
    );
    let host = Host::start(c, HostOptions::default()).await;
    connected(&host, "pg").await;
    let first = name_in(&podman.argv()[0]);
    assert_ours(&first, "pg");
    assert_eq!(
        podman.argv()[0],
        format!("container run --name {first} -i img")
    );

    // The container crashes: the next call starts it again, under a new name.
    let crashed = podman.container(&first);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(crashed, libc::SIGKILL) };
    assert!(gone(crashed).await);
    let deadline = Instant::now() + Duration::from_secs(5);
    while host.status().await[0].state == "connected" {
        assert!(Instant::now() < deadline, "the host never saw the crash");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    connected(&host, "pg").await;
    let argv = podman.argv();
    assert_eq!(argv.len(), 2, "{argv:?}");
    let second = name_in(&argv[1]);
    assert_ours(&second, "pg");
    assert_ne!(first, second);
    let container = podman.container(&second);

    close(&host).await;
    assert!(gone(container).await, "the container outlived the host");
    assert_eq!(podman.argv()[2..], [format!("stop -t 2 {second}")]);
    let later = String::from_utf8_lossy(&buf.lock().unwrap()).into_owned();
    assert!(!later.contains(warning), "warned again: {later}");
}

#[test]
fn a_run_without_i_or_with_d_is_a_config_error_naming_file_server_and_field() {
    let file = Path::new("/work/proj/.mcp.json");
    let bad = |args: Value| {
        let text = json!({"mcpServers": {"gh": {"command": "/usr/bin/docker", "args": args}}});
        Config::parse(&text.to_string(), Some(file), &|_| None).unwrap_err()
    };
    for (args, says) in [
        (json!(["run", "--rm", "img"]), "-i"),
        (json!(["run", "--rm", "img", "-i"]), "-i"),
        (json!(["run", "-i=false", "--rm", "img"]), "-i"),
        (json!(["-H", "unix:///x.sock", "run", "-t", "img"]), "-i"),
        (json!(["run", "-di", "--rm", "img"]), "-d"),
    ] {
        let e = bad(args.clone());
        assert_eq!(e.kind(), ErrorKind::Config);
        let Error::Config {
            file: f,
            server,
            field,
            message,
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!(f.as_deref(), Some("/work/proj/.mcp.json"), "{args}");
        assert_eq!(server.as_deref(), Some("gh"));
        assert_eq!(field.as_deref(), Some("args"));
        assert!(message.contains(says), "{args}: {message}");
        let shown = e.to_string();
        assert!(
            shown.contains(".mcp.json") && shown.contains("gh") && shown.contains("args"),
            "{shown}"
        );
    }
    // The same argv is fine with `-i`, and so is `-i` inside a group.
    for args in [json!(["run", "-i", "img"]), json!(["run", "-it", "img"])] {
        let text = json!({"mcpServers": {"gh": {"command": "docker", "args": args}}});
        assert!(Config::parse(&text.to_string(), Some(file), &|_| None).is_ok());
    }
}

/// A spec built in code skips the loader; the host still refuses it, before starting anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spec_built_in_code_without_i_fails_to_start_and_runs_nothing() {
    let docker = StandIn::new("in-code", &["docker"]);
    let mut spec =
        config(json!({"mcpServers": {"ok": entry(&docker, "docker", &["run", "-i", "img"])}}))
            .servers
            .remove(0);
    spec.name = "gh".into();
    let TransportSpec::Stdio { args, .. } = &mut spec.transport else {
        panic!("not stdio")
    };
    args.retain(|a| a != "-i");
    let c = Config {
        servers: vec![spec],
        disabled: vec![],
    };
    let host = Host::start(c, HostOptions::default()).await;
    let status = host.status().await;
    assert_eq!(status[0].state, "failed");
    assert_eq!(status[0].error_kind, Some("config"), "{:?}", status[0]);
    assert!(status[0].error.as_deref().unwrap().contains("-i"));
    assert!(docker.argv().is_empty(), "started: {:?}", docker.argv());
    close(&host).await;
}

/// The same script under another name is not a container CLI: its argv is untouched, nothing
/// is run at close, and its "container" survives the ladder, which is what happens to real
/// containers without the `stop` (and shows the stand-in is faithful to that).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_is_not_a_container_cli_is_left_alone() {
    let other = StandIn::new("other", &["dockerish"]);
    // Without `-i` too: only `docker` and `podman` are held to it.
    let lenient = json!({"mcpServers": {"x": entry(&other, "dockerish", &["run", "img"])}});
    assert!(Config::from_value(&lenient, &|_| None).is_ok());

    let c = config(json!({"mcpServers": {
        "x": entry(&other, "dockerish", &["run", "-i", "--rm", "img"])
    }}));
    let host = Host::start(c, HostOptions::default()).await;
    connected(&host, "x").await;
    assert_eq!(other.argv(), ["run -i --rm img"]);
    let argv = other.argv();
    // Not named, so the stand-in named its pid file after itself.
    let unnamed = std::fs::read_dir(&other.dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find_map(|n| n.strip_suffix(".pid").map(String::from))
        .unwrap();
    assert!(unnamed.starts_with("unnamed-"), "{unnamed}");
    let container = other.container(&unnamed);

    close(&host).await;
    assert_eq!(other.argv(), argv, "ran something at close");
    assert!(
        alive(container),
        "the stand-in's container died with its CLI: it does not model a daemon's container"
    );
    // `StandIn`'s drop kills it.
}

/// A daemon that never answers `stop`: the command is killed at its timeout and the ladder
/// goes on to SIGKILL, so the close still ends. (The container is then left to the daemon.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_that_never_returns_does_not_hang_the_close() {
    let docker = StandIn::new("hung-stop", &["docker"]);
    let c = config(json!({"mcpServers": {"gh": {
        "command": "docker",
        "args": ["run", "-i", "--rm", "img"],
        "env": {"PATH": docker.path(), "STANDIN_STOP": "hang"},
    }}}));
    let host = Host::start(c, HostOptions::default()).await;
    connected(&host, "gh").await;
    let name = name_in(&docker.argv()[0]);

    // 2 s + 2 s of ladder, the command's 5 s, and room.
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(14), host.close())
        .await
        .expect("a hung `stop` hung the close");
    eprintln!(
        "[timing] close with a hung stop took {:?}",
        started.elapsed()
    );
    assert_eq!(docker.argv()[1..], [format!("stop -t 2 {name}")]);
}

/// The real docker CLI. Where its daemon answers and a local image with a C library is
/// there, the whole story runs against it: the fixture (mounted read-only) as the container,
/// ignoring SIGTERM as PID 1, gone after the close. Where the daemon does not answer, the
/// CLI still parses what the host runs: its error must be about the daemon, not the argv.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_docker_cli() {
    let Ok(version) = std::process::Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
    else {
        eprintln!("skipped: no `docker` on PATH");
        return;
    };
    let server = format!("real-{}", std::process::id());
    if !version.status.success() {
        // The CLI reads our argv before it needs the daemon.
        let args = ["run", "-i", "--rm", "--pull", "never", "img"];
        let c =
            config(json!({"mcpServers": {server.clone(): {"command": "docker", "args": args}}}));
        let host = Host::start(c, HostOptions::default()).await;
        let status = &host.status().await[0];
        assert_eq!(status.state, "failed");
        let said = status.stderr.clone().unwrap_or_default();
        assert!(!said.contains("unknown flag"), "{said}");
        assert!(
            said.contains("daemon") || said.contains("error during connect"),
            "{said}"
        );
        close(&host).await;
        let why = String::from_utf8_lossy(&version.stderr);
        eprintln!(
            "skipped (the container part): the docker daemon does not answer: {}",
            why.trim()
        );
        return;
    }
    let Some(image) = local_image() else {
        eprintln!(
            "skipped: no local debian/ubuntu image to run the fixture in (only package \
             registries are reachable, so none is pulled)"
        );
        return;
    };
    let fixture = examples::example_bin("mcp_fixture");
    let mount = format!("{}:/mcp_fixture:ro", fixture.display());
    let c = config(
        json!({"mcpServers": {server.clone(): {"command": "docker", "args": [
            "run", "-i", "--rm", "--pull", "never", "-v", mount, "--entrypoint", "/mcp_fixture",
            image, "ignore-sigterm"
        ]}}}),
    );
    let host = Host::start(c, HostOptions::default()).await;
    let status = &host.status().await[0];
    if status.state != "connected" {
        eprintln!(
            "skipped: the fixture does not run in `{image}`: {:?} {:?}",
            status.error, status.stderr
        );
        close(&host).await;
        return;
    }
    connected(&host, &server).await;
    let ours = format!("oxmcp-{server}-");
    assert_eq!(containers(&ours).len(), 1, "not running under our name");
    close(&host).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !containers(&ours).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the container outlived the host: {:?}",
            containers(&ours)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A local image with a C library the fixture can run on, if any.
fn local_image() -> Option<String> {
    let out = std::process::Command::new("docker")
        .args(["images", "--format", "{{.Repository}}:{{.Tag}}"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|i| {
            ["debian", "ubuntu", "rust"]
                .iter()
                .any(|d| i.starts_with(d))
        })
        .map(String::from)
}

/// Containers, running or not, whose name contains `prefix`.
fn containers(prefix: &str) -> Vec<String> {
    let out = std::process::Command::new("docker")
        .args(["ps", "-a", "--format", "{{.Names}}", "--filter"])
        // A substring match: the prefix holds this test process's pid.
        .arg(format!("name={prefix}"))
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.lines().map(String::from).collect()
}
