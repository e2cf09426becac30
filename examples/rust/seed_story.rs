//! The seed story, end to end: an `mcpServers` config, its servers started, the handshake,
//! the tools listed and translated to OpenAI and Anthropic shapes, then the agent loop with a
//! **scripted model** (a few lines of Rust standing in for an LLM, labelled as such) answering
//! "北京今天天气怎么样?" by asking every server's `get_weather(city="Beijing")`, the
//! `tools/call`s, the results fed back as tool results, and the final answer. Then a second
//! **scripted model without function calling** (also labelled as such) answers the same
//! question through the prompt provider: it reads its tools from the system-prompt text and
//! writes Hermes `<tool_call>` text, which the host parses, checks and routes.
//!
//! `cargo run --example seed_story -- [CONFIG] [--provider openai|anthropic|responses|gemini] [--trace]`
//!
//! CONFIG defaults to `examples/demo/mcp.json`, which names the `weather_server` example
//! through `${OXMCP_EXAMPLES_DIR}` (when unset: the directory this example was built into).
//! Any number of servers works, as long as each has a `get_weather` tool.

use std::{io::Write, path::PathBuf, sync::Arc};

use oxmcp::{
    host::{AgentOptions, CallRecord, Config, Host, HostOptions, ModelRequest, TransportSpec},
    schema::{PromptFormat, Provider, TranslateOptions, tool_calls},
    transport::tap::Direction,
};
use serde_json::{Value, json};

const QUESTION: &str = "北京今天天气怎么样?";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config_path = PathBuf::from("examples/demo/mcp.json");
    let mut trace = false;
    let mut provider = Provider::OpenAi;
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        match a.as_str() {
            "--trace" => trace = true,
            "--provider" => {
                let p = argv.next().ok_or("--provider needs a value")?;
                provider = Provider::parse(&p).ok_or(format!("unknown provider `{p}`"))?;
            }
            _ => config_path = PathBuf::from(a),
        }
    }

    // `${OXMCP_EXAMPLES_DIR}` falls back to where the examples were built.
    let exe = std::env::current_exe()?;
    let examples_dir = exe
        .parent()
        .ok_or("no examples directory")?
        .display()
        .to_string();
    let text = std::fs::read_to_string(&config_path)
        .map_err(|e| format!("cannot read {}: {e}", config_path.display()))?;
    let lookup = |name: &str| {
        std::env::var(name)
            .ok()
            .or_else(|| (name == "OXMCP_EXAMPLES_DIR").then(|| examples_dir.clone()))
    };
    let config = Config::parse(&text, Some(&config_path), &lookup)?;

    println!("== 1. config {}", config_path.display());
    print_servers(&config);

    let mut options = HostOptions::default();
    if trace {
        options.trace = Some(Arc::new(|server: &str, dir: Direction, bytes: &[u8]| {
            let arrow = if dir == Direction::Outbound {
                "→"
            } else {
                "←"
            };
            let mut err = std::io::stderr().lock();
            let _ = writeln!(
                err,
                "[trace {server}] {arrow} {}",
                String::from_utf8_lossy(bytes)
            );
        }));
    }
    println!("\n== 2. start the servers and handshake (concurrently)");
    let host = Host::start(config, options).await;
    for s in host.status().await {
        match s.state {
            "connected" => println!(
                "   {}: connected, {} , protocol {}",
                s.name,
                s.server_info.unwrap_or_default(),
                s.protocol_version.unwrap_or_default()
            ),
            other => println!("   {}: {other} {}", s.name, s.error.unwrap_or_default()),
        }
    }

    println!("\n== 3. tools/list");
    for (server, tools) in host.tools().await {
        for t in tools.iter() {
            println!(
                "   {server} / {}: {}",
                t.name,
                t.description.as_deref().unwrap_or("")
            );
        }
    }
    let strict = TranslateOptions::default();
    for (step, provider, shape) in [
        (
            "4a",
            Provider::OpenAi,
            "OpenAI Chat Completions shape (strict mode)",
        ),
        ("4b", Provider::Anthropic, "Anthropic Messages shape"),
    ] {
        let tools = host.translate(provider, &strict).await.request_tools();
        println!("\n== {step}. the tools in {shape}");
        println!("{}", serde_json::to_string_pretty(&tools)?);
    }

    println!("\n== 5. the agent loop ({provider} format)");
    println!("   model: SCRIPTED MODEL (not an LLM): it calls every `*get_weather` tool with");
    println!("          city=\"Beijing\", then answers from the tool results. See README for the");
    println!("          lines that put a real OpenAI or Anthropic client here.");
    println!("   user: {QUESTION}");
    let messages = vec![user_message(provider, QUESTION)];
    let transcript = host
        .run_agent(&scripted_model, messages, &AgentOptions::new(provider))
        .await?;
    for c in &transcript.calls {
        print_call("tools/call", c);
        println!(
            "           result{}: {}",
            if c.is_error { " (error)" } else { "" },
            c.text
        );
    }
    println!(
        "\n== 6. transcript ({} messages, {} model turns)",
        transcript.messages.len(),
        transcript.steps
    );
    println!("{}", serde_json::to_string_pretty(&transcript.messages)?);
    println!("\n== 7. final answer\n{}", transcript.final_text);

    let prompt = Provider::Prompt(PromptFormat::Hermes);
    println!("\n== 8. the same question, a model without function calling ({prompt} format)");
    println!("   model: SCRIPTED MODEL (not an LLM) WITHOUT FUNCTION CALLING: it gets no `tools`");
    println!("          field, reads the tools from the system text, and writes <tool_call> text.");
    println!("   system text (oxmcp tools --format prompt prints the same):");
    let system = host
        .translate(prompt, &TranslateOptions::default())
        .await
        .system_text()
        .unwrap_or_default();
    for line in system.lines() {
        println!("   | {line}");
    }
    let text_transcript = host
        .run_agent(
            &scripted_text_model,
            vec![json!({"role": "user", "content": QUESTION})],
            &AgentOptions::new(prompt),
        )
        .await?;
    for m in &text_transcript.messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
        let content = m.get("content").and_then(Value::as_str).unwrap_or_default();
        println!("   [{role}]");
        for line in content.lines() {
            println!("   | {line}");
        }
    }
    for c in &text_transcript.calls {
        print_call("parsed from the text:", c);
    }
    println!(
        "\n== 9. final answer (text model)\n{}",
        text_transcript.final_text
    );

    host.close().await;
    for (who, t) in [
        ("function-calling", &transcript),
        ("text", &text_transcript),
    ] {
        if t.calls.is_empty() || t.calls.iter().any(|c| c.is_error) {
            return Err(format!(
                "the story did not complete: the {who} model made no successful get_weather call"
            )
            .into());
        }
    }
    Ok(())
}

/// One routed call: which step made it, how it was read, and where it went.
fn print_call(how: &str, c: &CallRecord) {
    println!(
        "   step {}: {how} {} → server `{}` tool `{}` {}",
        c.step,
        c.name,
        c.server.as_deref().unwrap_or("?"),
        c.tool.as_deref().unwrap_or("?"),
        c.arguments
    );
}

/// The second scripted model: no function calling, so everything is text. Step 1 reads the
/// tool names out of the `<tools>` block of its system message and writes one `<tool_call>`
/// per weather tool; step 2 quotes the `<tool_response>` blocks it was sent.
async fn scripted_text_model(request: ModelRequest) -> oxmcp::Result<Value> {
    let text_of = |m: &Value| {
        m.get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    if request.step == 1 {
        let system = request.messages.first().map(text_of).unwrap_or_default();
        // The list is the `<tools>` block on lines of its own (the intro names the tags too).
        let listed = system
            .split("\n<tools>\n")
            .nth(1)
            .and_then(|rest| rest.split("\n</tools>").next())
            .unwrap_or_default();
        let mut reply = String::from("我来查一下北京的天气。\n");
        for line in listed.lines() {
            let Ok(tool) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Some(name) = tool.pointer("/function/name").and_then(Value::as_str) else {
                continue;
            };
            if name.ends_with("get_weather") {
                reply.push_str(&format!(
                    "<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {{\"city\": \"Beijing\"}}}}\n</tool_call>\n"
                ));
            }
        }
        return Ok(json!({"role": "assistant", "content": reply}));
    }
    let last = request.messages.last().map(text_of).unwrap_or_default();
    let results: Vec<String> = last
        .split("<tool_response>")
        .skip(1)
        .filter_map(|block| block.split("</tool_response>").next())
        .filter_map(|json| serde_json::from_str::<Value>(json.trim()).ok())
        .filter_map(|v| v.get("content").and_then(Value::as_str).map(String::from))
        .collect();
    Ok(json!({"role": "assistant", "content": format!(
        "北京今天的天气 (from {} weather server{}, read from <tool_response> text): {}",
        results.len(),
        if results.len() == 1 { "" } else { "s" },
        results.join(" | ")
    )}))
}

fn user_message(provider: Provider, text: &str) -> Value {
    match provider {
        Provider::Gemini | Provider::GeminiOpenApi => {
            json!({"role": "user", "parts": [{"text": text}]})
        }
        Provider::Responses => json!({"role": "user", "content": text}),
        Provider::LangChain => json!({"type": "human", "content": text}),
        _ => json!({"role": "user", "content": text}),
    }
}

/// The scripted model: step 1 asks for the weather from every server that has `get_weather`;
/// step 2 answers from what came back. It reads and writes the provider's real wire shapes.
async fn scripted_model(request: ModelRequest) -> oxmcp::Result<Value> {
    let p = request.provider;
    if request.step == 1 {
        let names = tool_names(p, &request.tools);
        let targets: Vec<&String> = names
            .iter()
            .filter(|n| n.ends_with("get_weather"))
            .collect();
        let args = json!({"city": "Beijing"});
        let turn = match p {
            Provider::OpenAi => json!({"role": "assistant", "content": null, "tool_calls":
                targets.iter().enumerate().map(|(i, n)| json!({"id": format!("call_{i}"), "type": "function",
                    "function": {"name": n, "arguments": args.to_string()}})).collect::<Vec<_>>()}),
            Provider::Responses => json!({"output": targets.iter().enumerate().map(|(i, n)| json!({
                "type": "function_call", "call_id": format!("call_{i}"), "name": n, "arguments": args.to_string()})).collect::<Vec<_>>()}),
            Provider::Anthropic => {
                json!({"role": "assistant", "content": targets.iter().enumerate().map(|(i, n)| json!({
                "type": "tool_use", "id": format!("toolu_{i}"), "name": n, "input": args})).collect::<Vec<_>>()})
            }
            Provider::Gemini | Provider::GeminiOpenApi => {
                json!({"role": "model", "parts": targets.iter().map(|n| json!({
                "functionCall": {"name": n, "args": args}})).collect::<Vec<_>>()})
            }
            Provider::LangChain => {
                json!({"type": "ai", "content": "", "tool_calls": targets.iter().enumerate().map(|(i, n)| json!({
                "id": format!("call_{i}"), "name": n, "args": args})).collect::<Vec<_>>()})
            }
            Provider::Prompt(_) => return Err(text_only()),
        };
        return Ok(turn);
    }
    // Step 2: the tool results are the last messages; quote them.
    let results: Vec<String> = request
        .messages
        .iter()
        .rev()
        .take_while(|m| tool_calls(p, m).is_empty())
        .flat_map(result_texts)
        .collect();
    let answer = format!(
        "北京今天的天气 (from {} weather server{}): {}",
        results.len(),
        if results.len() == 1 { "" } else { "s" },
        results.into_iter().rev().collect::<Vec<_>>().join(" | ")
    );
    Ok(match p {
        Provider::OpenAi => json!({"role": "assistant", "content": answer}),
        Provider::Responses => json!({"output": [{"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": answer}]}]}),
        Provider::Anthropic => {
            json!({"role": "assistant", "content": [{"type": "text", "text": answer}]})
        }
        Provider::Gemini | Provider::GeminiOpenApi => {
            json!({"role": "model", "parts": [{"text": answer}]})
        }
        Provider::LangChain => json!({"type": "ai", "content": answer}),
        Provider::Prompt(_) => return Err(text_only()),
    })
}

/// The function-calling model has no text mode; `scripted_text_model` is the one for that.
fn text_only() -> oxmcp::Error {
    oxmcp::Error::InvalidArgument(
        "the function-calling scripted model does not speak the prompt provider".into(),
    )
}

fn tool_names(p: Provider, tools: &Value) -> Vec<String> {
    let list = match p {
        Provider::Gemini | Provider::GeminiOpenApi => tools.pointer("/0/functionDeclarations"),
        _ => Some(tools),
    };
    let key = if p == Provider::OpenAi {
        "/function/name"
    } else {
        "/name"
    };
    list.and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|t| t.pointer(key).and_then(Value::as_str).map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn result_texts(m: &Value) -> Vec<String> {
    let texts = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Array(a) => Some(
                a.iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(""),
            ),
            _ => None,
        }
    };
    if m.get("role") == Some(&json!("tool")) || m.get("type") == Some(&json!("tool")) {
        return m.get("content").and_then(texts).into_iter().collect();
    }
    if m.get("type") == Some(&json!("function_call_output")) {
        return m.get("output").and_then(texts).into_iter().collect();
    }
    let blocks = m
        .get("content")
        .or(m.get("parts"))
        .and_then(Value::as_array);
    blocks
        .map(|bs| {
            bs.iter()
                .filter_map(|b| {
                    if b.get("type") == Some(&json!("tool_result")) {
                        b.get("content").and_then(texts)
                    } else {
                        b.pointer("/functionResponse/response/output")
                            .map(|o| match o {
                                Value::String(s) => s.clone(),
                                other => other.to_string(),
                            })
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Step 1's table: one row per server with its transport and what it runs or where it is.
/// Paths below the checkout print relative to it (`./target/...`), so a row reads as a
/// command someone could type from the repository root.
fn print_servers(config: &Config) {
    let root = std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string());
    let short = |arg: &str| match &root {
        Some(root) => match arg.strip_prefix(root.as_str()) {
            Some(rest) if rest.starts_with('/') => format!(".{rest}"),
            _ => arg.to_owned(),
        },
        None => arg.to_owned(),
    };
    let rows: Vec<(&str, &str, String)> = config
        .servers
        .iter()
        .map(|s| match &s.transport {
            TransportSpec::Stdio { command, args, .. } => {
                let line: Vec<String> = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .map(short)
                    .collect();
                (s.name.as_str(), "stdio", line.join(" "))
            }
            TransportSpec::Http {
                url, legacy_sse, ..
            } => {
                let kind = if *legacy_sse { "sse" } else { "http" };
                (s.name.as_str(), kind, url.clone())
            }
            TransportSpec::Ws { url, .. } => (s.name.as_str(), "ws", url.clone()),
        })
        .collect();
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(6);
    println!("   {:width$}  {:9}  command or URL", "server", "transport");
    for (name, kind, target) in rows {
        println!("   {name:width$}  {kind:9}  {target}");
    }
}
