use super::*;

fn take(root: &Path, keep: &Path) -> (Workspace, Snapshot) {
    let workspace = Workspace::new(root).unwrap();
    let snapshot =
        Snapshot::take(&workspace, &keep.join("before"), &[], Bounds::default()).unwrap();
    snapshot.begin_first().unwrap();
    (workspace, snapshot)
}

/// A chain of `levels` directories `d` beneath `root`, made one descriptor at a time
/// (its paths are far longer than `PATH_MAX`).
fn chain(root: &Path, levels: usize) {
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW;
    let mut dir = nix::fcntl::open(root, flags, Mode::empty()).unwrap();
    for _ in 0..levels {
        nix::sys::stat::mkdirat(&dir, "d", Mode::from_bits_truncate(0o755)).unwrap();
        dir = nix::fcntl::openat(&dir, "d", flags, Mode::empty()).unwrap();
    }
}

/// Removes the chain `chain` made: down it one descriptor at a time, then back up by
/// `..`, each level removed on the way (`rm -r` takes minutes on one this deep).
fn remove_chain(root: &Path) {
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    use nix::unistd::UnlinkatFlags;
    let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW;
    let mut dir = nix::fcntl::open(root, flags, Mode::empty()).unwrap();
    let mut depth = 0;
    while let Ok(next) = nix::fcntl::openat(&dir, "d", flags, Mode::empty()) {
        dir = next;
        depth += 1;
    }
    for _ in 0..depth {
        dir = nix::fcntl::openat(&dir, "..", OFlag::O_DIRECTORY, Mode::empty()).unwrap();
        nix::unistd::unlinkat(&dir, "d", UnlinkatFlags::RemoveDir).unwrap();
    }
}

#[test]
fn a_chain_too_deep_to_walk_is_named_and_the_rest_is_put_back() {
    let root = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "one\n").unwrap();
    let (workspace, snapshot) = take(root.path(), keep.path());
    std::fs::write(root.path().join("a.txt"), "two\n").unwrap();
    // Far past PATH_MAX, and deep enough to overflow a recursive walk's stack.
    chain(root.path(), 5_000);
    let now = snapshot.look(&workspace, &[]).unwrap();
    snapshot.end(&now).unwrap();
    let diff = snapshot.diff(&workspace, &snapshot.changes_in(&now));
    assert!(diff.contains("more than 256 directories deep"), "{diff}");

    let restored = snapshot.restore(&workspace, &[]).unwrap();
    remove_chain(root.path());
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(restored.put_back, 1);
    assert!(
        restored
            .left
            .iter()
            .any(|l| l.starts_with("d (cannot remove it: it holds d/d/d")),
        "{:?}",
        restored.left
    );
}

#[test]
fn only_what_is_as_the_run_left_it_is_undone() {
    let root = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(root.path().join("b.txt"), "bee\n").unwrap();
    let (workspace, snapshot) = take(root.path(), keep.path());
    // The agent's run.
    std::fs::write(root.path().join("a.txt"), "two\n").unwrap();
    std::fs::write(root.path().join("new.txt"), "new\n").unwrap();
    std::fs::create_dir(root.path().join("made")).unwrap();
    snapshot
        .end(&snapshot.look(&workspace, &[]).unwrap())
        .unwrap();
    // The user's, after it.
    std::fs::write(root.path().join("b.txt"), "mine\n").unwrap();
    std::fs::write(root.path().join("notes.txt"), "mine\n").unwrap();
    std::fs::write(root.path().join("made/mine.txt"), "mine\n").unwrap();

    let restored = snapshot.restore(&workspace, &[]).unwrap();
    let read = |name: &str| std::fs::read_to_string(root.path().join(name)).ok();
    assert_eq!(read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(read("new.txt"), None);
    assert_eq!(read("b.txt").as_deref(), Some("mine\n"));
    assert_eq!(read("notes.txt").as_deref(), Some("mine\n"));
    assert_eq!(read("made/mine.txt").as_deref(), Some("mine\n"));
    assert_eq!((restored.put_back, restored.removed), (1, 1));
    assert!(restored.left.is_empty(), "{:?}", restored.left);
    let mut kept: Vec<String> = restored.kept.iter().map(ToString::to_string).collect();
    kept.sort();
    assert_eq!(kept.len(), 4, "{kept:?}");
    assert!(
        kept[0].starts_with("b.txt (changed since the run ended"),
        "{kept:?}"
    );
    assert!(
        kept[1].starts_with("made (the agent made it, but it holds made/mine.txt"),
        "{kept:?}"
    );
}

#[test]
fn without_an_end_nothing_changed_since_is_undone() {
    let root = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "one\n").unwrap();
    let (workspace, snapshot) = take(root.path(), keep.path());
    // A run that never ended.
    std::fs::write(root.path().join("a.txt"), "two\n").unwrap();
    std::fs::write(root.path().join("new.txt"), "new\n").unwrap();

    let restored = snapshot.restore(&workspace, &[]).unwrap();
    assert_eq!((restored.put_back, restored.removed), (0, 0));
    assert_eq!(restored.kept.len(), 2);
    assert!(restored
        .kept
        .iter()
        .all(|l| matches!(l, Left::ChangedInUnendedRun(_))));
    assert_eq!(
        std::fs::read_to_string(root.path().join("new.txt")).unwrap(),
        "new\n"
    );
}
