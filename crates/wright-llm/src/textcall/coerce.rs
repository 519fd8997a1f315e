//! Arguments to the types of a tool's JSON schema. Text formats deliver every value as a
//! string (`<parameter=n>12</parameter>`, `<arg_value>true</arg_value>`) and small models
//! quote numbers in JSON too; the schema says what was meant.
//!
//! Handled: `type` as a string or a list (`["integer", "null"]`), `anyOf`/`oneOf` of typed
//! schemas, nested `properties` of objects and `items` of arrays. A string holding a list
//! or an object may be JSON or a Python literal (`['a', 'b']`). Values of other types are
//! turned into strings where a string is wanted (`42` -> `"42"`, objects -> their JSON).

use serde_json::Map;
use serde_json::Number;
use serde_json::Value;

use super::pythonic;
use super::scan::snippet;

/// Coerces argument values to the JSON-schema types of the tool's `parameters` object:
/// "12" -> 12 for integer/number, "true"/"false" -> bool for boolean, a JSON-text string
/// "[1, 2]" -> array for array, JSON text for object. Returns Err(message) naming the
/// parameter when a required parameter is missing or a value cannot be coerced. `schema`
/// is the `parameters` object ({"type":"object","properties":{...},"required":[...]}).
pub fn coerce_arguments(arguments: &mut Value, schema: &Value) -> Result<(), String> {
    match arguments {
        Value::Object(_) => {}
        Value::Null => *arguments = Value::Object(Map::new()),
        Value::String(text) => match super::json::arguments_value(&Value::String(text.clone())) {
            Ok(object) => *arguments = object,
            Err(why) => return Err(format!("the arguments {why}")),
        },
        _ => return Err("the arguments must be a JSON object of named arguments".to_string()),
    }
    let Value::Object(map) = arguments else {
        return Err("the arguments must be a JSON object of named arguments".to_string());
    };
    coerce_object(map, schema, "")
}

/// `path` is the dotted name of the object (empty at the top), for messages.
fn coerce_object(map: &mut Map<String, Value>, schema: &Value, path: &str) -> Result<(), String> {
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (key, value) in map.iter_mut() {
            if let Some(property) = properties.get(key) {
                let name = join(path, key);
                coerce_value(value, property, &name, 0)?;
            }
        }
    }
    if let Some(Value::Array(required)) = schema.get("required") {
        let missing: Vec<String> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|key| !map.contains_key(*key))
            .map(|key| format!("`{}`", join(path, key)))
            .collect();
        match missing.as_slice() {
            [] => {}
            [one] => return Err(format!("the required parameter {one} is missing")),
            _ => {
                return Err(format!(
                    "the required parameters {} are missing",
                    missing.join(", ")
                ))
            }
        }
    }
    Ok(())
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The types a schema allows, in order; empty when it does not say.
fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn coerce_value(value: &mut Value, schema: &Value, name: &str, depth: usize) -> Result<(), String> {
    if depth > 32 {
        return Ok(());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = schema.get(key) {
            let mut first_error = None;
            for option in options {
                let mut attempt = value.clone();
                match coerce_value(&mut attempt, option, name, depth + 1) {
                    Ok(()) if fits(&attempt, option) => {
                        *value = attempt;
                        return Ok(());
                    }
                    Ok(()) => {}
                    Err(why) => {
                        first_error.get_or_insert(why);
                    }
                }
            }
            return match first_error {
                Some(why) if types_of(schema).is_empty() => Err(why),
                _ => Ok(()),
            };
        }
    }
    let kinds = types_of(schema);
    if kinds.is_empty() || kinds.iter().any(|kind| fits_kind(value, kind)) {
        return recurse(value, schema, name, depth);
    }
    let mut first_error = None;
    for kind in &kinds {
        match convert(value, kind) {
            Ok(converted) => {
                *value = converted;
                return recurse(value, schema, name, depth);
            }
            Err(why) => {
                first_error.get_or_insert(why);
            }
        }
    }
    let why = first_error.unwrap_or_default();
    Err(format!(
        "the parameter `{name}` should be {}, but got {} ({why})",
        kinds.join(" or "),
        describe(value)
    ))
}

/// Into nested objects and arrays.
fn recurse(value: &mut Value, schema: &Value, name: &str, depth: usize) -> Result<(), String> {
    match value {
        Value::Object(map) if schema.get("properties").is_some() => {
            coerce_object(map, schema, name)
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|items| items.is_object()) {
                for (index, item) in items.iter_mut().enumerate() {
                    coerce_value(item, item_schema, &format!("{name}[{index}]"), depth + 1)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn fits(value: &Value, schema: &Value) -> bool {
    let kinds = types_of(schema);
    kinds.is_empty() || kinds.iter().any(|kind| fits_kind(value, kind))
}

fn fits_kind(value: &Value, kind: &str) -> bool {
    match (kind, value) {
        ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("null", Value::Null)
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(number)) => number.is_i64() || number.is_u64(),
        (other, _) => !matches!(
            other,
            "string" | "boolean" | "object" | "array" | "null" | "number" | "integer"
        ),
    }
}

/// `value` as a `kind`, or why not.
fn convert(value: &Value, kind: &str) -> Result<Value, String> {
    let text = match value {
        Value::String(text) => Some(text.trim()),
        _ => None,
    };
    match kind {
        "integer" => {
            if let Some(float) = value
                .as_f64()
                .filter(|float| float.fract() == 0.0 && float.abs() < 9.0e15)
            {
                return Ok(Value::Number(Number::from(float as i64)));
            }
            let text = text.ok_or("not a number")?;
            if let Ok(int) = text.parse::<i64>() {
                return Ok(Value::Number(int.into()));
            }
            match text.parse::<f64>() {
                Ok(float) if float.fract() == 0.0 && float.abs() < 9.0e15 => {
                    Ok(Value::Number(Number::from(float as i64)))
                }
                Ok(_) => Err("not a whole number".to_string()),
                Err(_) => Err("not a number".to_string()),
            }
        }
        "number" => text
            .ok_or("not a number")?
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "not a number".to_string()),
        "boolean" => match (value, text.map(str::to_ascii_lowercase).as_deref()) {
            (_, Some("true" | "1" | "yes")) => Ok(Value::Bool(true)),
            (_, Some("false" | "0" | "no")) => Ok(Value::Bool(false)),
            (Value::Number(number), _) if number.as_f64() == Some(1.0) => Ok(Value::Bool(true)),
            (Value::Number(number), _) if number.as_f64() == Some(0.0) => Ok(Value::Bool(false)),
            _ => Err("not true or false".to_string()),
        },
        "array" | "object" => {
            let text = text.ok_or("not text holding one")?;
            let parsed = serde_json::from_str::<Value>(text)
                .ok()
                .or_else(|| pythonic::parse_literal(text));
            match (kind, parsed) {
                ("array", Some(array @ Value::Array(_))) => Ok(array),
                ("object", Some(object @ Value::Object(_))) => Ok(object),
                ("array", _) => Err("not a JSON list".to_string()),
                _ => Err("not a JSON object".to_string()),
            }
        }
        "string" => match value {
            Value::Number(number) => Ok(Value::String(number.to_string())),
            Value::Bool(flag) => Ok(Value::String(flag.to_string())),
            Value::Object(_) | Value::Array(_) => Ok(Value::String(value.to_string())),
            _ => Err("not text".to_string()),
        },
        "null" => match text {
            Some("null" | "None" | "") => Ok(Value::Null),
            _ => Err("not null".to_string()),
        },
        _ => Ok(value.clone()),
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => format!("the text \"{}\"", snippet(text)),
        Value::Null => "null".to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}
