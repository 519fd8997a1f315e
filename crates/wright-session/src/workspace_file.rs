//! Reading one file of a conversation's workspace for a front end (the server's file
//! route): the agent's files are hostile, so the file is opened beneath the workspace's
//! directory descriptor (a `..` or a link that leads out fails at the moment of opening,
//! see `wright_tools::Workspace`), never blocks on a FIFO, and only a regular file no
//! larger than the cap is read.

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

/// The bytes of `path` (relative to the conversation's workspace), at most `cap` of them.
pub fn read(conversation_dir: &Path, path: &str, cap: u64) -> Result<Vec<u8>, FileError> {
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
    let workspace = opened.map_err(|err| FileError::Gone(err.to_string()))?;
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
