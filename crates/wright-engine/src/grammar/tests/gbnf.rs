//! A small GBNF reader (only what the grammar module promises to emit: one rule per line,
//! literals, character classes, rule references and `|`) and a memoizing matcher that says
//! whether a grammar accepts a text.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

#[derive(Debug)]
enum Sym {
    Lit(Vec<char>),
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Ref(usize),
}

pub(super) struct Grammar {
    pub(super) names: Vec<String>,
    rules: Vec<Vec<Vec<Sym>>>,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

pub(super) fn parse(text: &str) -> Grammar {
    assert!(text.is_ascii(), "grammar is not plain ASCII");
    assert!(text.starts_with("root ::= "), "root is not the first rule");
    let mut names = Vec::new();
    let mut index = HashMap::new();
    let mut bodies = Vec::new();
    for line in text.lines() {
        let (name, body) = line.split_once(" ::= ").expect("a rule line");
        assert!(
            !name.is_empty() && name.chars().all(is_name_char),
            "bad rule name {name:?}"
        );
        assert!(
            index.insert(name.to_string(), names.len()).is_none(),
            "{name} defined twice"
        );
        names.push(name.to_string());
        bodies.push(body);
    }
    let rules = bodies.iter().map(|body| parse_body(body, &index)).collect();
    Grammar { names, rules }
}

fn parse_body(body: &str, index: &HashMap<String, usize>) -> Vec<Vec<Sym>> {
    let chars: Vec<char> = body.chars().collect();
    let mut alternatives = vec![Vec::new()];
    let mut at = 0;
    while at < chars.len() {
        let sym = match chars[at] {
            ' ' => {
                at += 1;
                continue;
            }
            '|' => {
                alternatives.push(Vec::new());
                at += 1;
                continue;
            }
            '"' => {
                let mut literal = Vec::new();
                at += 1;
                while chars[at] != '"' {
                    let (c, next) = unescape(&chars, at);
                    literal.push(c);
                    at = next;
                }
                at += 1;
                Sym::Lit(literal)
            }
            '[' => {
                at += 1;
                let negated = chars[at] == '^';
                if negated {
                    at += 1;
                }
                let mut ranges = Vec::new();
                while chars[at] != ']' {
                    let (low, next) = unescape(&chars, at);
                    at = next;
                    if chars[at] == '-' && chars[at + 1] != ']' {
                        let (high, next) = unescape(&chars, at + 1);
                        at = next;
                        ranges.push((low, high));
                    } else {
                        ranges.push((low, low));
                    }
                }
                at += 1;
                Sym::Class { negated, ranges }
            }
            c if is_name_char(c) => {
                let start = at;
                while at < chars.len() && is_name_char(chars[at]) {
                    at += 1;
                }
                let name: String = chars[start..at].iter().collect();
                Sym::Ref(
                    *index
                        .get(&name)
                        .unwrap_or_else(|| panic!("undefined rule {name}")),
                )
            }
            other => panic!("unexpected {other:?} in rule body {body}"),
        };
        alternatives.last_mut().expect("an alternative").push(sym);
    }
    alternatives
}

/// GBNF escapes as llama.cpp reads them.
fn unescape(chars: &[char], at: usize) -> (char, usize) {
    if chars[at] != '\\' {
        return (chars[at], at + 1);
    }
    let hex = |len: usize| {
        let digits: String = chars[at + 2..at + 2 + len].iter().collect();
        let code = u32::from_str_radix(&digits, 16).expect("hex escape");
        (char::from_u32(code).expect("a code point"), at + 2 + len)
    };
    match chars[at + 1] {
        'n' => ('\n', at + 2),
        'r' => ('\r', at + 2),
        't' => ('\t', at + 2),
        c @ ('\\' | '"' | '[' | ']' | '-') => (c, at + 2),
        'x' => hex(2),
        'u' => hex(4),
        'U' => hex(8),
        other => panic!("unknown escape \\{other}"),
    }
}

struct Matcher<'g> {
    grammar: &'g Grammar,
    input: Vec<char>,
    memo: HashMap<(usize, usize), Rc<BTreeSet<usize>>>,
    active: HashSet<(usize, usize)>,
}

impl Matcher<'_> {
    /// Every input position where `rule`, started at `start`, can end.
    fn rule(&mut self, rule: usize, start: usize) -> Rc<BTreeSet<usize>> {
        if let Some(ends) = self.memo.get(&(rule, start)) {
            return ends.clone();
        }
        assert!(
            self.active.insert((rule, start)),
            "left recursion through {}",
            self.grammar.names[rule]
        );
        let grammar = self.grammar;
        let mut ends = BTreeSet::new();
        for alternative in &grammar.rules[rule] {
            ends.extend(self.sequence(alternative, start));
        }
        self.active.remove(&(rule, start));
        let ends = Rc::new(ends);
        self.memo.insert((rule, start), ends.clone());
        ends
    }

    fn sequence(&mut self, syms: &[Sym], start: usize) -> BTreeSet<usize> {
        let mut current = BTreeSet::from([start]);
        for sym in syms {
            let mut next = BTreeSet::new();
            for at in current {
                match sym {
                    Sym::Lit(text) => {
                        if self.input[at..].starts_with(text) {
                            next.insert(at + text.len());
                        }
                    }
                    Sym::Class { negated, ranges } => {
                        if let Some(c) = self.input.get(at) {
                            let inside = ranges.iter().any(|(low, high)| low <= c && c <= high);
                            if inside != *negated {
                                next.insert(at + 1);
                            }
                        }
                    }
                    Sym::Ref(rule) => next.extend(self.rule(*rule, at).iter()),
                }
            }
            current = next;
            if current.is_empty() {
                break;
            }
        }
        current
    }
}

impl Grammar {
    pub(super) fn accepts(&self, text: &str) -> bool {
        let mut matcher = Matcher {
            grammar: self,
            input: text.chars().collect(),
            memo: HashMap::new(),
            active: HashSet::new(),
        };
        let len = matcher.input.len();
        matcher.rule(0, 0).contains(&len)
    }

    pub(super) fn unreachable_rules(&self) -> Vec<&str> {
        let mut seen = HashSet::from([0]);
        let mut todo = vec![0];
        while let Some(rule) = todo.pop() {
            for sym in self.rules[rule].iter().flatten() {
                if let Sym::Ref(target) = sym {
                    if seen.insert(*target) {
                        todo.push(*target);
                    }
                }
            }
        }
        (0..self.names.len())
            .filter(|rule| !seen.contains(rule))
            .map(|rule| self.names[rule].as_str())
            .collect()
    }
}
