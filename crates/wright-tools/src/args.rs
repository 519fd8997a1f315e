//! Reading tool arguments the way small models send them: numbers and booleans sometimes
//! as strings, arrays sometimes as JSON text. Anything that cannot be read becomes an
//! error that names the parameter and what was expected, for the model to fix.

use crate::ToolError;
use serde_json::Value;

pub fn optional_str<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(ToolError::Model(format!(
            "parameter '{key}' must be a string, got {other}"
        ))),
    }
}

pub fn required_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    optional_str(args, key)?
        .ok_or_else(|| ToolError::Model(format!("missing required parameter '{key}'")))
}

pub fn optional_bool(args: &Value, key: &str) -> Result<Option<bool>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(Value::String(text)) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(Some(true)),
            "false" | "no" | "0" | "" => Ok(Some(false)),
            _ => Err(ToolError::Model(format!(
                "parameter '{key}' must be true or false, got \"{text}\""
            ))),
        },
        Some(other) => Err(ToolError::Model(format!(
            "parameter '{key}' must be true or false, got {other}"
        ))),
    }
}

pub fn optional_number(args: &Value, key: &str) -> Result<Option<f64>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => Ok(number.as_f64()),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
        Some(Value::String(text)) => text.trim().parse().map(Some).map_err(|_| {
            ToolError::Model(format!(
                "parameter '{key}' must be a number, got \"{text}\""
            ))
        }),
        Some(other) => Err(ToolError::Model(format!(
            "parameter '{key}' must be a number, got {other}"
        ))),
    }
}

pub fn optional_int(args: &Value, key: &str) -> Result<Option<i64>, ToolError> {
    match optional_number(args, key)? {
        None => Ok(None),
        Some(number) if number.fract() == 0.0 => Ok(Some(number as i64)),
        Some(number) => Err(ToolError::Model(format!(
            "parameter '{key}' must be a whole number, got {number}"
        ))),
    }
}

/// An array of integers, also accepted as JSON text ("[1, 20]").
pub fn optional_int_list(args: &Value, key: &str) -> Result<Option<Vec<i64>>, ToolError> {
    let parsed;
    let value = match args.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(text)) => {
            parsed = serde_json::from_str::<Value>(text).map_err(|_| {
                ToolError::Model(format!(
                    "parameter '{key}' must be an array of integers like [1, 20], got \"{text}\""
                ))
            })?;
            &parsed
        }
        Some(value) => value,
    };
    let items = value.as_array().ok_or_else(|| {
        ToolError::Model(format!(
            "parameter '{key}' must be an array of integers like [1, 20], got {value}"
        ))
    })?;
    items
        .iter()
        .map(|item| {
            item.as_i64()
                .or_else(|| item.as_str().and_then(|s| s.trim().parse().ok()))
                .ok_or_else(|| {
                    ToolError::Model(format!("parameter '{key}' must hold integers, got {item}"))
                })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_coerced_to_the_schema_types() {
        let args = json!({"b": "true", "n": "12", "r": "[3, \"9\"]"});
        assert_eq!(optional_bool(&args, "b").unwrap(), Some(true));
        assert_eq!(optional_int(&args, "n").unwrap(), Some(12));
        assert_eq!(optional_int_list(&args, "r").unwrap(), Some(vec![3, 9]));
        assert!(optional_int(&json!({"n": "many"}), "n").is_err());
        assert!(required_str(&json!({}), "path").is_err());
    }
}
