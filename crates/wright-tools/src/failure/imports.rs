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

/// Go's standard packages whose name is not their whole path.
const GO_PATHS: &[(&str, &str)] = &[
    ("utf8", "unicode/utf8"),
    ("rand", "math/rand"),
    ("bits", "math/bits"),
    ("big", "math/big"),
    ("filepath", "path/filepath"),
    ("atomic", "sync/atomic"),
];

/// The one import a failing run of a version of `code` in the file `path` says it lacks,
/// as the line that imports it: a name `code` uses as a module that the run found
/// undefined — Python's `NameError: name 're' is not defined` (`import re`), Go's
/// `undefined: strings` (`import "strings"`) — or the single import rustc suggests
/// (`consider importing …` then `+ use std::collections::HashMap;`). A small model's
/// version often uses a module its file does not import, and writes no import above it
/// (the 1.5B: `re` in 2 of 4 versions of a function, `math` in 1 of 4), so a right
/// version failed on the name alone. `None` when the output names no such import.
pub fn import_named_by(output: &str, path: &str, code: &str) -> Option<String> {
    let used_as_module = |name: &str| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && code.contains(&format!("{name}."))
    };
    let extension = path.rsplit_once('.').map(|(_, extension)| extension);
    match extension? {
        "py" => {
            let name = output.lines().rev().find_map(|line| {
                let rest = line.trim().strip_prefix("NameError: name '")?;
                rest.strip_suffix("' is not defined")
            })?;
            used_as_module(name).then(|| format!("import {name}"))
        }
        "go" => {
            let name = output
                .lines()
                .find_map(|line| line.split_once("undefined: ").map(|(_, name)| name.trim()))?;
            let whole = GO_PATHS
                .iter()
                .find_map(|(short, whole)| (*short == name).then_some(*whole))
                .unwrap_or(name);
            used_as_module(name).then(|| format!("import \"{whole}\""))
        }
        "rs" => {
            let mut suggested = output
                .lines()
                .skip_while(|line| !line.contains("consider importing"))
                .filter_map(|line| {
                    let (_, import) = line.split_once("+ use ")?;
                    Some(format!("use {}", import.trim()))
                })
                .filter(|import| import.ends_with(';'));
            let first = suggested.next()?;
            // One suggestion, or the same one again: rustc lists several paths when the
            // name is ambiguous, and guessing among them is not reading the output.
            suggested.all(|other| other == first).then_some(first)
        }
        _ => None,
    }
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

    #[test]
    fn the_import_a_run_says_is_missing_is_read_for_python_go_and_rust() {
        let python = "  File \"slug.py\", line 3, in slugify\n    return re.sub('x', '', t)\n           ^^\nNameError: name 're' is not defined\n";
        let code = "def slugify(t):\n    return re.sub('x', '', t)";
        assert_eq!(
            import_named_by(python, "slug.py", code),
            Some("import re".into())
        );
        // A function the version calls but nobody wrote is not a module to import.
        let helper = "NameError: name 'helper' is not defined";
        assert_eq!(
            import_named_by(helper, "slug.py", "    return helper(t)"),
            None
        );
        let go = "# example.com/abs\n./abs.go:5:13: undefined: math\nFAIL\texample.com/abs [build failed]\n";
        assert_eq!(
            import_named_by(go, "abs.go", "return int(math.Abs(float64(x)))"),
            Some("import \"math\"".into())
        );
        let go = "./r.go:4:9: undefined: utf8\n";
        assert_eq!(
            import_named_by(go, "r.go", "n := utf8.RuneCountInString(s)"),
            Some("import \"unicode/utf8\"".into())
        );
        let rust = "error[E0433]: failed to resolve: use of undeclared type `HashMap`\n --> src/lib.rs:3:13\n  |\nhelp: consider importing this struct\n  |\n1 + use std::collections::HashMap;\n  |\n";
        assert_eq!(
            import_named_by(rust, "src/lib.rs", "let m = HashMap::new();"),
            Some("use std::collections::HashMap;".into())
        );
        let ambiguous = "help: consider importing one of these items\n  |\n1 + use std::fmt::Result;\n  |\n1 + use std::io::Result;\n";
        assert_eq!(import_named_by(ambiguous, "src/lib.rs", "Result"), None);
        assert_eq!(
            import_named_by("ReferenceError: fs is not defined", "a.js", "fs.x"),
            None
        );
    }
}
