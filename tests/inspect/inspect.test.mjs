// `oxmcp inspect` in a real browser: Debian's Chromium driven by puppeteer-core, against the
// Rust weather example, the official server-everything and a server that fails at start.
// The security checks are real HTTP requests to the running inspector (node:http, which lets
// a test set Host and Origin as an attacker's page or rebinding DNS would). Screenshots go to
// target/inspect-screenshots/ as artifacts.
//
// Environment: OXMCP_BIN (the oxmcp binary), OXMCP_WEATHER (the weather_server example),
// OXMCP_EVERYTHING (server-everything's dist/index.js), CHROMIUM (the browser).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import puppeteer from "puppeteer-core";

const need = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run \`make inspect-test\`)`);
  return v;
};
const BIN = need("OXMCP_BIN");
const WEATHER = need("OXMCP_WEATHER");
const EVERYTHING = need("OXMCP_EVERYTHING");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.OXMCP_SCREENSHOTS || path.resolve("../../target/inspect-screenshots");

let child;
let url;
let origin;
let port;
let token;
let browser;
let page;
const requests = [];
let stderr = "";

function startInspector(config) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oxmcp-inspect-"));
  const file = path.join(dir, "mcp.json");
  fs.writeFileSync(file, JSON.stringify({ mcpServers: config }));
  const proc = spawn(BIN, ["inspect", "--config", file, "--port", "0", "--no-open"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stderr.on("data", (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL on stdout; stderr: ${stderr}`)), 20000);
    readline.createInterface({ input: proc.stdout }).once("line", (line) => {
      clearTimeout(timer);
      resolve({ proc, line });
    });
    proc.once("exit", (code) => reject(new Error(`oxmcp inspect exited ${code}: ${stderr}`)));
  });
}

// One raw HTTP request with exactly these headers (Host included).
function request(method, pathname, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: pathname, headers, setHost: false, agent: false }, (res) => {
      let data = "";
      res.on("data", (d) => { data += d; });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const ours = () => ({ host: `127.0.0.1:${port}` });

async function shot(name, fullPage = true) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
}

async function waitText(selector, text, timeout = 20000) {
  await page.waitForFunction(
    (sel, t) => [...document.querySelectorAll(sel)].some((el) => el.textContent.includes(t)),
    { timeout },
    selector,
    text,
  );
}

before(async () => {
  const started = await startInspector({
    weather: { command: WEATHER },
    everything: { command: "node", args: [EVERYTHING] },
    broken: { command: "sh", args: ["-c", "echo 'cannot find API key' >&2; exit 3"] },
    hostile: { command: "node", args: [path.resolve("hostile_server.mjs")] },
  });
  child = started.proc;
  url = started.line.trim();
  const u = new URL(url);
  origin = u.origin;
  port = Number(u.port);
  token = u.searchParams.get("token");
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in CI: Chromium's sandbox needs an unprivileged user.
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1400,1000"],
    defaultViewport: { width: 1400, height: 1000 },
  });
  page = await browser.newPage();
  // Every request the page makes is recorded; anything not for the inspector is blocked.
  await page.setRequestInterception(true);
  page.on("request", (req) => {
    requests.push(req.url());
    if (req.url().startsWith(origin + "/") || req.url().startsWith("data:")) req.continue();
    else req.abort();
  });
});

after(async () => {
  if (browser) await browser.close();
  if (child) {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
});

test("the URL is the first stdout line, on 127.0.0.1, with a 256-bit token", () => {
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
  assert.ok(!stderr.includes(token), "the token is not logged on stderr");
});

test("it listens on the loopback address only", () => {
  // The kernel's socket table: the listening socket of this port is bound to 127.0.0.1.
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const rows = fs.readFileSync("/proc/net/tcp", "utf8").split("\n").filter((l) => l.includes(`:${hex} `) && / 0A /.test(l));
  assert.ok(rows.length >= 1, "a listening socket on the port");
  for (const r of rows) assert.match(r.trim().split(/\s+/)[1], new RegExp(`^0100007F:${hex}$`));
  const v6 = fs.existsSync("/proc/net/tcp6") ? fs.readFileSync("/proc/net/tcp6", "utf8") : "";
  assert.ok(!v6.split("\n").some((l) => l.includes(`:${hex} `) && / 0A /.test(l)), "no IPv6 listener");
});

test("requests without the token, or with a wrong one, are refused and show no server data", async () => {
  for (const [p, h] of [
    ["/", {}],
    ["/?token=wrong", {}],
    [`/?token=${token.slice(0, 42)}`, {}],
    ["/api/state", {}],
    ["/api/state", { "x-oxmcp-token": "x".repeat(43) }],
    ["/api/events?after=0&wait=0", {}],
    [`/api/state?token=${token}`, {}],
  ]) {
    const r = await request("GET", p, { ...ours(), ...h });
    assert.equal(r.status, 401, `${p} ${JSON.stringify(h)}`);
    assert.ok(!r.body.includes("weather") && !r.body.includes("cannot find"), r.body);
    assert.equal(r.headers["access-control-allow-origin"], undefined);
  }
  const call = await request("POST", "/api/call", { ...ours(), origin, "content-type": "application/json" },
    JSON.stringify({ call: "x", server: "weather", tool: "get_weather", arguments: { city: "Oslo" } }));
  assert.equal(call.status, 401);
  const ok = await request("GET", "/api/state", { ...ours(), "x-oxmcp-token": token });
  assert.equal(ok.status, 200);
  assert.ok(ok.body.includes("weather"));
});

test("a foreign Origin gets 403, preflight included, even with the token", async () => {
  const evil = { ...ours(), origin: "http://evil.example", "x-oxmcp-token": token, "content-type": "application/json" };
  const post = await request("POST", "/api/connect", evil, JSON.stringify({ server: "weather" }));
  assert.equal(post.status, 403);
  assert.ok(!post.body.includes("weather"));
  const get = await request("GET", "/api/state", evil);
  assert.equal(get.status, 403);
  const pre = await request("OPTIONS", "/api/call", {
    ...ours(), origin: "http://evil.example", "access-control-request-method": "POST",
    "access-control-request-headers": "x-oxmcp-token,content-type",
  });
  assert.equal(pre.status, 403);
  assert.equal(pre.headers["access-control-allow-origin"], undefined);
  const site = await request("GET", "/api/state", { ...ours(), "x-oxmcp-token": token, "sec-fetch-site": "cross-site" });
  assert.equal(site.status, 403);
  // A POST without any Origin (a non-browser, or a form the browser's rules let through).
  const bare = await request("POST", "/api/connect", { ...ours(), "x-oxmcp-token": token, "content-type": "application/json" }, "{}");
  assert.equal(bare.status, 403);
  // A cross-site form can only send text/plain or form encodings: refused.
  const form = await request("POST", "/api/connect", { ...ours(), origin, "x-oxmcp-token": token, "content-type": "text/plain" }, "{}");
  assert.equal(form.status, 415);
});

test("a Host other than the inspector's gets 403 on every route (DNS rebinding)", async () => {
  for (const host of [`evil.example:${port}`, "evil.example", `127.0.0.1:${port + 1}`, `0.0.0.0:${port}`]) {
    const page_ = await request("GET", `/?token=${token}`, { host });
    assert.equal(page_.status, 403, host);
    assert.ok(!page_.body.includes("<script"), "nothing of the page is served");
    const api = await request("GET", "/api/state", { host, "x-oxmcp-token": token });
    assert.equal(api.status, 403, host);
    assert.ok(!api.body.includes("weather"));
  }
  const localhost = await request("GET", "/api/state", { host: `localhost:${port}`, "x-oxmcp-token": token });
  assert.equal(localhost.status, 200);
});

test("the page carries a strict CSP and the browser cannot spawn what the config does not name", async () => {
  const r = await request("GET", `/?token=${token}`, ours());
  assert.equal(r.status, 200);
  const csp = r.headers["content-security-policy"];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(r.headers["referrer-policy"], "no-referrer");
  // The API takes server names only; a command in the body is not a server.
  const h = { ...ours(), origin, "x-oxmcp-token": token, "content-type": "application/json" };
  const spawnTry = await request("POST", "/api/connect", h, JSON.stringify({ server: "touch /tmp/oxmcp-pwned", command: "touch", args: ["/tmp/oxmcp-pwned"] }));
  assert.equal(spawnTry.status, 400);
  assert.match(spawnTry.body, /no server named/);
  assert.ok(!fs.existsSync("/tmp/oxmcp-pwned"));
  // Over the 1 MiB cap: 413 from the length alone, or the connection dropped mid-upload.
  const big = await request("POST", "/api/call", h, JSON.stringify({ pad: "x".repeat(2 * 1024 * 1024) }))
    .catch((e) => ({ status: e.code }));
  assert.ok(big.status === 413 || big.status === "ECONNRESET" || big.status === "EPIPE", String(big.status));
  const junk = await request("POST", "/api/call", h, "{not json");
  assert.equal(junk.status, 400);
});

test("the page lists the servers; the failed one with its error and stderr tail", async () => {
  await page.goto(url);
  await waitText("#server-list li[data-server=weather] .badge", "connected");
  await waitText("#server-list li[data-server=broken] .badge", "failed");
  await waitText("#server-list li[data-server=everything] .badge", "connected");
  // The token is gone from the address bar once read.
  assert.equal(await page.evaluate(() => location.href), `${origin}/`);
  const broken = await page.$eval("#server-list li[data-server=broken]", (el) => el.textContent);
  assert.match(broken, /exit code 3/);
  assert.match(broken, /cannot find API key/);
  const weather = await page.$eval("#server-list li[data-server=weather]", (el) => el.textContent);
  assert.match(weather, /revision: 2026-07-28/);
  assert.match(weather, /capabilities: .*tools/);
  // Reconnecting the failed server shows it failed again (the same command, from the config).
  await page.locator("::-p-aria(Connect broken)").click();
  await waitText("#server-list li[data-server=broken] .badge", "failed");
  await shot("servers");
});

test("a call filled in through the form, with schema errors shown before the call", async () => {
  await page.locator('::-p-aria(get_weather[role="button"])').click();
  const city = await page.waitForSelector("::-p-aria(city)");
  assert.equal(await city.evaluate((el) => el.tagName + ":" + el.type), "INPUT:text");
  assert.match(await page.$eval("#tool-fields", (el) => el.textContent), /required/);
  // Empty required field: refused in the page, nothing sent.
  const before_ = await page.$eval("#trace-list", (el) => el.children.length);
  await page.locator('::-p-aria(Call[role="button"])').click();
  await waitText("#form-errors", "city: required");
  const calls = await page.$$eval("#trace-list li", (els) => els.filter((e) => e.textContent.includes("tools/call")).length);
  assert.equal(calls, 0, "no tools/call was sent");
  assert.ok(before_ >= 0);
  await city.type("Beijing");
  await page.locator('::-p-aria(Call[role="button"])').click();
  await waitText("#result-body", "Beijing: ");
  await waitText("#result-body .output-check", "matches the outputSchema");
  const command = await page.$eval("#copy-command", (el) => el.value);
  assert.match(command, /^oxmcp call --config \S+ weather get_weather '\{"city":"Beijing"\}'$/);
  await waitText("#history-list", "get_weather");
  await shot("call");
  await shot("call-viewport", false);
  // The copied command, run in a shell, gives the same result as the page.
  const shown = await page.$eval("#result-body", (el) => el.textContent);
  const out = execFileSync("bash", ["-c", command.replace(/^oxmcp /, `${JSON.stringify(BIN)} `)], { encoding: "utf8" });
  const fromShell = JSON.parse(out);
  assert.equal(fromShell.structuredContent.city, "Beijing");
  assert.ok(shown.includes(fromShell.content[0].text), `${shown} vs ${fromShell.content[0].text}`);
  // Re-run from the history: the same call again.
  await page.evaluate(() => { document.getElementById("result-body").textContent = ""; });
  await page.locator("::-p-aria(Re-run get_weather)").click();
  await waitText("#result-body", "Beijing: ");
});

test("a call that does not fit the schema is refused by the core too", async () => {
  const h = { ...ours(), origin, "x-oxmcp-token": token, "content-type": "application/json" };
  const r = await request("POST", "/api/call", h, JSON.stringify({ call: "x", server: "weather", tool: "get_weather", arguments: { city: 7 } }));
  assert.equal(r.status, 422);
  assert.match(JSON.parse(r.body).schemaErrors.join(" "), /city/);
});

test("progress is shown live, and a running call can be cancelled", async () => {
  await page.locator('::-p-aria(trigger-long-running-operation[role="button"])').click();
  const duration = await page.waitForSelector("::-p-aria(duration)");
  assert.equal(await duration.evaluate((el) => el.type), "number");
  await duration.evaluate((el) => { el.value = ""; });
  await duration.type("2");
  const steps = await page.waitForSelector("::-p-aria(steps)");
  await steps.evaluate((el) => { el.value = ""; });
  await steps.type("4");
  await page.locator('::-p-aria(Call[role="button"])').click();
  await waitText("#progress-text", "/ 4");
  const live = await page.$eval("#call-progress", (el) => [el.value, el.max]);
  assert.equal(live[1], 4);
  await shot("progress");
  await waitText("#result-body", "Long running operation");
  // Again, longer, and cancel it once progress arrived.
  await duration.evaluate((el) => { el.value = "30"; });
  await steps.evaluate((el) => { el.value = "30"; });
  await page.locator('::-p-aria(Call[role="button"])').click();
  await waitText("#progress-text", "/ 30");
  await page.locator('::-p-aria(Cancel[role="button"])').click();
  await waitText("#result-body", "Request failed");
  await waitText("#trace-list", "notifications/cancelled");
});

test("an elicitation from the server is answered in a form", async () => {
  await page.locator('::-p-aria(trigger-elicitation-request[role="button"])').click();
  await page.locator('::-p-aria(Call[role="button"])').click();
  const q = await page.waitForSelector("#question-list .question");
  await waitText("#question-list", "Please provide inputs");
  const name = await q.waitForSelector("::-p-aria(name)");
  await name.type("Ada Lovelace");
  const check = await q.waitForSelector("::-p-aria(check)");
  assert.equal(await check.evaluate((el) => el.type), "checkbox");
  await check.click();
  await shot("elicitation");
  const accept = await q.waitForSelector('::-p-aria(Accept[role="button"])');
  await accept.click();
  await waitText("#result-body", "Name: Ada Lovelace");
  await waitText("#result-body", "Agreed to terms: true");
  await page.waitForFunction(() => document.querySelectorAll("#question-list .question").length === 0);
});

test("a URL-mode elicitation shows the link (http(s) only) and is answered", async () => {
  await page.locator('::-p-aria(trigger-url-elicitation[role="button"])').click();
  const field = await page.waitForSelector("#tool-fields ::-p-aria(url)");
  await field.type("https://example.invalid/verify");
  await page.locator('::-p-aria(Call[role="button"])').click();
  const q = await page.waitForSelector("#question-list .question");
  const link = await q.$eval("a", (a) => [a.href, a.rel, a.target]);
  assert.deepEqual(link, ["https://example.invalid/verify", "noopener noreferrer", "_blank"]);
  await (await q.waitForSelector('::-p-aria(Decline[role="button"])')).click();
  await waitText("#result-body", "declined to open the URL");
  await page.waitForFunction(() => document.querySelectorAll("#question-list .question").length === 0);
  // A javascript: URL is shown as text, never as a link.
  await field.evaluate((el) => { el.value = ""; });
  await field.type("javascript:window.__pwned=6");
  await page.locator('::-p-aria(Call[role="button"])').click();
  const q2 = await page.waitForSelector("#question-list .question");
  await waitText("#question-list code", "javascript:window.__pwned=6");
  assert.equal(await q2.$("a"), null);
  await (await q2.waitForSelector('::-p-aria(Cancel[role="button"])')).click();
  await waitText("#result-body", "cancelled the URL elicitation");
});

test("a sampling request is answered by the person, and a rejection reaches the server", async () => {
  await page.locator('::-p-aria(trigger-sampling-request[role="button"])').click();
  const prompt = await page.waitForSelector("::-p-aria(prompt)");
  await prompt.type("Say hi");
  await page.locator('::-p-aria(Call[role="button"])').click();
  const q = await page.waitForSelector("#question-list .question");
  await waitText("#question-list", "Say hi");
  const answer = await q.waitForSelector("::-p-aria(Response text)");
  await answer.type("Hi from a person");
  await (await q.waitForSelector('::-p-aria(Send response[role="button"])')).click();
  await waitText("#result-body", "Hi from a person");
  await waitText("#result-body", '"model": "human"');
  await page.waitForFunction(() => document.querySelectorAll("#question-list .question").length === 0);
  // Again, rejected: the tool call fails with the person's refusal.
  await page.locator('::-p-aria(Call[role="button"])').click();
  const q2 = await page.waitForSelector("#question-list .question");
  await (await q2.waitForSelector('::-p-aria(Reject[role="button"])')).click();
  await waitText("#result-body", "rejected");
});

test("log notifications appear live; a resource is read and a prompt is got", async () => {
  await page.locator('::-p-aria(toggle-simulated-logging[role="button"])').click();
  await page.locator('::-p-aria(Call[role="button"])').click();
  await waitText("#log-list", "everything [");
  await page.locator('::-p-aria(Call[role="button"])').click(); // and off again
  await page.locator("::-p-aria(Read architecture.md)").click();
  await waitText("#resource-body", "architecture");
  const sub = await page.waitForSelector("::-p-aria(Subscribe architecture.md)");
  await sub.click();
  await page.waitForFunction((el) => el.getAttribute("aria-pressed") === "true", {}, sub);
  await waitText("#trace-list", "resources/subscribe");
  // A template, its variable filled in and expanded.
  const rid = await page.waitForSelector("#resource-list ::-p-aria(resourceId)");
  await rid.type("3");
  await page.locator("::-p-aria(Read Dynamic Text Resource)").click();
  await waitText("#resource-body h3", "demo://resource/dynamic/text/3");
  await waitText("#resource-body", "Resource 3");
  // logging/setLevel from the select.
  await page.select("#log-server", "everything");
  await page.select("#log-level", "debug");
  await page.locator('::-p-aria(Set level[role="button"])').click();
  await waitText("#log-status", "level debug");
  await waitText("#trace-list", "logging/setLevel");
  // Ping.
  await page.locator("::-p-aria(Ping weather)").click();
  await waitText("#server-list li[data-server=weather]", "ping: ");
  const city = await page.waitForSelector("#prompt-list ::-p-aria(city)");
  await city.type("Paris");
  await page.locator("::-p-aria(Get args-prompt)").click();
  await waitText("#prompt-body", "Paris");
});

test("roots set in the page reach the server", async () => {
  await page.locator("::-p-aria(Roots (one file:// URI per line))").fill("file:///tmp/oxmcp-project");
  await page.locator('::-p-aria(Save roots[role="button"])').click();
  await waitText("#roots-status", "saved 1 root(s)");
  await page.locator('::-p-aria(get-roots-list[role="button"])').click();
  await page.locator('::-p-aria(Call[role="button"])').click();
  await waitText("#result-body", "file:///tmp/oxmcp-project");
  // Not a file:// URI: refused in the page, the list unchanged.
  await page.locator("::-p-aria(Roots (one file:// URI per line))").fill("https://example.invalid/");
  await page.locator('::-p-aria(Save roots[role="button"])').click();
  await waitText("#roots-status", "is not a file:// URI");
});

test("a server's hostile strings are shown as text, never run or linked", async () => {
  await waitText("#server-list li[data-server=hostile] .badge", "connected");
  const info = await page.$eval("#server-list li[data-server=hostile]", (el) => el.textContent);
  assert.match(info, /<b onmouseover=/);
  const buttons = await page.$$("#tool-list button.tool");
  let evil = null;
  for (const b of buttons) if ((await b.evaluate((el) => el.textContent)).startsWith("evil<img")) evil = b;
  assert.ok(evil, "the tool's button is named by its literal name");
  await evil.click();
  await waitText("#tool-fields", "q<img");
  await page.locator('::-p-aria(Call[role="button"])').click();
  await waitText("#result-body", "<script>window.__pwned=4</script>");
  const seen = await page.evaluate(() => ({
    pwned: window.__pwned,
    scripts: document.scripts.length,
    imgs: [...document.querySelectorAll("#result-body img, #tool-list img, #server-list img")].length,
    links: [...document.querySelectorAll("a")].map((a) => a.href),
  }));
  assert.equal(seen.pwned, undefined);
  assert.equal(seen.scripts, 1, "only the page's own script");
  assert.equal(seen.imgs, 0, "no markup became an element; the SVG image is not shown");
  assert.ok(!seen.links.some((h) => h.startsWith("javascript:")), JSON.stringify(seen.links));
  await waitText("#result-body", "image/svg+xml not shown");
  await shot("hostile");
});

test("structuredContent that does not match the outputSchema is shown as failing the check", async () => {
  await page.locator('::-p-aria(mismatch[role="button"])').click();
  await page.locator('::-p-aria(Call[role="button"])').click();
  await waitText("#result-body .output-check", "does not match the outputSchema");
  await waitText("#result-body .output-check", '"seven" is not of type "number"');
});

test("a page on another origin cannot read the inspector or drive its API", async () => {
  // A second local server plays the attacker's site; it knows the port, not the token.
  const evil = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>evil</title><p>evil</p>");
  });
  await new Promise((r) => evil.listen(0, "127.0.0.1", r));
  const evilPort = evil.address().port;
  const tab = await browser.newPage();
  const mark = JSON.parse((await request("GET", "/api/events?after=0&wait=0", { ...ours(), "x-oxmcp-token": token })).body).next;
  try {
    await tab.goto(`http://localhost:${evilPort}/`);
    const outcome = await tab.evaluate(async (target, tok) => {
      const tries = {};
      const attempt = async (name, fn) => {
        try { tries[name] = await fn(); } catch (e) { tries[name] = `blocked: ${e.name}`; }
      };
      await attempt("read page", async () => (await fetch(`${target}/`)).status);
      await attempt("read state", async () => (await fetch(`${target}/api/state`)).status);
      // Even a page that somehow had the token is refused for its Origin.
      await attempt("state with token", async () => (await fetch(`${target}/api/state`, { headers: { "x-oxmcp-token": tok } })).status);
      await attempt("blind POST", async () => {
        const r = await fetch(`${target}/api/connect`, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: '{"server":"weather"}' });
        return r.type;
      });
      return tries;
    }, origin, token);
    assert.match(String(outcome["read page"]), /blocked/);
    assert.match(String(outcome["read state"]), /blocked/);
    assert.match(String(outcome["state with token"]), /blocked/);
    // Unreadable either way (Chromium may not even send it); and if sent, it did nothing.
    assert.ok(outcome["blind POST"] === "opaque" || /blocked/.test(outcome["blind POST"]), outcome["blind POST"]);
    const since = JSON.parse((await request("GET", `/api/events?after=${mark}&wait=0`, { ...ours(), "x-oxmcp-token": token })).body);
    assert.ok(!since.events.some((e) => e.kind === "state"), "no server was reconnected");
  } finally {
    await tab.close();
    evil.close();
  }
  const direct = await request("POST", "/api/connect", { ...ours(), origin: `http://localhost:${evilPort}`, "content-type": "text/plain" }, "{}");
  assert.equal(direct.status, 403);
});

test("the trace shows both directions and filters", async () => {
  await page.locator("::-p-aria(Filter)").fill("tools/call");
  const shown = await page.$$eval("#trace-list li", (els) => els.filter((e) => !e.hidden).map((e) => e.dataset.dir));
  assert.ok(shown.includes("out") && shown.includes("in"), JSON.stringify(shown));
  const hiddenOnes = await page.$$eval("#trace-list li", (els) => els.filter((e) => e.hidden).length);
  assert.ok(hiddenOnes > 0, "the filter hides the other messages");
  await page.select("#trace-dir", "out");
  const dirs = await page.$$eval("#trace-list li", (els) => els.filter((e) => !e.hidden).map((e) => e.dataset.dir));
  assert.ok(dirs.length > 0 && dirs.every((d) => d === "out"));
  await page.locator("::-p-aria(Filter)").fill("");
  await page.select("#trace-dir", "");
});

test("the tools translate for each provider", async () => {
  for (const [provider, needle] of [["openai", '"type": "function"'], ["anthropic", '"input_schema"'], ["gemini", "parametersJsonSchema"], ["prompt", "get_weather"]]) {
    await page.select("#provider", provider);
    await page.locator('::-p-aria(Translate[role="button"])').click();
    await waitText("#translate-out", needle);
  }
  await shot("inspector");
});

test("no request left 127.0.0.1", () => {
  assert.ok(requests.length > 3, "requests were recorded");
  const outside = requests.filter((u) => !u.startsWith(origin + "/") && !u.startsWith("data:"));
  assert.deepEqual(outside, []);
});
