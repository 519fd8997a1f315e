//! What changed in a container's copy of the workspace, asked of the container itself so
//! that only that comes out through the archive API (see `copy`).
//!
//! One `find` run (busybox's will do) lists every name, the names that are not
//! directories whose status changed in the last N minutes, and every directory. Status
//! change time (ctime), not modification time: a program may set a file's mtime to any
//! date (`tar x`, `cp -p`, `touch -d`), never its ctime. N minutes is a superset of the
//! time since the last listing (whole minutes, plus one), so nothing changed since is
//! missed; what did not change and is listed anyway is compared by content and left alone.
//! The output is the container's, so hostile: names outside the workspace, or not plain,
//! are dropped here; whatever is kept is only ever a name to download, or to keep.

use super::unpack::plain_relative;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

/// Bash, from `/`: the container's clock (a line), then the three lists, each name
/// NUL-terminated, a `--` record between lists (no name `find` prints from an absolute
/// directory is `--`). Changes since a second (GNU find's `-newerct`), else since whole
/// minutes (busybox's `-cmin`).
const SCRIPT: &str = r#"cd / || exit 1
date +%s || exit 1
find "$1" -mindepth 1 -print0 || exit 1
printf -- '--\0'
if find / -maxdepth 0 -newerct @0 >/dev/null 2>&1; then
  find "$1" -mindepth 1 -newerct "@$2" ! -type d -print0 || exit 1
else
  find "$1" -mindepth 1 -cmin "-$3" ! -type d -print0 || exit 1
fi
printf -- '--\0'
find "$1" -mindepth 1 -type d -print0"#;

/// The three lists, as relative plain paths.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Listing {
    /// The container's clock when the listing started (seconds since the epoch).
    pub(super) now: i64,
    pub(super) all: Vec<PathBuf>,
    pub(super) changed: Vec<PathBuf>,
    pub(super) dirs: Vec<PathBuf>,
}

/// The command (for `docker exec`) that lists `tree`, with what changed since the
/// container's clock said `since` (a second before, for its granularity), or where only
/// minutes can be told, within `elapsed` and a margin.
pub(super) fn command(tree: &Path, since: i64, elapsed: Duration) -> Vec<String> {
    let minutes = elapsed.as_secs() / 60 + 2;
    vec![
        "bash".into(),
        "-c".into(),
        SCRIPT.into(),
        "wright-list".into(),
        tree.display().to_string(),
        since.saturating_sub(1).to_string(),
        minutes.to_string(),
    ]
}

/// Reads the command's output for `tree`; `None` when it is not three lists.
pub(super) fn parse(output: &[u8], tree: &Path) -> Option<Listing> {
    let mut prefix = tree.as_os_str().as_bytes().to_vec();
    prefix.push(b'/');
    let newline = output.iter().position(|b| *b == b'\n')?;
    let now = std::str::from_utf8(&output[..newline])
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let output = &output[newline + 1..];
    let mut lists: [Vec<PathBuf>; 3] = Default::default();
    let mut at = 0;
    let records = output.strip_suffix(b"\0").unwrap_or(output);
    for record in records.split(|b| *b == 0) {
        if record == b"--" {
            at += 1;
            if at > 2 {
                return None;
            }
            continue;
        }
        let Some(relative) = record.strip_prefix(prefix.as_slice()) else {
            continue;
        };
        if let Ok(path) = plain_relative(relative) {
            lists[at].push(path);
        }
    }
    if at != 2 {
        return None;
    }
    let [all, changed, dirs] = lists;
    Some(Listing {
        now,
        all,
        changed,
        dirs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_read_and_foreign_names_dropped() {
        let out = b"17\n/w/a\0/w/d\0/w/d/b\0--\0/w/d/b\0/etc/passwd\0/w/../x\0--\0/w/d\0";
        let listing = parse(out, Path::new("/w")).unwrap();
        assert_eq!(listing.now, 17);
        let paths = |names: &[&str]| names.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(listing.all, paths(&["a", "d", "d/b"]));
        assert_eq!(listing.changed, paths(&["d/b"]));
        assert_eq!(listing.dirs, paths(&["d"]));
        // Not three lists: not a listing.
        assert_eq!(parse(b"1\n/w/a\0--\0", Path::new("/w")), None);
        assert_eq!(parse(b"1\n--\0--\0--\0", Path::new("/w")), None);
        assert_eq!(parse(b"/w/a\0--\0--\0", Path::new("/w")), None);
        let args = command(Path::new("/w"), 100, Duration::from_secs(61));
        assert_eq!(args[5..], ["99", "3"]);
    }

    /// The script against this machine's `find`, on a tree with a file whose mtime was set
    /// far back: its status change still lists it; a listing from after it does not.
    #[test]
    fn an_old_mtime_does_not_hide_a_change() {
        let base = tempfile::tempdir().unwrap();
        let tree = base.path().canonicalize().unwrap();
        std::fs::create_dir(tree.join("d")).unwrap();
        std::fs::write(tree.join("d/old"), "x").unwrap();
        let set_back = std::process::Command::new("touch")
            .args(["-d", "2001-01-01"])
            .arg(tree.join("d/old"))
            .status()
            .unwrap();
        assert!(set_back.success());
        let list = |since: i64| {
            let args = command(&tree, since, Duration::from_secs(5));
            let out = std::process::Command::new(&args[0])
                .args(&args[1..])
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "{said}");
            parse(&out.stdout, &tree).unwrap()
        };
        let listing = list(0);
        assert_eq!(listing.changed, [PathBuf::from("d/old")]);
        assert_eq!(listing.dirs, [PathBuf::from("d")]);
        // GNU find here: to the second.
        assert!(list(listing.now + 5).changed.is_empty());
        assert_eq!(listing.all.len(), 2);
    }
}
