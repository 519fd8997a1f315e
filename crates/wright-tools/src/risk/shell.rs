//! A small lexer for the shell command lines the model writes: enough of bash to see each
//! simple command (its words, unquoted), the operators between them (`|`, `&&`, `;`, …),
//! its redirections, here-documents, and the text of every command substitution (`$(…)`,
//! backticks, `<(…)`), which the analyzer reads as commands of their own.
//!
//! It is not a shell: no expansion happens. A word that would be expanded at run time
//! (`$X`, `$(…)`) is marked as such, so the analyzer can say it cannot know what it names.
//! A line it cannot read (an unterminated quote or substitution) is an error: the call's
//! risk is then `unknown`, never guessed low.

/// One word of a command, quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub text: String,
    /// Holds an expansion the shell does at run time (`$X`, `${X}`, `$(…)`, backticks).
    pub expands: bool,
}

/// A redirection of a command's input or output to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// `>`, `>>`, `>|`, `&>`, `<>`: the target is written.
    pub writes: bool,
    pub target: Word,
}

/// A simple command: its words (assignments in front left out) and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Command {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// Which pipeline of the line it belongs to (commands joined by `|` share one).
    pub pipeline: usize,
    /// Its input comes from the command before it in the pipeline.
    pub piped: bool,
    /// The bodies of its here-documents and here-strings (what it reads on stdin).
    pub stdin_text: Vec<String>,
    /// The variables assigned in front of it (`PATH=x make`), or alone (`PATH=x`).
    pub assigned: Vec<String>,
    /// `NAME() …`: it defines the function NAME (its body follows as commands).
    pub defines_function: Option<String>,
}

/// A command line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Script {
    pub commands: Vec<Command>,
    /// The text inside each command substitution, to be read as a command line itself.
    pub substitutions: Vec<String>,
}

/// A here-document announced on a line, whose body starts on the next.
struct PendingHeredoc {
    command: usize,
    delimiter: String,
    strip_tabs: bool,
}

struct Lexer<'a> {
    chars: Vec<char>,
    at: usize,
    script: Script,
    current: Command,
    pipeline: usize,
    word: Option<Word>,
    heredocs: Vec<PendingHeredoc>,
    _line: std::marker::PhantomData<&'a str>,
}

/// Reads `line` into its commands, or says why it cannot.
pub(crate) fn parse(line: &str) -> Result<Script, String> {
    let mut lexer = Lexer {
        chars: line.chars().collect(),
        at: 0,
        script: Script::default(),
        current: Command::default(),
        pipeline: 0,
        word: None,
        heredocs: Vec::new(),
        _line: std::marker::PhantomData,
    };
    lexer.run()?;
    Ok(lexer.script)
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn word_mut(&mut self) -> &mut Word {
        self.word.get_or_insert_with(|| Word {
            text: String::new(),
            expands: false,
        })
    }

    fn push_char(&mut self, c: char) {
        self.word_mut().text.push(c);
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            // `NAME=value` (`NAME+=…`, `NAME[i]=…`) before the program is an assignment,
            // not the program.
            let assigned = match self.current.words.is_empty() {
                true => word
                    .text
                    .split_once('=')
                    .map(|(name, _)| assigned_name(name)),
                false => None,
            };
            match assigned {
                Some(name) if is_name(name) => self.current.assigned.push(name.to_string()),
                _ => self.current.words.push(word),
            }
        }
    }

    /// At `(`: whether `()` follows, making the word before it a function's name.
    fn function_parens(&self) -> bool {
        let mut ahead = 1;
        while matches!(self.peek(ahead), Some(' ' | '\t')) {
            ahead += 1;
        }
        self.peek(ahead) == Some(')')
    }

    /// `NAME()` or `NAME ()`: the command defines a function; its body is read as the
    /// commands that follow.
    fn function_definition(&mut self) {
        self.end_word();
        while self.peek(0) != Some(')') {
            self.at += 1;
        }
        self.at += 1;
        self.current.defines_function = Some(
            self.current
                .words
                .last()
                .map(|w| w.text.clone())
                .unwrap_or_default(),
        );
        self.end_command(false);
    }

    /// `$'…'`: ANSI-C quoting, whose escapes (`\x72`) are not decoded here, so what the
    /// word says is not known.
    fn ansi_c_quoted(&mut self) -> Result<(), String> {
        self.at += 2;
        loop {
            match self.peek(0) {
                None => return Err("a $' is not closed".into()),
                Some('\'') => {
                    self.at += 1;
                    break;
                }
                Some('\\') => {
                    self.push_char('\\');
                    if let Some(next) = self.peek(1) {
                        self.push_char(next);
                    }
                    self.at += 2;
                }
                Some(c) => {
                    self.push_char(c);
                    self.at += 1;
                }
            }
        }
        self.word_mut().expands = true;
        Ok(())
    }

    /// Ends the current command; `piped_next` when a `|` joins it to the next.
    fn end_command(&mut self, piped_next: bool) {
        self.end_word();
        let command = std::mem::take(&mut self.current);
        let had_any = !command.words.is_empty()
            || !command.redirects.is_empty()
            || !command.assigned.is_empty()
            || command.defines_function.is_some();
        if had_any {
            self.script.commands.push(command);
        }
        self.current.pipeline = self.pipeline;
        if piped_next {
            self.current.piped = true;
        } else {
            self.pipeline += 1;
            self.current.pipeline = self.pipeline;
        }
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => {
                    self.end_word();
                    self.at += 1;
                }
                '\n' => {
                    self.at += 1;
                    self.end_command(false);
                    self.read_heredocs()?;
                }
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                '\'' => {
                    self.at += 1;
                    let text = self.until('\'')?;
                    self.word_mut().text.push_str(&text);
                }
                '"' => {
                    self.at += 1;
                    self.double_quoted()?;
                }
                '\\' => {
                    match self.peek(1) {
                        Some('\n') => {}
                        Some(next) => self.push_char(next),
                        None => {}
                    }
                    self.at += 2;
                }
                '`' => {
                    self.at += 1;
                    let inner = self.until('`')?;
                    self.substitution(inner);
                }
                '$' if self.peek(1) == Some('\'') => self.ansi_c_quoted()?,
                // `$"…"`: translated through a message catalog at run time.
                '$' if self.peek(1) == Some('"') => {
                    self.at += 1;
                    self.word_mut().expands = true;
                }
                '$' => self.dollar()?,
                '(' if self.function_parens()
                    && (self.word.is_some() || self.current.words.len() == 1) =>
                {
                    self.function_definition()
                }
                '|' => {
                    self.at += 1;
                    if self.peek(0) == Some('|') {
                        self.at += 1;
                        self.end_command(false);
                    } else {
                        if self.peek(0) == Some('&') {
                            self.at += 1;
                        }
                        self.end_command(true);
                    }
                }
                '&' if self.peek(1) == Some('>') => {
                    self.end_word();
                    self.at += 2;
                    if self.peek(0) == Some('>') {
                        self.at += 1;
                    }
                    self.redirect_target(true)?;
                }
                '&' => {
                    self.at += 1;
                    if self.peek(0) == Some('&') {
                        self.at += 1;
                    }
                    self.end_command(false);
                }
                ';' => {
                    self.at += 1;
                    while self.peek(0) == Some(';') || self.peek(0) == Some('&') {
                        self.at += 1;
                    }
                    self.end_command(false);
                }
                '(' | ')' if self.word.is_none() => {
                    self.at += 1;
                    self.end_command(false);
                }
                '<' | '>' if self.peek(1) == Some('(') && self.word.is_none() => {
                    // Process substitution: a command whose output or input is a path.
                    self.at += 2;
                    let inner = self.balanced()?;
                    self.substitution(inner);
                }
                '<' | '>' => self.redirection()?,
                _ => {
                    self.push_char(c);
                    self.at += 1;
                }
            }
        }
        self.end_command(false);
        if let Some(pending) = self.heredocs.first() {
            return Err(format!(
                "a here-document ending with {} is not closed",
                pending.delimiter
            ));
        }
        Ok(())
    }

    /// The text up to `end` (not included), which is consumed.
    fn until(&mut self, end: char) -> Result<String, String> {
        let mut text = String::new();
        loop {
            match self.peek(0) {
                None => return Err(format!("a {end} is not closed")),
                Some(c) if c == end => {
                    self.at += 1;
                    return Ok(text);
                }
                Some('\\') if end == '`' => {
                    if let Some(next) = self.peek(1) {
                        text.push(next);
                    }
                    self.at += 2;
                }
                Some(c) => {
                    text.push(c);
                    self.at += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self) -> Result<(), String> {
        // An empty "" is still a word.
        self.word_mut();
        loop {
            match self.peek(0) {
                None => return Err("a \" is not closed".into()),
                Some('"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some('\\') => {
                    match self.peek(1) {
                        Some(next @ ('$' | '`' | '"' | '\\')) => self.push_char(next),
                        Some('\n') => {}
                        Some(next) => {
                            self.push_char('\\');
                            self.push_char(next);
                        }
                        None => return Err("a \" is not closed".into()),
                    }
                    self.at += 2;
                }
                Some('`') => {
                    self.at += 1;
                    let inner = self.until('`')?;
                    self.substitution(inner);
                }
                Some('$') => self.dollar()?,
                Some(c) => {
                    self.push_char(c);
                    self.at += 1;
                }
            }
        }
    }

    /// `$(…)`, `$((…))`, `${…}`, `$NAME`, or a plain `$`.
    fn dollar(&mut self) -> Result<(), String> {
        match (self.peek(1), self.peek(2)) {
            (Some('('), Some('(')) => {
                // Arithmetic: a number, nothing run (its own substitutions aside).
                self.at += 3;
                let inner = self.balanced()?;
                if self.peek(0) == Some(')') {
                    self.at += 1;
                }
                self.word_mut().text.push_str(&format!("$(({inner}))"));
                self.word_mut().expands = true;
            }
            (Some('('), _) => {
                self.at += 2;
                let inner = self.balanced()?;
                self.substitution(inner);
            }
            (Some('{'), _) => {
                self.at += 2;
                let inner = self.until('}')?;
                let word = self.word_mut();
                word.text.push_str(&format!("${{{inner}}}"));
                word.expands = true;
            }
            (Some(c), _) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                self.at += 1;
                let mut name = String::from("$");
                while let Some(c) = self.peek(0) {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        name.push(c);
                        self.at += 1;
                        if name.len() == 2 && !(c.is_ascii_alphabetic() || c == '_') {
                            break;
                        }
                    } else if name.len() == 1 {
                        // A special parameter: `$?`, `$@`, …
                        name.push(c);
                        self.at += 1;
                        break;
                    } else {
                        break;
                    }
                }
                let word = self.word_mut();
                word.text.push_str(&name);
                word.expands = true;
            }
            _ => {
                self.push_char('$');
                self.at += 1;
            }
        }
        Ok(())
    }

    /// The text up to the `)` that closes an opening already consumed, quotes respected.
    fn balanced(&mut self) -> Result<String, String> {
        let mut depth = 1;
        let mut text = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') | (None, '\\') => {
                    text.push(c);
                    if let Some(next) = self.peek(0) {
                        text.push(next);
                        self.at += 1;
                    }
                    continue;
                }
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(text);
                    }
                }
                (None, _) => {}
            }
            text.push(c);
        }
        Err("a $( is not closed".into())
    }

    fn substitution(&mut self, inner: String) {
        let word = self.word_mut();
        word.text.push_str("$(…)");
        word.expands = true;
        self.script.substitutions.push(inner);
    }

    /// A redirection at `<` or `>` (a number just before it, `2>`, is its descriptor).
    fn redirection(&mut self) -> Result<(), String> {
        if self
            .word
            .as_ref()
            .is_some_and(|w| !w.expands && w.text.chars().all(|c| c.is_ascii_digit()))
        {
            self.word = None;
        } else {
            self.end_word();
        }
        let first = self.peek(0);
        self.at += 1;
        match (first, self.peek(0)) {
            (Some('<'), Some('<')) => {
                self.at += 1;
                if self.peek(0) == Some('<') {
                    self.at += 1;
                    let text = self.next_word()?;
                    self.current.stdin_text.push(text.text);
                    return Ok(());
                }
                let strip_tabs = self.peek(0) == Some('-');
                if strip_tabs {
                    self.at += 1;
                }
                let delimiter = self.next_word()?;
                self.heredocs.push(PendingHeredoc {
                    command: self.script.commands.len(),
                    delimiter: delimiter.text,
                    strip_tabs,
                });
                Ok(())
            }
            (Some('<'), Some('&')) | (Some('>'), Some('&')) => {
                // Duplicating a descriptor (`2>&1`, `>&-`): no file.
                self.at += 1;
                self.next_word().map(|_| ())
            }
            (Some('<'), Some('>')) => {
                self.at += 1;
                self.redirect_target(true)
            }
            (Some('<'), _) => self.redirect_target(false),
            (_, Some('>')) | (_, Some('|')) => {
                self.at += 1;
                self.redirect_target(true)
            }
            _ => self.redirect_target(true),
        }
    }

    fn redirect_target(&mut self, writes: bool) -> Result<(), String> {
        let target = self.next_word()?;
        self.current.redirects.push(Redirect { writes, target });
        Ok(())
    }

    /// The word after a redirection operator, spaces before it skipped.
    fn next_word(&mut self) -> Result<Word, String> {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.at += 1;
        }
        let saved = self.word.take();
        loop {
            match self.peek(0) {
                None | Some(' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')') => break,
                Some('\'') => {
                    self.at += 1;
                    let text = self.until('\'')?;
                    self.word_mut().text.push_str(&text);
                }
                Some('"') => {
                    self.at += 1;
                    self.double_quoted()?;
                }
                Some('\\') => {
                    if let Some(next) = self.peek(1) {
                        self.push_char(next);
                    }
                    self.at += 2;
                }
                Some('$') if self.peek(1) == Some('\'') => self.ansi_c_quoted()?,
                Some('$') => self.dollar()?,
                Some(c) => {
                    self.push_char(c);
                    self.at += 1;
                }
            }
        }
        let word = std::mem::replace(&mut self.word, saved);
        word.ok_or_else(|| "a redirection names no file".to_string())
    }

    /// The bodies of the here-documents announced on the line just ended.
    fn read_heredocs(&mut self) -> Result<(), String> {
        for pending in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            loop {
                if self.at >= self.chars.len() {
                    return Err(format!(
                        "a here-document ending with {} is not closed",
                        pending.delimiter
                    ));
                }
                let mut line = String::new();
                while let Some(c) = self.peek(0) {
                    self.at += 1;
                    if c == '\n' {
                        break;
                    }
                    line.push(c);
                }
                let compared = match pending.strip_tabs {
                    true => line.trim_start_matches('\t'),
                    false => line.as_str(),
                };
                if compared == pending.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if let Some(command) = self.script.commands.get_mut(pending.command) {
                command.stdin_text.push(body);
            }
        }
        Ok(())
    }
}

/// The words of every simple command of `line`, those of its command substitutions
/// too (as far as `depth` levels down); `None` when the line cannot be read.
pub(crate) fn simple_commands(line: &str, depth: usize) -> Option<Vec<Vec<String>>> {
    let script = parse(line).ok()?;
    let mut all: Vec<Vec<String>> = script
        .commands
        .iter()
        .map(|command| command.words.iter().map(|w| w.text.clone()).collect())
        .collect();
    if depth > 0 {
        for inner in &script.substitutions {
            all.extend(simple_commands(inner, depth - 1)?);
        }
    }
    Some(all)
}

/// The variable an assignment's left side names: `PATH` of `PATH+`, `BASH_ALIASES[ls]`.
fn assigned_name(left: &str) -> &str {
    let name = left.strip_suffix('+').unwrap_or(left);
    match name.split_once('[') {
        Some((array, _)) if name.ends_with(']') => array,
        _ => name,
    }
}

/// Whether `name` is a shell variable's name.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
