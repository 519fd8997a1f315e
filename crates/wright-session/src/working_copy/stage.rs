//! A step's written files copied at its end into a directory of the clone's `.git`, so
//! that git commits them from there while the next step already runs (see `steps`): the
//! copy is what the files were when the step ended, whatever the next step does to the
//! work tree meanwhile.
//!
//! What it guarantees: every file of the delta is copied as the regular file it was
//! (opened without following a link, beneath the clone's top), with the `.gitignore` and
//! `.gitattributes` files of the directories above it, which decide what git keeps of it;
//! a file gone by the time it is copied is listed as removed. A step that changed those
//! rules is not copied (they may change what git keeps of files it did not touch).
//! Bounded: past `MAX_FILES`
//! files or `MAX_BYTES` bytes nothing is copied and the caller looks at the whole tree
//! instead. Everything is written beneath the clone's own `.git`, which is the agent's
//! already: nothing outside the clone is touched.

use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::ErrorKind;
use wright_tools::open_dir_nofollow;
use wright_tools::StampDelta;
use wright_tools::TreeStamp;

/// The most files a copy holds.
const MAX_FILES: usize = 2_000;
/// The most bytes (as the look saw them) a copy holds.
const MAX_BYTES: u64 = 16 << 20;

/// The files in the tree that decide what git keeps of the files beside and beneath them.
const RULES: [&str; 2] = [".gitignore", ".gitattributes"];

/// Where the copies are, relative to the clone's top.
pub const DIR: &str = ".git/wright-stage";

/// A step's files, copied.
#[derive(Debug)]
pub struct Staged {
    /// The copy, relative to the clone's top.
    pub dir: String,
    /// The files written, copied.
    pub written: Vec<String>,
    /// The files gone.
    pub removed: Vec<String>,
}

/// Copies the files `delta` names (seen in the look `now`) from the clone at `root` into
/// a new copy named `name`. `None` when the delta is past the bounds or a copy cannot be
/// made there (then the whole tree is to be looked at).
pub fn copy(root: &Dir, now: &TreeStamp, delta: StampDelta, name: &str) -> Option<Staged> {
    let bytes: u64 = delta.files.iter().map(|f| f.size).sum();
    if delta.files.len() > MAX_FILES || bytes > MAX_BYTES {
        return None;
    }
    // New rules may change what git keeps of files the step did not touch.
    let is_rule = |path: &str| {
        RULES
            .iter()
            .any(|rule| path.rsplit('/').next() == Some(rule))
    };
    if delta.files.iter().any(|f| is_rule(&f.path)) || delta.removed.iter().any(|p| is_rule(p)) {
        return None;
    }
    let git = open_dir_nofollow(root, OsStr::new(".git")).ok()?;
    match git.create_dir("wright-stage") {
        Ok(()) => {}
        Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    let stages = open_dir_nofollow(&git, OsStr::new("wright-stage")).ok()?;
    // Left by a process that was killed: never this one's (each name is used once).
    let _ = stages.remove_dir_all(name);
    stages.create_dir(name).ok()?;
    let stage = open_dir_nofollow(&stages, OsStr::new(name)).ok()?;

    // The rules above each file, as they were: git reads them from the copy.
    let mut rules = BTreeSet::new();
    for file in &delta.files {
        let mut prefix = String::new();
        for part in file.path.split('/') {
            for rule in RULES {
                let candidate = format!("{prefix}{rule}");
                if now.is_file(&candidate) {
                    rules.insert(candidate);
                }
            }
            prefix.push_str(part);
            prefix.push('/');
        }
    }
    let mut staged = Staged {
        dir: format!("{DIR}/{name}"),
        written: Vec::new(),
        removed: delta.removed,
    };
    for file in delta.files {
        match copy_one(root, &stage, &file.path, file.mode, file.size) {
            Ok(true) => staged.written.push(file.path),
            // Gone (or no longer a file) since the look: as the next look will see it.
            Ok(false) => staged.removed.push(file.path),
            Err(_) => return None,
        }
    }
    for rule in rules {
        // A rule file gone meanwhile is simply not there for git.
        if copy_one(root, &stage, &rule, 0o644, 0).is_err() {
            return None;
        }
    }
    Some(staged)
}

/// Copies the regular file `path` beneath `root` to the same path beneath `stage`, with
/// `mode`'s executable bits; `false` when it is no longer a regular file there.
fn copy_one(root: &Dir, stage: &Dir, path: &str, mode: u32, size: u64) -> std::io::Result<bool> {
    let Ok((from_dir, name)) = wright_tools::parent_dir(root, path) else {
        return Ok(false);
    };
    let mut from = match wright_tools::open_regular(&from_dir, &name, size) {
        Ok(from) => from,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(false),
        Err(err) if err.raw_os_error() == Some(nix::libc::ELOOP) => return Ok(false),
        Err(err) if err.kind() == ErrorKind::Other => return Ok(false),
        Err(err) => return Err(err),
    };
    let mut dir = stage.try_clone()?;
    let mut parts: Vec<&str> = path.split('/').collect();
    let last = parts.pop().unwrap_or_default();
    for part in parts {
        match dir.create_dir(part) {
            Ok(()) => {}
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
        dir = open_dir_nofollow(&dir, OsStr::new(part))?;
    }
    let executable = mode & 0o111 != 0;
    let mut options = OpenOptions::new();
    options
        .write(true)
        .create_new(true)
        .mode(if executable { 0o755 } else { 0o644 });
    let mut to = dir.open_with(last, &options)?.into_std();
    std::io::copy(&mut from, &mut to)?;
    // The mode asked for is cut by the umask: git keeps the executable bit alone.
    use std::os::unix::fs::PermissionsExt;
    to.set_permissions(std::fs::Permissions::from_mode(if executable {
        0o755
    } else {
        0o644
    }))?;
    Ok(true)
}
