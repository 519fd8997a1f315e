//! The model's own chat template (a Jinja template from the GGUF file's metadata) rendered
//! with minijinja the way Hugging Face renders it: `trim_blocks` and `lstrip_blocks` on,
//! Python's string methods available, `tojson` spelled as Python's `json.dumps` spells it
//! (separators `", "` and `": "`, no ASCII escaping), `raise_exception` and
//! `strftime_now` defined. llama.cpp's own template helper knows neither Jinja nor tools.
//!
//! Guarantees: rendering is a pure function of the messages and tools, so the same history
//! renders to the same text at every step (what the token-prefix cache relies on).

use crate::error::EngineError;
use minijinja::value::Kwargs;
use minijinja::Environment;
use minijinja::Error;
use minijinja::ErrorKind;
use minijinja::Value as Jinja;
use serde_json::Value;

mod python_json;

#[cfg(test)]
pub(crate) use python_json::py_float;
pub use python_json::to_python_json;

/// A compiled chat template and the special tokens it may name.
pub struct ChatTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
}

const NAME: &str = "chat";

impl ChatTemplate {
    /// Compiles `source`; `bos`/`eos` are the texts of the model's special tokens.
    pub fn new(source: &str, bos: &str, eos: &str) -> Result<Self, EngineError> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_template_owned(NAME, source.to_string())
            .map_err(|err| EngineError::Template(err.to_string()))?;
        Ok(Self {
            env,
            bos: bos.to_string(),
            eos: eos.to_string(),
        })
    }

    /// The prompt for `messages` (OpenAI-shaped, tool-call arguments as objects) and
    /// `tools`, ending with the start of the assistant's turn.
    pub fn render(&self, messages: &[Value], tools: &[Value]) -> Result<String, EngineError> {
        let template = self
            .env
            .get_template(NAME)
            .map_err(|err| EngineError::Template(err.to_string()))?;
        let tools = (!tools.is_empty()).then_some(tools);
        template
            .render(minijinja::context! {
                messages => Jinja::from_serialize(messages),
                tools => tools.map(Jinja::from_serialize),
                add_generation_prompt => true,
                bos_token => self.bos.as_str(),
                eos_token => self.eos.as_str(),
            })
            .map_err(|err| EngineError::Template(describe(&err)))
    }
}

/// minijinja's message plus where in the template it happened.
fn describe(err: &Error) -> String {
    match err.line() {
        Some(line) => format!("{err} (template line {line})"),
        None => err.to_string(),
    }
}

fn tojson(value: Jinja, kwargs: Kwargs) -> Result<Jinja, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    kwargs.assert_all_used()?;
    let json: Value = serde_json::to_value(&value)
        .map_err(|err| Error::new(ErrorKind::InvalidOperation, err.to_string()))?;
    let text = match indent {
        None => to_python_json(&json),
        Some(width) => python_json::indented(&json, width),
    };
    // Safe: the template's output is a prompt, not HTML.
    Ok(Jinja::from_safe_string(text))
}

fn raise_exception(message: String) -> Result<Jinja, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// Today's date (UTC) in a `strftime` format; the fields templates use.
fn strftime_now(format: String) -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0);
    let (year, month, day) = civil_from_days(days as i64);
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let name = MONTHS[(month as usize).saturating_sub(1) % 12];
    format
        .replace("%Y", &year.to_string())
        .replace("%m", &format!("{month:02}"))
        .replace("%d", &format!("{day:02}"))
        .replace("%B", name)
        .replace("%b", &name[..3])
}

/// Days since 1970-01-01 to a (year, month, day) of the proleptic Gregorian calendar.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests;
