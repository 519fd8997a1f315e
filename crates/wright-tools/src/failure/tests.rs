use super::*;
use pretty_assertions::assert_eq;

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::create_dir_all(dir.path().join(".venv/lib/site-packages")).unwrap();
    std::fs::write(
        dir.path().join("pkg/report.py"),
        "def total(rows):\n    s = 0\n    for r in rows:\n        s += r['amount']\n    return s\n",
    )
    .unwrap();
    std::fs::write(dir.path().join(".venv/lib/site-packages/lib.py"), "x\n").unwrap();
    std::fs::write(
        dir.path().join("main.rs"),
        "fn main() {\n    let x: u8 = 300;\n}\n",
    )
    .unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    (dir, workspace)
}

#[test]
fn a_python_traceback_is_read_innermost_frame_first() {
    let (dir, workspace) = workspace();
    let root = dir.path().canonicalize().unwrap();
    let output = format!(
        "Traceback (most recent call last):\n  File \"{root}/.venv/lib/site-packages/lib.py\", line 1, in run\n  File \"pkg/report.py\", line 4, in total\n    s += r['amount']\nKeyError: 'amount'",
        root = root.display()
    );
    let (header, body) = read(&output, &workspace).unwrap();
    assert_eq!(
        header,
        "[It failed at pkg/report.py:4 (in the workspace):\n>4 |         s += r['amount']]"
    );
    assert_eq!(
        body.lines()
            .filter(|l| l.starts_with(MARK))
            .collect::<Vec<_>>(),
        vec![">>   File \"pkg/report.py\", line 4, in total"]
    );
}

#[test]
fn compiler_and_runtime_locations_are_found_in_any_language() {
    let (_dir, workspace) = workspace();
    let output = "error: literal out of range for `u8`\n --> main.rs:2:17\n  |\nthread 'main' panicked at main.rs:2:5:\n   at total (pkg/report.py:3:9)\nnope.rs:1:1 missing\n/etc/passwd:1";
    let found: Vec<Place> = places(output, &workspace)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    assert_eq!(
        found,
        vec![
            Place {
                path: "main.rs".into(),
                line: 2
            },
            Place {
                path: "main.rs".into(),
                line: 2
            },
            Place {
                path: "pkg/report.py".into(),
                line: 3
            },
        ]
    );
}

#[test]
fn quoting_numbers_the_lines_and_marks_the_one_named() {
    let (_dir, workspace) = workspace();
    let place = Place {
        path: "pkg/report.py".into(),
        line: 4,
    };
    assert_eq!(
        quote(&workspace, &place, 1).unwrap(),
        " 3 |     for r in rows:\n>4 |         s += r['amount']\n 5 |     return s"
    );
    assert_eq!(
        quote(
            &workspace,
            &Place {
                path: "pkg/report.py".into(),
                line: 99
            },
            1
        ),
        None
    );
    assert_eq!(read("no places here\nexit 1", &workspace), None);
}

#[test]
fn an_output_naming_many_places_is_read_whole_each_path_looked_up_once() {
    let (_dir, workspace) = workspace();
    let mut output = String::new();
    for n in 0..20_000 {
        output.push_str(&format!(
            "pkg/report.py:{}: warning\nmissing_{n}.py:1: nothing\n",
            n % 5 + 1
        ));
    }
    let (header, body) = read(&output, &workspace).unwrap();
    assert!(
        header.starts_with("[It failed at pkg/report.py:1"),
        "{header}"
    );
    assert_eq!(body.lines().filter(|l| l.starts_with(MARK)).count(), 20_000);
}

#[test]
fn the_code_under_test_is_quoted_whole_when_short_else_its_definition() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("export.py"),
        "def row(r):\n    return \",\".join(r[:-1])\n\n\ndef export(rows):\n    return \"\\n\".join(row(r) for r in rows)\n",
    )
    .unwrap();
    let mut long = String::from("use std::fmt;\n\n");
    long.push_str(
        "pub fn parse(s: &str) -> u32 {\n    let t = s.trim();\n\n    t.len() as u32\n}\n\n",
    );
    for n in 0..40 {
        long.push_str(&format!("fn filler{n}() {{}}\n"));
    }
    std::fs::write(dir.path().join("lib.rs"), &long).unwrap();
    let mut python = String::from("import os\n\n\n");
    python.push_str("def mean(xs):\n    total = sum(xs)\n\n    return total // len(xs)\n\n\ndef other():\n    pass\n");
    for n in 0..30 {
        python.push_str(&format!("X{n} = {n}\n"));
    }
    std::fs::write(dir.path().join("stats.py"), &python).unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let at = |path: &str, line| Place {
        path: path.into(),
        line,
    };
    assert_eq!(
        quote_definition(&workspace, &at("export.py", 5)).unwrap(),
        "export.py, whole:\n 1 | def row(r):\n 2 |     return \",\".join(r[:-1])\n 3 | \n 4 | \n>5 | def export(rows):\n 6 |     return \"\\n\".join(row(r) for r in rows)"
    );
    assert_eq!(
        quote_definition(&workspace, &at("lib.rs", 3)).unwrap(),
        "lib.rs:\n>3 | pub fn parse(s: &str) -> u32 {\n 4 |     let t = s.trim();\n 5 | \n 6 |     t.len() as u32\n 7 | }"
    );
    assert_eq!(
        quote_definition(&workspace, &at("stats.py", 4)).unwrap(),
        "stats.py:\n>4 | def mean(xs):\n 5 |     total = sum(xs)\n 6 | \n 7 |     return total // len(xs)"
    );
    assert_eq!(quote_definition(&workspace, &at("stats.py", 999)), None);
}

/// A unittest run with two failing tests, as the terminal shows it (header, then the
/// marked output), in a workspace holding the code under test and its tests.
fn two_failures() -> (tempfile::TempDir, Workspace, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("shop.py"),
        "def total(prices):\n    return sum(prices[1:])\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("test_shop.py"),
        "import unittest\nfrom shop import total\n\n\nclass T(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(total([1, 2]), 3)\n\n    def test_one(self):\n        self.assertEqual(total([5]), 5)\n",
    )
    .unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let root = workspace.root().display().to_string();
    let output = format!(
        "FF\n======================================================================\nFAIL: test_one (test_shop.T.test_one)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"{root}/test_shop.py\", line 10, in test_one\n    self.assertEqual(total([5]), 5)\nAssertionError: 0 != 5\n\n======================================================================\nFAIL: test_total (test_shop.T.test_total)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"{root}/test_shop.py\", line 7, in test_total\n    self.assertEqual(total([1, 2]), 3)\nAssertionError: 2 != 3\n\n----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nFAILED (failures=2)"
    );
    let (header, body) = read(&output, &workspace).unwrap();
    (dir, workspace, format!("{header}\n{body}"))
}

#[test]
fn the_first_failure_is_the_one_read_innermost_frame_of_the_first_traceback() {
    let (_dir, _workspace, shown) = two_failures();
    assert!(
        shown.starts_with("[It failed at test_shop.py:10 (in the workspace):\n>10 |         self.assertEqual(total([5]), 5)]\n[total is defined at shop.py:1"),
        "{shown}"
    );
    // Elsewhere the first place named: a compiler's first error, a stack's innermost frame.
    let (_dir, workspace) = self::workspace();
    let output =
        "error: literal out of range\n --> main.rs:2:17\nerror: unused\n --> pkg/report.py:4:1";
    let (header, _) = read(output, &workspace).unwrap();
    assert!(header.starts_with("[It failed at main.rs:2 "), "{header}");
}

#[test]
fn the_question_shows_the_code_under_test_and_the_first_failure_alone() {
    let (_dir, workspace, shown) = two_failures();
    let asked = question(&shown, &workspace, "python3 -m unittest", None).unwrap();
    assert_eq!(asked.path, "shop.py");
    assert_eq!(
        asked.text,
        "shop.py:\n```python\ndef total(prices):\n    return sum(prices[1:])\n```\n\n`python3 -m unittest` failed:\n```\nFAIL: test_one (test_shop.T.test_one)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"test_shop.py\", line 10, in test_one\n    self.assertEqual(total([5]), 5)\nAssertionError: 0 != 5\n```\n\nWhich line of shop.py causes this failure? Quote that line, then say in one sentence what is wrong with it."
    );
    // No code under test in another file, or no failure in the workspace: nothing to ask.
    let (_dir, workspace) = self::workspace();
    let root = workspace.root().display().to_string();
    let output = format!(
        "Traceback (most recent call last):\n  File \"{root}/pkg/report.py\", line 4, in total\n    s += r['amount']\nKeyError: 'amount'"
    );
    let (header, body) = read(&output, &workspace).unwrap();
    assert_eq!(
        question(
            &format!("{header}\n{body}"),
            &workspace,
            "python3 x.py",
            None
        ),
        None
    );
    assert_eq!(question("exit 1", &workspace, "make test", None), None);
}

#[test]
fn the_last_change_comes_right_before_the_question() {
    let (_dir, workspace, shown) = two_failures();
    let change = "[The last commit, `abc1234 Skip the first`, changed:]\n```diff\n-    return sum(prices)\n+    return sum(prices[1:])\n```";
    let asked = question(&shown, &workspace, "python3 -m unittest", Some(change)).unwrap();
    assert!(
        asked.text.ends_with(&format!("AssertionError: 0 != 5\n```\n\n{change}\n\nWhich line of shop.py causes this failure? Quote that line, then say in one sentence what is wrong with it.")),
        "{}",
        asked.text
    );
}

#[test]
fn an_excerpt_is_the_first_failure_and_the_count() {
    let (_dir, workspace) = workspace();
    let output = "_____ test_total _____\nTraceback (most recent call last):\n  File \"pkg/report.py\", line 4, in total\n    s += r['amount']\nKeyError: 'amount'\n\n\n".to_string()
        + &"noise\n".repeat(40)
        + "1 failed, 2 passed in 0.01s\n";
    let (header, body) = read(&output, &workspace).unwrap();
    let shown = format!("{header}\n{body}");
    let first = excerpt(&shown, &workspace);
    assert_eq!(
        first,
        "Traceback (most recent call last):\n  File \"pkg/report.py\", line 4, in total\n    s += r['amount']\nKeyError: 'amount'\n…\n1 failed, 2 passed in 0.01s"
    );
    // No place of the workspace: the last lines.
    let plain = "x\n".repeat(30) + "make: *** [all] Error 1";
    let tail = excerpt(&plain, &workspace);
    assert_eq!(tail.lines().count(), 15);
    assert!(tail.ends_with("make: *** [all] Error 1"), "{tail}");
    assert_eq!(last_line("a\nb\n\n  \n"), Some("b"));
}

#[test]
fn a_call_written_over_several_lines_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("export.py"),
        "def export_csv(records, columns):\n    return ''\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("test_export.py"),
        "from export import export_csv\n\n\ndef test_it(self):\n    self.assertEqual(\n        export_csv([], [\"name\"]),\n        \"name\\n\",\n    )\n    print(total())\n",
    )
    .unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let at = Place {
        path: "test_export.py".into(),
        line: 5,
    };
    let found: Vec<(String, String)> = called_definitions(&workspace, &at)
        .into_iter()
        .map(|(name, place, _)| (name, format!("{}:{}", place.path, place.line)))
        .collect();
    assert_eq!(
        found,
        vec![("export_csv".to_string(), "export.py:1".to_string())]
    );
}

#[test]
fn the_rewrite_asks_for_the_function_under_test_with_the_task() {
    let (_dir, workspace, shown) = two_failures();
    let asked = rewrite(&shown, &workspace, "python3 -m unittest", "Fix total.").unwrap();
    assert_eq!(
        asked.targets,
        vec![Target {
            path: "shop.py".into(),
            name: "total".into(),
            old: "def total(prices):\n    return sum(prices[1:])".into()
        }]
    );
    assert!(
        asked
            .text
            .starts_with("Task: Fix total.\n\nshop.py:\n```python\ndef total(prices):"),
        "{}",
        asked.text
    );
    assert!(
        asked.text.ends_with("AssertionError: 0 != 5\n```\n\nThe code of `total` above is wrong: the test shows what it returns and what it should return. First say in one sentence what `total` does wrong. Then write the function `total` fixed, whole, in one ```python block."),
        "{}",
        asked.text
    );
    assert_eq!(rewrite("exit 1", &workspace, "make test", "x"), None);
}

#[test]
fn a_function_it_calls_from_another_file_is_shown_and_may_be_the_one_written() {
    let (dir, workspace, shown) = two_failures();
    std::fs::write(
        dir.path().join("shop.py"),
        "from sums import add_all\n\n\ndef total(prices):\n    return add_all(prices)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sums.py"),
        "def add_all(values):\n    return sum(values[1:])\n",
    )
    .unwrap();
    let asked = rewrite(&shown, &workspace, "python3 -m unittest", "Fix total.").unwrap();
    let names: Vec<&str> = asked.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["total", "add_all"]);
    assert!(
        asked.text.contains("sums.py, where `add_all` is defined:\n```python\ndef add_all(values):\n    return sum(values[1:])\n```\n\n`python3 -m unittest` failed:"),
        "{}",
        asked.text
    );
    assert!(asked.text.ends_with("First say in one sentence which function is wrong (`total` or `add_all`) and what it does wrong. Then write that function fixed, whole, in one ```python block."), "{}", asked.text);
    let answer = "It skips one.\n```python\ndef add_all(values):\n    return sum(values)\n```";
    assert_eq!(
        rewritten(answer, &asked.targets),
        Some(Version {
            which: 1,
            code: "def add_all(values):\n    return sum(values)".to_string(),
            imports: Vec::new()
        })
    );
}

#[test]
fn a_function_it_calls_from_its_own_short_file_may_be_the_one_written() {
    let (dir, workspace, shown) = two_failures();
    std::fs::write(
        dir.path().join("shop.py"),
        "def rest(prices):\n    return prices[1:]\n\n\ndef total(prices):\n    return sum(rest(prices))\n",
    )
    .unwrap();
    let asked = rewrite(&shown, &workspace, "python3 -m unittest", "Fix total.").unwrap();
    let names: Vec<&str> = asked.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["total", "rest"]);
    assert_eq!(
        asked.targets[1].old,
        "def rest(prices):\n    return prices[1:]"
    );
    // The file is shown whole once; the request names both.
    assert!(
        !asked.text.contains("where `rest` is defined"),
        "{}",
        asked.text
    );
    assert!(asked.text.ends_with("First say in one sentence which function is wrong (`total` or `rest`) and what it does wrong. Then write that function fixed, whole, in one ```python block."), "{}", asked.text);
    // The whole file written back: the version is the function it changes.
    let answer = "```python\ndef rest(prices):\n    return prices\n\n\ndef total(prices):\n    return sum(rest(prices))\n```";
    assert_eq!(
        rewritten(answer, &asked.targets),
        Some(Version {
            which: 1,
            code: "def rest(prices):\n    return prices".to_string(),
            imports: Vec::new()
        })
    );
    // Written back unchanged: the first it defines, as the file has it.
    let same = "```python\ndef rest(prices):\n    return prices[1:]\n\n\ndef total(prices):\n    return sum(rest(prices))\n```";
    let version = rewritten(same, &asked.targets).unwrap();
    assert_eq!(version.code, asked.targets[version.which].old);
}

#[test]
fn a_function_it_passes_by_name_from_its_own_short_file_is_asked_for_too() {
    let (dir, workspace, shown) = two_failures();
    std::fs::write(
        dir.path().join("shop.py"),
        "def cents(price):\n    return int(price)\n\n\ndef total(prices):\n    return sum(map(cents, prices))\n",
    )
    .unwrap();
    let asked = rewrite(&shown, &workspace, "python3 -m unittest", "Fix total.").unwrap();
    let names: Vec<&str> = asked.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["total", "cents"]);
    assert_eq!(
        definitions::named("rows.map((row) => row.map(quote).join(\",\"))"),
        ["rows", "row", "quote"]
    );
}

#[test]
fn a_version_is_read_from_the_block_that_defines_the_function() {
    let target = |old: &str| {
        vec![Target {
            path: "x".into(),
            name: "total".into(),
            old: old.into(),
        }]
    };
    let method = target("    def total(self, prices):\n        return sum(prices[1:])");
    // Said first, written at the margin, with an import and a test after it.
    let answer = "It skips the first price.\n```python\nimport math\n\ndef total(self, prices):\n    s = 0\n\n    for p in prices:\n        s += p\n    return s\n\nprint(total(None, [1]))\n```\nDone.";
    assert_eq!(
        rewritten(answer, &method),
        Some(Version {
            which: 0,
            code: "    def total(self, prices):\n        s = 0\n\n        for p in prices:\n            s += p\n        return s".to_string(),
            imports: vec!["import math".to_string()]
        })
    );
    // A block without the function, then one cut by the token cap: the cut one is read.
    let cut = "```\nx = 1\n```\n```rust\nfn total(v: &[u32]) -> u32 {\n    v.iter().sum()\n}";
    assert_eq!(
        rewritten(cut, &target("fn total(v: &[u32]) -> u32 {\n    0\n}")).map(|v| v.code),
        Some("fn total(v: &[u32]) -> u32 {\n    v.iter().sum()\n}".to_string())
    );
    assert_eq!(rewritten("no code at all", &method), None);
    assert_eq!(
        rewritten("```\ndef totals(x):\n    pass\n```", &method),
        None
    );
}

#[test]
fn a_function_too_long_or_not_printable_as_it_is_is_not_asked_for() {
    let (dir, workspace, shown) = two_failures();
    let long = format!(
        "def total(prices):\n{}    return sum(prices[1:])\n",
        "    x = 1\n".repeat(REWRITE_LINES)
    );
    std::fs::write(dir.path().join("shop.py"), long).unwrap();
    assert_eq!(
        rewrite(&shown, &workspace, "python3 -m unittest", "x"),
        None
    );
    std::fs::write(
        dir.path().join("shop.py"),
        "def total(prices):\n    return sum(prices[1:])  # \u{202e}x\n",
    )
    .unwrap();
    assert_eq!(
        rewrite(&shown, &workspace, "python3 -m unittest", "x"),
        None
    );
}

#[test]
fn a_test_that_reports_its_own_failure_points_at_the_call_above() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("abs.go"),
        "package abs\n\nfunc Abs(x int) int {\n\tif x > 0 {\n\t\treturn -x\n\t}\n\treturn x\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("abs_test.go"),
        "package abs\n\nimport \"testing\"\n\nfunc TestAbs(t *testing.T) {\n\tif got := Abs(-3); got != 3 {\n\t\tt.Errorf(\"Abs(-3) = %d, want 3\", got)\n\t}\n}\n",
    )
    .unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let output = "--- FAIL: TestAbs (0.00s)\n    abs_test.go:7: Abs(-3) = -3, want 3\nFAIL\nFAIL\texample.com/abs\t0.002s";
    let (header, body) = read(output, &workspace).unwrap();
    let asked = rewrite(
        &format!("{header}\n{body}"),
        &workspace,
        "go test ./...",
        "Fix Abs.",
    )
    .unwrap();
    assert_eq!(asked.targets[0].name, "Abs");
    assert_eq!(asked.targets[0].path, "abs.go");
    assert!(asked.text.contains("in one ```go block."), "{}", asked.text);
}

#[test]
fn a_failure_inside_the_code_asks_for_the_function_it_failed_in() {
    let (_dir, workspace) = workspace();
    let root = workspace.root().display().to_string();
    let output = format!(
        "Traceback (most recent call last):\n  File \"{root}/pkg/report.py\", line 4, in total\n    s += r['amount']\nKeyError: 'amount'"
    );
    let (header, body) = read(&output, &workspace).unwrap();
    let asked = rewrite(
        &format!("{header}\n{body}"),
        &workspace,
        "python3 -m unittest",
        "Fix it.",
    )
    .unwrap();
    assert_eq!(asked.targets[0].name, "total");
    assert_eq!(asked.targets[0].path, "pkg/report.py");
    // A Go method, a Rust function, and a line outside any function.
    let lines = |text: &str| text.lines().map(str::to_string).collect::<Vec<_>>();
    let go = lines("package s\n\nfunc (s *Stack) Push(v int) {\n\tpanic(\"todo\")\n}\n");
    assert_eq!(
        definitions::enclosing(&go, 4),
        Some(("Push".to_string(), 3))
    );
    let rust = lines("pub fn parse(s: &str) -> u32 {\n    let t = s.trim();\n    todo!()\n}\n");
    assert_eq!(
        definitions::enclosing(&rust, 3),
        Some(("parse".to_string(), 1))
    );
    let top = lines("import os\nraise SystemExit(1)\n");
    assert_eq!(definitions::enclosing(&top, 2), None);
}

#[test]
fn a_javascript_stub_that_throws_asks_for_its_function_when_the_end_is_shown_first() {
    let (dir, workspace) = workspace();
    std::fs::write(
        dir.path().join("range.js"),
        "// range(0, 5) -> [0, 1, 2, 3, 4]\nfunction range(start, end, step = 1) {\n  throw new Error(\"not implemented\");\n}\n\nmodule.exports = { range };\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("range.test.js"),
        "const { range } = require(\"./range\");\n\ntest(\"counts up\", () => {\n  assert.deepStrictEqual(range(0, 5), [0, 1, 2, 3, 4]);\n});\n\ntest(\"zero step\", () => {\n  assert.throws(() => range(0, 1, 0), RangeError);\n});\n",
    )
    .unwrap();
    let root = workspace.root().display().to_string();
    let first = format!(
        "✖ counts up (1.010209ms)\n  Error: not implemented\n      at range ({root}/range.js:3:9)\n      at TestContext.<anonymous> ({root}/range.test.js:4:26)\n      at Test.runInAsyncScope (node:async_hooks:206:9)\n"
    );
    let last = format!(
        "test at range.test.js:7:1\n✖ zero step (0.6ms)\n  AssertionError [ERR_ASSERTION]: The error is expected to be an instance of \"RangeError\"\n      at TestContext.<anonymous> ({root}/range.test.js:8:10)\n"
    );
    // The header is read from the whole output; a long one is shown from its end.
    let (header, _) = read(&format!("{first}\n{last}"), &workspace).unwrap();
    assert!(header.starts_with("[It failed at range.js:3 "), "{header}");
    let (_, body) = read(&format!("{last}\n[… omitted …]\n{first}"), &workspace).unwrap();
    let shown = format!("{header}\n{body}");
    let asked = rewrite(&shown, &workspace, "node --test", "Implement range.");
    assert_eq!(
        asked.map(|asked| asked.targets[0].name.clone()),
        Some("range".to_string()),
        "{shown}"
    );
}

#[test]
fn a_method_is_asked_for_with_its_short_file_whole() {
    let (dir, workspace) = workspace();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let mut lib = String::from(
        "/// A stack.\npub struct Stack<T> {\n    items: Vec<T>,\n}\n\nimpl<T> Stack<T> {\n",
    );
    for name in [
        "push_one", "pop_one", "peek_one", "count", "is_empty", "top",
    ] {
        lib.push_str(&format!(
            "    pub fn {name}(&self) -> usize {{\n        todo!()\n    }}\n\n"
        ));
    }
    lib.push_str("    pub fn len(&self) -> usize {\n        todo!()\n    }\n}\n");
    let lines = lib.lines().count();
    assert!(
        lines > WHOLE_FILE_LINES && lines <= REWRITE_WHOLE_FILE_LINES,
        "{lines}"
    );
    std::fs::write(dir.path().join("src/lib.rs"), &lib).unwrap();
    let at = lines - 2;
    let output = format!(
        "thread 'it_counts' panicked at src/lib.rs:{at}:9:\nnot yet implemented\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
    );
    let (header, body) = read(&output, &workspace).unwrap();
    let asked = rewrite(
        &format!("{header}\n{body}"),
        &workspace,
        "cargo test",
        "Implement the Stack.",
    )
    .unwrap();
    assert_eq!(asked.targets[0].name, "len");
    // The struct's fields are in front of the model, and the request is for `len` alone.
    assert!(
        asked.text.contains(
            "src/lib.rs:\n```rust\n/// A stack.\npub struct Stack<T> {\n    items: Vec<T>,"
        ),
        "{}",
        asked.text
    );
    assert!(
        asked
            .text
            .contains("Then write the function `len` fixed, whole"),
        "{}",
        asked.text
    );
    assert_eq!(
        asked.targets[0].old,
        "    pub fn len(&self) -> usize {\n        todo!()\n    }"
    );
}
