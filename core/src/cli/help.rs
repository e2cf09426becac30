//! `oxmcp COMMAND --help`: what one command does, its arguments and what it prints. The
//! overview (`oxmcp --help`) lists every command, the options and the exit codes.

/// The help of `command`, or `None` when there is no such command.
pub(super) fn command(command: &str) -> Option<&'static str> {
    Some(match command {
        // No command yet: the overview is the help.
        "" => return None,
        "tools" => TOOLS,
        "call" => CALL,
        "servers" => SERVERS,
        "login" => LOGIN,
        "resources" => RESOURCES,
        "read" => READ,
        "prompts" => PROMPTS,
        "prompt" => PROMPT,
        "ping" => PING,
        "inspect" => INSPECT,
        _ => return None,
    })
}

/// Each command's text, followed by the options every command takes.
macro_rules! help {
    ($name:ident, $text:literal) => {
        const $name: &str = concat!(
            $text,
            "\nOptions for every command: --config FILE, --timeout SECS (one deadline for the\n",
            "whole command), --trace (every JSON-RPC message on stderr), --help.\n",
            "Exit codes: see `oxmcp --help`.\n"
        );
    };
}

help!(
    TOOLS,
    "usage: oxmcp tools [--format FORMAT] [--no-strict] [--namespace MODE]

Starts every server of the config and prints their tools as one JSON document, in an LLM
provider's format (see `oxmcp --help` for the formats). A server that cannot start is named
on stderr with its stderr tail; the others are still printed, and the exit code is 4.
"
);
help!(
    CALL,
    "usage: oxmcp call [--yes] SERVER TOOL [ARGUMENTS_JSON]

Starts SERVER only, calls TOOL with the JSON object of arguments (default {}), and prints the
CallToolResult as JSON. Progress goes to stderr. Exit 1 when the tool returned isError.

A tool the server marks destructive (destructiveHint: true) is shown with its arguments and
runs only if you answer y; without a terminal to ask on it is not run (exit 6). --yes runs it
without asking, as does listing it in the server's alwaysAllow / autoApprove in the config.
"
);
help!(
    SERVERS,
    "usage: oxmcp servers

Starts every server and prints each one's state as JSON: connected (with the protocol
revision and serverInfo), failed (with the error and its stderr tail) or disabled.
"
);
help!(
    LOGIN,
    "usage: oxmcp login SERVER [--callback-port N] [--auth-dir DIR] [--allow-loopback]

Authorizes with an OAuth-protected `url` server: the browser opens its sign-in page once,
the redirect comes back to http://127.0.0.1:PORT/callback, and the tokens are kept (0600
files) for the other commands. --timeout bounds the whole login (default 300 s).
"
);
help!(
    RESOURCES,
    "usage: oxmcp resources

Starts every server and prints their resources as one JSON object: server name to the list
of resources (uri, name, mimeType, ...). Servers without resources list none.
"
);
help!(
    READ,
    "usage: oxmcp read SERVER URI

Starts SERVER only, reads the resource URI (resources/read) and prints the result as JSON
({\"contents\": [...]}, text or base64 blob). Exit 5 when the server refuses (an unknown
URI, say), with its error on stderr.
"
);
help!(
    PROMPTS,
    "usage: oxmcp prompts

Starts every server and prints their prompts as one JSON object: server name to the list
of prompts (name, description, arguments).
"
);
help!(
    PROMPT,
    "usage: oxmcp prompt SERVER NAME [ARGUMENTS_JSON]

Starts SERVER only, gets the prompt NAME (prompts/get) with ARGUMENTS_JSON, a JSON object
whose values are strings (default {}), and prints the result (description, messages) as JSON.
"
);
help!(
    PING,
    "usage: oxmcp ping [SERVER]

Starts every server (or SERVER only), pings each one and prints a JSON object: server name to
{\"ok\": true, \"ms\": ROUND_TRIP} or {\"ok\": false, \"error\": ...}. Exit 4 when a server
could not start, 5 when a started one did not answer the ping.
"
);
help!(
    INSPECT,
    "usage: oxmcp inspect [--port N] [--no-open]

Serves a web inspector on http://127.0.0.1:PORT (never another address; --port 0, the
default, picks a free port) and prints its URL, with a fresh session token, as the first
line of stdout; the browser opens on it unless --no-open. The page lists the config's
servers (state, errors with the stderr tail, revision, capabilities), makes a form of each
tool's inputSchema, calls it with live progress and cancel, reads resources and gets
prompts, answers the server's sampling, elicitation and roots requests, and shows every
JSON-RPC message (the trace), log notifications and the tools in each provider's format.
Requests without the token, from another Origin or for another Host are refused. Only the
servers of the config are ever started. Ctrl-C stops it and closes every server.
"
);
