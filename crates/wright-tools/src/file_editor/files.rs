//! The editor's access to files, all of it beneath the workspace's descriptor (see
//! `Workspace`): opened without blocking on a FIFO or taking a terminal, checked to be a
//! regular file before anything is read or written, and read only up to a size bound,
//! so nothing the agent leaves (a link out, `/dev/zero`, a 200 MB line) can lead wright's
//! own process outside or make it swell.

use crate::Last;
use crate::Target;
use crate::ToolError;
use crate::Workspace;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

/// Largest file the editor reads whole (to edit it, or to keep it for undo).
pub const MAX_EDITED_BYTES: u64 = 8 << 20;

/// What a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Missing,
    File,
    Dir,
    /// A FIFO, socket, device or a link that leads nowhere (or out).
    Other,
}

pub fn kind(workspace: &Workspace, relative: &Path) -> Result<Kind, ToolError> {
    match workspace.dir().metadata(relative) {
        Ok(meta) if meta.is_file() => Ok(Kind::File),
        Ok(meta) if meta.is_dir() => Ok(Kind::Dir),
        Ok(_) => Ok(Kind::Other),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            // A dangling link is there, and `create` must not write through it.
            match workspace.dir().symlink_metadata(relative) {
                Ok(_) => Ok(Kind::Other),
                Err(_) => Ok(Kind::Missing),
            }
        }
        Err(err) => Err(workspace.open_error(relative, err)),
    }
}

/// Opens a regular file for reading.
pub fn open(workspace: &Workspace, relative: &Path) -> Result<std::fs::File, ToolError> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc_flags::NONBLOCK | libc_flags::NOCTTY);
    let file = workspace
        .dir()
        .open_with(relative, &options)
        .map_err(|err| workspace.open_error(relative, err))?
        .into_std();
    regular(workspace, relative, &file)?;
    Ok(file)
}

impl Workspace {
    /// The whole of the regular file at `relative` beneath the workspace, for wright's own
    /// use (a repository's configuration in a plain directory): `None` when nothing is
    /// there, an error when it is something else or larger than `max_bytes`.
    pub fn read_file(&self, relative: &Path, max_bytes: u64) -> Result<Option<Vec<u8>>, ToolError> {
        match kind(self, relative)? {
            Kind::Missing => return Ok(None),
            Kind::File => {}
            Kind::Dir | Kind::Other => {
                return Err(ToolError::Fatal(format!(
                    "{} is not a regular file",
                    self.display(relative)
                )))
            }
        }
        let file = open(self, relative)?;
        let mut bytes = Vec::new();
        file.take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|err| {
                ToolError::Fatal(format!("cannot read {}: {err}", self.display(relative)))
            })?;
        if bytes.len() as u64 > max_bytes {
            return Err(ToolError::Fatal(format!(
                "{} is larger than {max_bytes} bytes",
                self.display(relative)
            )));
        }
        Ok(Some(bytes))
    }
}

/// The whole of a regular file, if it is at most `MAX_EDITED_BYTES`.
pub fn read(workspace: &Workspace, relative: &Path) -> Result<Vec<u8>, ToolError> {
    let file = open(workspace, relative)?;
    let shown = workspace.display(relative);
    let size = file
        .metadata()
        .map_err(|err| ToolError::Model(format!("cannot read {shown}: {err}")))?
        .len();
    if size > MAX_EDITED_BYTES {
        return Err(too_large(&shown, size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // Bounded even if the file grows while it is read.
    file.take(MAX_EDITED_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ToolError::Model(format!("cannot read {shown}: {err}")))?;
    if bytes.len() as u64 > MAX_EDITED_BYTES {
        return Err(too_large(&shown, bytes.len() as u64));
    }
    Ok(bytes)
}

pub fn too_large(shown: &str, size: u64) -> ToolError {
    ToolError::Model(format!(
        "{shown} is too large for file_editor ({:.1} MB; it edits files up to {} MB). Change it with a command instead (sed, python), or view it with view_range",
        size as f64 / 1e6,
        MAX_EDITED_BYTES >> 20
    ))
}

/// Replaces the contents of an existing regular file (a link at the end is followed
/// inside the workspace); refused at or beneath a protected path.
pub fn overwrite(workspace: &Workspace, relative: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let target = workspace.for_writing(relative, Last::Follow)?;
    let flags = OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    let mut file = open_in(workspace, relative, &target, flags)?;
    regular(workspace, relative, &file)?;
    file.set_len(0)
        .and_then(|()| file.write_all(bytes))
        .map_err(|err| write_error(workspace, relative, err))
}

/// Creates a new file (and its parent directories); never writes through a link, and
/// never in or beneath a protected path: each directory is checked before anything is
/// made in it.
pub fn create(workspace: &Workspace, relative: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let shown = workspace.display(relative);
    if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
        let mut made = PathBuf::new();
        for component in parent.components() {
            let here = if made.as_os_str().is_empty() {
                Path::new(".")
            } else {
                made.as_path()
            };
            let dir = workspace
                .dir()
                .open_dir(here)
                .map_err(|err| write_error(workspace, relative, err))?;
            workspace.guard().check_dir(&dir, &shown)?;
            match dir.create_dir(component) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(write_error(workspace, relative, err)),
            }
            made.push(component);
        }
    }
    let target = workspace.for_writing(relative, Last::AsIs)?;
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
    let mut file = open_in(workspace, relative, &target, flags)?;
    file.write_all(bytes)
        .map_err(|err| write_error(workspace, relative, err))
}

/// Removes a file (not what a link there leads to); refused in a protected path.
pub fn remove(workspace: &Workspace, relative: &Path) -> Result<(), ToolError> {
    let target = workspace.for_writing(relative, Last::AsIs)?;
    target
        .dir
        .remove_file(&target.name)
        .map_err(|err| write_error(workspace, relative, err))
}

/// Opens the name of `target` in its checked directory (one component: nothing to
/// resolve but that name, which `O_NOFOLLOW` keeps from being a link).
fn open_in(
    workspace: &Workspace,
    relative: &Path,
    target: &Target,
    flags: OFlag,
) -> Result<std::fs::File, ToolError> {
    nix::fcntl::openat(
        &target.dir,
        target.name.as_os_str(),
        flags | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o666),
    )
    .map(std::fs::File::from)
    .map_err(|err| write_error(workspace, relative, std::io::Error::from(err)))
}

fn regular(workspace: &Workspace, relative: &Path, file: &std::fs::File) -> Result<(), ToolError> {
    let shown = workspace.display(relative);
    let meta = file
        .metadata()
        .map_err(|err| ToolError::Model(format!("cannot read {shown}: {err}")))?;
    if meta.is_dir() {
        return Err(ToolError::Model(format!(
            "{shown} is a directory, not a file"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::Model(format!(
            "{shown} is not a regular file (a FIFO, socket or device); file_editor works on files only"
        )));
    }
    Ok(())
}

fn write_error(workspace: &Workspace, relative: &Path, err: std::io::Error) -> ToolError {
    match err.kind() {
        std::io::ErrorKind::PermissionDenied
        | std::io::ErrorKind::NotFound
        | std::io::ErrorKind::AlreadyExists
        | std::io::ErrorKind::NotADirectory => workspace.open_error(relative, err),
        // A link swapped in after the check (`O_NOFOLLOW`): nothing was written.
        _ if err.raw_os_error() == Some(nix::libc::ELOOP) => ToolError::Model(format!(
            "{} is a symbolic link now; nothing was written",
            workspace.display(relative)
        )),
        // A full disk or a read-only file system: nothing the model can do.
        _ => ToolError::Fatal(format!(
            "cannot write {}: {err}",
            workspace.display(relative)
        )),
    }
}

/// The open flags used here, as `cap-std` takes them.
mod libc_flags {
    pub const NONBLOCK: i32 = nix::libc::O_NONBLOCK;
    pub const NOCTTY: i32 = nix::libc::O_NOCTTY;
}
