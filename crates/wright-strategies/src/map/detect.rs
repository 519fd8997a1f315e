//! What a map says about a project beyond its files: its languages (by extension) and
//! the test and build commands its own files declare — `Makefile` targets, `Cargo.toml`,
//! `go.mod`, `package.json` scripts, Python's pytest or unittest. Project files are read
//! as text (bounded by the gatherer) and nothing in them is run or echoed: a command is
//! one wright wrote, named after where it was found.

/// A command the project's files point at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub kind: CommandKind,
    pub line: String,
    /// The file it was found in.
    pub from: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CommandKind {
    Test,
    Build,
}

impl CommandKind {
    pub fn label(self) -> &'static str {
        match self {
            CommandKind::Test => "Test",
            CommandKind::Build => "Build",
        }
    }
}

/// Extensions and their language, for the `Languages:` line.
const LANGUAGES: &[(&str, &str)] = &[
    ("rs", "Rust"),
    ("py", "Python"),
    ("pyi", "Python"),
    ("js", "JavaScript"),
    ("mjs", "JavaScript"),
    ("cjs", "JavaScript"),
    ("jsx", "JavaScript"),
    ("ts", "TypeScript"),
    ("tsx", "TypeScript"),
    ("go", "Go"),
    ("c", "C"),
    ("h", "C/C++ header"),
    ("cc", "C++"),
    ("cpp", "C++"),
    ("cxx", "C++"),
    ("hpp", "C++"),
    ("java", "Java"),
    ("kt", "Kotlin"),
    ("swift", "Swift"),
    ("rb", "Ruby"),
    ("php", "PHP"),
    ("cs", "C#"),
    ("scala", "Scala"),
    ("lua", "Lua"),
    ("sh", "Shell"),
    ("bash", "Shell"),
    ("zig", "Zig"),
    ("ex", "Elixir"),
    ("exs", "Elixir"),
    ("hs", "Haskell"),
    ("ml", "OCaml"),
    ("dart", "Dart"),
    ("r", "R"),
    ("sql", "SQL"),
    ("html", "HTML"),
    ("css", "CSS"),
    ("vue", "Vue"),
];

/// Languages shown at most.
const MAX_LANGUAGES: usize = 5;

/// "Python (40 files), Shell (1 file)": the languages of `files` by count, most first
/// ("Python 40" would read as a version).
pub(super) fn languages(files: &[String]) -> Option<String> {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for file in files {
        let name = file.rsplit('/').next().unwrap_or(file);
        let Some((_, ext)) = name.rsplit_once('.') else {
            continue;
        };
        let ext = ext.to_ascii_lowercase();
        if let Some((_, language)) = LANGUAGES.iter().find(|(e, _)| *e == ext) {
            *counts.entry(language).or_default() += 1;
        }
    }
    let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
    // Most files first; ties by name (the map's order).
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> = ranked
        .iter()
        .take(MAX_LANGUAGES)
        .map(|(language, n)| format!("{language} ({})", wright_protocol::count(*n as u64, "file")))
        .collect();
    (!shown.is_empty()).then(|| shown.join(", "))
}

/// The test and build commands the project's files declare, tests first, in a fixed
/// order of sources (a Makefile's own targets before a language's default).
pub(super) fn commands(files: &[String], project: &[(String, String)]) -> Vec<Command> {
    let text = |name: &str| {
        project
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, text)| text.as_str())
    };
    let has = |name: &str| files.iter().any(|f| f == name);
    let mut found = Vec::new();
    let mut add = |kind, line: &str, from: &str| {
        found.push(Command {
            kind,
            line: line.to_string(),
            from: from.to_string(),
        })
    };
    for makefile in ["Makefile", "makefile", "GNUmakefile"] {
        if let Some(text) = text(makefile) {
            let targets = make_targets(text);
            for (kind, names) in [
                (CommandKind::Test, &["test", "tests", "check"][..]),
                (CommandKind::Build, &["build", "all"][..]),
            ] {
                if let Some(target) = names.iter().find(|t| targets.contains(t)) {
                    add(kind, &format!("make {target}"), makefile);
                }
            }
            break;
        }
    }
    if has("Cargo.toml") {
        add(CommandKind::Test, "cargo test", "Cargo.toml");
        add(CommandKind::Build, "cargo build", "Cargo.toml");
    }
    if has("go.mod") {
        add(CommandKind::Test, "go test ./...", "go.mod");
        add(CommandKind::Build, "go build ./...", "go.mod");
    }
    if let Some(text) = text("package.json") {
        let runner = if has("pnpm-lock.yaml") {
            "pnpm"
        } else if has("yarn.lock") {
            "yarn"
        } else {
            "npm"
        };
        let scripts = package_scripts(text);
        if scripts.test {
            add(CommandKind::Test, &format!("{runner} test"), "package.json");
        }
        if scripts.build {
            add(
                CommandKind::Build,
                &format!("{runner} run build"),
                "package.json",
            );
        }
    }
    // Test files Node's own runner finds, and no test script to run them otherwise.
    let npm_tests = text("package.json").is_some_and(|text| package_scripts(text).test);
    if let Some(file) = files
        .iter()
        .find(|file| is_node_test(file))
        .filter(|_| !npm_tests)
    {
        add(CommandKind::Test, "node --test", file);
    }
    if let Some((line, from)) = python_tests(files, &text) {
        add(CommandKind::Test, &line, &from);
    }
    found.sort_by_key(|command| command.kind);
    found
}

/// Whether `path` is a file `node --test` runs by default: `*.test.js`, `*-test.js`,
/// `*_test.js`, `test-*.js`, `test.js` or any file beneath a `test` directory (`.mjs` and
/// `.cjs` too), outside `node_modules`.
fn is_node_test(path: &str) -> bool {
    let Some(stem) = [".js", ".mjs", ".cjs"]
        .iter()
        .find_map(|ext| path.strip_suffix(ext))
    else {
        return false;
    };
    let parts: Vec<&str> = stem.split('/').collect();
    let (dirs, name) = parts.split_at(parts.len() - 1);
    let name = name[0];
    !dirs.contains(&"node_modules")
        && (dirs.contains(&"test")
            || name == "test"
            || name.starts_with("test-")
            || [".test", "-test", "_test"]
                .iter()
                .any(|end| name.ends_with(end)))
}

/// The targets a Makefile defines (`name:` at the start of a line, not `name :=`).
fn make_targets(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|line| !line.starts_with(['\t', ' ', '#', '.']))
        .filter_map(|line| {
            let (names, rest) = line.split_once(':')?;
            if rest.starts_with('=') || names.contains('=') || names.contains('$') {
                return None;
            }
            Some(names.split_whitespace())
        })
        .flatten()
        .collect()
}

struct Scripts {
    test: bool,
    build: bool,
}

/// Which of `test` and `build` a package.json's scripts define (npm's placeholder test
/// script, which only fails, does not count).
fn package_scripts(text: &str) -> Scripts {
    let json: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let script = |name: &str| json["scripts"][name].as_str().map(str::to_string);
    Scripts {
        test: script("test").is_some_and(|s| !s.contains("no test specified")),
        build: script("build").is_some(),
    }
}

/// pytest where the project uses it (its configuration, a `conftest.py`, or it named in
/// the project's files); else `unittest` where there are Python test files.
fn python_tests<'a>(
    files: &[String],
    text: &dyn Fn(&str) -> Option<&'a str>,
) -> Option<(String, String)> {
    let named = |name: &str, needle: &str| text(name).is_some_and(|t| t.contains(needle));
    let configured = [
        ("pytest.ini", ""),
        ("pyproject.toml", "[tool.pytest"),
        ("setup.cfg", "[tool:pytest]"),
        ("tox.ini", "[pytest]"),
        ("pyproject.toml", "pytest"),
        ("setup.py", "pytest"),
        ("requirements-dev.txt", "pytest"),
        ("requirements.txt", "pytest"),
    ];
    if let Some((name, _)) = configured.iter().find(|(name, needle)| named(name, needle)) {
        return Some(("python3 -m pytest".to_string(), name.to_string()));
    }
    if let Some(conftest) = files
        .iter()
        .find(|f| *f == "conftest.py" || f.ends_with("/conftest.py"))
    {
        return Some(("python3 -m pytest".to_string(), conftest.clone()));
    }
    let test_file = files.iter().find(|f| {
        let name = f.rsplit('/').next().unwrap_or(f);
        name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
    })?;
    // Discovery from the top enters only packages; elsewhere it must start in the
    // tests' own directory.
    let dir = test_file.rsplit_once('/').map_or("", |(dir, _)| dir);
    let mut package = String::new();
    let importable = dir.split('/').filter(|d| !d.is_empty()).all(|part| {
        package.push_str(part);
        package.push('/');
        files.iter().any(|f| *f == format!("{package}__init__.py"))
    });
    let plain = dir
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    let line = if importable || !plain {
        "python3 -m unittest".to_string()
    } else {
        format!("python3 -m unittest discover -s {dir}")
    };
    Some((line, test_file.clone()))
}
