//! Reading one file of a conversation's workspace for a front end (the server's file
//! route), or listing one of its directories (the file tree): the agent's files are
//! hostile, so everything is opened beneath the workspace's directory descriptor (a `..`
//! or a link that leads out fails at the moment of opening, see
//! `wright_tools::Workspace`), a file never blocks on a FIFO, and only a regular file no
//! larger than the cap is read. A listing names each entry's kind as the directory says
//! it, links unfollowed.

use crate::working_copy::Record;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use std::io::Read;
use std::path::Path;

/// Why a file cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{0}")]
    Refused(String),
    #[error("{0} does not exist")]
    NotFound(String),
    #[error("{0} is not a regular file")]
    NotAFile(String),
    #[error("{path} is {size} bytes, more than the {cap} a file route gives")]
    TooLarge { path: String, size: u64, cap: u64 },
    #[error("the conversation's workspace is gone: {0}")]
    Gone(String),
}

/// The conversation's workspace, opened as a directory descriptor.
fn workspace_of(conversation_dir: &Path) -> Result<wright_tools::Workspace, FileError> {
    let record =
        Record::read(conversation_dir).map_err(|err| FileError::Gone(format!("{err:#}")))?;
    let opened = match &record {
        Record::Clone {
            clone_root,
            workspace,
            ..
        } => {
            let sub = workspace.strip_prefix(clone_root).unwrap_or(Path::new(""));
            wright_tools::Workspace::within(clone_root, sub)
        }
        Record::Direct { workspace, .. } | Record::InPlace { workspace, .. } => {
            wright_tools::Workspace::new(workspace)
        }
    };
    opened.map_err(|err| FileError::Gone(err.to_string()))
}

/// The bytes of `path` (relative to the conversation's workspace), at most `cap` of them.
pub fn read(conversation_dir: &Path, path: &str, cap: u64) -> Result<Vec<u8>, FileError> {
    let workspace = workspace_of(conversation_dir)?;
    let relative = workspace
        .relative(path)
        .map_err(|err| FileError::Refused(err.to_string()))?;
    let shown = relative.display().to_string();
    let mut options = OpenOptions::new();
    options.read(true);
    // A FIFO planted by the agent opens at once instead of waiting for a writer.
    options.custom_flags(nix::libc::O_NONBLOCK);
    let mut file = workspace
        .dir()
        .open_with(&relative, &options)
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => FileError::NotFound(shown.clone()),
            _ => FileError::Refused(workspace.open_error(&relative, err).to_string()),
        })?;
    let metadata = file
        .metadata()
        .map_err(|err| FileError::Refused(format!("cannot read {shown}: {err}")))?;
    if !metadata.is_file() {
        return Err(FileError::NotAFile(shown));
    }
    if metadata.len() > cap {
        return Err(FileError::TooLarge {
            path: shown,
            size: metadata.len(),
            cap,
        });
    }
    let mut bytes = Vec::new();
    // A file that grows while it is read is cut at the cap.
    (&mut file)
        .take(cap)
        .read_to_end(&mut bytes)
        .map_err(|err| FileError::Refused(format!("cannot read {shown}: {err}")))?;
    Ok(bytes)
}

/// What a directory entry is, as the directory says (a link is never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Dir,
    Link,
    /// A FIFO, a socket, a device: listed, never opened.
    Other,
}

/// One entry of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// Its name (not valid UTF-8: lossily).
    pub name: String,
    pub kind: EntryKind,
    /// Its size in bytes, for a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// A directory's entries, sorted (directories first), at most `cap` of them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Listing {
    /// The directory, relative to the workspace (`.` for its top).
    pub path: String,
    pub entries: Vec<Entry>,
    /// Whether entries beyond the cap were left out.
    pub cut: bool,
}

/// The entries of the directory `path` (relative to the workspace; empty for its top),
/// `.git` left out.
pub fn list(conversation_dir: &Path, path: &str, cap: usize) -> Result<Listing, FileError> {
    let workspace = workspace_of(conversation_dir)?;
    let relative = match path.trim() {
        "" | "." => std::path::PathBuf::from("."),
        given => workspace
            .relative(given)
            .map_err(|err| FileError::Refused(err.to_string()))?,
    };
    let shown = relative.display().to_string();
    let dir = workspace
        .dir()
        .open_dir(&relative)
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => FileError::NotFound(shown.clone()),
            std::io::ErrorKind::NotADirectory => FileError::NotAFile(shown.clone()),
            _ => FileError::Refused(workspace.open_error(&relative, err).to_string()),
        })?;
    let read = dir
        .entries()
        .map_err(|err| FileError::Refused(format!("cannot list {shown}: {err}")))?;
    let mut entries = Vec::new();
    let mut cut = false;
    for entry in read.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git" && shown == "." {
            continue;
        }
        if entries.len() >= cap {
            cut = true;
            break;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let kind = if kind.is_symlink() {
            EntryKind::Link
        } else if kind.is_dir() {
            EntryKind::Dir
        } else if kind.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        // The entry's own size (links unfollowed: cap-std's entry metadata is lstat's).
        let size = match kind {
            EntryKind::File => entry.metadata().ok().map(|m| m.len()),
            _ => None,
        };
        entries.push(Entry { name, kind, size });
    }
    entries.sort_by(|a, b| {
        (a.kind != EntryKind::Dir, &a.name).cmp(&(b.kind != EntryKind::Dir, &b.name))
    });
    Ok(Listing {
        path: shown,
        entries,
        cut,
    })
}
