//! A struct returned without `#[tool(structured)]`: not a text or content
//! result.

#[derive(toolwire::serde::Serialize, toolwire::schemars::JsonSchema)]
#[serde(crate = "toolwire::serde")]
#[schemars(crate = "toolwire::schemars")]
struct Forecast {
    celsius: i32,
}

/// The weather.
#[toolwire::tool]
async fn weather(city: String) -> Forecast {
    let _ = city;
    Forecast { celsius: 21 }
}

fn main() {
    let _ = weather_tool();
}
