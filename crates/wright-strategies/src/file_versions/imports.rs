//! Python's standard modules that a file the model wrote uses without importing them,
//! imported: the 1.5B's test of an environment override used `os.environ` and never
//! imported `os`, so it could never pass, and its version of a settings module read
//! `os.environ` with no `import os`, so the module failed at import and the version was
//! put back though it did what the task asked. Go's standard packages the same way, and
//! those imported and no longer used taken out (both fail Go's build): the 1.5B's
//! version of a command with a new `-width` flag used `strconv.Atoi` without importing
//! it. Other languages as they are.
//!
//! Guarantees: only the modules of a short list, each only when the text uses it
//! (`os.`) and imports it nowhere (for Go, also taken out when imported plainly and
//! used nowhere); Python's imports go after the file's last top-level import, else after
//! its leading comments and docstring, so a module's docstring stays first; Go's into
//! its import block, else after its `package` line.

/// The standard modules looked for: those a small model uses most and forgets most.
const MODULES: [&str; 6] = ["os", "sys", "subprocess", "json", "re", "unittest"];

/// Go's standard packages looked for: those a small command uses most.
const GO_PACKAGES: [&str; 12] = [
    "bufio", "errors", "flag", "fmt", "io", "math", "os", "sort", "strconv", "strings", "time",
    "unicode",
];

/// `text`, a Python or Go file at `path`, with the standard modules it uses and does not
/// import imported (and for Go, those it imports and does not use taken out); any other
/// file as it is.
pub(super) fn with_std_imports(path: &str, text: &str) -> String {
    if path.ends_with(".go") {
        return go_imports(text);
    }
    if !path.ends_with(".py") {
        return text.to_string();
    }
    let missing: String = MODULES
        .iter()
        .filter(|module| text.contains(&format!("{module}.")) && !imports(text, module))
        .map(|module| format!("import {module}\n"))
        .collect();
    if missing.is_empty() {
        return text.to_string();
    }
    let at = insertion_point(text);
    let (head, tail) = text.split_at(at);
    format!("{head}{missing}{tail}")
}

/// A Go file with the packages of `GO_PACKAGES` it uses imported, and those it imports
/// plainly (`"os"`, no alias) and does not use taken out; as it is without a `package`
/// line.
fn go_imports(text: &str) -> String {
    let uses = |package: &str| {
        let needle = format!("{package}.");
        text.match_indices(&needle).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '"')
        })
    };
    let plain = |line: &str| -> Option<&'static str> {
        let line = line
            .trim()
            .strip_prefix("import")
            .unwrap_or(line.trim())
            .trim();
        GO_PACKAGES
            .iter()
            .find(|package| line == format!("\"{package}\""))
            .copied()
    };
    let mut in_block = false;
    let mut imported: Vec<&str> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("import (") {
            in_block = true;
        } else if in_block && trimmed == ")" {
            in_block = false;
        } else if in_block || trimmed.starts_with("import ") {
            imported.extend(plain(line));
        }
    }
    let missing: Vec<&str> = GO_PACKAGES
        .iter()
        .copied()
        .filter(|package| uses(package) && !imported.contains(package))
        .collect();
    let unused: Vec<&str> = imported
        .iter()
        .copied()
        .filter(|package| !uses(package))
        .collect();
    if (missing.is_empty() && unused.is_empty()) || !text.lines().any(|l| l.starts_with("package "))
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut in_block = false;
    let mut added = missing.is_empty();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let in_import = in_block || trimmed.starts_with("import ");
        if trimmed.starts_with("import (") {
            in_block = true;
        } else if in_block && trimmed == ")" {
            in_block = false;
        }
        if in_import && plain(line).is_some_and(|package| unused.contains(&package)) {
            continue;
        }
        out.push_str(line);
        if !added && trimmed.starts_with("import (") {
            for package in &missing {
                out.push_str(&format!("\t\"{package}\"\n"));
            }
            added = true;
        }
    }
    if !added {
        let lines: String = missing
            .iter()
            .map(|package| format!("import \"{package}\"\n"))
            .collect();
        if let Some(at) = out.find("package ") {
            let end = out[at..].find('\n').map_or(out.len(), |n| at + n + 1);
            let sep = if end == out.len() && !out.ends_with('\n') {
                "\n"
            } else {
                ""
            };
            out.insert_str(end, &format!("{sep}\n{lines}"));
        }
    }
    out
}

/// Whether any line of `text` imports `module` (indented ones too: a module imported
/// where it is used is left to Python to judge).
fn imports(text: &str, module: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        line == format!("import {module}")
            || line.starts_with(&format!("import {module} "))
            || line.starts_with(&format!("import {module},"))
            || line.starts_with(&format!("from {module} import"))
    })
}

/// The byte offset new imports go at: after the last top-level import line; else after
/// leading comments, blank lines and a docstring; else the start.
fn insertion_point(text: &str) -> usize {
    let mut offset = 0;
    let mut after_import = None;
    let mut after_head = 0;
    let mut in_head = true;
    let mut docstring: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let end = offset + line.len();
        let trimmed = line.trim();
        if let Some(quote) = docstring {
            if trimmed.ends_with(quote) {
                docstring = None;
                after_head = end;
            }
        } else if line.starts_with("import ") || line.starts_with("from ") {
            // A one-line import only: `from x import (` runs on over lines of its own.
            if !trimmed.ends_with('(') {
                after_import = Some(end);
            }
            in_head = false;
        } else if in_head && (trimmed.is_empty() || trimmed.starts_with('#')) {
            after_head = end;
        } else if in_head && (trimmed.starts_with("\"\"\"") || trimmed.starts_with("'''")) {
            let quote = &trimmed[..3];
            if trimmed.len() >= 6 && trimmed.ends_with(quote) {
                after_head = end;
            } else {
                docstring = Some(quote);
            }
        } else {
            in_head = false;
        }
        offset = end;
    }
    after_import.unwrap_or(after_head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_check_gets_the_standard_modules_it_uses() {
        let text = "import unittest\n\nclass T(unittest.TestCase):\n    def test(self):\n        os.environ['X'] = '1'\n";
        assert_eq!(
            with_std_imports("test_x.py", text),
            "import unittest\nimport os\n\nclass T(unittest.TestCase):\n    def test(self):\n        os.environ['X'] = '1'\n"
        );
        assert_eq!(with_std_imports("x_test.go", "os.Getenv"), "os.Getenv");
        assert_eq!(with_std_imports("x.rs", "os.Getenv"), "os.Getenv");
        let imported = "import os\nos.environ\n";
        assert_eq!(with_std_imports("t.py", imported), imported);
    }

    #[test]
    fn a_module_docstring_stays_first() {
        let text = "\"\"\"Settings.\"\"\"\n\nTIMEOUT = int(os.environ.get('T', '60'))\n";
        assert_eq!(
            with_std_imports("settings.py", text),
            "\"\"\"Settings.\"\"\"\n\nimport os\nTIMEOUT = int(os.environ.get('T', '60'))\n"
        );
        let long = "#!/usr/bin/env python3\n\"\"\"A tool.\n\nIt reads.\n\"\"\"\nprint(sys.argv)\n";
        assert_eq!(
            with_std_imports("tool.py", long),
            "#!/usr/bin/env python3\n\"\"\"A tool.\n\nIt reads.\n\"\"\"\nimport sys\nprint(sys.argv)\n"
        );
        // Nothing before the code: at the top.
        assert_eq!(
            with_std_imports("a.py", "x = re.compile('a')\n"),
            "import re\nx = re.compile('a')\n"
        );
    }

    #[test]
    fn a_go_file_gets_the_packages_it_uses_and_loses_those_it_no_longer_uses() {
        let text = "package main\n\nimport (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tn, _ := strconv.Atoi(os.Args[1])\n\tfmt.Println(n)\n}\n";
        assert_eq!(
            with_std_imports("main.go", text),
            "package main\n\nimport (\n\t\"strconv\"\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tn, _ := strconv.Atoi(os.Args[1])\n\tfmt.Println(n)\n}\n"
        );
        // No import at all: one line each after `package`; `bufio.` is not `io.`.
        let bare = "package main\n\nfunc f(r *bufio.Reader) { fmt.Println(r) }\n";
        assert_eq!(
            with_std_imports("f.go", bare),
            "package main\n\nimport \"bufio\"\nimport \"fmt\"\n\nfunc f(r *bufio.Reader) { fmt.Println(r) }\n"
        );
        // An aliased import and one outside the list are left as they are.
        let aliased = "package main\n\nimport (\n\tf \"fmt\"\n\t\"net/http\"\n)\n\nfunc main() { f.Println(http.StatusOK) }\n";
        assert_eq!(with_std_imports("main.go", aliased), aliased);
    }
}
