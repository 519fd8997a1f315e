//! Python's standard modules that a file the model wrote uses without importing them,
//! imported: the 1.5B's test of an environment override used `os.environ` and never
//! imported `os`, so it could never pass, and its version of a settings module read
//! `os.environ` with no `import os`, so the module failed at import and the version was
//! put back though it did what the task asked. Other languages as they are.
//!
//! Guarantees: only the modules of a short list, each only when the text uses it
//! (`os.`) and imports it nowhere; the imports go after the file's last top-level import,
//! else after its leading comments and docstring, so a module's docstring stays first.

/// The standard modules looked for: those a small model uses most and forgets most.
const MODULES: [&str; 6] = ["os", "sys", "subprocess", "json", "re", "unittest"];

/// `text`, a Python file at `path`, with the standard modules it uses and does not
/// import imported; any other file as it is.
pub(super) fn with_std_imports(path: &str, text: &str) -> String {
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
}
