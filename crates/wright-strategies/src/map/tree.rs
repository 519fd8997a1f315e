//! The files of a map as a tree: one line per directory shown, with its files and then
//! its subdirectories (`name/ (N)`: N files below, not shown; `name/`: its own line
//! follows). Within a byte budget the most detail that fits is chosen: everything when it
//! fits; else directories are opened breadth first (the top, then what is under it) while
//! the lines fit, each line's list cut (`… +N`). Deterministic: the same paths give the
//! same lines, whatever order they came in.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

/// Names listed per line before it is cut, from more to fewer.
const ITEM_CAPS: &[usize] = &[10, 5, 3];
/// Directories tried for opening at most, once one did not fit (a bound on the work).
const MAX_TRIES: usize = 400;

#[derive(Default)]
struct Node {
    files: Vec<String>,
    dirs: BTreeMap<String, Node>,
    /// Files in this directory and below.
    total: usize,
}

impl Node {
    fn add(&mut self, path: &str) {
        self.total += 1;
        match path.split_once('/') {
            Some((dir, rest)) if !dir.is_empty() && !rest.is_empty() => {
                self.dirs.entry(dir.to_string()).or_default().add(rest)
            }
            _ => self.files.push(path.to_string()),
        }
    }

    fn find(&self, path: &[String]) -> Option<&Node> {
        match path.split_first() {
            None => Some(self),
            Some((first, rest)) => self.dirs.get(first)?.find(rest),
        }
    }
}

/// Which directories are open (by path from the top), and how many names a line lists.
struct View<'a> {
    open: &'a BTreeSet<Vec<String>>,
    cap: usize,
}

impl View<'_> {
    fn lines(&self, node: &Node, path: &mut Vec<String>, out: &mut Vec<String>) {
        let label = if path.is_empty() {
            "./".to_string()
        } else {
            format!("{}/", path.join("/"))
        };
        // Only the names shown are made: a directory may hold thousands.
        let listed = node.files.len() + node.dirs.len();
        let mut line = format!("{label}:");
        for name in node.files.iter().take(self.cap) {
            line.push(' ');
            line.push_str(name);
        }
        let dirs_shown = self.cap.saturating_sub(node.files.len());
        for (name, dir) in node.dirs.iter().take(dirs_shown) {
            path.push(name.clone());
            line.push_str(&if self.open.contains(path) {
                format!(" {name}/")
            } else {
                format!(" {name}/ ({})", dir.total)
            });
            path.pop();
        }
        if listed > self.cap {
            line.push_str(&format!(" … +{}", listed - self.cap));
        }
        out.push(line);
        for (name, dir) in &node.dirs {
            path.push(name.clone());
            if self.open.contains(path) {
                self.lines(dir, path, out);
            }
            path.pop();
        }
    }
}

/// The files section for `files`, at most `budget` bytes.
pub(super) fn render(files: &[String], more: bool, budget: usize) -> String {
    let mut root = Node::default();
    for file in files {
        root.add(file);
    }
    let heading = match (files.len(), more) {
        (0, _) => return String::new(),
        (n, false) => format!("Files ({n}; a line is a directory: its files, then its subdirectories, `name/ (N)` holding N files not listed):\n"),
        (n, true) => format!("Files (more than {n}: the listing stopped there; a line is a directory: its files, then its subdirectories, `name/ (N)` holding N files not listed):\n"),
    };
    let room = budget.saturating_sub(heading.len());
    let size = |lines: &[String]| lines.iter().map(|l| l.len() + 1).sum::<usize>();
    let draw = |open: &BTreeSet<Vec<String>>, cap: usize| {
        let mut lines = Vec::new();
        View { open, cap }.lines(&root, &mut Vec::new(), &mut lines);
        lines
    };
    // Everything, when it fits.
    let everything: BTreeSet<Vec<String>> = all_dirs(&root);
    let lines = draw(&everything, usize::MAX);
    if size(&lines) <= room {
        return format!("{heading}{}\n", lines.join("\n"));
    }
    for &cap in ITEM_CAPS {
        let mut open = BTreeSet::new();
        if size(&draw(&open, cap)) > room {
            continue;
        }
        // Breadth first, the fuller directories of a level first: a directory is tried
        // once its parent is open.
        let mut queue: BTreeSet<(usize, std::cmp::Reverse<usize>, Vec<String>)> = root
            .dirs
            .iter()
            .map(|(name, dir)| (1, std::cmp::Reverse(dir.total), vec![name.clone()]))
            .collect();
        let mut failed = 0;
        while let Some((depth, _, path)) = queue.pop_first() {
            open.insert(path.clone());
            if size(&draw(&open, cap)) > room {
                open.remove(&path);
                failed += 1;
                if failed > MAX_TRIES {
                    break;
                }
                continue;
            }
            if let Some(node) = root.find(&path) {
                for (name, dir) in &node.dirs {
                    let mut child = path.clone();
                    child.push(name.clone());
                    queue.insert((depth + 1, std::cmp::Reverse(dir.total), child));
                }
            }
        }
        return format!("{heading}{}\n", draw(&open, cap).join("\n"));
    }
    // Not even the top's own line fits: what does, and that it was cut.
    let line = draw(&BTreeSet::new(), 1).join("");
    let cut: String = line.chars().take(room.saturating_sub(4) / 4).collect();
    format!("{heading}{cut} …\n")
}

fn all_dirs(root: &Node) -> BTreeSet<Vec<String>> {
    fn walk(node: &Node, path: &mut Vec<String>, out: &mut BTreeSet<Vec<String>>) {
        for (name, dir) in &node.dirs {
            path.push(name.clone());
            out.insert(path.clone());
            walk(dir, path, out);
            path.pop();
        }
    }
    let mut out = BTreeSet::new();
    walk(root, &mut Vec::new(), &mut out);
    out
}
