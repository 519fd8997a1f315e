//! Strings and numbers: the rules that spell a JSON string within its length bounds and a
//! number the way Python prints it (the module above says why byte-identical).

use super::{lit, Builder, GrammarError, Site, FLOAT_DIGITS, INT_DIGITS};
use serde_json::{Map, Value};

impl Builder<'_> {
    pub(super) fn string(
        &mut self,
        schema: &Map<String, Value>,
        site: &Site,
    ) -> Result<String, GrammarError> {
        let bound = u64::from(self.limits.string_chars);
        let max = schema
            .get("maxLength")
            .and_then(Value::as_u64)
            .map_or(bound, |max| max.min(bound));
        let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
        if min > max {
            return Err(
                site.unsatisfiable(format!("minLength {min} is above the length bound {max}"))
            );
        }
        Ok(self.string_rule(min, max))
    }

    /// A JSON string of `min..=max` characters, shared by every string with those bounds.
    pub(super) fn string_rule(&mut self, min: u64, max: u64) -> String {
        let name = if min == 0 {
            format!("str-{max}")
        } else {
            format!("str-{min}-{max}")
        };
        if !self.has(&name) {
            let mut parts = vec![lit("\"")];
            if max > 0 {
                let unit = self.json_char();
                parts.extend(self.exact(&unit, min));
                parts.extend(self.at_most(&unit, max - min));
            }
            parts.push(lit("\""));
            self.add(&name, &parts.join(" "));
        }
        name
    }

    /// One character inside a JSON string, spelled as Python's encoder spells it.
    pub(super) fn json_char(&mut self) -> String {
        // Only short escapes for the five that have one; \u00xx (lowercase) for the rest of C0.
        self.add(
            "jesc",
            "[\"\\\\bfnrt] | \"u000\" [0-7bef] | \"u001\" [0-9a-f]",
        );
        self.add("jc", "[^\"\\\\\\x00-\\x1F] | \"\\\\\" jesc")
    }

    pub(super) fn digits(&mut self) -> (String, String) {
        (self.add("digit", "[0-9]"), self.add("nz", "[1-9]"))
    }

    /// Python's int: no leading zero, no `-0`, at most [`INT_DIGITS`] digits.
    pub(super) fn integer(&mut self) -> String {
        if !self.has("int") {
            let (digit, nz) = self.digits();
            let rest = self.chain(&digit, INT_DIGITS - 1);
            let body = format!("\"0\" | {nz} {rest} | \"-\" {nz} {rest}");
            self.add("int", &body);
        }
        "int".into()
    }

    /// What `json.loads` then `json.dumps` gives back unchanged: an int, or a float in
    /// Python's repr (fixed for 1e-4 <= |x| < 1e16, else `d.ddde+XX`).
    pub(super) fn number(&mut self) -> String {
        if !self.has("num") {
            let int = self.integer();
            let float = self.float();
            self.add("num", &format!("{int} | {float}"));
        }
        "num".into()
    }

    pub(super) fn float(&mut self) -> String {
        let (digit, nz) = self.digits();
        // Significant digits, the last one nonzero (repr never ends a fraction in 0).
        let inner = self.chain(&digit, FLOAT_DIGITS - 2);
        let sig = self.add("fsig", &format!("{nz} | {nz} {inner} {nz}"));
        // 0.xxx: at most three zeros before the first significant digit (0.0001 is fixed
        // notation, 0.00001 is 1e-05).
        let zero = format!("\"0\" | {sig} | \"0\" {sig} | \"00\" {sig} | \"000\" {sig}");
        let zero = self.add("fzero", &zero);
        let int_part = self.float_int_part(&digit);
        let exponent = self.exponent(&digit);
        let mantissa = self.chain(&digit, FLOAT_DIGITS - 2);
        let sci = format!("{nz} \"e\" {exponent} | {nz} \".\" {mantissa} {nz} \"e\" {exponent}");
        let sci = self.add("fsci", &sci);
        let body = format!("\"0.\" {zero} | {nz} {int_part} | {sci}");
        let unsigned = self.add("funs", &body);
        self.add("flt", &format!("{unsigned} | \"-\" {unsigned}"))
    }

    /// After the first nonzero digit of a fixed float: more integer digits then a fraction,
    /// together at most [`FLOAT_DIGITS`] digits. A trie (`fi{k}` = k integer digits read), so
    /// the parser never guesses the integer's length.
    pub(super) fn float_int_part(&mut self, digit: &str) -> String {
        let mut next = self.add(&format!("fi{FLOAT_DIGITS}"), "\".0\"");
        for read in (1..FLOAT_DIGITS).rev() {
            let fraction = self.fraction(digit, FLOAT_DIGITS - read);
            let body = format!("\".\" {fraction} | {digit} {next}");
            next = self.add(&format!("fi{read}"), &body);
        }
        next
    }

    /// `0`, or 1..=`max` digits ending in a nonzero one.
    pub(super) fn fraction(&mut self, digit: &str, max: u64) -> String {
        let name = format!("fr{max}");
        if !self.has(&name) {
            let nz = self.add("nz", "[1-9]");
            let body = match self.at_most(digit, max - 1) {
                Some(lead) => format!("\"0\" | {lead} {nz}"),
                None => format!("\"0\" | {nz}"),
            };
            self.add(&name, &body);
        }
        name
    }

    /// Python's exponent: signed, two or three digits, used only below 1e-4 or from 1e16 up;
    /// capped at 299 so the value stays finite and normal.
    pub(super) fn exponent(&mut self, digit: &str) -> String {
        let below = format!("\"0\" [5-9] | [1-9] {digit} | [12] {digit} {digit}");
        let below = self.add("fexn", &below);
        let above = format!("\"1\" [6-9] | [2-9] {digit} | [12] {digit} {digit}");
        let above = self.add("fexp", &above);
        self.add("fex", &format!("\"-\" {below} | \"+\" {above}"))
    }
}
