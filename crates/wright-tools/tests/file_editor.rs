use pretty_assertions::assert_eq;
use serde_json::json;
use serde_json::Value;
use tempfile::TempDir;
use wright_tools::FileEditorTool;
use wright_tools::Tool;
use wright_tools::ToolError;
use wright_tools::Workspace;

struct Setup {
    dir: TempDir,
    tool: FileEditorTool,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let tool = FileEditorTool::new(Workspace::new(dir.path()).unwrap());
    Setup { dir, tool }
}

impl Setup {
    fn write(&self, name: &str, bytes: &[u8]) {
        std::fs::write(self.dir.path().join(name), bytes).unwrap();
    }

    fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.path().join(name)).unwrap()
    }

    async fn ok(&self, args: Value) -> String {
        match self.tool.run(&args).await {
            Ok(out) => out.text,
            Err(err) => panic!("{args} failed: {err}"),
        }
    }

    async fn model_error(&self, args: Value) -> String {
        match self.tool.run(&args).await {
            Err(ToolError::Model(message)) => message,
            other => panic!("{args}: expected an error for the model, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn view_numbers_lines_and_ranges() {
    let s = setup();
    s.write("a.py", b"one\ntwo\nthree\n");
    assert_eq!(
        s.ok(json!({"command": "view", "path": "a.py"})).await,
        "     1\tone\n     2\ttwo\n     3\tthree\n"
    );
    assert_eq!(
        s.ok(json!({"command": "view", "path": "a.py", "view_range": [2, -1]}))
            .await,
        "     2\ttwo\n     3\tthree\n"
    );
    assert_eq!(
        s.ok(json!({"command": "view", "path": "a.py", "view_range": "[3, 3]"}))
            .await,
        "     3\tthree\n"
    );
    let err = s
        .model_error(json!({"command": "view", "path": "a.py", "view_range": [5, 9]}))
        .await;
    assert!(
        err.contains("starts after the last line; the file has 3 lines"),
        "{err}"
    );
}

#[tokio::test]
async fn view_lists_a_directory_two_levels_deep() {
    let s = setup();
    std::fs::create_dir_all(s.dir.path().join("src/deep/deeper")).unwrap();
    std::fs::create_dir_all(s.dir.path().join(".git")).unwrap();
    s.write("src/lib.rs", b"");
    s.write("README.md", b"");
    let listing = s.ok(json!({"command": "view", "path": "."})).await;
    assert_eq!(listing, "./ (two levels, hidden and build directories left out)\n  README.md\n  src/\n    deep/\n    lib.rs\n");
}

#[tokio::test]
async fn str_replace_needs_exactly_one_match() {
    let s = setup();
    s.write("a.py", b"x = 1\ny = 2\nx = 1\n");
    let none = s.model_error(json!({"command": "str_replace", "path": "a.py", "old_str": "z = 3", "new_str": "z = 4"})).await;
    assert!(none.contains("old_str was not found in a.py"), "{none}");
    let two = s.model_error(json!({"command": "str_replace", "path": "a.py", "old_str": "x = 1", "new_str": "x = 5"})).await;
    assert!(two.contains("occurs 2 times in a.py (lines 1, 3)"), "{two}");
    assert_eq!(s.read("a.py"), b"x = 1\ny = 2\nx = 1\n");
    let done = s.ok(json!({"command": "str_replace", "path": "a.py", "old_str": "y = 2", "new_str": "y = 3"})).await;
    assert!(
        done.starts_with("Edited a.py. Lines 2-2 with context:\n     1\tx = 1\n     2\ty = 3\n"),
        "{done}"
    );
    // The same replacement again: said to be done, not only "not found".
    let again = s.model_error(json!({"command": "str_replace", "path": "a.py", "old_str": "y = 2", "new_str": "y = 3"})).await;
    assert!(
        again.starts_with("old_str was not found in a.py because your last edit of it made this same replacement already (lines 2-2)"),
        "{again}"
    );
    // Another replacement of the text the last edit took away: where it went, shown.
    let other = s.model_error(json!({"command": "str_replace", "path": "a.py", "old_str": "y = 2", "new_str": "y = 4"})).await;
    assert_eq!(
        other,
        "old_str was not found in a.py because the last edit of it rewrote the lines it was in: nothing was changed. Lines 2-2 now read:\n     1\tx = 1\n     2\ty = 3\n     3\tx = 1\n     4\t\n"
    );
    let never = s.model_error(json!({"command": "str_replace", "path": "a.py", "old_str": "w = 0", "new_str": "w = 1"})).await;
    assert!(
        never.starts_with("old_str was not found in a.py. View the file"),
        "{never}"
    );
    // A line replaced by itself changes nothing, and says so.
    let same = s.model_error(json!({"command": "str_replace", "path": "a.py", "old_str": "y = 3", "new_str": "y = 3"})).await;
    assert!(
        same.starts_with("old_str and new_str are the same: this edit would change nothing in a.py. If the work is done, call finish"),
        "{same}"
    );
    assert_eq!(s.read("a.py"), b"x = 1\ny = 3\nx = 1\n");
}

#[tokio::test]
async fn a_replacement_with_its_quotes_swapped_is_made_and_said() {
    let s = setup();
    s.write("export.py", b"def line(r):\n    return \";\".join(r)\n");
    let done = s.ok(json!({"command": "str_replace", "path": "export.py", "old_str": "    return ';'.join(r)", "new_str": "    return \",\".join(r)"})).await;
    assert!(
        done.starts_with("Edited export.py. Lines 2-2 with context:\n"),
        "{done}"
    );
    assert!(
        done.ends_with("\n[old_str matched only with its ' read as the file's \": copy quotes as the file has them.]"),
        "{done}"
    );
    assert_eq!(
        s.read("export.py"),
        b"def line(r):\n    return \",\".join(r)\n"
    );
    // Undone like any edit.
    s.ok(json!({"command": "undo_edit", "path": "export.py"}))
        .await;
    assert_eq!(
        s.read("export.py"),
        b"def line(r):\n    return \";\".join(r)\n"
    );
}

#[tokio::test]
async fn crlf_and_missing_final_newline_are_preserved() {
    let s = setup();
    s.write("w.txt", b"alpha\r\nbeta\r\ngamma");
    s.ok(json!({"command": "str_replace", "path": "w.txt", "old_str": "beta\ngamma", "new_str": "BETA\ngamma"})).await;
    assert_eq!(s.read("w.txt"), b"alpha\r\nBETA\r\ngamma");
    s.ok(json!({"command": "insert", "path": "w.txt", "insert_line": 0, "new_str": "top"}))
        .await;
    assert_eq!(s.read("w.txt"), b"top\r\nalpha\r\nBETA\r\ngamma");
}

#[tokio::test]
async fn binary_and_non_utf8_files_are_described_not_mangled() {
    let s = setup();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    s.write("logo.png", png);
    let err = s
        .model_error(json!({"command": "view", "path": "logo.png"}))
        .await;
    assert!(
        err.contains("logo.png is a binary file (16 bytes, a PNG image)"),
        "{err}"
    );
    s.write("latin1.txt", b"caf\xe9\n");
    let err = s.model_error(json!({"command": "str_replace", "path": "latin1.txt", "old_str": "caf", "new_str": "tea"})).await;
    assert!(
        err.contains("not valid UTF-8 (first bad byte at offset 3)"),
        "{err}"
    );
    assert_eq!(s.read("latin1.txt"), b"caf\xe9\n");
    assert_eq!(s.read("logo.png"), png);
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let s = setup();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s3cret").unwrap();
    std::os::unix::fs::symlink(outside.path(), s.dir.path().join("out")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        s.dir.path().join("secret-link"),
    )
    .unwrap();
    for path in [
        "../x",
        "/etc/passwd",
        "out/secret",
        "secret-link",
        "out/new.txt",
    ] {
        let err = s
            .model_error(json!({"command": "view", "path": path}))
            .await;
        assert!(err.contains("outside the workspace"), "{path}: {err}");
    }
    let err = s
        .model_error(json!({"command": "create", "path": "out/new.txt", "file_text": "x"}))
        .await;
    assert!(err.contains("outside the workspace"), "{err}");
    assert!(!outside.path().join("new.txt").exists());
}

#[tokio::test]
async fn create_insert_and_undo() {
    let s = setup();
    s.ok(json!({"command": "create", "path": "pkg/new.py", "file_text": "a\nb\n"}))
        .await;
    assert_eq!(s.read("pkg/new.py"), b"a\nb\n");
    let again = s
        .model_error(json!({"command": "create", "path": "pkg/new.py", "file_text": "x"}))
        .await;
    assert!(again.contains("already exists"));
    s.ok(json!({"command": "insert", "path": "pkg/new.py", "insert_line": "1", "new_str": "between"})).await;
    assert_eq!(s.read("pkg/new.py"), b"a\nbetween\nb\n");
    s.ok(json!({"command": "undo_edit", "path": "pkg/new.py"}))
        .await;
    assert_eq!(s.read("pkg/new.py"), b"a\nb\n");
    s.ok(json!({"command": "undo_edit", "path": "pkg/new.py"}))
        .await;
    assert!(!s.dir.path().join("pkg/new.py").exists());
    let nothing = s
        .model_error(json!({"command": "undo_edit", "path": "pkg/new.py"}))
        .await;
    assert!(nothing.contains("no edit of pkg/new.py to undo"));
}

/// What the sandbox keeps read-only (`Protected`, the same list), the editor refuses to
/// write: by name, through links inside the workspace to the directory or to the file, by
/// `..`, in a new directory made beneath it, and by undoing a creation after the file was
/// swapped for a link into it; the rest of the workspace is edited as before.
#[tokio::test]
async fn protected_paths_are_read_only_to_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("mine/.git/hooks")).unwrap();
    std::fs::write(root.join("mine/.git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join("tools")).unwrap();
    std::fs::write(root.join("tools/clean.sh"), "cat\n").unwrap();
    std::fs::write(root.join("tools/other.sh"), "echo\n").unwrap();
    std::os::unix::fs::symlink("mine/.git", root.join("g")).unwrap();
    std::os::unix::fs::symlink("../mine/.git/config", root.join("tools/cfg")).unwrap();
    std::os::unix::fs::symlink("clean.sh", root.join("tools/link.sh")).unwrap();
    let mut protected = wright_sandbox::Protected::new();
    let real = root.canonicalize().unwrap();
    protected.add(real.join("mine/.git"), wright_sandbox::ProtectedWhy::GitDir);
    protected.add(
        real.join("tools/clean.sh"),
        wright_sandbox::ProtectedWhy::GitConfigured,
    );
    let workspace = Workspace::new(root)
        .unwrap()
        .protecting(&protected)
        .unwrap();
    let tool = FileEditorTool::new(workspace);
    let refused = |args: Value| {
        let tool = &tool;
        async move {
            match tool.run(&args).await {
                Err(ToolError::Model(message)) => {
                    assert!(
                        message.contains("is read-only to the agent"),
                        "{args}: {message}"
                    );
                }
                other => panic!("{args}: expected a refusal, got {other:?}"),
            }
        }
    };
    let replace = |path: &str| json!({"command": "str_replace", "path": path, "old_str": "[core]", "new_str": "[core]\n\tfsmonitor = x"});
    for path in [
        "mine/.git/config",
        "g/config",
        "tools/cfg",
        "tools/../g/config",
    ] {
        refused(replace(path)).await;
    }
    for path in [
        "mine/.git/hooks/pre-commit",
        "g/hooks/post-commit",
        "g/info/attributes",
    ] {
        refused(json!({"command": "create", "path": path, "file_text": "#!/bin/sh\n"})).await;
    }
    for path in ["tools/clean.sh", "tools/link.sh"] {
        refused(json!({"command": "insert", "path": path, "insert_line": 0, "new_str": "touch x"}))
            .await;
    }
    assert_eq!(
        std::fs::read(root.join("mine/.git/config")).unwrap(),
        b"[core]\n"
    );
    assert_eq!(
        std::fs::read(root.join("tools/clean.sh")).unwrap(),
        b"cat\n"
    );
    assert!(!root.join("mine/.git/hooks/pre-commit").exists());
    assert!(!root.join("mine/.git/info").exists());
    // The rest is the agent's to edit.
    let ok = tool
        .run(&json!({"command": "insert", "path": "tools/other.sh", "insert_line": 0, "new_str": "set -e"}))
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    let made = tool
        .run(&json!({"command": "create", "path": "new/deep/f.txt", "file_text": "x"}))
        .await;
    assert!(made.is_ok(), "{made:?}");
    // A file it made, swapped for a link into the protected directory: undoing the
    // creation removes the link, not what it leads to.
    std::fs::remove_file(root.join("new/deep/f.txt")).unwrap();
    std::os::unix::fs::symlink(root.join("mine/.git/config"), root.join("new/deep/f.txt")).unwrap();
    let undone = tool
        .run(&json!({"command": "undo_edit", "path": "new/deep/f.txt"}))
        .await;
    assert!(undone.is_ok(), "{undone:?}");
    assert!(root.join("mine/.git/config").exists());
}
