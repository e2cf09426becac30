//! A stdio MCP server with one tool, `get_weather(city)`, over embedded data: no API key, no
//! network. Speaks every protocol revision (the handshake era and 2026-07-28).
//!
//! Run it under any MCP host, or drive it with the companion client:
//! `cargo run --release --example weather_client`.

use oxmcp::{
    protocol::{CallToolResult, Tool, ToolAnnotations},
    server::{Server, ToolError},
};
use std::sync::Arc;

use serde_json::{Value, json};

/// The observations every weather example serves (Rust, Python, Node carry the same file).
const CITIES_JSON: &str = include_str!("../weather/cities.json");

/// One city's observation, as `cities.json` holds it.
#[derive(serde::Deserialize)]
struct City {
    name: String,
    aliases: Vec<String>,
    temperature_c: f64,
    conditions: String,
    humidity_pct: u32,
    wind_kmh: u32,
}

#[derive(serde::Deserialize)]
struct Cities {
    cities: Vec<City>,
}

/// Case-insensitive match on the name or an alias (`北京` finds Beijing), ignoring outer spaces.
fn lookup<'a>(cities: &'a [City], asked: &str) -> Option<&'a City> {
    let asked = asked.trim().to_lowercase();
    cities.iter().find(|c| {
        c.name.to_lowercase() == asked || c.aliases.iter().any(|a| a.to_lowercase() == asked)
    })
}

fn get_weather(cities: &[City], args: &Value) -> Result<CallToolResult, ToolError> {
    let city = args.get("city").and_then(Value::as_str).unwrap_or_default();
    let Some(found) = lookup(cities, city) else {
        let known: Vec<&str> = cities.iter().map(|c| c.name.as_str()).collect();
        return Err(ToolError::failed(format!(
            "No weather data for `{city}`. Known cities: {}.",
            known.join(", ")
        )));
    };
    let report = json!({
        "city": found.name,
        "temperature_c": found.temperature_c,
        "conditions": found.conditions,
        "humidity_pct": found.humidity_pct,
        "wind_kmh": found.wind_kmh,
    });
    let mut result = CallToolResult::structured(report);
    result.content = vec![oxmcp::protocol::ContentBlock::text(format!(
        "{}: {:.1} °C, {}, humidity {}%, wind {} km/h",
        found.name, found.temperature_c, found.conditions, found.humidity_pct, found.wind_kmh
    ))];
    Ok(result)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> oxmcp::Result<()> {
    // Logs go to stderr: stdout carries nothing but protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();

    let server = Server::builder("weather", env!("CARGO_PKG_VERSION"))
        .instructions("Current weather for a handful of world cities, from embedded data.")
        .build();
    let tool = Tool::new(
        "get_weather",
        "Get the current weather for a city.",
        json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name, e.g. Beijing or 北京"}},
            "required": ["city"],
            "additionalProperties": false
        }),
    )
    .with_output_schema(json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "temperature_c": {"type": "number"},
            "conditions": {"type": "string"},
            "humidity_pct": {"type": "integer"},
            "wind_kmh": {"type": "integer"}
        },
        "required": ["city", "temperature_c", "conditions", "humidity_pct", "wind_kmh"]
    }))
    .with_annotations(ToolAnnotations {
        title: Some("Current weather".into()),
        read_only_hint: Some(true),
        open_world_hint: Some(false),
        ..Default::default()
    });
    let cities: Arc<Vec<City>> = Arc::new(
        serde_json::from_str::<Cities>(CITIES_JSON)
            .map_err(|e| oxmcp::Error::InvalidArgument(format!("cities.json: {e}")))?
            .cities,
    );
    server.add_tool(tool, move |args: Value, _ctx| {
        let cities = cities.clone();
        async move { get_weather(&cities, &args) }
    })?;
    // stdio by default; `--ws --port N` serves WebSocket on ws://127.0.0.1:N/mcp instead.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--ws") {
        let port = match args.iter().position(|a| a == "--port") {
            Some(i) => args
                .get(i + 1)
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| oxmcp::Error::InvalidArgument("--port needs a number".into()))?,
            None => 8000,
        };
        let ws = server
            .serve_ws(oxmcp::transport::ws::WsServerOptions::port(port))
            .await?;
        eprintln!("listening on {}", ws.url());
        let _ = tokio::signal::ctrl_c().await;
        ws.shutdown().await;
        return Ok(());
    }
    server.serve_stdio().await
}
