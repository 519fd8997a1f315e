//! The workspace the agent may touch, held as a directory descriptor opened once. Every
//! file wright's own process opens there is opened beneath that descriptor (`openat2`
//! with `RESOLVE_BENEATH`, or a component-by-component walk without following links where
//! the kernel lacks it, through `cap-std`): a path that leads out — by `..`, an absolute
//! link, or a link swapped in while wright works — fails at the moment of opening, so no
//! check-then-open window exists. Links that stay inside are followed.
//!
//! Paths from the model are made relative first: absolute ones must name the workspace
//! root lexically, and `..` may not climb above it.

use crate::guard::Guard;
use crate::ToolError;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use wright_sandbox::Protected;

#[derive(Clone)]
pub struct Workspace {
    root: PathBuf,
    dir: Arc<Dir>,
    /// The paths the sandbox keeps read-only, which wright's own writes leave alone too.
    guard: Arc<Guard>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .finish()
    }
}

impl Workspace {
    /// `root` must exist; it is canonicalized and opened.
    pub fn new(root: &Path) -> Result<Self, ToolError> {
        let fail =
            |err: std::io::Error| ToolError::Fatal(format!("workspace {}: {err}", root.display()));
        let root = root.canonicalize().map_err(fail)?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority()).map_err(fail)?;
        Ok(Self {
            root,
            dir: Arc::new(dir),
            guard: Arc::new(Guard::default()),
        })
    }

    /// The same workspace, its writes refused at and beneath the paths of `protected`
    /// (those the sandbox binds read-only: one list for both).
    pub fn protecting(mut self, protected: &Protected) -> Result<Self, ToolError> {
        self.guard = Arc::new(Guard::open(&self.root, &self.dir, protected)?);
        Ok(self)
    }

    /// What wright's own writes must leave alone.
    pub(crate) fn guard(&self) -> &Guard {
        &self.guard
    }

    /// `sub` within `trusted` (a directory only wright controls), reached component by
    /// component without following a link: `sub` is the agent's to replace with one.
    pub fn within(trusted: &Path, sub: &Path) -> Result<Self, ToolError> {
        let top = Self::new(trusted)?;
        let mut dir = Dir::open_ambient_dir(&top.root, ambient_authority())
            .map_err(|err| ToolError::Fatal(format!("workspace {}: {err}", top.root.display())))?;
        let mut root = top.root.clone();
        for component in sub.components() {
            let Component::Normal(name) = component else {
                return Err(ToolError::Fatal(format!(
                    "the workspace {} is not plainly inside {}",
                    sub.display(),
                    top.root.display()
                )));
            };
            root.push(name);
            let flags = nix::fcntl::OFlag::O_RDONLY
                | nix::fcntl::OFlag::O_DIRECTORY
                | nix::fcntl::OFlag::O_NOFOLLOW
                | nix::fcntl::OFlag::O_CLOEXEC;
            let fd = nix::fcntl::openat(&dir, name, flags, nix::sys::stat::Mode::empty()).map_err(
                |err| {
                    ToolError::Fatal(format!(
                        "the workspace {} is not a directory (a link, or gone?): {err}",
                        root.display()
                    ))
                },
            )?;
            dir = Dir::from_std_file(std::fs::File::from(fd));
        }
        Ok(Self {
            root,
            dir: Arc::new(dir),
            guard: Arc::new(Guard::default()),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The workspace's directory descriptor: open everything through it.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// A path the model gave, relative to the root (`.` for the root itself); refuses one
    /// that names a place outside. Links are not looked at here: opening through `dir`
    /// refuses those that lead out.
    pub fn relative(&self, raw: &str) -> Result<PathBuf, ToolError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(ToolError::Model("the path is empty".into()));
        }
        self.relative_path(Path::new(raw), raw)
    }

    /// `given` relative to the root, as `relative` makes it (`raw`: as the model gave it).
    pub(crate) fn relative_path(&self, given: &Path, raw: &str) -> Result<PathBuf, ToolError> {
        let relative = if given.is_absolute() {
            given
                .strip_prefix(&self.root)
                .map_err(|_| self.outside(raw))?
        } else {
            given
        };
        let mut out = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::Normal(part) => out.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return Err(self.outside(raw));
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(self.outside(raw)),
            }
        }
        if out.as_os_str().is_empty() {
            out.push(".");
        }
        Ok(out)
    }

    fn outside(&self, raw: &str) -> ToolError {
        ToolError::Model(format!(
            "{raw} is outside the workspace {}; only files inside it can be used",
            self.root.display()
        ))
    }

    /// A relative path as shown to the model.
    pub fn display(&self, relative: &Path) -> String {
        relative.display().to_string()
    }

    /// The error for a failed open of `relative`: a link that leads out is named as such.
    pub fn open_error(&self, relative: &Path, err: std::io::Error) -> ToolError {
        let shown = self.display(relative);
        match err.kind() {
            std::io::ErrorKind::NotFound => ToolError::Model(format!("{shown} does not exist")),
            std::io::ErrorKind::PermissionDenied if self.leads_out(relative) => {
                ToolError::Model(format!(
                    "{shown} leads outside the workspace through a symbolic link; only files inside it can be used"
                ))
            }
            _ => ToolError::Model(format!("cannot open {shown}: {err}")),
        }
    }

    /// Whether `relative` resolves outside the root (only to word an error: the refusal
    /// itself was the kernel's, at open time).
    fn leads_out(&self, relative: &Path) -> bool {
        self.root
            .join(relative)
            .canonicalize()
            .map_or(true, |real| !real.starts_with(&self.root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink("src", dir.path().join("inner")).unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = ws.root().to_path_buf();
        assert_eq!(ws.relative("src/a.py").unwrap(), Path::new("src/a.py"));
        let absolute = root.join("new/b.py").display().to_string();
        assert_eq!(ws.relative(&absolute).unwrap(), Path::new("new/b.py"));
        assert_eq!(ws.relative("src/../x").unwrap(), Path::new("x"));
        assert_eq!(ws.relative(".").unwrap(), Path::new("."));
        assert!(ws.relative("../escape").is_err());
        assert!(ws.relative("/etc/passwd").is_err());
        // A link out fails when opened, a link inside is followed.
        let err = ws.dir().open("link/secret").unwrap_err();
        let said = ws.open_error(Path::new("link/secret"), err).to_string();
        assert!(said.contains("leads outside"), "{said}");
        std::fs::write(dir.path().join("src/a.py"), "a").unwrap();
        assert!(ws.dir().open("inner/a.py").is_ok());
    }
}
