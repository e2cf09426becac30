//! Servers launched as `docker run …` or `podman run …`: the launch policy that keeps their
//! containers from outliving the host.
//!
//! With such an entry the host's child is the container CLI, not the server; the container
//! belongs to the daemon. Closing stdin reaches the server (with `-i`) and SIGTERM is passed
//! on, but a server that ignores both is left running when the ladder SIGKILLs the CLI, since
//! SIGKILL cannot be passed on. Hosts leak containers this way by the dozen (claude-code
//! #29058, debugmcp #633, postgres-mcp #175). So the host:
//!
//! - recognises the CLI by the command's file name (`docker`, `podman`, a full path included)
//!   and the `run` subcommand, after global flags (`--context X`, `-H host`) or as
//!   `container run`; any other command, `run` in its arguments or not, is left alone;
//! - refuses, as a config error on `args`, a `run` without `-i` (the server could never read
//!   its stdin, where the host talks to it) or with `-d` (its stdio never reaches the host);
//! - warns once, when the config is read, about a `run` without `--rm` (every start leaves a
//!   stopped container behind) or with `-t` (a terminal is not the host's pipe);
//! - names the container, `--name oxmcp-<server>-<8 random hex>` right after `run`, afresh at
//!   every start, unless the user named it (that name is kept);
//! - and gives the child a `before_kill` command, `<cli> [global flags] stop -t 2 <name>`,
//!   which the shutdown ladder runs when SIGTERM was not enough, before SIGKILL.
//!
//! The flags before the image are read the way the CLIs' parser (pflag) reads them: `-it`,
//! `-i=true`, `--interactive=false`, `--name=X`, `-eKEY=v`; the last occurrence wins. A flag
//! this file does not know is taken to need a value: misjudging a switch that way can only
//! hide a later flag from the checks (a missed warning), while misjudging a flag with a value
//! as a switch would end the flags early and turn a good entry into a false `-i` error.

use std::path::Path;

use crate::transport::child::BeforeKill;

/// The container CLIs the host recognises (their flags and `stop` agree).
const ENGINES: &[&str] = &["docker", "podman"];

/// Global flags (before the subcommand) that take a value: docker's and podman's. Any other
/// global flag is a switch; a mistake either way only means `run` is not recognised.
const GLOBAL_WITH_VALUE: &[&str] = &[
    // docker
    "config",
    "context",
    "host",
    "log-level",
    "tlscacert",
    "tlscert",
    "tlskey",
    // podman
    "cdi-spec-dir",
    "cgroup-manager",
    "conmon",
    "connection",
    "db-backend",
    "events-backend",
    "hooks-dir",
    "identity",
    "imagestore",
    "module",
    "network-cmd-path",
    "network-config-dir",
    "out",
    "root",
    "runroot",
    "runtime",
    "runtime-flag",
    "ssh",
    "storage-driver",
    "storage-opt",
    "tmpdir",
    "url",
    "volumepath",
];
/// Short global flags that take a value (`-c` context or connection, `-H` host, `-l` level).
const GLOBAL_SHORT_WITH_VALUE: &str = "cHl";

/// Switches of `run` (docker's and podman's); every other `run` flag takes a value.
const RUN_SWITCHES: &[&str] = &[
    "detach",
    "disable-content-trust",
    "env-host",
    "help",
    "http-proxy",
    "init",
    "interactive",
    "no-healthcheck",
    "no-hostname",
    "no-hosts",
    "oom-kill-disable",
    "passwd",
    "privileged",
    "publish-all",
    "quiet",
    "read-only",
    "read-only-tmpfs",
    "replace",
    "rm",
    "rmi",
    "rootfs",
    "sig-proxy",
    "tls-verify",
    "tty",
    "unsetenv-all",
    "use-api-socket",
];
/// Short switches of `run`: `-d`, `-i`, `-P`, `-q`, `-t`.
const RUN_SHORT_SWITCHES: &str = "diPqt";

/// How long the container gets between `stop`'s SIGTERM and its SIGKILL, in seconds.
const STOP_GRACE_SECONDS: &str = "2";

/// A `docker run` / `podman run` command line, as far as the host cares.
#[derive(Debug, PartialEq, Eq)]
struct RunLine {
    /// Where `run` is in the arguments: `--name` goes right after it.
    run_at: usize,
    /// The global flags before the subcommand, repeated on `stop` (the same daemon).
    globals: usize,
    interactive: bool,
    detach: bool,
    rm: bool,
    tty: bool,
    name: Option<String>,
}

/// How the host starts one `run` entry.
#[derive(Debug)]
pub(super) struct Launch {
    /// The arguments, `--name` included.
    pub(super) args: Vec<String>,
    /// What the ladder runs before SIGKILL: `<cli> [globals] stop -t 2 <name>`.
    pub(super) stop: BeforeKill,
}

/// Checks a stdio entry when the config is read: `Err` is the message of a config error on
/// `args`; `Ok` holds what is merely unwise, said once per entry (logged here, and kept in the
/// spec for a front end without a log, such as the CLI) rather than at every start.
pub(super) fn check(server: &str, command: &str, args: &[String]) -> Result<Vec<String>, String> {
    let Some(line) = recognise(command, args) else {
        return Ok(Vec::new());
    };
    refuse(command, &line)?;
    let cli = cli_name(command);
    let mut warnings = Vec::new();
    if !line.rm {
        warnings.push(format!(
            "`{cli} run` without `--rm`: every start leaves a stopped container behind (add \
             \"--rm\" after \"run\")"
        ));
    }
    if line.tty {
        warnings.push(format!(
            "`{cli} run -t` gives the server a terminal, but the host talks to it over pipes: \
             docker refuses to start (\"the input device is not a TTY\"); use \"-i\" alone"
        ));
    }
    for warning in &warnings {
        tracing::warn!(target: "oxmcp", server, "{warning}");
    }
    Ok(warnings)
}

/// The arguments and the `stop` command for one start of `server`, or `None` when the entry
/// is not a container `run` (it starts as written). `Err` is the message of a config error on
/// `args`, for entries built in code rather than read by the loader.
pub(super) fn launch(
    server: &str,
    program: &Path,
    command: &str,
    args: &[String],
) -> Result<Option<Launch>, String> {
    let Some(line) = recognise(command, args) else {
        return Ok(None);
    };
    refuse(command, &line)?;
    let mut args = args.to_vec();
    let name = match line.name {
        Some(name) => name,
        None => {
            let name = container_name(server);
            args.splice(
                line.run_at + 1..line.run_at + 1,
                ["--name".to_owned(), name.clone()],
            );
            name
        }
    };
    let stop = BeforeKill::new(program).args(&args[..line.globals]).args([
        "stop",
        "-t",
        STOP_GRACE_SECONDS,
        &name,
    ]);
    Ok(Some(Launch { args, stop }))
}

/// What makes the entry unusable.
fn refuse(command: &str, line: &RunLine) -> Result<(), String> {
    let cli = cli_name(command);
    if !line.interactive {
        return Err(format!(
            "`{cli} run` without `-i` (`--interactive`): the server could never read its \
             stdin, where the host talks to it; add \"-i\" after \"run\""
        ));
    }
    if line.detach {
        return Err(format!(
            "`{cli} run -d` (`--detach`) runs the server in the background, where its stdin \
             and stdout never reach the host; remove \"-d\""
        ));
    }
    Ok(())
}

/// `docker`, `podman`, …: the command's file name when it is a container CLI.
fn cli_name(command: &str) -> &str {
    Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command)
}

/// The `run` command line, when `command` is a container CLI and its subcommand is `run`.
fn recognise(command: &str, args: &[String]) -> Option<RunLine> {
    if !ENGINES.contains(&cli_name(command)) {
        return None;
    }
    let global_value = |flag: Flag<'_>| match flag {
        Flag::Long(name) => GLOBAL_WITH_VALUE.contains(&name),
        Flag::Short(c) => GLOBAL_SHORT_WITH_VALUE.contains(c),
    };
    let sub = read_flags(args, 0, global_value, |_, _| {})?;
    let run_at = match args[sub].as_str() {
        "run" => sub,
        "container" if args.get(sub + 1).is_some_and(|a| a == "run") => sub + 1,
        _ => return None,
    };
    let mut line = RunLine {
        run_at,
        globals: sub,
        interactive: false,
        detach: false,
        rm: false,
        tty: false,
        name: None,
    };
    let run_value = |flag: Flag<'_>| match flag {
        Flag::Long(name) => !RUN_SWITCHES.contains(&name),
        Flag::Short(c) => !RUN_SHORT_SWITCHES.contains(c),
    };
    // Where the image is does not matter: only the flags before it are read.
    read_flags(args, run_at + 1, run_value, |flag, value| match flag {
        Flag::Long("interactive") | Flag::Short('i') => line.interactive = switch(value),
        Flag::Long("detach") | Flag::Short('d') => line.detach = switch(value),
        Flag::Long("tty") | Flag::Short('t') => line.tty = switch(value),
        Flag::Long("rm") => line.rm = switch(value),
        // podman: `--rmi` removes the image too, and implies `--rm`.
        Flag::Long("rmi") => line.rm |= switch(value),
        Flag::Long("name") => line.name = value.map(str::to_owned),
        _ => {}
    });
    Some(line)
}

/// A flag as the parser met it: `--long` or one letter of `-abc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flag<'a> {
    Long(&'a str),
    Short(char),
}

/// Reads flags from `args[from..]` as pflag does, calling `seen` with each flag and its value
/// (`None` for a switch given bare); `takes_value` says which flags take one. Returns where
/// the first positional argument is, or `None` when the flags run to the end.
fn read_flags<'a>(
    args: &'a [String],
    from: usize,
    takes_value: impl Fn(Flag<'_>) -> bool,
    mut seen: impl FnMut(Flag<'a>, Option<&'a str>),
) -> Option<usize> {
    let mut i = from;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            return (i + 1 < args.len()).then_some(i + 1);
        }
        if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => seen(Flag::Long(name), Some(value)),
                None if takes_value(Flag::Long(long)) => {
                    i += 1;
                    seen(Flag::Long(long), args.get(i).map(String::as_str));
                }
                None => seen(Flag::Long(long), None),
            }
            i += 1;
            continue;
        }
        let Some(shorts) = arg.strip_prefix('-').filter(|s| !s.is_empty()) else {
            // A bare word (or `-`, which means stdin): the first positional argument.
            return Some(i);
        };
        // `-abc`: switches, up to a letter that takes a value, which gets the rest of the
        // group (`-eKEY=v`) or else the next argument; `-x=v` gives `x` the value `v`.
        for (at, c) in shorts.char_indices() {
            let rest = &shorts[at + c.len_utf8()..];
            if let Some(value) = rest.strip_prefix('=') {
                seen(Flag::Short(c), Some(value));
                break;
            }
            if !takes_value(Flag::Short(c)) {
                seen(Flag::Short(c), None);
            } else if !rest.is_empty() {
                seen(Flag::Short(c), Some(rest));
                break;
            } else {
                i += 1;
                seen(Flag::Short(c), args.get(i).map(String::as_str));
                break;
            }
        }
        i += 1;
    }
    None
}

/// A switch's value: bare is on; `=false` (and pflag's other spellings of false) is off.
fn switch(value: Option<&str>) -> bool {
    !matches!(value, Some("false" | "False" | "FALSE" | "f" | "F" | "0"))
}

/// `oxmcp-<server>-<8 random hex>`: found again by the host, told apart from the containers
/// of other sessions of the same config, and within what docker allows in a name
/// (`[a-zA-Z0-9][a-zA-Z0-9_.-]+`).
fn container_name(server: &str) -> String {
    let mut clean: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    if clean.is_empty() {
        clean.push_str("server");
    }
    let mut bytes = [0u8; 4];
    crate::random::fill(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("oxmcp-{clean}-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn line(command: &str, args: &str) -> Option<RunLine> {
        recognise(command, &argv(args))
    }

    #[test]
    fn reads_the_flags_before_the_image() {
        let l = line("docker", "run -i --rm -e API_KEY img serve --name x").unwrap();
        assert!(l.interactive && l.rm && !l.tty && !l.detach);
        // `--name x` after the image belongs to the server, not to docker.
        assert_eq!((l.run_at, l.globals, l.name), (0, 0, None));
        let l = line("/usr/bin/podman", "--context c -D run -it --name=mine img").unwrap();
        assert!(l.interactive && l.tty && !l.rm);
        assert_eq!((l.run_at, l.globals), (3, 3));
        assert_eq!(l.name.as_deref(), Some("mine"));
        let l = line(
            "docker",
            "-H tcp://h:2375 container run -ieKEY=v --rm=true img",
        )
        .unwrap();
        assert!(l.interactive && l.rm);
        assert_eq!((l.run_at, l.globals), (3, 2));
        let l = line("podman", "run -a stdin -i=true --rmi --name n -- img").unwrap();
        assert!(l.interactive && l.rm);
        assert_eq!(l.name.as_deref(), Some("n"));
    }

    #[test]
    fn switched_off_or_hidden_behind_a_value_is_not_given() {
        // The last occurrence wins, and `=false` turns a switch off.
        let l = line("docker", "run -i --interactive=false --rm=false img").unwrap();
        assert!(!l.interactive && !l.rm);
        // `-e -i` is an environment variable named `-i`, not the flag.
        assert!(!line("docker", "run -e -i img").unwrap().interactive);
        // An `-i` after the image is the server's own argument.
        assert!(!line("docker", "run --rm img -i").unwrap().interactive);
        // Flags only, no image: nothing was given.
        assert!(!line("docker", "run").unwrap().interactive);
    }

    #[test]
    fn only_a_container_cli_running_a_container_is_recognised() {
        assert!(line("docker", "exec -i box server").is_none());
        assert!(line("docker", "compose run -i app").is_none());
        assert!(line("docker", "container ls").is_none());
        assert!(line("docker", "--context run ps").is_none());
        assert!(line("mydocker", "run -i img").is_none());
        assert!(line("uvx", "run -i img").is_none());
        assert!(line("docker", "").is_none());
    }

    #[test]
    fn the_name_goes_right_after_run_and_stop_repeats_the_globals() {
        let args = argv("--context c run -i --rm img");
        let l = launch("gh", Path::new("/usr/bin/docker"), "docker", &args)
            .unwrap()
            .unwrap();
        assert_eq!(&l.args[..4], ["--context", "c", "run", "--name"]);
        let name = &l.args[4];
        assert!(name.starts_with("oxmcp-gh-") && name.len() == "oxmcp-gh-".len() + 8);
        assert_eq!(&l.args[5..], ["-i", "--rm", "img"]);
        assert_eq!(
            l.stop.display(),
            format!("/usr/bin/docker --context c stop -t 2 {name}")
        );
        // A fresh name at every start.
        let again = launch("gh", Path::new("docker"), "docker", &args)
            .unwrap()
            .unwrap();
        assert_ne!(again.args[4], *name);
        // The user's name is kept, and stopped.
        let own = argv("run --name=mine -i img");
        let l = launch("gh", Path::new("docker"), "docker", &own)
            .unwrap()
            .unwrap();
        assert_eq!(l.args, own);
        assert_eq!(l.stop.display(), "docker stop -t 2 mine");
    }

    #[test]
    fn refused_entries_and_untouched_ones() {
        let refused = |args: &str| launch("s", Path::new("docker"), "docker", &argv(args));
        assert!(refused("run --rm img").unwrap_err().contains("`-i`"));
        assert!(refused("run -i -d img").unwrap_err().contains("-d"));
        assert!(check("s", "docker", &argv("run --rm img")).is_err());
        assert!(check("s", "docker", &argv("run -i img")).is_ok());
        assert!(
            launch("s", Path::new("tool"), "tool", &argv("run x"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn container_names_stay_within_what_docker_allows() {
        for server in ["gh", "my server/β", "", "a".repeat(300).as_str()] {
            let name = container_name(server);
            assert!(name.starts_with("oxmcp-"), "{name}");
            assert!(name.len() <= "oxmcp-".len() + 40 + 9, "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')),
                "{name}"
            );
        }
        assert!(container_name("my server/β").starts_with("oxmcp-my-server--"));
    }
}
