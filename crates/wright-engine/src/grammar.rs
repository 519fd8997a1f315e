//! Tool-call grammars for the embedded engine: a llama.cpp GBNF grammar whose `root` accepts
//! exactly one call of one of the given tools and nothing else, its arguments valid against
//! that tool's (supported) JSON schema, every string, array and nesting level bounded, and the
//! JSON spelled byte for byte as Python's `json.dumps(value, ensure_ascii=False)` spells it.
//!
//! # Why byte-identical
//! The chat template re-renders a past call with Python's `json.dumps` (separators `", "` and
//! `": "`), and the engine reuses its KV cache by token prefix. Any other spelling of the same
//! value (other whitespace, member order, escapes or number form) would change the prefix and
//! force a re-evaluation, so the grammar admits the canonical spelling only: members in the
//! schema's `properties` order, `\"` `\\` `\n` `\r` `\t` `\b` `\f` and lowercase `\u00xx` as the
//! only escapes, every other character literal, numbers as Python prints them.
//!
//! # Bounded repetition
//! The grammar uses no repetition operator (`*`, `+`, `?`, `{m,n}`). llama.cpp expands `x{0,n}`
//! into n nested rules, refuses a repetition whose expansion reaches 2000 rules, and silently
//! turns `x{m,n}` with n > 2000 into the unbounded `x{m,}`, so a 4000-character limit written that
//! way would not be a limit at all. Every bound is instead spelled out with explicit rules:
//!
//! * up to 32 repetitions: a right-recursive chain, `u-c3 ::= u u-c2 | ""`;
//! * more: chunks of `b = ceil(sqrt(n))` units. `u-le{n} ::= u-c{b-1} | u-x{b} u-le{n-b}` reads
//!   either a short tail (fewer than b units, then the string ends) or one whole chunk followed by
//!   at most n-b more. That is about 2·sqrt(n) rules instead of n (4000 characters: 62 chunk
//!   levels, a 63-rule tail and one 64-unit chunk rule: 129 rules, 4.9 KB; llama-server sets
//!   such a grammar up in well under a millisecond). The two readings (tail or chunk) differ
//!   only until a chunk is complete, so the parser follows at most two of them at once,
//!   whatever n, instead of an ambiguity that grows with the length.
//!
//! # What a schema may use
//! `type` (one or a list), `properties` with `required`, `items` with `minItems`/`maxItems`,
//! `minLength`/`maxLength`, `enum`, `const`, `anyOf`/`oneOf` (branches shallow-merged with their
//! parent; `oneOf` is not made exclusive). Anything else — an empty or unknown schema, `$ref`,
//! `allOf`, `not`, `if` — admits a generic JSON value, still bounded by the limits. Ignored:
//! `additionalProperties` (only declared properties are produced), `pattern`, `format`, numeric
//! ranges, `uniqueItems`, `prefixItems`. `enum` and `const` values are emitted verbatim, whatever
//! the string bound. Generic objects may repeat a key.
//!
//! Numbers: an integer has at most 16 digits and no `-0`; a float has at most 15 significant
//! digits (so Python's shortest repr gives the same digits back), is fixed notation with a
//! fraction for 1e-4 <= |x| < 1e16 (`0.0001`, `2.5`, `10.0`) and `d.ddde±XX` otherwise, with the
//! exponent capped at 299. Where a schema says `number`, an integer spelling is allowed too
//! (`json.loads` keeps it an int).
//!
//! A part that cannot be produced within the limits (too deep, `minLength` above the bound, an
//! empty `enum`) is left to its parent's other choices: an optional property is omitted, an
//! `anyOf` branch dropped, an array left empty. Only when no choice remains is it an error.

mod containers;
mod repeat;
mod scalars;

use std::collections::HashSet;

use serde_json::{Map, Value};
use thiserror::Error;

/// How the call is framed around its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFormat {
    /// Qwen/Hermes style: optional free reasoning text (no '<' in it, at most `reasoning_chars` chars), then
    /// "<tool_call>\n{\"name\": \"NAME\", \"arguments\": ARGS}\n</tool_call>"
    Hermes,
    /// One JSON object: {"reasoning": "...", "name": "NAME", "arguments": ARGS}  (the reasoning member is only present when reasoning_chars > 0)
    Json,
}

/// Bounds that keep every reply finite; all lengths count characters (code points), an escape
/// sequence counting as the one character it stands for, as in JSON Schema's `maxLength`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest reasoning before the call; 0 means no reasoning at all.
    pub reasoning_chars: u32,
    /// Longest string anywhere in the arguments (a smaller `maxLength` wins).
    pub string_chars: u32,
    /// Most items of any array, and most members of a generic object (a smaller `maxItems` wins).
    pub array_items: u32,
    /// Deepest container nesting in the arguments; the arguments object itself is level 1.
    pub depth: u32,
}

/// Why no grammar could be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GrammarError {
    /// The tool list was empty: there would be nothing to call.
    #[error("no tools: a tool-call grammar needs at least one tool")]
    NoTools,
    /// `depth` is 0 or above [`MAX_DEPTH`].
    #[error("invalid limits: {0}")]
    InvalidLimits(String),
    /// Not an OpenAI function tool with a non-empty name (`index` counts from 0).
    #[error("tool #{index} is malformed: {reason}")]
    MalformedTool { index: usize, reason: String },
    /// Two tools share a name, so a call could not say which one it means.
    #[error("tool {name:?} is defined more than once")]
    DuplicateTool { name: String },
    /// A required container of the schema lies deeper than `Limits::depth`.
    #[error("tool {tool:?}: {path} nests deeper than the depth limit of {depth}")]
    TooDeep {
        tool: String,
        path: String,
        depth: u32,
    },
    /// A required part admits no value within the limits (e.g. `minLength` above the bound).
    #[error("tool {tool:?}: nothing at {path} satisfies the schema within the limits: {reason}")]
    Unsatisfiable {
        tool: String,
        path: String,
        reason: String,
    },
}

/// Deepest nesting accepted: generic values get a few rules per level, and no tool needs more.
pub const MAX_DEPTH: u32 = 64;
/// Up to this many repetitions a plain chain costs less than chunking and keeps one stack.
const PLAIN_CHAIN_MAX: u64 = 32;
/// Most digits of an integer.
const INT_DIGITS: u64 = 16;
/// Most significant digits of a float: with at most DBL_DIG (15) digits, decimal -> double ->
/// shortest repr gives back the same digits, so Python re-prints what the model wrote.
const FLOAT_DIGITS: u64 = 15;
/// Keywords this module cannot honour; a schema using them admits a generic value.
const UNSUPPORTED: [&str; 6] = ["$ref", "allOf", "not", "if", "then", "else"];
/// The schema of a required property that `properties` does not declare.
static ANY_VALUE: Value = Value::Bool(true);

/// Builds the grammar for one reply: exactly one call of one of `tools`, framed per `format`.
pub fn tool_call_grammar(
    tools: &[Value],
    format: CallFormat,
    limits: &Limits,
) -> Result<String, GrammarError> {
    check_limits(limits)?;
    if tools.is_empty() {
        return Err(GrammarError::NoTools);
    }
    let mut builder = Builder::new(limits);
    let mut seen = HashSet::new();
    let mut calls = Vec::with_capacity(tools.len());
    for (index, tool) in tools.iter().enumerate() {
        let (name, parameters) = parse_tool(index, tool)?;
        if !seen.insert(name) {
            return Err(GrammarError::DuplicateTool {
                name: name.to_string(),
            });
        }
        calls.push(builder.call(index, name, parameters)?);
    }
    let calls = builder.add("calls", &calls.join(" | "));
    let root = builder.root(format, &calls);
    Ok(builder.finish(&root))
}

fn check_limits(limits: &Limits) -> Result<(), GrammarError> {
    if limits.depth == 0 {
        return Err(GrammarError::InvalidLimits(
            "depth must be at least 1: the arguments object is itself one level".into(),
        ));
    }
    if limits.depth > MAX_DEPTH {
        return Err(GrammarError::InvalidLimits(format!(
            "depth {} is above the supported maximum of {MAX_DEPTH}",
            limits.depth
        )));
    }
    Ok(())
}

/// Name and parameters schema of an OpenAI tool object.
fn parse_tool(index: usize, tool: &Value) -> Result<(&str, Option<&Value>), GrammarError> {
    let malformed = |reason: &str| GrammarError::MalformedTool {
        index,
        reason: reason.to_string(),
    };
    let tool = tool.as_object().ok_or_else(|| malformed("not an object"))?;
    if let Some(kind) = tool.get("type") {
        if kind.as_str() != Some("function") {
            return Err(malformed("its type is not \"function\""));
        }
    }
    let function = tool
        .get("function")
        .and_then(Value::as_object)
        .ok_or_else(|| malformed("no \"function\" object"))?;
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .ok_or_else(|| malformed("no function name"))?;
    Ok((name, function.get("parameters")))
}

/// Where a schema sits: names its rules and locates errors.
#[derive(Debug, Clone)]
struct Site {
    tool: String,
    /// Human-readable location, e.g. `arguments.view_range[]`.
    path: String,
    /// Rule-name prefix that no other site shares.
    rule: String,
    /// The nesting level a container here would have (the arguments object is 1).
    level: u32,
}

impl Site {
    fn property(&self, index: usize, name: &str) -> Site {
        Site {
            tool: self.tool.clone(),
            path: format!("{}.{name}", self.path),
            rule: format!("{}-p{index}", self.rule),
            level: self.level + 1,
        }
    }

    fn items(&self) -> Site {
        Site {
            tool: self.tool.clone(),
            path: format!("{}[]", self.path),
            rule: format!("{}-i", self.rule),
            level: self.level + 1,
        }
    }

    /// One alternative of the value here (an `anyOf` branch, one of several types).
    fn variant(&self, tag: char, index: usize) -> Site {
        Site {
            tool: self.tool.clone(),
            path: self.path.clone(),
            rule: format!("{}-{tag}{index}", self.rule),
            level: self.level,
        }
    }

    fn unsatisfiable(&self, reason: impl Into<String>) -> GrammarError {
        GrammarError::Unsatisfiable {
            tool: self.tool.clone(),
            path: self.path.clone(),
            reason: reason.into(),
        }
    }
}

/// One property of an object, ready to emit: the key literal and its value.
struct Member {
    expr: String,
    required: bool,
}

/// Accumulates rules; each is added once, after every rule it references, so a rollback after a
/// failed optional part never leaves a dangling reference.
struct Builder<'l> {
    limits: &'l Limits,
    names: HashSet<String>,
    rules: Vec<(String, String)>,
}

impl<'l> Builder<'l> {
    fn new(limits: &'l Limits) -> Self {
        Builder {
            limits,
            names: HashSet::new(),
            rules: Vec::new(),
        }
    }

    fn has(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// Adds `name ::= body` unless `name` exists (shared rules are requested many times).
    fn add(&mut self, name: &str, body: &str) -> String {
        if self.names.insert(name.to_string()) {
            self.rules.push((name.to_string(), body.to_string()));
        }
        name.to_string()
    }

    fn checkpoint(&self) -> usize {
        self.rules.len()
    }

    /// Drops the rules added since `mark`, when the part that needed them was given up.
    fn rollback(&mut self, mark: usize) {
        for (name, _) in self.rules.drain(mark..) {
            self.names.remove(&name);
        }
    }

    fn finish(self, root: &str) -> String {
        let mut out = format!("root ::= {root}\n");
        for (name, body) in &self.rules {
            out.push_str(name);
            out.push_str(" ::= ");
            out.push_str(body);
            out.push('\n');
        }
        out
    }

    /// The root body: optional reasoning, then the framed call.
    fn root(&mut self, format: CallFormat, calls: &str) -> String {
        let reasoning = u64::from(self.limits.reasoning_chars);
        let mut parts = Vec::new();
        match format {
            CallFormat::Hermes => {
                if reasoning > 0 {
                    let unit = self.add("think", "[^<]");
                    parts.extend(self.at_most(&unit, reasoning));
                }
                parts.extend([lit("<tool_call>\n{"), calls.into(), lit("}\n</tool_call>")]);
            }
            CallFormat::Json if reasoning > 0 => {
                let text = self.string_rule(0, reasoning);
                parts.extend([lit("{\"reasoning\": "), text, lit(", "), calls.into()]);
                parts.push(lit("}"));
            }
            CallFormat::Json => parts.extend([lit("{"), calls.into(), lit("}")]),
        }
        parts.join(" ")
    }

    /// `"name": "NAME", "arguments": ARGS` for one tool; the braces come from the frame.
    fn call(
        &mut self,
        index: usize,
        name: &str,
        parameters: Option<&Value>,
    ) -> Result<String, GrammarError> {
        let hint = rule_hint(name);
        let site = Site {
            tool: name.to_string(),
            path: "arguments".into(),
            rule: if hint.is_empty() {
                format!("t{index}")
            } else {
                format!("t{index}-{hint}")
            },
            level: 1,
        };
        let arguments = match parameters {
            None | Some(Value::Null) => lit("{}"),
            Some(schema) => self.value(schema, &site, true)?,
        };
        let head = format!("\"name\": {}, \"arguments\": ", py_string(name));
        Ok(format!("{} {arguments}", lit(&head)))
    }

    /// The expression for a value valid against `schema`; `only_object` restricts it to objects
    /// (the arguments must be one).
    fn value(
        &mut self,
        schema: &Value,
        site: &Site,
        only_object: bool,
    ) -> Result<String, GrammarError> {
        match schema {
            Value::Bool(false) => Err(site.unsatisfiable("the schema is `false`")),
            Value::Object(schema) => self.schema(schema, site, only_object),
            // `true`, or something that is no schema at all: any value.
            _ => self.generic(site, only_object),
        }
    }

    fn schema(
        &mut self,
        schema: &Map<String, Value>,
        site: &Site,
        only_object: bool,
    ) -> Result<String, GrammarError> {
        if UNSUPPORTED.iter().any(|key| schema.contains_key(*key)) {
            return self.generic(site, only_object);
        }
        if let Some(value) = schema.get("const") {
            return self.literals(std::slice::from_ref(value), schema, site, only_object);
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            return self.literals(values, schema, site, only_object);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                return self.branches(schema, key, branches, site, only_object);
            }
        }
        match schema_types(schema) {
            Some(types) => self.typed(schema, &types, site, only_object),
            None => self.generic(site, only_object),
        }
    }

    /// `enum` / `const`: the canonical spelling of each value that fits the declared types.
    fn literals(
        &mut self,
        values: &[Value],
        schema: &Map<String, Value>,
        site: &Site,
        only_object: bool,
    ) -> Result<String, GrammarError> {
        let types = schema_types(schema);
        let fits = |value: &&Value| {
            (!only_object || value.is_object())
                && types
                    .as_ref()
                    .is_none_or(|types| types.iter().any(|ty| has_type(value, ty)))
        };
        let alternatives = values
            .iter()
            .filter(fits)
            .map(|value| lit(&py_json(value)))
            .collect();
        self.alternatives(alternatives, site)
            .ok_or_else(|| site.unsatisfiable("no enum/const value fits the schema's type"))
    }

    /// `anyOf` / `oneOf`: each branch merged over its parent, the ones that can be built.
    fn branches(
        &mut self,
        schema: &Map<String, Value>,
        key: &str,
        branches: &[Value],
        site: &Site,
        only_object: bool,
    ) -> Result<String, GrammarError> {
        let mut parent = schema.clone();
        parent.shift_remove(key);
        let mut built = Vec::new();
        let mut first_error = None;
        for (index, branch) in branches.iter().enumerate() {
            let merged = merge_branch(&parent, branch);
            let mark = self.checkpoint();
            match self.value(&merged, &site.variant('o', index), only_object) {
                Ok(expr) => built.push(expr),
                Err(error) => {
                    self.rollback(mark);
                    first_error.get_or_insert(error);
                }
            }
        }
        match self.alternatives(built, site) {
            Some(expr) => Ok(expr),
            None => Err(first_error.unwrap_or_else(|| site.unsatisfiable(format!("empty {key}")))),
        }
    }

    /// A value of one of `types` (already deduplicated, in declared order).
    fn typed(
        &mut self,
        schema: &Map<String, Value>,
        types: &[String],
        site: &Site,
        only_object: bool,
    ) -> Result<String, GrammarError> {
        let types: Vec<&str> = types
            .iter()
            .map(String::as_str)
            .filter(|ty| !only_object || *ty == "object")
            .collect();
        if let [single] = types.as_slice() {
            return self.single_type(schema, single, site);
        }
        let mut built = Vec::new();
        let mut first_error = None;
        for (index, ty) in types.iter().enumerate() {
            let mark = self.checkpoint();
            match self.single_type(schema, ty, &site.variant('y', index)) {
                Ok(expr) => built.push(expr),
                Err(error) => {
                    self.rollback(mark);
                    first_error.get_or_insert(error);
                }
            }
        }
        match self.alternatives(built, site) {
            Some(expr) => Ok(expr),
            None => {
                Err(first_error
                    .unwrap_or_else(|| site.unsatisfiable("the value must be an object")))
            }
        }
    }

    fn single_type(
        &mut self,
        schema: &Map<String, Value>,
        ty: &str,
        site: &Site,
    ) -> Result<String, GrammarError> {
        match ty {
            "string" => self.string(schema, site),
            "integer" => Ok(self.integer()),
            "number" => Ok(self.number()),
            "boolean" => Ok(self.add("bool", "\"true\" | \"false\"")),
            "null" => Ok(lit("null")),
            "object" => self.object(schema, site),
            "array" => self.array(schema, site),
            _ => self.generic(site, false),
        }
    }

    /// One expression for several alternatives: none, the only one, or a rule at `site`.
    fn alternatives(&mut self, mut alternatives: Vec<String>, site: &Site) -> Option<String> {
        let mut seen = HashSet::new();
        alternatives.retain(|expr| seen.insert(expr.clone()));
        match alternatives.len() {
            0 => None,
            1 => alternatives.pop(),
            _ => Some(self.add(&site.rule, &alternatives.join(" | "))),
        }
    }

    fn check_level(&self, site: &Site) -> Result<(), GrammarError> {
        if site.level > self.limits.depth {
            return Err(GrammarError::TooDeep {
                tool: site.tool.clone(),
                path: site.path.clone(),
                depth: self.limits.depth,
            });
        }
        Ok(())
    }
}

/// Shallow merge of an `anyOf`/`oneOf` branch over its parent's other keywords.
fn merge_branch(parent: &Map<String, Value>, branch: &Value) -> Value {
    match branch {
        Value::Object(branch) => {
            let mut merged = parent.clone();
            for (key, value) in branch {
                merged.insert(key.clone(), value.clone());
            }
            Value::Object(merged)
        }
        Value::Bool(true) => Value::Object(parent.clone()),
        other => other.clone(),
    }
}

/// Declared types (deduplicated), else what `properties`/`items`/length keywords imply, else
/// `None`: unconstrained.
fn schema_types(schema: &Map<String, Value>) -> Option<Vec<String>> {
    let mut types: Vec<String> = Vec::new();
    match schema.get("type") {
        Some(Value::String(ty)) => types.push(ty.clone()),
        Some(Value::Array(list)) => {
            for ty in list.iter().filter_map(Value::as_str) {
                if !types.iter().any(|seen| seen == ty) {
                    types.push(ty.to_string());
                }
            }
        }
        _ => {
            let implies = |keys: &[&str]| keys.iter().any(|key| schema.contains_key(*key));
            if implies(&["properties", "required"]) {
                types.push("object".into());
            } else if implies(&["items", "minItems", "maxItems"]) {
                types.push("array".into());
            } else if implies(&["minLength", "maxLength"]) {
                types.push("string".into());
            }
        }
    }
    (!types.is_empty()).then_some(types)
}

/// Whether `value` is of JSON Schema type `ty` (unknown type names accept everything).
fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        _ => true,
    }
}

/// Space-joins the present parts; `""` when none is.
fn join<const N: usize>(parts: [Option<String>; N]) -> String {
    let present: Vec<String> = parts.into_iter().flatten().collect();
    if present.is_empty() {
        lit("")
    } else {
        present.join(" ")
    }
}

/// A rule-name fragment from a tool name: lowercase ASCII letters and digits, other runs as '-'.
fn rule_hint(name: &str) -> String {
    let mut hint = String::new();
    for c in name.chars() {
        if hint.len() >= 24 {
            break;
        }
        if c.is_ascii_alphanumeric() {
            hint.push(c.to_ascii_lowercase());
        } else if !hint.is_empty() && !hint.ends_with('-') {
            hint.push('-');
        }
    }
    hint.trim_end_matches('-').to_string()
}

/// A GBNF string literal matching exactly `text`. Printable ASCII stays as is; everything else
/// is escaped, so a rule body never spans lines and the grammar is plain ASCII.
fn lit(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if u32::from(c) <= 0xFF => out.push_str(&format!("\\x{:02X}", u32::from(c))),
            c if u32::from(c) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// A value as Python's `json.dumps(value, ensure_ascii=False)` writes it (the template's
/// own spelling, so a re-rendered call is the same text).
fn py_json(value: &Value) -> String {
    crate::template::to_python_json(value)
}

/// A string as Python's JSON encoder writes it.
fn py_string(text: &str) -> String {
    py_json(&Value::String(text.to_string()))
}

#[cfg(test)]
mod tests;
