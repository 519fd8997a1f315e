use super::*;
use crate::Tool;
use crate::Workspace;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::fs;
use std::time::Duration;
use std::time::SystemTime;

/// A workspace with ignored files, a binary, and links out to a secret.
fn workspace() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(outside.path().join("passwd"), "root:x:0:0:needle\n").unwrap();
    fs::create_dir_all(root.join("src/deep")).unwrap();
    fs::create_dir_all(root.join("build")).unwrap();
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
    fs::write(root.join("src/.gitignore"), "generated.py\n").unwrap();
    fs::write(
        root.join("src/main.py"),
        "import os\n\ndef needle():\n    return 1\n",
    )
    .unwrap();
    fs::write(root.join("src/deep/util.py"), "NEEDLE = 2\n").unwrap();
    fs::write(root.join("src/generated.py"), "needle = 3\n").unwrap();
    fs::write(root.join("src/notes.txt"), "a needle in text\n").unwrap();
    fs::write(root.join("build/out.py"), "needle = 4\n").unwrap();
    fs::write(root.join("run.log"), "needle\n").unwrap();
    fs::write(root.join(".git/config"), "needle\n").unwrap();
    fs::write(root.join("blob.bin"), b"needle\0\x01\x02").unwrap();
    std::os::unix::fs::symlink(outside.path().join("passwd"), root.join("passwd.py")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("etc")).unwrap();
    let ws = Workspace::new(root).unwrap();
    (dir, outside, ws)
}

async fn grep(ws: &Workspace, arguments: serde_json::Value) -> String {
    GrepTool::new(ws.clone())
        .run(&arguments)
        .await
        .unwrap()
        .text
}

#[tokio::test]
async fn grep_skips_ignored_binary_and_linked_files() {
    let (_dir, _outside, ws) = workspace();
    assert_eq!(
        grep(&ws, json!({"pattern": "needle"})).await,
        "src/deep/util.py:1:NEEDLE = 2\nsrc/main.py:3:def needle():\nsrc/notes.txt:1:a needle in text\n[skipped 1 binary file]"
    );
    // Capitals make it match case; `case` says so outright.
    assert_eq!(
        grep(&ws, json!({"pattern": "NEEDLE", "glob": "*.py"})).await,
        "src/deep/util.py:1:NEEDLE = 2"
    );
    assert_eq!(
        grep(
            &ws,
            json!({"pattern": "needle", "case": true, "path": "src", "glob": "*.py"})
        )
        .await,
        "src/main.py:3:def needle():"
    );
}

#[tokio::test]
async fn grep_never_reads_through_a_link() {
    let (_dir, _outside, ws) = workspace();
    let root_line = grep(&ws, json!({"pattern": "root:x"})).await;
    assert!(root_line.starts_with("No matches in ."), "{root_line}");
    for path in ["passwd.py", "etc", "etc/passwd"] {
        let err = GrepTool::new(ws.clone())
            .run(&json!({"pattern": "root", "path": path}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("symbolic link") || err.contains("leads outside"),
            "{path}: {err}"
        );
    }
}

#[tokio::test]
async fn grep_shows_context_and_counts_what_did_not_fit() {
    let (dir, _outside, ws) = workspace();
    assert_eq!(
        grep(
            &ws,
            json!({"pattern": "def", "path": "src/main.py", "context": 1})
        )
        .await,
        "src/main.py-2-\nsrc/main.py:3:def needle():\nsrc/main.py-4-    return 1"
    );
    for n in 0..40 {
        fs::write(
            dir.path().join(format!("src/many{n:02}.txt")),
            "hit\n".repeat(5),
        )
        .unwrap();
    }
    let tool = GrepTool::new(ws.clone());
    tool.fit_window(2000);
    let text = tool.run(&json!({"pattern": "hit"})).await.unwrap().text;
    assert!(text.len() < 700, "{text}");
    assert!(
        text.contains(
            "\n[177 more matches in 36 files not shown; narrow the pattern, path or glob]\n"
        ),
        "{text}"
    );
    // One file with more matches than fit shows some of them, and counts the rest.
    fs::write(dir.path().join("src/huge.txt"), "hit\n".repeat(5000)).unwrap();
    let text = tool
        .run(&json!({"pattern": "hit", "path": "src/huge.txt"}))
        .await
        .unwrap()
        .text;
    assert!(text.len() < 700, "{text}");
    assert!(text.starts_with("src/huge.txt:1:hit\n"), "{text}");
    assert!(text.contains(" more matches in 1 file not shown"), "{text}");
    let err = tool.run(&json!({"pattern": "f(("})).await.unwrap_err();
    assert!(
        err.to_string().contains("not a valid regular expression"),
        "{err}"
    );
}

#[tokio::test]
async fn glob_lists_newest_first_without_ignored_files_or_links() {
    let (dir, _outside, ws) = workspace();
    let old = SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(dir.path().join("src/main.py"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let glob = GlobTool::new(ws.clone());
    let run = |arguments| {
        let glob = &glob;
        async move { glob.run(&arguments).await.unwrap().text }
    };
    assert_eq!(
        run(json!({"pattern": "*.py"})).await,
        "src/deep/util.py\nsrc/main.py"
    );
    assert_eq!(
        run(json!({"pattern": "deep/*.py", "path": "src"})).await,
        "src/deep/util.py"
    );
    assert_eq!(
        run(json!({"pattern": "**/*.py", "path": "./src/"})).await,
        "src/deep/util.py\nsrc/main.py"
    );
    assert_eq!(
        run(json!({"pattern": "*.rs"})).await,
        "No files match *.rs in . (gitignored files and links are skipped)."
    );
    for n in 0..300 {
        fs::write(dir.path().join(format!("f{n:03}.md")), "").unwrap();
    }
    glob.fit_window(400);
    let text = run(json!({"pattern": "*.md"})).await;
    assert!(
        text.ends_with("not shown (300 match); give a narrower pattern or path]"),
        "{text}"
    );
}

#[test]
fn a_directory_swapped_for_a_link_during_the_walk_is_not_entered() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "s").unwrap();
    fs::create_dir_all(dir.path().join("a")).unwrap();
    fs::create_dir_all(dir.path().join("b")).unwrap();
    fs::write(dir.path().join("a/file.txt"), "a").unwrap();
    fs::write(dir.path().join("b/inner.txt"), "b").unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let mut seen = Vec::new();
    let ended = walk::walk(&ws, std::path::Path::new("."), |file| {
        if seen.is_empty() {
            // The root was listed already: `b` was a directory then.
            fs::rename(dir.path().join("b"), dir.path().join("b_old")).unwrap();
            std::os::unix::fs::symlink(outside.path(), dir.path().join("b")).unwrap();
        }
        seen.push(file.path.display().to_string());
        walk::Visit::Continue
    })
    .unwrap();
    assert_eq!(ended, walk::Ended::Complete);
    assert_eq!(seen, ["a/file.txt"]);
}
