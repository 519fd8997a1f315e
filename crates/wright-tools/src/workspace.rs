//! The workspace the agent may touch, and the one rule every path obeys: after `..` and
//! symlinks are resolved, it is inside the workspace. Relative paths are taken from the
//! workspace root.

use crate::ToolError;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// `root` must exist; it is canonicalized so later checks compare real paths.
    pub fn new(root: &Path) -> Result<Self, ToolError> {
        let root = root
            .canonicalize()
            .map_err(|err| ToolError::Fatal(format!("workspace {}: {err}", root.display())))?;
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path the model gave; refuses anything that ends up outside.
    pub fn resolve(&self, raw: &str) -> Result<PathBuf, ToolError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(ToolError::Model("the path is empty".into()));
        }
        let joined = if Path::new(raw).is_absolute() {
            PathBuf::from(raw)
        } else {
            self.root.join(raw)
        };
        let lexical = normalize(&joined);
        let outside = || {
            ToolError::Model(format!(
                "{raw} is outside the workspace {}; only files inside it can be used",
                self.root.display()
            ))
        };
        if !lexical.starts_with(&self.root) {
            return Err(outside());
        }
        // Resolve symlinks on the deepest part that exists; the rest cannot be links yet.
        let mut existing = lexical.clone();
        let mut rest = Vec::new();
        while !existing.exists() && existing.symlink_metadata().is_err() {
            match (existing.file_name(), existing.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name.to_os_string());
                    existing = parent.to_path_buf();
                }
                _ => return Err(outside()),
            }
        }
        let mut real = existing.canonicalize().map_err(|_| {
            // A dangling symlink: refuse, whatever it points at.
            ToolError::Model(format!("{raw} is a broken symbolic link"))
        })?;
        for name in rest.into_iter().rev() {
            real.push(name);
        }
        if !real.starts_with(&self.root) {
            return Err(outside());
        }
        Ok(real)
    }

    /// A path as shown to the model: relative to the root when inside it.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// Removes `.` and resolves `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = ws.root().to_path_buf();
        assert_eq!(ws.resolve("src/a.py").unwrap(), root.join("src/a.py"));
        assert_eq!(
            ws.resolve(&root.join("new/b.py").display().to_string())
                .unwrap(),
            root.join("new/b.py")
        );
        assert_eq!(ws.resolve("src/../x").unwrap(), root.join("x"));
        assert!(ws.resolve("../escape").is_err());
        assert!(ws.resolve("/etc/passwd").is_err());
        assert!(ws.resolve("link/secret").is_err());
        assert!(ws.resolve("link").is_err());
    }
}
