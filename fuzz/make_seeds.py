#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/corpus/<target>/ (descriptive file names, so a human can
tell what each seed is for). Re-run after editing; libFuzzer's own finds are not kept here.

Inputs the fuzzers found that broke an invariant are kept as `regression-*` files: they are
written by this script too, so the corpus replay test pins every fix.
"""

import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"


def j(value):
    return json.dumps(value, separators=(",", ":")).encode()


INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}},
        "clientInfo": {"name": "seed", "version": "1.0.0"},
    },
}
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "seed", "version": "0"},
}

ENVELOPE = {
    # JSON-RPC 2.0 specification, section 7 (examples), byte for byte where it matters.
    "spec7-positional-params": b'{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
    "spec7-positional-result": b'{"jsonrpc": "2.0", "result": 19, "id": 1}',
    "spec7-named-params": b'{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
    "spec7-notification": b'{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}',
    "spec7-notification-no-params": b'{"jsonrpc": "2.0", "method": "foobar"}',
    "spec7-method-not-found-request": b'{"jsonrpc": "2.0", "method": "foobar", "id": "1"}',
    "spec7-method-not-found-error": b'{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}',
    "spec7-invalid-json": b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
    "spec7-invalid-request-object": b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
    "spec7-batch-invalid-json": b'[\n  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},\n  {"jsonrpc": "2.0", "method"\n]',
    "spec7-empty-array": b"[]",
    "spec7-batch-of-one-non-object": b"[1]",
    "spec7-batch-of-non-objects": b"[1,2,3]",
    "spec7-batch-mixed": b'[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},{"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},{"foo": "boo"},{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},{"jsonrpc": "2.0", "method": "get_data", "id": "9"}]',
    "spec7-batch-all-notifications": b'[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]',
    "spec7-parse-error-null-id": b'{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}',
    # MCP messages of every shape.
    "mcp-initialize": j(INIT),
    "mcp-initialize-result": j({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "s", "version": "1"}, "instructions": "hi"}}),
    "mcp-initialized": j({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    "mcp-ping": j({"jsonrpc": "2.0", "id": "p-1", "method": "ping"}),
    "mcp-ping-result": j({"jsonrpc": "2.0", "id": "p-1", "result": {}}),
    "mcp-tools-list-cursor": j({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "dG9vbHMvbGlzdDox"}}),
    "mcp-tools-list-result": j({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "get_weather", "description": "d", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}, "annotations": {"readOnlyHint": True}}], "nextCursor": "x"}}),
    "mcp-tools-call-progress": j({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_weather", "arguments": {"city": "Oslo"}, "_meta": {"progressToken": 3}}}),
    "mcp-tools-call-result": j({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "Oslo: 4.0 \u00b0C"}], "structuredContent": {"city": "Oslo", "temperature_c": 4.0}, "isError": False}}),
    "mcp-tools-call-is-error": j({"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "No weather data"}], "isError": True}}),
    "mcp-progress": j({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 3, "progress": 0.5, "total": 1, "message": "half"}}),
    "mcp-cancelled": j({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "user"}}),
    "mcp-stateless-discover": j({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": STATELESS_META}}),
    "mcp-stateless-tools-call": j({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}, "_meta": STATELESS_META}}),
    "mcp-error-with-data": j({"jsonrpc": "2.0", "id": 9, "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"requested": "1999-01-01", "supported": ["2026-07-28", "2025-11-25"]}}}),
    "mcp-sampling-request": j({"jsonrpc": "2.0", "id": 11, "method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}}),
    "mcp-elicitation-request": j({"jsonrpc": "2.0", "id": 12, "method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}}),
    "mcp-log-message": j({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "logger": "x", "data": {"a": [1, 2]}}}),
    "mcp-resource-blob": j({"jsonrpc": "2.0", "id": 13, "result": {"contents": [{"uri": "file:///a.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}]}}),
    "mcp-batch-2025-03-26": j([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 2, "result": {}}]),
    # Edges: nesting, encoding, numbers, duplicates, nulls, framing leftovers.
    "deep-array-200": b"[" * 200,
    "deep-valid-128": b"[" * 127 + b"1" + b"]" * 127,
    "deep-valid-129": b"[" * 129 + b"]" * 129,
    "deep-params-object": b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b'{"a":' * 140 + b"1" + b"}" * 141,
    "deep-brackets-in-string": b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"' + b"[{" * 300 + b'\\""}}',
    "utf8-invalid-in-method": b'{"jsonrpc":"2.0","id":1,"method":"p\xffng"}',
    "utf8-invalid-in-unknown-member": b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xc3\x28"}',
    "utf8-invalid-in-id": b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}',
    "utf8-overlong-slash": b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xafping"}',
    "utf8-invalid-scalar-string": b'"\x80"',
    "utf8-bom": b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}',
    "utf8-multibyte-method": j({"jsonrpc": "2.0", "id": "\u00e9\u6f22\U0001f600", "method": "t\u00f6\u00f6ls/list"}),
    "escape-lone-surrogate-id": b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
    "escape-lone-surrogate-key": b'{"jsonrpc":"2.0","id":1,"method":"ping","\\udc00":1}',
    "escape-nul-in-method": b'{"jsonrpc":"2.0","id":1,"method":"ping\\u0000"}',
    "escape-unicode-key-names": b'{"\\u006asonrpc":"2.0","\\u0069d":1,"m\\u0065thod":"ping"}',
    "number-id-i64-max": b'{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}',
    "number-id-i64-max-plus-one": b'{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}',
    "number-id-i64-min-minus-one": b'{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}',
    "number-id-huge": b'{"jsonrpc":"2.0","id":1' + b"0" * 400 + b',"method":"ping"}',
    "number-id-exponent": b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    "number-id-fraction": b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}',
    "number-id-negative-zero": b'{"jsonrpc":"2.0","id":-0,"method":"ping"}',
    "number-error-code-float": b'{"jsonrpc":"2.0","id":1,"error":{"code":-32600.5,"message":"x"}}',
    "number-error-data-exponents": b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[1E2,1e-7,-0.0,1e308]}}',
    "duplicate-id": b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
    "duplicate-method": b'{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}',
    "duplicate-inner-key": b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}',
    "null-id-request": b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    "null-id-result": b'{"jsonrpc":"2.0","id":null,"result":{}}',
    "null-method": b'{"jsonrpc":"2.0","id":1,"method":null}',
    "null-params": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":null}',
    "null-everything": b'{"jsonrpc":null,"id":null,"method":null,"params":null,"result":null,"error":null}',
    "crlf-trailing": b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r',
    "whitespace-inside": b' \t{ "jsonrpc" :\r\n"2.0" , "id" : 1 ,\t"method" : "ping" }\n ',
    "form-feed-leading": b'\x0c{"jsonrpc":"2.0","id":1,"method":"ping"}',
    "trailing-garbage": b'{"jsonrpc":"2.0","id":1,"method":"ping"}x',
    "two-objects": b'{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}',
    "nul-after-object": b'{"jsonrpc":"2.0","id":1,"method":"ping"}\x00',
    "params-string": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}',
    "params-true": b'{"jsonrpc":"2.0","method":"n","params":true}',
    "params-with-newline": b'{"jsonrpc":"2.0","id":1,"method":"x","params":{\n"a":1}}',
    "unknown-members": b'{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"deep":[1,2,{"x":null}]},"result2":1}',
    "both-result-and-error": b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}',
    "error-missing-message": b'{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
    "error-extra-fields": b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x","data":null,"more":2}}',
    "error-no-id": b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}',
    "result-no-id": b'{"jsonrpc":"2.0","result":{}}',
    "request-with-result": b'{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}',
    "response-with-params": b'{"jsonrpc":"2.0","id":1,"result":{},"params":{}}',
    "id-object": b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    "id-array": b'{"jsonrpc":"2.0","id":[1],"method":"ping"}',
    "id-bool": b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    "id-empty-string": b'{"jsonrpc":"2.0","id":"","method":"ping"}',
    "version-1.0": b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
    "version-number": b'{"jsonrpc":2.0,"id":1,"method":"ping"}',
    "version-missing": b'{"id":1,"method":"ping"}',
    "empty-object": b"{}",
    "empty-input": b"",
    "whitespace-only": b" \t\r\n",
    "scalar-null": b"null",
    "scalar-string": b'"ping"',
    "nested-batch": b"[[],[{}],{}]",
    "long-method-name": j({"jsonrpc": "2.0", "id": 1, "method": "m" * 5000}),
}

FRAMER = {}


def framer(name, cap, plan, stream):
    """cap: 1..=64; plan: (max_chunk index 0..7) << 5 | pending << 4 | seed bits."""
    assert 1 <= cap <= 64
    FRAMER[name] = bytes([cap - 1, plan]) + stream


LINES = b"\n".join(ENVELOPE[k] for k in ("mcp-ping", "mcp-initialized", "mcp-ping-result"))
framer("lines-whole-read", 64, 0xE0, LINES + b"\n")
framer("lines-byte-by-byte", 64, 0x00, LINES + b"\n")
framer("lines-pending-between-reads", 64, 0x53, LINES + b"\n")
framer("crlf-lines", 32, 0x40, b'{"a":1}\r\n{"b":2}\r\n\r\n')
framer("no-final-newline", 16, 0x20, b'{"a":1}\n{"b":2}')
framer("final-cr-without-newline", 4, 0x00, b"abcd\r")
framer("blank-and-whitespace-lines", 8, 0x21, b"\n\n \t \n\r\n\x0c\n x \n")
framer("oversized-then-valid", 8, 0x60, b"x" * 40 + b"\nok\n")
framer("oversized-across-many-reads", 8, 0x02, b"y" * 300 + b"\r\nok\r\n")
framer("oversized-at-eof", 8, 0x41, b"ok\n" + b"z" * 30)
framer("oversized-blank-line", 4, 0xE0, b" " * 10 + b"\nok\n")
framer("exactly-at-cap", 8, 0xE0, b"12345678\n12345678\r\n123456789\n")
framer("only-newlines", 1, 0x00, b"\n" * 20)
framer("empty-stream", 8, 0x00, b"")
framer("nul-and-invalid-utf8", 16, 0x30, b"\x00\xff\xfe\n\x80abc\n")
framer("cr-in-middle", 8, 0x00, b"a\rb\r\rc\n\r\r\n")
framer("many-short-lines", 2, 0x84, b"a\nb\r\nc\n\nd\r\n" * 50)
framer("long-stream-4k-reads", 64, 0xC5, (ENVELOPE["mcp-tools-call-progress"][:60] + b"\n") * 100)
# Regressions found by the fuzzer (fixed in core/src/jsonrpc/framing.rs):
# a line of exactly the cap ended by CRLF was dropped as oversized when the `\r` and the `\n`
# came in different reads (here: cap 1, one-byte reads, the line "\0").
FRAMER["regression-crlf-at-cap-split-read"] = bytes([0, 0]) + b"\x00\r\n"
# the length reported for a dropped CRLF line counted the `\r` when the line was dropped
# across reads, and not when it arrived in one read.
FRAMER["regression-oversized-len-counts-cr"] = bytes([0, 0]) + b"ab\r\n"
# the fuzzer's original find for the second one (the line "\t\t" under a 1-byte cap).
FRAMER["regression-oversized-len-original"] = bytes([0, 0]) + b"\xbc\n\t\t\r\n"

# Regression found by the fuzzer (fixed in core/src/jsonrpc/decode.rs): invalid UTF-8 in a
# string serde_json skips was accepted as JSON, so the session answered it.
ENVELOPE["regression-invalid-utf8-in-skipped-string"] = b'"0\xb0)0"'

# http_request: data[0] picks the server (bits 0-1: no session, a 2025-03-26 session, a
# 2025-11-25 session, stateless; bit 2: json_response), then `METHOD PATH`, header lines, a
# blank line and the body. Every body shape of the POST rule (core/src/transport/http/
# post_rule.rs) against every server, plus the other methods and refusals.
HTTP = {}
POST_HEAD = b"POST /mcp\nContent-Type: application/json\nAccept: application/json, text/event-stream\n\n"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
NOTE = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
SHAPES = {
    "request": j(PING),
    "tools-list": j({"jsonrpc": "2.0", "id": "t", "method": "tools/list"}),
    "notification": j(NOTE),
    "response": j({"jsonrpc": "2.0", "id": 99, "result": {}}),
    "error-response": j({"jsonrpc": "2.0", "id": 98, "error": {"code": -1, "message": "x"}}),
    "array-one-request": j([PING]),
    "array-request-and-notification": j([PING, NOTE]),
    "array-notifications": j([NOTE, NOTE]),
    "array-invalid-elements": b"[1,2]",
    "array-request-and-invalid": j([PING, 1]),
    "array-notification-and-invalid": j([NOTE, {"jsonrpc": "2.0", "method": 3}]),
    "array-initialize": j([INIT]),
    "empty-array": b"[]",
    "scalar": b"123",
    "null": b"null",
    "empty-object": b"{}",
    "object-no-message": b'{"foo":"bar"}',
    "request-bad-params": b'{"jsonrpc":"2.0","id":7,"method":"ping","params":3}',
    "request-null-id": b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    "invalid-json": b'{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]',
    "initialize": j(INIT),
}
for config, server in ((0, "fresh"), (1, "s2025-03-26"), (2, "s2025-11-25"), (3, "stateless"), (5, "s2025-03-26-json"), (6, "s2025-11-25-json"), (7, "stateless-json")):
    for shape, body in SHAPES.items():
        HTTP[f"{server}-{shape}"] = bytes([config]) + POST_HEAD + body
HTTP["s2025-11-25-wrong-content-type"] = bytes([2]) + b"POST /mcp\nContent-Type: text/plain\nAccept: application/json, text/event-stream\n\n" + j(PING)
HTTP["s2025-11-25-no-accept"] = bytes([2]) + b"POST /mcp\nContent-Type: application/json\n\n" + j(PING)
HTTP["s2025-11-25-too-large"] = bytes([2]) + POST_HEAD + b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * 5000 + b'"}}'
HTTP["s2025-11-25-unknown-session"] = bytes([2]) + b"POST /mcp\nMcp-Session-Id: nope\nContent-Type: application/json\nAccept: application/json, text/event-stream\n\n" + j(PING)
HTTP["s2025-11-25-bad-version-header"] = bytes([2]) + b"POST /mcp\nMCP-Protocol-Version: 1999-01-01\nContent-Type: application/json\nAccept: application/json, text/event-stream\n\n" + j(PING)
HTTP["s2025-11-25-get-stream"] = bytes([2]) + b"GET /mcp\nAccept: text/event-stream\n\n"
HTTP["s2025-11-25-delete"] = bytes([2]) + b"DELETE /mcp\n\n"
HTTP["s2025-11-25-put"] = bytes([2]) + b"PUT /mcp\n\n"
HTTP["s2025-11-25-rebinding-host"] = bytes([2]) + b"POST /mcp\nHost: evil.example\nContent-Type: application/json\nAccept: application/json, text/event-stream\n\n" + j(PING)
HTTP["s2025-11-25-bad-origin"] = bytes([2]) + b"POST /mcp\nOrigin: http://evil.example\nContent-Type: application/json\nAccept: application/json, text/event-stream\n\n" + j(PING)
HTTP["fresh-not-found-path"] = bytes([0]) + b"POST /nope\n\n{}"
HTTP["fresh-legacy-stream"] = bytes([0]) + b"GET /sse\nAccept: text/event-stream\n\n"
HTTP["fresh-legacy-messages-no-session"] = bytes([0]) + POST_HEAD.replace(b"/mcp", b"/messages") + j(PING)
HTTP["fresh-bare-body"] = bytes([0]) + j(PING)
HTTP["fresh-garbage-head"] = bytes([0]) + b"\x00\xff GET\n\x01: \x02\n\n\xff"
STATELESS_PING = {"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"_meta": STATELESS_META}}
MODERN = b"POST /mcp\nMCP-Protocol-Version: 2026-07-28\nMcp-Method: ping\nContent-Type: application/json\nAccept: application/json, text/event-stream\n\n"
HTTP["v2026-request"] = bytes([0]) + MODERN + j(STATELESS_PING)
HTTP["v2026-array"] = bytes([0]) + MODERN + j([STATELESS_PING])
HTTP["v2026-invalid-elements"] = bytes([0]) + MODERN + b"[1,2]"
HTTP["v2026-method-mismatch"] = bytes([0]) + MODERN.replace(b"Mcp-Method: ping", b"Mcp-Method: tools/list") + j(STATELESS_PING)
HTTP["v2026-notification"] = bytes([0]) + MODERN.replace(b"Mcp-Method: ping", b"Mcp-Method: notifications/roots/list_changed") + j(NOTE)
HTTP["v2026-null"] = bytes([0]) + MODERN + b"null"


def main():
    for target, seeds in (("jsonrpc_envelope", ENVELOPE), ("stdio_framer", FRAMER), ("http_request", HTTP)):
        out = ROOT / target
        out.mkdir(parents=True, exist_ok=True)
        for old in out.iterdir():
            old.unlink()
        for name, data in seeds.items():
            (out / name).write_bytes(data)
        print(f"{target}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
