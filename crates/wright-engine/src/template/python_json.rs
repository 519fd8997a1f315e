//! JSON spelled as Python's `json.dumps(value, ensure_ascii=False)` spells it: `", "` and
//! `": "` between items, members in their order, only `"` `\` and control characters
//! escaped. Chat templates print tool calls this way, and the engine's grammar produces
//! exactly this spelling, so a re-rendered call is the same text the model wrote.

use serde_json::Value;

/// `json.dumps(value, ensure_ascii=False)`.
pub fn to_python_json(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value, None, 0);
    out
}

/// `json.dumps(value, ensure_ascii=False, indent=width)`.
pub fn indented(value: &Value, width: usize) -> String {
    let mut out = String::new();
    write(&mut out, value, Some(width), 0);
    out
}

fn write(out: &mut String, value: &Value, indent: Option<usize>, level: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        // Integers as they are; a float as Python's `repr` (`1e+16`, `1e-05`, `100.0`),
        // which is not how Rust or serde spell it.
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()) {
            Some(float) => out.push_str(&py_float(float)),
            None => out.push_str(&n.to_string()),
        },
        Value::String(s) => string(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                separator(out, i, indent, level + 1);
                write(out, item, indent, level + 1);
            }
            close(out, indent, level);
            out.push(']');
        }
        Value::Object(members) => {
            if members.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                separator(out, i, indent, level + 1);
                string(out, key);
                out.push_str(": ");
                write(out, item, indent, level + 1);
            }
            close(out, indent, level);
            out.push('}');
        }
    }
}

fn separator(out: &mut String, index: usize, indent: Option<usize>, level: usize) {
    match indent {
        None if index > 0 => out.push_str(", "),
        None => {}
        Some(width) => {
            if index > 0 {
                out.push(',');
            }
            out.push('\n');
            out.push_str(&" ".repeat(width * level));
        }
    }
}

fn close(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(width) = indent {
        out.push('\n');
        out.push_str(&" ".repeat(width * level));
    }
}

fn string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A float as Python's `repr` prints it: shortest round-trip digits, fixed notation for
/// 1e-4 <= |x| < 1e16 (always with a fraction), else `d.ddde+XX`.
pub(crate) fn py_float(value: f64) -> String {
    if !value.is_finite() {
        // Python's json module spells these so (not valid JSON; serde_json never holds them).
        return if value.is_nan() {
            "NaN"
        } else if value > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }
        .into();
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .into();
    }
    // Rust's `{:e}` also prints the shortest digits that round-trip, e.g. "-1.25e-7".
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let body = if (-4..16).contains(&exponent) {
        fixed_notation(&digits, exponent)
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{first}{fraction}e{exp_sign}{:02}", exponent.unsigned_abs())
    };
    format!("{sign}{body}")
}

/// `digits` (d.ddd) times 10^exponent in fixed notation with at least one fraction digit.
fn fixed_notation(digits: &str, exponent: i64) -> String {
    match usize::try_from(exponent) {
        Ok(exponent) => {
            let point = exponent + 1;
            if digits.len() <= point {
                format!("{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        }
        Err(_) => {
            let zeros = usize::try_from(-exponent - 1).unwrap_or(0);
            format!("0.{}{digits}", "0".repeat(zeros))
        }
    }
}
