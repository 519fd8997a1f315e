//! Repositories to run the agent on, made fresh in a test's temporary directory.

use std::path::Path;
use std::process::Command;

/// Runs git in `dir` with a fixed identity; panics with git's output if it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=wright-test",
            "-c",
            "user.email=test@wright.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(out) => panic!(
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(err) => panic!("cannot run git: {err}"),
    }
}

/// The buggy line of `failing_python_repo`'s `export.py`, and its fix.
pub const BUG: &str = "    return \",\".join(str(v) for v in row[:-1])";
pub const FIX: &str = "    return \",\".join(str(v) for v in row)";

/// A git repository with a CSV exporter whose `unittest` suite fails: `row_to_csv` drops
/// the last column. One commit, clean tree.
pub fn failing_python_repo(dir: &Path) {
    let write = |name: &str, text: &str| {
        if let Err(err) = std::fs::write(dir.join(name), text) {
            panic!("cannot write {name}: {err}");
        }
    };
    write(
        "export.py",
        &format!("\"\"\"CSV export.\"\"\"\n\n\ndef row_to_csv(row):\n{BUG}\n\n\ndef export_csv(rows):\n    return \"\\n\".join(row_to_csv(r) for r in rows) + \"\\n\"\n"),
    );
    write(
        "test_export.py",
        "import unittest\n\nfrom export import export_csv\n\n\nclass ExportTest(unittest.TestCase):\n    def test_export_csv(self):\n        self.assertEqual(export_csv([[1, 2, 3], [4, 5, 6]]), \"1,2,3\\n4,5,6\\n\")\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n",
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "CSV export"]);
}

/// The scripted model's plain fix of [`failing_python_repo`]: run the tests, view
/// `export.py`, replace [`BUG`] with [`FIX`], run the tests again, finish. The benches
/// drive the binary with it.
pub fn fix_a_test_script() -> Vec<crate::reply::Reply> {
    use crate::reply::reply;
    use serde_json::json;
    vec![
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call(
            "file_editor",
            json!({"command": "view", "path": "export.py"}),
        ),
        reply().call(
            "file_editor",
            json!({"command": "str_replace", "path": "export.py", "old_str": BUG, "new_str": FIX}),
        ),
        reply().call("terminal", json!({"command": "python3 -m unittest"})),
        reply().call("finish", json!({"message": "fixed"})),
    ]
}
