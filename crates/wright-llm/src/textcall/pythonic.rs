//! Python-style calls: `[get_weather(city="San Francisco", metric='celsius'), other(n=3)]`,
//! as Llama 3.2 writes zero-shot calls (llama-models 3.2 text prompt format) and Gemma is
//! prompted to (ai.google.dev, "Function calling with Gemma"); also the body of a Gemma
//! ```` ```tool_code ```` block and of a Llama 3.1 built-in call (`brave_search.call(query="x")`).
//!
//! Arguments are keyword arguments whose values are Python literals: strings in `'` or `"`
//! (also triple-quoted, with escapes, `r` prefix), ints, floats, `True`/`False`/`None`
//! (and JSON's `true`/`false`/`null`), lists, tuples and dicts. Nesting is limited so that
//! no input can exhaust the stack.

use serde_json::Map;
use serde_json::Number;
use serde_json::Value;

/// One call read.
pub(crate) struct PyCall {
    pub name: String,
    pub arguments: Value,
}

const MAX_DEPTH: usize = 64;

/// The list `[call, …]` whose `[` is at `start`; returns the calls and the end of the `]`.
pub(crate) fn parse_list(text: &str, start: usize) -> Result<(Vec<PyCall>, usize), String> {
    let mut parser = Parser::at(text, start);
    let calls = parser.list_of_calls()?;
    Ok((calls, parser.pos))
}

/// Whether a `[` at `start` opens what looks like a list of calls: `[name(`.
pub(crate) fn looks_like_call_list(text: &str, start: usize) -> bool {
    let mut parser = Parser::at(text, start);
    if !parser.eat('[') {
        return false;
    }
    parser.ws();
    parser.dotted_name().is_some() && {
        parser.ws();
        parser.peek() == Some('(')
    }
}

/// All of `text` as calls: one `[…]` list, or calls one after another (separated by
/// newlines, `,` or `;`).
pub(crate) fn parse_sequence(text: &str) -> Result<Vec<PyCall>, String> {
    let mut parser = Parser::at(text, 0);
    parser.ws();
    let mut calls = Vec::new();
    if parser.peek() == Some('[') {
        calls = parser.list_of_calls()?;
    } else {
        loop {
            calls.push(parser.call()?);
            parser.ws();
            while parser.eat(',') || parser.eat(';') {
                parser.ws();
            }
            if parser.peek().is_none() {
                break;
            }
        }
    }
    parser.ws();
    match parser.peek() {
        None => Ok(calls),
        Some(_) => Err(format!(
            "unexpected text after the calls: `{}`",
            super::scan::snippet(parser.rest())
        )),
    }
}

/// `text`, all of it, as one Python literal.
pub(crate) fn parse_literal(text: &str) -> Option<Value> {
    let mut parser = Parser::at(text, 0);
    parser.ws();
    let value = parser.value().ok()?;
    parser.ws();
    parser.peek().is_none().then_some(value)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn at(text: &'a str, pos: usize) -> Self {
        Parser {
            text,
            pos,
            depth: 0,
        }
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn ident(&mut self) -> Option<&'a str> {
        let start = self.pos;
        if !self
            .peek()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        {
            return None;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            self.bump();
        }
        self.text.get(start..self.pos)
    }

    /// `a.b.c`: the tool is the last part, or the first when the last is `call`
    /// (`brave_search.call`); `default_api.` / `functions.` prefixes are thereby dropped.
    fn dotted_name(&mut self) -> Option<String> {
        let mut parts = vec![self.ident()?];
        while self.peek() == Some('.') {
            self.bump();
            parts.push(self.ident()?);
        }
        let name = match parts.as_slice() {
            [first, .., "call"] => first,
            [.., last] => last,
            [] => return None,
        };
        Some((*name).to_string())
    }

    fn list_of_calls(&mut self) -> Result<Vec<PyCall>, String> {
        if !self.eat('[') {
            return Err("expected `[`".to_string());
        }
        let mut calls = Vec::new();
        loop {
            self.ws();
            if self.eat(']') {
                return Ok(calls);
            }
            calls.push(self.call()?);
            self.ws();
            if self.eat(',') {
                continue;
            }
            if self.eat(']') {
                return Ok(calls);
            }
            return Err(match self.peek() {
                None => "the list of calls is cut off before its `]`".to_string(),
                Some(c) => format!("expected `,` or `]` after a call, found `{c}`"),
            });
        }
    }

    fn call(&mut self) -> Result<PyCall, String> {
        let name = self
            .dotted_name()
            .ok_or_else(|| "expected a function name".to_string())?;
        self.ws();
        if !self.eat('(') {
            return Err(format!("expected `(` after `{name}`"));
        }
        let mut arguments = Map::new();
        loop {
            self.ws();
            if self.eat(')') {
                break;
            }
            let key_start = self.pos;
            let key = self.ident().map(str::to_string);
            self.ws();
            let Some(key) = key.filter(|_| self.eat('=')) else {
                self.pos = key_start;
                return Err(if self.peek().is_none() {
                    format!("the call to `{name}` is cut off before its `)`")
                } else {
                    format!("the call to `{name}` has an argument without a name: write name=value")
                });
            };
            self.ws();
            let value = self
                .value()
                .map_err(|why| format!("argument `{key}` of `{name}`: {why}"))?;
            arguments.insert(key, value);
            self.ws();
            if self.eat(',') {
                continue;
            }
            if self.eat(')') {
                break;
            }
            return Err(match self.peek() {
                None => format!("the call to `{name}` is cut off before its `)`"),
                Some(c) => format!("expected `,` or `)` in the call to `{name}`, found `{c}`"),
            });
        }
        Ok(PyCall {
            name,
            arguments: Value::Object(arguments),
        })
    }

    fn value(&mut self) -> Result<Value, String> {
        if self.depth >= MAX_DEPTH {
            return Err("values are nested too deeply".to_string());
        }
        self.depth += 1;
        let value = self.value_inner();
        self.depth -= 1;
        value
    }

    fn value_inner(&mut self) -> Result<Value, String> {
        match self.peek() {
            None => Err("the value is missing (cut off)".to_string()),
            Some('"' | '\'') => self.string(false).map(Value::String),
            Some('[') => self.sequence('[', ']'),
            Some('(') => self.sequence('(', ')'),
            Some('{') => self.dict(),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let prefixed = matches!(self.peek_second(), Some('"' | '\''));
                if prefixed && matches!(c, 'r' | 'R' | 'b' | 'B' | 'u' | 'U' | 'f' | 'F') {
                    self.bump();
                    return self.string(matches!(c, 'r' | 'R')).map(Value::String);
                }
                let word = self.ident().unwrap_or_default();
                match word {
                    "True" | "true" => Ok(Value::Bool(true)),
                    "False" | "false" => Ok(Value::Bool(false)),
                    "None" | "null" => Ok(Value::Null),
                    _ => Err(format!("`{word}` is not a literal value (quote strings)")),
                }
            }
            Some(c) => Err(format!("unexpected `{c}` where a value should be")),
        }
    }

    fn sequence(&mut self, open: char, close: char) -> Result<Value, String> {
        self.eat(open);
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.eat(close) {
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.ws();
            if self.eat(',') {
                continue;
            }
            if self.eat(close) {
                return Ok(Value::Array(items));
            }
            return Err(format!("expected `,` or `{close}` in a list"));
        }
    }

    fn dict(&mut self) -> Result<Value, String> {
        self.eat('{');
        let mut map = Map::new();
        loop {
            self.ws();
            if self.eat('}') {
                return Ok(Value::Object(map));
            }
            let key = match self.value()? {
                Value::String(key) => key,
                other => other.to_string(),
            };
            self.ws();
            if !self.eat(':') {
                return Err("expected `:` after a dict key".to_string());
            }
            self.ws();
            let value = self.value()?;
            map.insert(key, value);
            self.ws();
            if self.eat(',') {
                continue;
            }
            if self.eat('}') {
                return Ok(Value::Object(map));
            }
            return Err("expected `,` or `}` in a dict".to_string());
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E' | '_'))
        {
            self.bump();
        }
        let raw = self
            .text
            .get(start..self.pos)
            .unwrap_or("")
            .replace('_', "");
        if let Ok(int) = raw.parse::<i64>() {
            return Ok(Value::Number(int.into()));
        }
        raw.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{raw}` is not a number"))
    }

    fn string(&mut self, raw: bool) -> Result<String, String> {
        let Some(quote) = self.bump() else {
            return Err("expected a string".to_string());
        };
        let triple = self.peek() == Some(quote) && self.peek_second() == Some(quote);
        if triple {
            self.bump();
            self.bump();
        }
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err("a string is cut off before its closing quote".to_string());
            };
            if c == quote {
                if !triple {
                    return Ok(out);
                }
                if self.peek() == Some(quote) && self.peek_second() == Some(quote) {
                    self.bump();
                    self.bump();
                    return Ok(out);
                }
                out.push(c);
            } else if c == '\\' && !raw {
                self.escape(&mut out)?;
            } else if c == '\n' && !triple {
                return Err("a string runs past the end of its line".to_string());
            } else {
                out.push(c);
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), String> {
        let Some(c) = self.bump() else {
            return Err("a string is cut off after `\\`".to_string());
        };
        match c {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\n' => {}
            '\\' | '\'' | '"' => out.push(c),
            'x' | 'u' | 'U' => {
                let digits = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let start = self.pos;
                for _ in 0..digits {
                    if !self.peek().is_some_and(|d| d.is_ascii_hexdigit()) {
                        return Err(format!("a bad `\\{c}` escape in a string"));
                    }
                    self.bump();
                }
                let hex = self.text.get(start..self.pos).unwrap_or("");
                let code = u32::from_str_radix(hex, 16).map_err(|err| err.to_string())?;
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
        Ok(())
    }
}
