//! One configuration file: parsed with the position of every key, each key checked against
//! the schema (unknown keys, wrong types and out-of-range values are errors that name the
//! file and the line), and flattened into settings.

use crate::schema;
use crate::schema::Kind;
use crate::ConfigError;
use toml::de::DeTable;
use toml::de::DeValue;

/// One value a file sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The key's segments (`["profiles", "local", "model"]`).
    pub path: Vec<String>,
    pub value: toml::Value,
    pub line: usize,
}

impl Setting {
    pub fn key(&self) -> String {
        self.path.join(".")
    }
}

/// The settings of `text`, the content of the file `name`.
pub fn parse(text: &str, name: &str) -> Result<Vec<Setting>, ConfigError> {
    let parse_error = |err: &dyn std::fmt::Display| ConfigError::Parse {
        file: name.to_string(),
        message: err.to_string().trim().to_string(),
    };
    let spans = DeTable::parse(text).map_err(|err| parse_error(&err))?;
    let values: toml::Table = toml::from_str(text).map_err(|err| parse_error(&err))?;
    let mut out = Vec::new();
    walk(
        &values,
        spans.get_ref(),
        &mut Vec::new(),
        text,
        name,
        &mut out,
    )?;
    // In the file's own order.
    out.sort_by_key(|setting| setting.line);
    if let Some(version) = out.iter().find(|s| s.path == ["version"]) {
        if version.value.as_integer() != Some(1) {
            return Err(ConfigError::Version {
                file: name.to_string(),
                line: version.line,
            });
        }
    }
    Ok(out)
}

fn walk(
    table: &toml::Table,
    spans: &DeTable<'_>,
    prefix: &mut Vec<String>,
    text: &str,
    name: &str,
    out: &mut Vec<Setting>,
) -> Result<(), ConfigError> {
    for (key, value) in table {
        let (key_span, value_span) = spans
            .iter()
            .find(|(k, _)| k.get_ref().as_ref() == key.as_str())
            .map(|(k, v)| (k.span(), Some(v)))
            .unwrap_or((0..0, None));
        let line = line_of(text, key_span.start);
        prefix.push(key.clone());
        let path: Vec<&str> = prefix.iter().map(String::as_str).collect();
        match (schema::key(&path), value) {
            (Some(known), value) => {
                check(known.kind, value).map_err(|expected| ConfigError::Type {
                    file: name.to_string(),
                    line,
                    key: path.join("."),
                    expected,
                })?;
                out.push(Setting {
                    path: prefix.clone(),
                    value: value.clone(),
                    line,
                });
            }
            (None, toml::Value::Table(inner)) if schema::is_table(&path) => {
                let empty = DeTable::default();
                let inner_spans = match value_span.map(|v| v.get_ref()) {
                    Some(DeValue::Table(t)) => t,
                    _ => &empty,
                };
                walk(inner, inner_spans, prefix, text, name, out)?;
            }
            (None, _) => {
                return Err(ConfigError::Unknown {
                    file: name.to_string(),
                    line,
                    key: path.join("."),
                    closest: schema::closest(&path),
                })
            }
        }
        prefix.pop();
    }
    Ok(())
}

/// Whether `value` fits `kind`; else what was expected, in words.
pub(crate) fn check(kind: Kind, value: &toml::Value) -> Result<(), String> {
    let fits = match (kind, value) {
        (Kind::Str, toml::Value::String(_)) => true,
        (Kind::Bool, toml::Value::Boolean(_)) => true,
        (Kind::Table, toml::Value::Table(_)) => true,
        (Kind::Int { min }, toml::Value::Integer(n)) => *n >= min,
        (Kind::Float { min, max }, toml::Value::Float(x)) => (min..=max).contains(x),
        (Kind::Float { min, max }, toml::Value::Integer(n)) => (min..=max).contains(&(*n as f64)),
        (Kind::OneOf(words), toml::Value::String(s)) => words.contains(&s.as_str()),
        (Kind::Names, toml::Value::Array(items)) => items
            .iter()
            .all(|item| item.as_str().is_some_and(crate::secrets::valid_name)),
        (Kind::List, toml::Value::Array(items)) => items
            .iter()
            .all(|item| item.as_str().is_some_and(|name| !name.trim().is_empty())),
        (Kind::Strings, toml::Value::Array(items)) => items.iter().all(|item| item.is_str()),
        (Kind::Words(words), toml::Value::Array(items)) => items
            .iter()
            .all(|item| item.as_str().is_some_and(|word| words.contains(&word))),
        _ => false,
    };
    if fits {
        return Ok(());
    }
    Err(expected(kind))
}

/// What a value of `kind` must be, in words.
pub(crate) fn expected(kind: Kind) -> String {
    match kind {
        Kind::Str => "a string".into(),
        Kind::Bool => "true or false".into(),
        Kind::Table => "a table".into(),
        Kind::Int { min } => format!("a whole number of at least {min}"),
        Kind::Float { min, max } => format!("a number from {min} to {max}"),
        Kind::OneOf(words) => format!("one of {}", words.join(", ")),
        Kind::Names => "a list of environment variable names".into(),
        Kind::List => "a list of names".into(),
        Kind::Strings => "a list of strings".into(),
        Kind::Words(words) => format!("a list of any of {}", words.join(", ")),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_with_their_lines() {
        let text = "version = 1\nprofile = \"local\"\n\n[run]\nmax_steps = 80\n\n[profiles.local]\nmodel = \"qwen\"\nextra = { top_k = 20 }\n";
        let settings = parse(text, "config.toml").unwrap();
        let keys: Vec<(String, usize)> = settings.iter().map(|s| (s.key(), s.line)).collect();
        assert_eq!(
            keys,
            vec![
                ("version".to_string(), 1),
                ("profile".to_string(), 2),
                ("run.max_steps".to_string(), 5),
                ("profiles.local.model".to_string(), 8),
                ("profiles.local.extra".to_string(), 9),
            ]
        );
    }

    #[test]
    fn unknown_keys_wrong_types_and_versions_are_named() {
        let err = parse("[run]\nmax_step = 3\n", "c.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c.toml line 2: unknown key run.max_step (did you mean run.max_steps?)"
        );
        let err = parse("[sandbox]\nnetwork = \"yes\"\n", "c.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "c.toml line 2: sandbox.network must be true or false");
        let err = parse("[run]\ncondense_at = 1.5\n", "c.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c.toml line 2: run.condense_at must be a number from 0.3 to 0.95"
        );
        let err = parse("version = 2\n", "c.toml").unwrap_err().to_string();
        assert!(err.contains("version 1"), "{err}");
        let err = parse("run = [\n", "c.toml").unwrap_err().to_string();
        assert!(err.starts_with("c.toml is not valid TOML"), "{err}");
        // Dotted keys are the same keys.
        let settings = parse("run.max_steps = 9\n", "c.toml").unwrap();
        assert_eq!(settings[0].key(), "run.max_steps");
    }
}
