//! A stdio MCP server with one tool, `get_weather(city)`, over embedded data: no API key, no
//! network. Speaks every protocol revision (the handshake era and 2026-07-28).
//!
//! Run it under any MCP host, or drive it with the companion client:
//! `cargo run --release --example weather_client`.

use oxmcp::{
    protocol::{CallToolResult, Tool, ToolAnnotations},
    server::{Server, ToolError},
};
use serde_json::{Value, json};

/// (city, temperature °C, conditions, humidity %, wind km/h)
const OBSERVATIONS: &[(&str, f64, &str, u32, u32)] = &[
    ("Oslo", 4.0, "light snow", 86, 12),
    ("Paris", 11.5, "overcast", 78, 9),
    ("Tokyo", 14.0, "clear", 55, 6),
    ("New York", 7.5, "rain", 90, 21),
    ("Sydney", 24.0, "sunny", 60, 15),
    ("Nairobi", 21.0, "scattered clouds", 65, 11),
    ("Reykjavik", -1.0, "strong wind", 70, 48),
    ("Lima", 19.0, "mist", 83, 7),
];

fn lookup(city: &str) -> Option<&'static (&'static str, f64, &'static str, u32, u32)> {
    OBSERVATIONS
        .iter()
        .find(|(name, ..)| name.eq_ignore_ascii_case(city.trim()))
}

fn get_weather(args: &Value) -> Result<CallToolResult, ToolError> {
    let city = args.get("city").and_then(Value::as_str).unwrap_or_default();
    let Some(&(name, temp, conditions, humidity, wind)) = lookup(city) else {
        let known: Vec<&str> = OBSERVATIONS.iter().map(|o| o.0).collect();
        return Err(ToolError::failed(format!(
            "No weather data for `{city}`. Known cities: {}.",
            known.join(", ")
        )));
    };
    let report = json!({
        "city": name,
        "temperature_c": temp,
        "conditions": conditions,
        "humidity_pct": humidity,
        "wind_kmh": wind,
    });
    let mut result = CallToolResult::structured(report);
    result.content = vec![oxmcp::protocol::ContentBlock::text(format!(
        "{name}: {temp:.1} °C, {conditions}, humidity {humidity}%, wind {wind} km/h"
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
            "properties": {"city": {"type": "string", "description": "City name, e.g. Oslo"}},
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
    server.add_tool(tool, |args: Value, _ctx| async move { get_weather(&args) })?;
    server.serve_stdio().await
}
