//! Loading and saving text without mangling it: binary and non-UTF-8 files are detected
//! and refused for editing, CRLF files are edited as LF and written back as CRLF, and the
//! presence or absence of a final newline is whatever the edit makes it.

use crate::ToolError;

/// A text file as the editor works on it: LF line endings, plus how to write it back.
pub struct TextFile {
    pub text: String,
    pub crlf: bool,
}

impl TextFile {
    pub fn from_bytes(bytes: Vec<u8>, shown: &str) -> Result<Self, ToolError> {
        if looks_binary(&bytes) {
            return Err(binary_error(shown, bytes.len() as u64, &bytes));
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

    /// The bytes to write back: CRLF again if the file had it.
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.crlf {
            self.text.replace('\n', "\r\n").into_bytes()
        } else {
            self.text.clone().into_bytes()
        }
    }
}

/// The refusal for a binary file of `size` bytes starting with `head`.
pub fn binary_error(shown: &str, size: u64, head: &[u8]) -> ToolError {
    ToolError::Model(format!(
        "{shown} is a binary file ({size} bytes{}); file_editor works on text only. Inspect it with a command such as `file` or `xxd | head`",
        describe_binary(head)
    ))
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
