// oxmcp inspect: the page. Plain JavaScript, no dependency, nothing loaded from elsewhere.
// Everything a server sent is shown with textContent (never parsed as HTML), and a link is
// made only of an http(s) URL, opened with noopener and no referrer.
"use strict";

(function () {
  // The token arrives once in the URL; it is kept in this closure and taken out of the
  // address bar (and so out of history, bookmarks and any Referer).
  const params = new URLSearchParams(location.search);
  const TOKEN = params.get("token") || "";
  history.replaceState(null, "", "/");

  const $ = (id) => document.getElementById(id);
  let state = { servers: [], roots: [] };
  let selected = null; // {server, tool}
  let running = null; // call id
  let callSeq = 0;
  const historyItems = [];
  const traceItems = [];
  const TRACE_SHOWN = 2000;

  // --- DOM helpers ---------------------------------------------------------------------
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") el.textContent = v;
      else if (k === "on") for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
      else if (k === "class") el.className = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const clear = (el) => { while (el.firstChild) el.removeChild(el.firstChild); return el; };
  const pretty = (v) => JSON.stringify(v, null, 2);
  let uid = 0;
  const nextId = (p) => `${p}-${++uid}`;
  function safeLink(url, text) {
    try {
      const u = new URL(url);
      if (u.protocol === "http:" || u.protocol === "https:") {
        return h("a", { href: u.href, target: "_blank", rel: "noopener noreferrer", text: text || u.href });
      }
    } catch (_) { /* not a URL: shown as text */ }
    return h("code", { text: url });
  }

  // --- API -----------------------------------------------------------------------------
  async function api(path, body) {
    const init = { headers: { "x-oxmcp-token": TOKEN }, cache: "no-store" };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const r = await fetch("/api/" + path, init);
    let data = null;
    try { data = await r.json(); } catch (_) { data = { error: `HTTP ${r.status}` }; }
    return { ok: r.ok, status: r.status, data };
  }

  // --- Servers -------------------------------------------------------------------------
  async function refresh() {
    const r = await api("state");
    if (!r.ok) { $("conn").textContent = `refused: ${r.data.error}`; return; }
    state = r.data;
    renderServers();
    renderTools();
    renderResources();
    renderPrompts();
    if (!$("roots-text").matches(":focus")) {
      $("roots-text").value = (state.roots || []).map((x) => x.uri).join("\n");
    }
  }

  function renderServers() {
    const list = clear($("server-list"));
    const logServer = clear($("log-server"));
    for (const s of state.servers) {
      const caps = s.capabilities ? Object.keys(s.capabilities).join(", ") || "none" : null;
      const item = h("li", { class: "server", "data-server": s.name },
        h("h3", {}, s.name, " ", h("span", { class: `badge state-${s.state}`, text: s.state })),
        s.server_info ? h("div", {}, "server: ", h("code", { text: s.server_info })) : null,
        s.protocol_version ? h("div", {}, "revision: ", h("code", { text: s.protocol_version })) : null,
        caps ? h("div", {}, "capabilities: ", h("code", { text: caps })) : null,
        s.error ? h("div", { class: "bad" }, h("strong", { text: "error: " }), h("span", { class: "server-error", text: s.error })) : null,
        s.stderr ? h("details", { open: true }, h("summary", { text: "stderr (tail)" }), h("pre", { class: "stderr", text: s.stderr })) : null,
        s.restarts ? h("div", { class: "muted", text: `restarted ${s.restarts} time(s)` }) : null,
        s.state !== "disabled" && s.state !== "connecting"
          ? h("div", { class: "row" },
            h("button", { type: "button", on: { click: () => reconnect(s.name) } }, s.state === "connected" ? `Reconnect ${s.name}` : `Connect ${s.name}`),
            s.state === "connected" ? h("button", { type: "button", on: { click: () => ping(s.name) } }, `Ping ${s.name}`) : null)
          : null,
        h("div", { class: "muted", role: "status", id: `server-status-${s.name}` }));
      list.append(item);
      if (s.state === "connected") logServer.append(h("option", { value: s.name, text: s.name }));
    }
  }

  async function reconnect(name) {
    $(`server-status-${name}`).textContent = "connecting…";
    const r = await api("connect", { server: name });
    await refresh();
    if (!r.ok) $(`server-status-${name}`).textContent = r.data.error;
  }

  async function ping(name) {
    const r = await api("ping", { server: name });
    $(`server-status-${name}`).textContent = r.ok ? `ping: ${r.data.ms.toFixed(1)} ms` : `ping failed: ${r.data.error}`;
  }

  // --- Tools ---------------------------------------------------------------------------
  function renderTools() {
    const list = clear($("tool-list"));
    for (const s of state.servers) {
      if (!s.tools || !s.tools.length) continue;
      list.append(h("h3", { text: s.name }));
      for (const t of s.tools) {
        const pressed = selected && selected.server === s.name && selected.tool === t.name;
        list.append(h("button", {
          type: "button", class: "tool", "aria-pressed": pressed ? "true" : "false",
          title: t.description || "", on: { click: () => selectTool(s.name, t.name) },
        }, t.name));
      }
    }
    if (selected && !findTool(selected.server, selected.tool)) { selected = null; $("tool-form").hidden = true; }
  }

  function findTool(server, name) {
    const s = state.servers.find((x) => x.name === server);
    return s && (s.tools || []).find((t) => t.name === name);
  }

  // The fixed choices of a schema: `enum` (with legacy `enumNames`), or a `oneOf`/`anyOf` of
  // `const`s with titles; null when the value is free.
  function choicesOf(schema) {
    if (Array.isArray(schema.enum)) {
      return schema.enum.map((v, i) => ({ value: v, title: String((schema.enumNames || [])[i] ?? v) }));
    }
    const alts = schema.oneOf || schema.anyOf;
    if (Array.isArray(alts) && alts.length && alts.every((a) => a && "const" in a)) {
      return alts.map((a) => ({ value: a.const, title: a.title ? `${a.title} (${a.const})` : String(a.const) }));
    }
    return null;
  }

  // One input per property, labelled by the property's name. Nested objects and arrays
  // (and anything without a simple type) are a JSON field, parsed as typed.
  function fieldFor(name, schema, required, value) {
    const id = nextId("f");
    const hintId = schema.description ? id + "-hint" : null;
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
    let input;
    let kind;
    const single = choicesOf(schema);
    const multi = type === "array" && schema.items ? choicesOf(schema.items) : null;
    if (single) {
      kind = "enum";
      input = h("select", { id, name });
      if (!required) input.append(h("option", { value: "", text: "(none)" }));
      single.forEach((c, i) => input.append(h("option", { value: String(i), text: c.title })));
      const pick = value !== undefined ? value : schema.default;
      const at = single.findIndex((c) => c.value === pick);
      if (at >= 0) input.value = String(at);
    } else if (multi) {
      kind = "multi";
      input = h("select", { id, name, multiple: true, size: Math.min(multi.length, 6) });
      const picked = value !== undefined ? value : schema.default || [];
      multi.forEach((c, i) => input.append(h("option", { value: String(i), text: c.title, selected: picked.includes(c.value) })));
    } else if (type === "boolean") {
      kind = "boolean";
      input = h("input", { id, name, type: "checkbox" });
      input.checked = value !== undefined ? !!value : !!schema.default;
    } else if (type === "number" || type === "integer") {
      kind = type;
      input = h("input", { id, name, type: "number", step: type === "integer" ? "1" : "any", min: schema.minimum, max: schema.maximum });
      const v = value !== undefined ? value : schema.default;
      if (v !== undefined) input.value = String(v);
    } else if (type === "string") {
      kind = "string";
      const t = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[schema.format] || "text";
      input = h("input", { id, name, type: t === "datetime-local" ? "text" : t, minlength: schema.minLength, maxlength: schema.maxLength });
      const v = value !== undefined ? value : schema.default;
      if (v !== undefined) input.value = String(v);
    } else {
      kind = "json";
      input = h("textarea", { id, name, rows: 3, placeholder: "JSON" });
      const v = value !== undefined ? value : schema.default;
      if (v !== undefined) input.value = JSON.stringify(v);
    }
    if (required) input.setAttribute("aria-required", "true");
    if (hintId) input.setAttribute("aria-describedby", hintId);
    const wrap = h("div", { class: "field", "data-field": name },
      h("div", {}, h("label", { for: id, text: name }), required ? h("span", { class: "req", text: "required" }) : null,
        h("span", { class: "muted", text: ` ${kind === "json" ? (type || "json") + " as JSON" : kind}` })),
      input,
      hintId ? h("span", { class: "hint", id: hintId, text: schema.description }) : null);
    return { name, schema, required, kind, input, wrap };
  }

  // Reads the fields back into a JSON object; errors name the field.
  function readFields(fields) {
    const out = {};
    const errors = [];
    for (const f of fields) {
      const el = f.input;
      let v;
      if (f.kind === "boolean") v = el.checked;
      else if (f.kind === "enum") v = el.value === "" ? undefined : choicesOf(f.schema)[Number(el.value)].value;
      else if (f.kind === "multi") v = [...el.selectedOptions].map((o) => choicesOf(f.schema.items)[Number(o.value)].value);
      else if (f.kind === "number" || f.kind === "integer") {
        if (el.value.trim() === "") v = undefined;
        else {
          v = Number(el.value);
          if (!Number.isFinite(v)) errors.push(`${f.name}: not a number`);
          else if (f.kind === "integer" && !Number.isInteger(v)) errors.push(`${f.name}: must be an integer`);
          if (f.schema.minimum !== undefined && v < f.schema.minimum) errors.push(`${f.name}: below the minimum ${f.schema.minimum}`);
          if (f.schema.maximum !== undefined && v > f.schema.maximum) errors.push(`${f.name}: above the maximum ${f.schema.maximum}`);
        }
      } else if (f.kind === "json") {
        if (el.value.trim() === "") v = undefined;
        else {
          try { v = JSON.parse(el.value); } catch (e) { errors.push(`${f.name}: not valid JSON (${e.message})`); }
        }
      } else v = el.value === "" ? undefined : el.value;
      if (v === undefined) {
        if (f.required) errors.push(`${f.name}: required`);
      } else out[f.name] = v;
      el.setAttribute("aria-invalid", errors.some((e) => e.startsWith(f.name + ":")) ? "true" : "false");
    }
    return { value: out, errors };
  }

  function buildFields(container, schema, values) {
    clear(container);
    const props = (schema && schema.properties) || {};
    const required = new Set((schema && schema.required) || []);
    const fields = [];
    for (const [name, sub] of Object.entries(props)) {
      const f = fieldFor(name, sub || {}, required.has(name), values ? values[name] : undefined);
      container.append(f.wrap);
      fields.push(f);
    }
    if (!fields.length) container.append(h("p", { class: "muted", text: "This tool takes no arguments." }));
    return fields;
  }

  let toolFields = [];
  function selectTool(server, name, values) {
    const t = findTool(server, name);
    if (!t) return;
    selected = { server, tool: name };
    $("call-empty").hidden = true;
    $("tool-form").hidden = false;
    $("tool-title").textContent = `${server} · ${name}`;
    $("tool-desc").textContent = t.description || "";
    toolFields = buildFields($("tool-fields"), t.inputSchema, values);
    clear($("form-errors"));
    renderTools();
    updateCommand();
  }

  function shellQuote(s) {
    return /^[A-Za-z0-9_./:=@-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
  }
  function commandFor(server, tool, args) {
    const parts = ["oxmcp", "call"];
    if (state.config) parts.push("--config", shellQuote(state.config));
    parts.push(shellQuote(server), shellQuote(tool), shellQuote(JSON.stringify(args)));
    return parts.join(" ");
  }
  function updateCommand() {
    if (!selected) return;
    const { value } = readFields(toolFields);
    $("copy-command").value = commandFor(selected.server, selected.tool, value);
  }

  async function callTool(server, tool, args) {
    const id = `call-${++callSeq}`;
    running = id;
    $("call-button").disabled = true;
    $("cancel-button").disabled = false;
    $("call-progress").removeAttribute("value");
    $("progress-text").textContent = "running…";
    const started = performance.now();
    const r = await api("call", { call: id, server, tool, arguments: args });
    const ms = performance.now() - started;
    running = null;
    $("call-button").disabled = false;
    $("cancel-button").disabled = true;
    if (r.status === 422) {
      $("call-progress").value = 0;
      $("progress-text").textContent = "";
      $("form-errors").textContent = "Schema errors:\n" + (r.data.schemaErrors || []).join("\n");
      return;
    }
    $("call-progress").value = 1;
    $("progress-text").textContent = r.ok ? `done in ${ms.toFixed(0)} ms` : "failed";
    renderResult(server, tool, r);
    historyItems.unshift({ server, tool, args, ok: r.ok && !(r.data.result && r.data.result.isError), ms });
    renderHistory();
  }

  $("tool-form").addEventListener("input", updateCommand);
  $("tool-form").addEventListener("change", updateCommand);
  $("tool-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (!selected || running) return;
    const { value, errors } = readFields(toolFields);
    const box = clear($("form-errors"));
    if (errors.length) { box.textContent = "Schema errors:\n" + errors.join("\n"); return; }
    callTool(selected.server, selected.tool, value);
  });
  $("cancel-button").addEventListener("click", async () => {
    if (!running) return;
    const r = await api("cancel", { call: running });
    $("progress-text").textContent = r.ok ? "cancelling…" : r.data.error;
  });
  $("copy-button").addEventListener("click", async () => {
    const el = $("copy-command");
    el.select();
    try { await navigator.clipboard.writeText(el.value); } catch (_) { /* selected for Ctrl-C */ }
  });

  // --- Result --------------------------------------------------------------------------
  function contentBlock(b) {
    switch (b.type) {
      case "text": return h("pre", { class: "block-text", text: b.text });
      case "image": {
        const ok = /^image\/(png|jpeg|gif|webp)$/.test(b.mimeType || "");
        return ok ? h("img", { class: "result-image", alt: `image (${b.mimeType})`, src: `data:${b.mimeType};base64,${b.data}` })
          : h("p", { class: "bad", text: `image of type ${b.mimeType} not shown` });
      }
      case "audio": return h("p", { text: `audio (${b.mimeType}, ${(b.data || "").length} base64 characters)` });
      case "resource_link": return h("div", { class: "block-link" }, "resource link: ", h("code", { text: b.uri }), b.name ? ` (${b.name})` : "", " ", safeLink(b.uri, "open"));
      case "resource": {
        const r = b.resource || {};
        return h("div", {}, "embedded resource ", h("code", { text: r.uri || "" }), h("pre", { text: r.text !== undefined ? r.text : `(${(r.blob || "").length} base64 characters)` }));
      }
      default: return h("pre", { text: pretty(b) });
    }
  }

  function renderResult(server, tool, r) {
    const body = clear($("result-body"));
    body.append(h("p", { class: "muted", text: `${server} · ${tool}` }));
    if (!r.ok) {
      body.append(h("p", { class: "bad" }, h("strong", { text: "Request failed: " }), r.data.error || `HTTP ${r.status}`));
      return;
    }
    const res = r.data.result || {};
    if (res.isError) body.append(h("p", { class: "bad", text: "The tool returned an error result (isError)." }));
    for (const b of res.content || []) body.append(contentBlock(b));
    if (res.structuredContent !== undefined) {
      body.append(h("h3", { text: "structuredContent" }), h("pre", { text: pretty(res.structuredContent) }));
    }
    const check = r.data.outputCheck;
    if (check) {
      body.append(check.valid
        ? h("p", { class: "ok output-check", text: "structuredContent matches the outputSchema." })
        : h("p", { class: "bad output-check", text: "structuredContent does not match the outputSchema: " + check.errors.join("; ") }));
    }
    body.append(h("details", {}, h("summary", { text: "raw result" }), h("pre", { text: pretty(res) })));
  }

  function renderHistory() {
    const list = clear($("history-list"));
    historyItems.slice(0, 50).forEach((c) => {
      list.append(h("li", {},
        h("span", { class: c.ok ? "ok" : "bad", text: c.ok ? "✓ " : "✗ " }),
        h("code", { text: `${c.server} · ${c.tool} ${JSON.stringify(c.args)}` }), ` ${c.ms.toFixed(0)} ms `,
        h("button", { type: "button", on: { click: () => { selectTool(c.server, c.tool, c.args); callTool(c.server, c.tool, c.args); } } }, `Re-run ${c.tool}`),
        h("button", { type: "button", on: { click: () => { $("copy-command").value = commandFor(c.server, c.tool, c.args); } } }, "Show as oxmcp call")));
    });
  }

  // --- Resources and prompts -----------------------------------------------------------
  function expandTemplate(tpl, values) {
    // RFC 6570 level 1 ({var}, reserved characters encoded) and {?a,b} query expansion.
    return tpl.replace(/\{([?&]?)([^}]+)\}/g, (_, op, names) => {
      const vars = names.split(",").map((n) => n.trim());
      if (op) {
        const pairs = vars.filter((n) => values[n]).map((n) => `${n}=${encodeURIComponent(values[n])}`);
        return pairs.length ? op + pairs.join("&") : "";
      }
      return vars.map((n) => encodeURIComponent(values[n] || "")).join(",");
    });
  }

  function renderResources() {
    const list = clear($("resource-list"));
    for (const s of state.servers) {
      const res = s.resources || [];
      const tpls = Array.isArray(s.templates) ? s.templates : [];
      if (!res.length && !tpls.length) continue;
      list.append(h("h3", { text: s.name }));
      const ul = h("ul", { class: "plain" });
      for (const r of res.slice(0, 200)) {
        ul.append(h("li", {}, h("code", { text: r.uri }), " ",
          h("button", { type: "button", on: { click: () => readResource(s.name, r.uri) } }, `Read ${r.name || r.uri}`),
          h("button", { type: "button", on: { click: (ev) => subscribe(s.name, r.uri, ev.target) } }, `Subscribe ${r.name || r.uri}`)));
      }
      for (const t of tpls) {
        const vars = [...new Set([...t.uriTemplate.matchAll(/\{[?&]?([^}]+)\}/g)].flatMap((m) => m[1].split(",").map((x) => x.trim())))];
        const inputs = vars.map((v) => { const id = nextId("tv"); return [v, h("input", { id, name: v }), id]; });
        ul.append(h("li", {}, "template ", h("code", { text: t.uriTemplate }),
          ...inputs.map(([v, el, id]) => h("span", {}, " ", h("label", { for: id, text: v }), " ", el)),
          " ", h("button", {
            type: "button", on: {
              click: () => {
                const values = Object.fromEntries(inputs.map(([v, el]) => [v, el.value]));
                readResource(s.name, expandTemplate(t.uriTemplate, values));
              },
            },
          }, `Read ${t.name || t.uriTemplate}`)));
      }
      list.append(ul);
    }
  }

  async function readResource(server, uri) {
    const body = clear($("resource-body"));
    const r = await api("read", { server, uri });
    body.append(h("h3", { text: `${server} · ${uri}` }));
    if (!r.ok) { body.append(h("p", { class: "bad", text: r.data.error })); return; }
    for (const c of r.data.contents || []) {
      body.append(c.text !== undefined ? h("pre", { class: "scroll", text: c.text }) : h("p", { text: `${c.mimeType || "blob"}: ${(c.blob || "").length} base64 characters` }));
    }
  }

  async function subscribe(server, uri, button) {
    const on = button.getAttribute("aria-pressed") !== "true";
    const r = await api("subscribe", { server, uri, subscribe: on });
    if (r.ok) button.setAttribute("aria-pressed", on ? "true" : "false");
    else button.title = r.data.error;
  }

  function renderPrompts() {
    const list = clear($("prompt-list"));
    for (const s of state.servers) {
      if (!s.prompts || !s.prompts.length) continue;
      list.append(h("h3", { text: s.name }));
      for (const p of s.prompts) {
        const inputs = (p.arguments || []).map((a) => { const id = nextId("pa"); return [a, h("input", { id, name: a.name, "aria-required": a.required ? "true" : null }), id]; });
        list.append(h("div", { class: "field" }, h("strong", { text: p.name }), p.description ? h("span", { class: "hint", text: p.description }) : null,
          ...inputs.map(([a, el, id]) => h("div", {}, h("label", { for: id, text: a.name }), a.required ? h("span", { class: "req", text: "required" }) : null, " ", el)),
          h("button", {
            type: "button", on: {
              click: async () => {
                const args = {};
                for (const [a, el] of inputs) if (el.value !== "") args[a.name] = el.value;
                const r = await api("prompt", { server: s.name, name: p.name, arguments: args });
                const body = clear($("prompt-body"));
                body.append(h("h3", { text: `${s.name} · ${p.name}` }));
                if (!r.ok) body.append(h("p", { class: "bad", text: r.data.error }));
                else for (const m of r.data.messages || []) body.append(h("div", {}, h("strong", { text: m.role + ": " }), contentBlock(m.content)));
              },
            },
          }, `Get ${p.name}`)));
      }
    }
  }

  // --- Server questions ----------------------------------------------------------------
  function renderQuestion(ev) {
    const box = h("div", { class: "question", role: "group", "aria-labelledby": `q-${ev.id}`, "data-question": ev.id });
    const p = ev.params || {};
    const status = h("p", { class: "errors", role: "alert" });
    const send = async (result, reject) => {
      const r = await api("answer", { id: ev.id, result, reject });
      if (!r.ok) status.textContent = r.data.error;
    };
    if (ev.question === "elicitation") {
      box.append(h("h3", { id: `q-${ev.id}`, text: `${ev.server} asks: ${p.message || "(no message)"}` }));
      if (p.mode === "url") {
        box.append(h("p", {}, "It asks you to open: ", safeLink(p.url)));
        box.append(h("div", { class: "row" },
          h("button", { type: "button", on: { click: () => send({ action: "accept" }) } }, "Accept"),
          h("button", { type: "button", on: { click: () => send({ action: "decline" }) } }, "Decline"),
          h("button", { type: "button", on: { click: () => send({ action: "cancel" }) } }, "Cancel")));
      } else {
        const fields = h("div");
        const list = buildFields(fields, p.requestedSchema || {}, undefined);
        box.append(fields, status, h("div", { class: "row" },
          h("button", {
            type: "button", on: {
              click: () => {
                const { value, errors } = readFields(list);
                if (errors.length) { status.textContent = errors.join("\n"); return; }
                send({ action: "accept", content: value });
              },
            },
          }, "Accept"),
          h("button", { type: "button", on: { click: () => send({ action: "decline" }) } }, "Decline"),
          h("button", { type: "button", on: { click: () => send({ action: "cancel" }) } }, "Cancel")));
      }
    } else if (ev.question === "sampling") {
      box.append(h("h3", { id: `q-${ev.id}`, text: `${ev.server} asks for a model's message` }));
      for (const m of p.messages || []) {
        const c = Array.isArray(m.content) ? m.content : [m.content];
        box.append(h("div", {}, h("strong", { text: `${m.role}: ` }), ...c.map(contentBlock)));
      }
      if (p.systemPrompt) box.append(h("p", { class: "muted", text: `system prompt: ${p.systemPrompt}` }));
      const tid = nextId("s"), mid = nextId("s");
      const text = h("textarea", { id: tid, rows: 3 });
      const model = h("input", { id: mid, value: "human" });
      box.append(h("div", { class: "field" }, h("label", { for: tid, text: "Response text" }), text),
        h("div", { class: "field" }, h("label", { for: mid, text: "Model name" }), model), status,
        h("div", { class: "row" },
          h("button", { type: "button", on: { click: () => send({ role: "assistant", content: { type: "text", text: text.value }, model: model.value || "human", stopReason: "endTurn" }) } }, "Send response"),
          h("button", { type: "button", on: { click: () => send(undefined, "the person at the inspector rejected the request") } }, "Reject")));
    } else {
      box.append(h("pre", { text: pretty(ev) }));
    }
    $("question-list").append(box);
    $("questions-empty").hidden = true;
  }

  $("roots-save").addEventListener("click", async () => {
    const roots = $("roots-text").value.split("\n").map((l) => l.trim()).filter(Boolean).map((uri) => ({ uri }));
    const r = await api("roots", { roots });
    $("roots-status").textContent = r.ok ? `saved ${roots.length} root(s); servers told` : r.data.error;
  });

  // --- Provider translation and logs ---------------------------------------------------
  $("translate-button").addEventListener("click", async () => {
    const r = await api("translate", { provider: $("provider").value });
    const out = $("translate-out");
    if (!r.ok) { out.textContent = r.data.error; return; }
    const left = (r.data.reports || []).filter((x) => x.error).map((x) => `left out ${x.server}/${x.tool}: ${x.error}`);
    out.textContent = (r.data.text !== null && r.data.text !== undefined ? r.data.text : pretty(r.data.tools)) + (left.length ? "\n\n" + left.join("\n") : "");
  });

  $("log-level-button").addEventListener("click", async () => {
    const r = await api("log-level", { server: $("log-server").value, level: $("log-level").value });
    $("log-status").textContent = r.ok ? `level ${r.data.level}` : r.data.error;
  });

  function addLog(ev) {
    const list = $("log-list");
    const when = new Date(ev.time).toISOString().slice(11, 23);
    const text = ev.kind === "log"
      ? `${when} ${ev.server} [${ev.level}]${ev.logger ? " " + ev.logger : ""}: ${typeof ev.data === "string" ? ev.data : JSON.stringify(ev.data)}`
      : `${when} ${ev.server} ${ev.method} ${ev.params ? JSON.stringify(ev.params) : ""}`;
    list.append(h("li", { class: `log-${ev.kind}`, text }));
    while (list.children.length > 1000) list.removeChild(list.firstChild);
  }

  // --- Trace ---------------------------------------------------------------------------
  // Requests by (server, direction, id), so a response is labelled with the method it
  // answers and the time it took.
  const openRequests = new Map();
  function traceLabel(ev) {
    let m = null;
    try { m = JSON.parse(ev.text); } catch (_) { /* shown raw */ }
    if (!m || typeof m !== "object") return "(not JSON)";
    const id = m.id !== undefined ? ` #${JSON.stringify(m.id)}` : "";
    if (m.method) {
      if (m.id !== undefined) openRequests.set(`${ev.server} ${ev.dir} ${JSON.stringify(m.id)}`, { method: m.method, time: ev.time });
      return `${m.method}${id}`;
    }
    const asked = ev.dir === "in" ? "out" : "in";
    const key = `${ev.server} ${asked} ${JSON.stringify(m.id)}`;
    const req = openRequests.get(key);
    openRequests.delete(key);
    const what = m.error ? "error" : "result";
    return req ? `${what} of ${req.method}${id} (${ev.time - req.time} ms)` : `${what}${id}`;
  }
  function traceVisible(item) {
    const f = $("trace-filter").value.toLowerCase();
    const d = $("trace-dir").value;
    return (!d || item.ev.dir === d) && (!f || item.search.includes(f));
  }
  function addTrace(ev) {
    const label = traceLabel(ev);
    const when = new Date(ev.time).toISOString().slice(11, 23);
    const el = h("li", { class: `trace-${ev.dir}`, "data-dir": ev.dir },
      h("details", {}, h("summary", {}, `${when} ${ev.dir === "out" ? "sent to" : "received from"} ${ev.server}: `, h("code", { text: label }), ev.truncated ? " (cut)" : ""),
        h("pre", { text: ev.text })));
    const item = { ev, el, search: (ev.server + " " + label + " " + ev.text).toLowerCase() };
    traceItems.push(item);
    el.hidden = !traceVisible(item);
    $("trace-list").append(el);
    while (traceItems.length > TRACE_SHOWN) traceItems.shift().el.remove();
    $("trace-count").textContent = `${traceItems.length} messages`;
  }
  const refilter = () => { for (const item of traceItems) item.el.hidden = !traceVisible(item); };
  $("trace-filter").addEventListener("input", refilter);
  $("trace-dir").addEventListener("change", refilter);

  // --- Events --------------------------------------------------------------------------
  let refreshTimer = null;
  const refreshSoon = () => { clearTimeout(refreshTimer); refreshTimer = setTimeout(refresh, 150); };

  async function poll() {
    let after = 0;
    for (;;) {
      let r;
      try { r = await api(`events?after=${after}&wait=15000`); } catch (_) { r = null; }
      if (!r || !r.ok) {
        $("conn").textContent = r ? `refused: ${r.data.error}` : "inspector stopped";
        await new Promise((res) => setTimeout(res, 2000));
        continue;
      }
      $("conn").textContent = "live";
      for (const ev of r.data.events) {
        switch (ev.kind) {
          case "trace": addTrace(ev); break;
          case "log": addLog(ev); break;
          case "notification":
            addLog(ev);
            if (/list_changed$/.test(ev.method)) refreshSoon();
            break;
          case "state": refreshSoon(); break;
          case "progress":
            if (ev.call === running) {
              const bar = $("call-progress");
              if (ev.total) { bar.max = ev.total; bar.value = ev.progress; } else bar.removeAttribute("value");
              $("progress-text").textContent = `${ev.progress}${ev.total ? " / " + ev.total : ""}${ev.message ? " " + ev.message : ""}`;
            }
            break;
          case "question": renderQuestion(ev); break;
          case "answered": {
            const el = document.querySelector(`[data-question="${CSS.escape(ev.id)}"]`);
            if (el) el.remove();
            $("questions-empty").hidden = $("question-list").children.length > 0;
            break;
          }
          default: break;
        }
      }
      after = r.data.next;
    }
  }

  refresh();
  poll();
})();
