//! The imports a version of a function needs: a small model that rewrites a function
//! often writes the `import re` it uses above it, and a version put in place without it
//! fails on the name alone. Only single-line imports are read (`import x`, `from x import
//! y`, `use a::b;`, `const x = require("x")`, Go's `import "x"`); they go after the file's
//! last import line, or after its leading `package` line, shebang and inner attributes
//! and docs, else at its top. An import the file already has is not added again.

use super::file_lines;
use super::Place;
use crate::Workspace;

/// Whether `line` (trimmed) is an import written on one line.
pub fn is_import(line: &str) -> bool {
    let line = line.trim();
    let require = ["const ", "let ", "var "]
        .iter()
        .any(|word| line.starts_with(word))
        && line.contains("= require(");
    line.starts_with("import ") && !line.ends_with('(') && !line.ends_with('{')
        || line.starts_with("from ") && line.contains(" import ") && !line.ends_with('(')
        || (line.starts_with("use ") || line.starts_with("pub use ")) && line.ends_with(';')
        || require
}

/// Of `imports`, those the file at `path` lacks, joined, and the line (1-based; 0: the
/// top) they go after; `None` when it lacks none or cannot be read.
pub fn missing_imports(
    workspace: &Workspace,
    path: &str,
    imports: &[String],
) -> Option<(u64, String)> {
    let place = Place {
        path: path.to_string(),
        line: 1,
    };
    let (lines, _) = file_lines(workspace, &place)?;
    let has = |import: &String| lines.iter().any(|line| line.trim() == import.trim());
    let missing: Vec<&String> = imports.iter().filter(|import| !has(import)).collect();
    if missing.is_empty() {
        return None;
    }
    let last_import = lines.iter().rposition(|line| is_import(line));
    let after = match last_import {
        Some(at) => at + 1,
        None => lines
            .iter()
            .take_while(|line| {
                let line = line.trim_start();
                line.starts_with("#!") || line.starts_with("//!") || line.starts_with("package ")
            })
            .count(),
    };
    let text = missing
        .iter()
        .map(|import| import.trim())
        .collect::<Vec<_>>()
        .join("\n");
    Some((after as u64, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_line_imports_are_read_in_any_common_language() {
        for import in [
            "import re",
            "from collections import Counter",
            "use std::collections::HashMap;",
            "const fs = require(\"fs\");",
            "import \"strings\"",
            "import { x } from \"./x.js\";",
        ] {
            assert!(is_import(import), "{import}");
        }
        for other in [
            "import (",
            "from x import (",
            "use std::{",
            "x = 1",
            "important()",
        ] {
            assert!(!is_import(other), "{other}");
        }
    }

    #[test]
    fn missing_imports_go_after_the_last_import_or_the_package_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.py"),
            "import os\n\n\ndef f():\n    pass\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("b.go"), "package b\n\nfunc F() {}\n").unwrap();
        std::fs::write(dir.path().join("c.py"), "def f():\n    pass\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let wanted = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            missing_imports(&workspace, "a.py", &wanted(&["import os", "import re"])),
            Some((1, "import re".to_string()))
        );
        assert_eq!(
            missing_imports(&workspace, "a.py", &wanted(&["import os"])),
            None
        );
        assert_eq!(
            missing_imports(&workspace, "b.go", &wanted(&["import \"strings\""])),
            Some((1, "import \"strings\"".to_string()))
        );
        assert_eq!(
            missing_imports(
                &workspace,
                "c.py",
                &wanted(&["import re", "from x import y"])
            ),
            Some((0, "import re\nfrom x import y".to_string()))
        );
    }
}
