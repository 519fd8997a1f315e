//! Which paths are tests, by the names the common test runners look for (`test_*.py`,
//! `*_test.go`, `tests/`, `*.test.js`…): the check after an edit skips them, the review
//! before `finish` looks for edits of them, and the last commit's undo is never offered
//! for one (that would weaken a test).

/// Whether `path` (relative, `/`-separated) names a test file or lies in a test directory.
pub fn is_test_file(path: &str) -> bool {
    let lower = path.to_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    lower
        .split('/')
        .any(|part| matches!(part, "test" | "tests" | "spec" | "specs" | "__tests__"))
        || name.starts_with("test_")
        || name.starts_with("test.")
        || [
            "_test.py",
            "_test.go",
            "_test.rs",
            "_spec.rb",
            ".test.js",
            ".test.ts",
            ".test.tsx",
            ".spec.js",
            ".spec.ts",
            "test.java",
            "tests.java",
            "_test.c",
            "_test.cc",
            "_test.cpp",
        ]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}
