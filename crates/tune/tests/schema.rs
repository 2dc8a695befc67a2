//! The shape of `nictune.tune/v5`: every key path and the JSON type at it, so a change to the
//! schema shows up as a reviewed snapshot diff, never by accident. Arrays show their first
//! element; numbers are not part of the shape.

use nictune_tune::objective::Goal;
use nictune_tune::synthetic::demo;
use serde_json::Value;

fn shape(v: &Value, path: &str, out: &mut Vec<String>) {
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    out.push(format!("{path}: {kind}"));
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                // Host names and setting keys are data, not schema.
                let key = if path.ends_with(".hosts") || path.ends_with(".settings") {
                    "<name>"
                } else {
                    k
                };
                shape(child, &format!("{path}.{key}"), out);
                if key == "<name>" {
                    break;
                }
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                shape(first, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn results_json_shape_is_stable() {
    let results = demo(2, Goal::Latency, 72, true).unwrap();
    let mut value = serde_json::to_value(&results).unwrap();
    // The first point is the baseline (no settings); show a point that has some.
    let points = value["points"].as_array_mut().unwrap();
    let with_settings = points.iter().position(|p| p["baseline"] == false).unwrap();
    points.swap(0, with_settings);
    let mut out = Vec::new();
    shape(&value, "$", &mut out);
    insta::assert_snapshot!(out.join("\n"));
}
