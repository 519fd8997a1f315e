//! A conversation's screenshots (the `browser` tool's `screenshot` action): where they are
//! kept — `screenshots/` in the conversation's own directory, outside the sandbox — and
//! reading one back for a front end (the server's screenshot route).
//!
//! What it guarantees: only a name the tool gives (`screenshot-N.png`) is read, so a name
//! never leads anywhere but that directory; neither the directory nor the file is opened
//! through a link; the file opens without blocking (a FIFO), must be a regular file no
//! larger than `MAX_BYTES`, and must begin as PNG does — nothing else is ever given.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::path::PathBuf;

/// The directory's name in a conversation's directory.
pub const DIR: &str = "screenshots";
/// The largest screenshot given back (a full-page PNG of a large window is a few MB).
pub const MAX_BYTES: u64 = 32 << 20;
const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Where the conversation in `conversation_dir` keeps its screenshots.
pub fn dir(conversation_dir: &Path) -> PathBuf {
    conversation_dir.join(DIR)
}

/// Why a screenshot cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum ScreenshotError {
    #[error("not a screenshot's name (screenshot-N.png)")]
    BadName,
    #[error("no such screenshot")]
    NotFound,
    #[error("the screenshot is not a PNG file")]
    NotPng,
    #[error("the screenshot is larger than {MAX_BYTES} bytes")]
    TooLarge,
    #[error("cannot read the screenshot: {0}")]
    Unreadable(String),
}

/// Whether `name` is one the tool gives: `screenshot-N.png`, N from 1, no leading zero.
pub fn is_name(name: &str) -> bool {
    let Some(number) = name
        .strip_prefix("screenshot-")
        .and_then(|rest| rest.strip_suffix(".png"))
    else {
        return false;
    };
    (1..=5).contains(&number.len())
        && number.bytes().all(|b| b.is_ascii_digit())
        && !number.starts_with('0')
}

/// The PNG bytes of the screenshot `name` of the conversation in `conversation_dir`.
pub fn read(conversation_dir: &Path, name: &str) -> Result<Vec<u8>, ScreenshotError> {
    if !is_name(name) {
        return Err(ScreenshotError::BadName);
    }
    let dir = dir(conversation_dir);
    match dir.symlink_metadata() {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(ScreenshotError::NotFound),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(ScreenshotError::NotFound)
        }
        Err(err) => return Err(ScreenshotError::Unreadable(err.to_string())),
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(dir.join(name))
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => ScreenshotError::NotFound,
            // A link (refused by O_NOFOLLOW) is not a screenshot the tool saved.
            _ if err.raw_os_error() == Some(nix::libc::ELOOP) => ScreenshotError::NotFound,
            _ => ScreenshotError::Unreadable(err.to_string()),
        })?;
    let meta = file
        .metadata()
        .map_err(|err| ScreenshotError::Unreadable(err.to_string()))?;
    if !meta.is_file() {
        return Err(ScreenshotError::NotFound);
    }
    if meta.len() > MAX_BYTES {
        return Err(ScreenshotError::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ScreenshotError::Unreadable(err.to_string()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(ScreenshotError::TooLarge);
    }
    if !bytes.starts_with(PNG_MAGIC) {
        return Err(ScreenshotError::NotPng);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tools_names() {
        assert!(is_name("screenshot-1.png"));
        assert!(is_name("screenshot-12345.png"));
        for bad in [
            "screenshot-0.png",
            "screenshot-01.png",
            "screenshot-.png",
            "screenshot-123456.png",
            "screenshot-1.png/..",
            "../screenshot-1.png",
            "screenshot-1.svg",
            "screenshot-1.PNG",
            "screenshot-1 .png",
        ] {
            assert!(!is_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_png_is_given_a_link_a_fifo_and_other_bytes_are_not() {
        let conversation = tempfile::tempdir().unwrap();
        let shots = dir(conversation.path());
        std::fs::create_dir(&shots).unwrap();
        let png = [PNG_MAGIC, b"rest"].concat();
        std::fs::write(shots.join("screenshot-1.png"), &png).unwrap();
        assert_eq!(read(conversation.path(), "screenshot-1.png").unwrap(), png);
        std::fs::write(shots.join("screenshot-2.png"), "<svg onload=alert(1)>").unwrap();
        assert!(matches!(
            read(conversation.path(), "screenshot-2.png"),
            Err(ScreenshotError::NotPng)
        ));
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.png"), &png).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.png"),
            shots.join("screenshot-3.png"),
        )
        .unwrap();
        assert!(matches!(
            read(conversation.path(), "screenshot-3.png"),
            Err(ScreenshotError::NotFound)
        ));
        nix::unistd::mkfifo(
            &shots.join("screenshot-4.png"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        assert!(matches!(
            read(conversation.path(), "screenshot-4.png"),
            Err(ScreenshotError::NotFound)
        ));
        assert!(matches!(
            read(conversation.path(), "screenshot-9.png"),
            Err(ScreenshotError::NotFound)
        ));
        // The directory itself, a link: not followed.
        let other = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&shots, dir(other.path())).unwrap();
        assert!(matches!(
            read(other.path(), "screenshot-1.png"),
            Err(ScreenshotError::NotFound)
        ));
    }
}
