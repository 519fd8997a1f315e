//! Objects, arrays and generic values: members in schema order, bounded item counts, and
//! any JSON value within the depth limit.

use super::{join, lit, py_string, Builder, GrammarError, Member, Site, ANY_VALUE};
use serde_json::{Map, Value};

impl Builder<'_> {
    pub(super) fn object(
        &mut self,
        schema: &Map<String, Value>,
        site: &Site,
    ) -> Result<String, GrammarError> {
        self.check_level(site)?;
        let members = self.members(schema, site)?;
        if members.is_empty() {
            return Ok(lit("{}"));
        }
        let first = self.member_chain(&members, &site.rule);
        let body = format!("{} {first} {}", lit("{"), lit("}"));
        Ok(self.add(&site.rule, &body))
    }

    /// The declared properties in order, then required names that are not declared (any
    /// value). An optional property that cannot be built is left out.
    pub(super) fn members(
        &mut self,
        schema: &Map<String, Value>,
        site: &Site,
    ) -> Result<Vec<Member>, GrammarError> {
        let mut required: Vec<&str> = Vec::new();
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !required.contains(&name) {
                required.push(name);
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let declared = properties.into_iter().flatten();
        let undeclared = required
            .iter()
            .filter(|name| properties.is_none_or(|props| !props.contains_key(**name)))
            .map(|name| (*name, &ANY_VALUE));
        let mut members = Vec::new();
        let all = declared
            .map(|(name, sub)| (name.as_str(), sub))
            .chain(undeclared);
        for (index, (name, sub)) in all.enumerate() {
            let is_required = required.contains(&name);
            let mark = self.checkpoint();
            match self.value(sub, &site.property(index, name), false) {
                Ok(value) => members.push(Member {
                    expr: format!("{} {value}", lit(&format!("{}: ", py_string(name)))),
                    required: is_required,
                }),
                Err(_) if !is_required => self.rollback(mark),
                Err(error) => return Err(error),
            }
        }
        Ok(members)
    }

    /// "Ordered subset" of `members` in linear size: `a{j}` emits members j.. after at least
    /// one was emitted (so each starts with ", "), `f{j}` while none was. A required member
    /// has one alternative, an optional one may be skipped. Returns the rule for the first.
    pub(super) fn member_chain(&mut self, members: &[Member], object: &str) -> String {
        let count = members.len();
        let after = |index: usize| (index < count).then(|| format!("{object}-a{index}"));
        for (index, member) in members.iter().enumerate().skip(1).rev() {
            let emit = join([Some(lit(", ")), Some(member.expr.clone()), after(index + 1)]);
            let body = if member.required {
                emit
            } else {
                format!("{emit} | {}", after(index + 1).unwrap_or_else(|| lit("")))
            };
            self.add(&format!("{object}-a{index}"), &body);
        }
        // Past the first required member "nothing emitted yet" cannot happen.
        let last = members
            .iter()
            .position(|member| member.required)
            .unwrap_or(count - 1);
        let mut next_first = lit("");
        for (index, member) in members.iter().enumerate().take(last + 1).rev() {
            let emit = join([Some(member.expr.clone()), after(index + 1)]);
            let body = if member.required {
                emit
            } else {
                format!("{emit} | {next_first}")
            };
            next_first = self.add(&format!("{object}-f{index}"), &body);
        }
        next_first
    }

    pub(super) fn array(
        &mut self,
        schema: &Map<String, Value>,
        site: &Site,
    ) -> Result<String, GrammarError> {
        self.check_level(site)?;
        let bound = u64::from(self.limits.array_items);
        let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let max = schema
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(bound, |max| max.min(bound));
        if min > max {
            return Err(site.unsatisfiable(format!("minItems {min} is above the item bound {max}")));
        }
        let items = site.items();
        let mark = self.checkpoint();
        let item = match schema.get("items") {
            Some(sub @ (Value::Object(_) | Value::Bool(_))) => self.value(sub, &items, false),
            _ => self.generic(&items, false),
        };
        match item {
            Ok(item) => Ok(self.sequence(&site.rule, ('[', ']'), &item, min, max)),
            Err(_) if min == 0 => {
                self.rollback(mark);
                Ok(lit("[]"))
            }
            Err(error) => Err(error),
        }
    }

    /// `open item, item, ... close` with `min..=max` items, named `rule`.
    pub(super) fn sequence(
        &mut self,
        rule: &str,
        (open, close): (char, char),
        item: &str,
        min: u64,
        max: u64,
    ) -> String {
        let empty = lit(&format!("{open}{close}"));
        if max == 0 {
            return empty;
        }
        let next = self.add(&format!("{rule}-s"), &format!("{} {item}", lit(", ")));
        let mut parts = vec![lit(&open.to_string()), item.to_string()];
        parts.extend(self.exact(&next, min.saturating_sub(1)));
        parts.extend(self.at_most(&next, max - min.max(1)));
        parts.push(lit(&close.to_string()));
        let filled = parts.join(" ");
        let body = if min == 0 {
            format!("{empty} | {filled}")
        } else {
            filled
        };
        self.add(rule, &body)
    }

    /// Any JSON value at `site`: containers only while the depth limit allows.
    pub(super) fn generic(
        &mut self,
        site: &Site,
        only_object: bool,
    ) -> Result<String, GrammarError> {
        let levels = (self.limits.depth + 1).saturating_sub(site.level);
        if !only_object {
            return Ok(self.any(levels));
        }
        if levels == 0 {
            self.check_level(site)?;
        }
        Ok(self.any_object(levels))
    }

    /// `any{k}`: a value holding at most `levels` nested containers.
    pub(super) fn any(&mut self, levels: u32) -> String {
        let name = format!("any{levels}");
        if !self.has(&name) {
            let string = self.string_rule(0, u64::from(self.limits.string_chars));
            let number = self.number();
            let boolean = self.add("bool", "\"true\" | \"false\"");
            let mut body = format!("{string} | {number} | {boolean} | {}", lit("null"));
            if levels > 0 {
                let object = self.any_object(levels);
                let array = self.any_array(levels);
                body = format!("{body} | {object} | {array}");
            }
            self.add(&name, &body);
        }
        name
    }

    pub(super) fn any_object(&mut self, levels: u32) -> String {
        let name = format!("anyo{levels}");
        if !self.has(&name) {
            let key = self.string_rule(0, u64::from(self.limits.string_chars));
            let value = self.any(levels.saturating_sub(1));
            let member = self.add(
                &format!("anym{levels}"),
                &format!("{key} {} {value}", lit(": ")),
            );
            let items = u64::from(self.limits.array_items);
            return self.sequence(&name, ('{', '}'), &member, 0, items);
        }
        name
    }

    pub(super) fn any_array(&mut self, levels: u32) -> String {
        let name = format!("anya{levels}");
        if !self.has(&name) {
            let item = self.any(levels.saturating_sub(1));
            let items = u64::from(self.limits.array_items);
            return self.sequence(&name, ('[', ']'), &item, 0, items);
        }
        name
    }
}
