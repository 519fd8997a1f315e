//! Loading and saving text without mangling it: binary and non-UTF-8 files are detected
//! and refused for editing, CRLF files are edited as LF and written back as CRLF, and the
//! presence or absence of a final newline is whatever the edit makes it.

use crate::ToolError;
use std::path::Path;

/// A text file as the editor works on it: LF line endings, plus how to write it back.
pub struct TextFile {
    pub text: String,
    pub crlf: bool,
}

impl TextFile {
    pub fn load(path: &Path, shown: &str) -> Result<Self, ToolError> {
        let bytes = std::fs::read(path).map_err(|err| read_error(shown, err))?;
        if looks_binary(&bytes) {
            return Err(ToolError::Model(format!(
                "{shown} is a binary file ({} bytes{}); file_editor works on text only. Inspect it with a command such as `file` or `xxd | head`",
                bytes.len(),
                describe_binary(&bytes)
            )));
        }
        let text = String::from_utf8(bytes).map_err(|err| {
            ToolError::Model(format!(
                "{shown} is not valid UTF-8 (first bad byte at offset {}); file_editor will not edit it to avoid corrupting it. Convert it first, e.g. `iconv -f latin1 -t utf-8`",
                err.utf8_error().valid_up_to()
            ))
        })?;
        let crlf = text.contains("\r\n");
        let text = if crlf {
            text.replace("\r\n", "\n")
        } else {
            text
        };
        Ok(Self { text, crlf })
    }

    pub fn save(&self, path: &Path, shown: &str) -> Result<(), ToolError> {
        let text = if self.crlf {
            self.text.replace('\n', "\r\n")
        } else {
            self.text.clone()
        };
        write_text(path, shown, &text)
    }
}

pub fn write_text(path: &Path, shown: &str, text: &str) -> Result<(), ToolError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|err| write_error(shown, err))?;
    }
    std::fs::write(path, text).map_err(|err| write_error(shown, err))
}

fn read_error(shown: &str, err: std::io::Error) -> ToolError {
    match err.kind() {
        std::io::ErrorKind::NotFound => ToolError::Model(format!("{shown} does not exist")),
        _ => ToolError::Model(format!("cannot read {shown}: {err}")),
    }
}

fn write_error(shown: &str, err: std::io::Error) -> ToolError {
    match err.kind() {
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::NotFound => {
            ToolError::Model(format!("cannot write {shown}: {err}"))
        }
        // A full disk or a read-only file system: nothing the model can do.
        _ => ToolError::Fatal(format!("cannot write {shown}: {err}")),
    }
}

/// NUL bytes in the first 8 KB: the test git and grep use.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

fn describe_binary(bytes: &[u8]) -> &'static str {
    const SIGNATURES: &[(&[u8], &str)] = &[
        (b"\x7fELF", ", an ELF executable"),
        (b"\x89PNG", ", a PNG image"),
        (b"\xff\xd8\xff", ", a JPEG image"),
        (b"PK\x03\x04", ", a zip archive"),
        (b"%PDF", ", a PDF document"),
        (b"\x1f\x8b", ", gzip-compressed"),
        (b"SQLite format 3", ", an SQLite database"),
    ];
    SIGNATURES
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map_or("", |(_, name)| name)
}
