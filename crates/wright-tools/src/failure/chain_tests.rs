//! The function under test at the end of a chain of calls, and the helpers it calls from
//! another module asked for beside it.

use super::*;

#[test]
fn the_last_call_of_a_chain_is_the_one_under_test() {
    let names = definitions::called("self.assertEqual(Order().add(\"pen\", 2).paid(), 3)");
    assert_eq!(names[0], "paid");
    assert!(names.contains(&"Order".to_string()));
    // An assertion's own chain is not the code under test.
    assert_eq!(definitions::called("expect(paid(2)).toBe(3)"), ["paid"]);
    // Nested calls: the outer one stays first.
    assert_eq!(
        definitions::called("assert_eq!(total(parse(s)), 3)"),
        ["total", "parse"]
    );
}

#[test]
fn a_method_at_the_end_of_a_chain_is_asked_for_with_the_helpers_it_imports() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| std::fs::write(dir.path().join(path), text).unwrap();
    write(
        "pricing.py",
        "def percent_off(amount, percent):\n    return amount * (1 - percent) / 100\n",
    );
    write(
        "order.py",
        "from pricing import percent_off\n\n\nclass Order:\n    def __init__(self):\n        self.lines = []\n\n    def add(self, name, price):\n        self.lines.append((name, price))\n        return self\n\n    def paid(self, percent):\n        return percent_off(sum(p for _, p in self.lines), percent)\n",
    );
    write(
        "test_order.py",
        "import unittest\nfrom order import Order\n\n\nclass T(unittest.TestCase):\n    def test_paid(self):\n        self.assertEqual(Order().add(\"pen\", 10).paid(50), 5)\n",
    );
    let workspace = Workspace::new(dir.path()).unwrap();
    let root = workspace.root().display().to_string();
    let output = format!(
        "F\n======================================================================\nFAIL: test_paid (test_order.T.test_paid)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"{root}/test_order.py\", line 7, in test_paid\n    self.assertEqual(Order().add(\"pen\", 10).paid(50), 5)\nAssertionError: -4.9 != 5\n\n----------------------------------------------------------------------\nRan 1 test in 0.001s\n\nFAILED (failures=1)"
    );
    let (header, body) = read(&output, &workspace).unwrap();
    let shown = format!("{header}\n{body}");
    let asked = rewrite(&shown, &workspace, "python3 -m unittest", "Fix it.").unwrap();
    let names: Vec<&str> = asked.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names[..2], ["paid", "percent_off"], "{}", asked.text);
    assert!(
        asked
            .text
            .contains("pricing.py, where `percent_off` is defined:"),
        "{}",
        asked.text
    );
}
