//! `#[tool(structured)]` returning a type with no JSON Schema.

#[derive(toolwire::serde::Serialize)]
#[serde(crate = "toolwire::serde")]
struct Forecast {
    celsius: i32,
}

/// The weather.
#[toolwire::tool(structured)]
async fn weather(city: String) -> Result<Forecast, toolwire::ToolError> {
    let _ = city;
    Ok(Forecast { celsius: 21 })
}

fn main() {
    let _ = weather_tool();
}
