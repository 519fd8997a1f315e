//! The tar format as the Docker archive API speaks it (POSIX ustar, with PAX and GNU
//! long names), reduced to what the copy of a workspace needs: writing regular files,
//! directories and symbolic links, and reading any archive one entry at a time.
//!
//! The reader trusts nothing: it only splits the stream into entries and reports each
//! one's name, kind, mode, size, time and link target as written; whether a name is
//! acceptable is the unpacker's decision (see `unpack`). Sizes and lengths are bounded so
//! that a malformed header cannot make it allocate without end.

use std::io::Read;
use std::io::Write;

const BLOCK: usize = 512;
/// The longest PAX or GNU long-name record read (names are at most PATH_MAX anyway).
const MAX_EXTENDED: u64 = 1 << 20;

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink(Vec<u8>),
    /// A hard link, to the name given.
    HardLink(Vec<u8>),
    /// A device, a FIFO, or a type this reader does not know: the byte of its type.
    Other(u8),
}

/// One entry's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    /// The name as written (relative or not, `..` or not: see `unpack`).
    pub(crate) path: Vec<u8>,
    pub(crate) kind: Kind,
    pub(crate) mode: u32,
    pub(crate) size: u64,
    pub(crate) mtime: i64,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum TarError {
    #[error("the archive is malformed: {0}")]
    Malformed(&'static str),
    #[error("the archive cannot be read or written: {0}")]
    Io(#[from] std::io::Error),
}

/// Writes an archive to `out`.
pub(crate) struct Writer<W: Write> {
    out: W,
    uid: u32,
    gid: u32,
}

impl<W: Write> Writer<W> {
    /// Every entry is owned by `uid:gid` (the container's user, as a bind mount shows it).
    pub(crate) fn new(out: W, uid: u32, gid: u32) -> Self {
        Self { out, uid, gid }
    }

    pub(crate) fn dir(&mut self, path: &[u8], mode: u32, mtime: i64) -> Result<(), TarError> {
        self.header(path, b'5', mode, 0, mtime, b"")
    }

    pub(crate) fn symlink(
        &mut self,
        path: &[u8],
        target: &[u8],
        mtime: i64,
    ) -> Result<(), TarError> {
        self.header(path, b'2', 0o777, 0, mtime, target)
    }

    /// A regular file of `size` bytes read from `data` (which must give exactly that many).
    pub(crate) fn file(
        &mut self,
        path: &[u8],
        mode: u32,
        mtime: i64,
        size: u64,
        data: &mut impl Read,
    ) -> Result<(), TarError> {
        self.header(path, b'0', mode, size, mtime, b"")?;
        let copied = std::io::copy(&mut data.take(size), &mut self.out)?;
        if copied != size {
            return Err(TarError::Malformed("a file shrank while it was archived"));
        }
        self.pad(size)
    }

    /// The two empty blocks that end an archive; gives the output back.
    pub(crate) fn finish(mut self) -> Result<W, TarError> {
        self.out.write_all(&[0; 2 * BLOCK])?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn pad(&mut self, size: u64) -> Result<(), TarError> {
        let rest = (BLOCK - (size % BLOCK as u64) as usize) % BLOCK;
        self.out.write_all(&vec![0; rest])?;
        Ok(())
    }

    fn header(
        &mut self,
        path: &[u8],
        kind: u8,
        mode: u32,
        size: u64,
        mtime: i64,
        link: &[u8],
    ) -> Result<(), TarError> {
        // Names that do not fit the fixed fields go in a PAX record before the entry.
        if path.len() > 100 || link.len() > 100 {
            let mut records = Vec::new();
            if path.len() > 100 {
                records.extend(pax_record(b"path", path));
            }
            if link.len() > 100 {
                records.extend(pax_record(b"linkpath", link));
            }
            let block = ustar(
                b"././@PaxHeader",
                b'x',
                0o644,
                records.len() as u64,
                mtime,
                b"",
                0,
                0,
            );
            self.out.write_all(&block)?;
            self.out.write_all(&records)?;
            self.pad(records.len() as u64)?;
        }
        let short = |name: &[u8]| name[..name.len().min(100)].to_vec();
        let block = ustar(
            &short(path),
            kind,
            mode,
            size,
            mtime,
            &short(link),
            self.uid,
            self.gid,
        );
        self.out.write_all(&block)?;
        Ok(())
    }
}

fn pax_record(key: &[u8], value: &[u8]) -> Vec<u8> {
    // "LEN KEY=VALUE\n", where LEN counts itself.
    let body = key.len() + value.len() + 3;
    let mut len = body + 1;
    while len.to_string().len() + body != len {
        len += 1;
    }
    let mut record = format!("{len} ").into_bytes();
    record.extend_from_slice(key);
    record.push(b'=');
    record.extend_from_slice(value);
    record.push(b'\n');
    record
}

#[allow(clippy::too_many_arguments)]
fn ustar(
    path: &[u8],
    kind: u8,
    mode: u32,
    size: u64,
    mtime: i64,
    link: &[u8],
    uid: u32,
    gid: u32,
) -> [u8; BLOCK] {
    let mut block = [0u8; BLOCK];
    block[..path.len()].copy_from_slice(path);
    octal(&mut block[100..108], u64::from(mode & 0o7777));
    octal(&mut block[108..116], u64::from(uid));
    octal(&mut block[116..124], u64::from(gid));
    octal(&mut block[124..136], size);
    octal(&mut block[136..148], u64::try_from(mtime).unwrap_or(0));
    block[156] = kind;
    block[157..157 + link.len()].copy_from_slice(link);
    block[257..263].copy_from_slice(b"ustar\0");
    block[263..265].copy_from_slice(b"00");
    block[148..156].copy_from_slice(b"        ");
    let sum: u32 = block.iter().map(|b| u32::from(*b)).sum();
    octal(&mut block[148..155], u64::from(sum));
    block
}

/// `value` in octal, zero-padded, NUL-terminated, in `field`.
fn octal(field: &mut [u8], value: u64) {
    let digits = field.len() - 1;
    let text = format!("{value:0digits$o}");
    let text = &text.as_bytes()[text.len().saturating_sub(digits)..];
    field[..digits].copy_from_slice(text);
    field[digits] = 0;
}

/// Reads an archive from `input`, one entry at a time.
pub(crate) struct Reader<R: Read> {
    input: R,
    /// Bytes of the current entry's data (and padding) not yet read.
    pending: u64,
}

impl<R: Read> Reader<R> {
    pub(crate) fn new(input: R) -> Self {
        Self { input, pending: 0 }
    }

    /// The next entry's header, or `None` at the end of the archive. The data of the
    /// entry before, if not read, is skipped.
    pub(crate) fn next(&mut self) -> Result<Option<Header>, TarError> {
        self.skip_data()?;
        let mut long_path = None;
        let mut long_link = None;
        let mut pax_size = None;
        loop {
            let mut block = [0u8; BLOCK];
            if !self.read_block(&mut block)? || block.iter().all(|b| *b == 0) {
                return Ok(None);
            }
            if !checksum_ok(&block) {
                return Err(TarError::Malformed("a header's checksum is wrong"));
            }
            let kind = block[156];
            let size = number(&block[124..136])?;
            match kind {
                b'x' | b'g' | b'L' | b'K' => {
                    if size > MAX_EXTENDED {
                        return Err(TarError::Malformed("an extended header is too long"));
                    }
                    let data = self.read_exactly(size)?;
                    match kind {
                        b'x' => {
                            for (key, value) in pax_records(&data)? {
                                match key.as_slice() {
                                    b"path" => long_path = Some(value),
                                    b"linkpath" => long_link = Some(value),
                                    b"size" => {
                                        let text = std::str::from_utf8(&value).ok();
                                        pax_size = text.and_then(|t| t.parse::<u64>().ok());
                                    }
                                    _ => {}
                                }
                            }
                        }
                        b'L' => long_path = Some(until_nul(&data).to_vec()),
                        b'K' => long_link = Some(until_nul(&data).to_vec()),
                        // Global records: nothing wright needs.
                        _ => {}
                    }
                    continue;
                }
                _ => {}
            }
            let size = pax_size.unwrap_or(size);
            let name = until_nul(&block[..100]);
            let prefix = until_nul(&block[345..500]);
            let path = long_path.unwrap_or_else(|| {
                let ustar = &block[257..262] == b"ustar";
                if ustar && !prefix.is_empty() {
                    [prefix, b"/", name].concat()
                } else {
                    name.to_vec()
                }
            });
            let link = long_link.unwrap_or_else(|| until_nul(&block[157..257]).to_vec());
            let kind = match kind {
                b'0' | 0 | b'7' => Kind::File,
                b'5' => Kind::Dir,
                b'2' => Kind::Symlink(link),
                b'1' => Kind::HardLink(link),
                other => Kind::Other(other),
            };
            // Only a regular file's size is data to read; others' is skipped all the same.
            self.pending = size.div_ceil(BLOCK as u64) * BLOCK as u64;
            return Ok(Some(Header {
                path,
                kind,
                mode: u32::try_from(number(&block[100..108])? & 0o7777).unwrap_or(0o644),
                size,
                mtime: i64::try_from(number(&block[136..148])?).unwrap_or(0),
            }));
        }
    }

    /// Copies the current entry's data (its `size` bytes) to `out`.
    pub(crate) fn copy_data(&mut self, size: u64, out: &mut impl Write) -> Result<(), TarError> {
        let padded = size.div_ceil(BLOCK as u64) * BLOCK as u64;
        if padded != self.pending {
            return Err(TarError::Malformed("the data was read already"));
        }
        let copied = std::io::copy(&mut (&mut self.input).take(size), out)?;
        if copied != size {
            return Err(TarError::Malformed("the archive ends inside a file"));
        }
        self.pending -= size;
        self.skip_data()
    }

    fn skip_data(&mut self) -> Result<(), TarError> {
        let skipped = std::io::copy(
            &mut (&mut self.input).take(self.pending),
            &mut std::io::sink(),
        )?;
        if skipped != self.pending {
            return Err(TarError::Malformed("the archive ends inside an entry"));
        }
        self.pending = 0;
        Ok(())
    }

    fn read_exactly(&mut self, size: u64) -> Result<Vec<u8>, TarError> {
        let mut data = Vec::new();
        (&mut self.input).take(size).read_to_end(&mut data)?;
        if data.len() as u64 != size {
            return Err(TarError::Malformed("the archive ends inside a header"));
        }
        self.pending = size.div_ceil(BLOCK as u64) * BLOCK as u64 - size;
        self.skip_data()?;
        Ok(data)
    }

    /// A whole block, `false` at a clean end of input.
    fn read_block(&mut self, block: &mut [u8; BLOCK]) -> Result<bool, TarError> {
        let mut filled = 0;
        while filled < BLOCK {
            match self.input.read(&mut block[filled..])? {
                0 if filled == 0 => return Ok(false),
                0 => return Err(TarError::Malformed("the archive ends inside a header")),
                n => filled += n,
            }
        }
        Ok(true)
    }
}

fn until_nul(bytes: &[u8]) -> &[u8] {
    bytes.split(|b| *b == 0).next().unwrap_or_default()
}

/// A numeric field: octal text, or base-256 when its first byte's high bit is set.
fn number(field: &[u8]) -> Result<u64, TarError> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        let mut value: u64 = u64::from(field[0] & 0x7f);
        for byte in &field[1..] {
            value = value
                .checked_mul(256)
                .and_then(|v| v.checked_add(u64::from(*byte)))
                .ok_or(TarError::Malformed("a number is too large"))?;
        }
        return Ok(value);
    }
    let text = until_nul(field);
    let text =
        std::str::from_utf8(text).map_err(|_| TarError::Malformed("a number is not text"))?;
    let text = text.trim_matches(|c: char| c == ' ' || c == '\0');
    if text.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(text, 8).map_err(|_| TarError::Malformed("a number is not octal"))
}

fn checksum_ok(block: &[u8; BLOCK]) -> bool {
    let Ok(expected) = number(&block[148..156]) else {
        return false;
    };
    let sum: u64 = block
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(*b)
            }
        })
        .sum();
    sum == expected
}

/// The `KEY=VALUE` records of a PAX header.
/// A PAX record: its key and its value.
type Record = (Vec<u8>, Vec<u8>);

fn pax_records(data: &[u8]) -> Result<Vec<Record>, TarError> {
    let mut records = Vec::new();
    let mut rest = data;
    while !rest.is_empty() && rest[0] != 0 {
        let space = rest
            .iter()
            .position(|b| *b == b' ')
            .ok_or(TarError::Malformed("a PAX record has no length"))?;
        let len: usize = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|t| t.parse().ok())
            .filter(|len| *len > space + 1 && *len <= rest.len())
            .ok_or(TarError::Malformed("a PAX record's length is wrong"))?;
        let record = &rest[space + 1..len - 1];
        let equals = record
            .iter()
            .position(|b| *b == b'=')
            .ok_or(TarError::Malformed("a PAX record has no ="))?;
        records.push((record[..equals].to_vec(), record[equals + 1..].to_vec()));
        rest = &rest[len..];
        if records.len() > 1000 {
            return Err(TarError::Malformed("too many PAX records"));
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_is_read_back_long_names_included() {
        let long = [b'd'; 150].to_vec();
        let mut long_file = long.clone();
        long_file.extend_from_slice(b"/file");
        let mut writer = Writer::new(Vec::new(), 1000, 1000);
        writer.dir(b"sub", 0o755, 10).unwrap();
        writer
            .file(b"sub/a", 0o644, 11, 5, &mut &b"hello"[..])
            .unwrap();
        writer.dir(&long, 0o700, 12).unwrap();
        writer
            .file(&long_file, 0o600, 13, 600, &mut &[7u8; 600][..])
            .unwrap();
        writer.symlink(b"link", &long, 14).unwrap();
        let archive = writer.finish().unwrap();
        assert_eq!(archive.len() % BLOCK, 0);

        let mut reader = Reader::new(&archive[..]);
        let first = reader.next().unwrap().unwrap();
        assert_eq!(
            (first.path.as_slice(), &first.kind, first.mode),
            (&b"sub"[..], &Kind::Dir, 0o755)
        );
        let a = reader.next().unwrap().unwrap();
        assert_eq!((a.path.as_slice(), a.size, a.mtime), (&b"sub/a"[..], 5, 11));
        let mut data = Vec::new();
        reader.copy_data(a.size, &mut data).unwrap();
        assert_eq!(data, b"hello");
        assert_eq!(reader.next().unwrap().unwrap().path, long);
        // The long file's data is skipped unread.
        let big = reader.next().unwrap().unwrap();
        assert_eq!((big.path, big.size), (long_file, 600));
        let link = reader.next().unwrap().unwrap();
        assert_eq!(link.kind, Kind::Symlink(long));
        assert!(reader.next().unwrap().is_none());
    }

    #[test]
    fn broken_archives_are_errors_not_hangs() {
        let mut writer = Writer::new(Vec::new(), 0, 0);
        writer
            .file(b"a", 0o644, 1, 700, &mut &[1u8; 700][..])
            .unwrap();
        let archive = writer.finish().unwrap();
        // Cut inside the data.
        let mut reader = Reader::new(&archive[..BLOCK + 100]);
        reader.next().unwrap().unwrap();
        assert!(reader.next().is_err());
        // A header with a wrong checksum.
        let mut bad = archive.clone();
        bad[0] = b'b';
        assert!(Reader::new(&bad[..]).next().is_err());
        // A GNU long name claiming a gigabyte.
        let mut huge = ustar(b"././@LongLink", b'L', 0o644, 1 << 30, 0, b"", 0, 0).to_vec();
        huge.extend_from_slice(&[0; BLOCK]);
        assert!(Reader::new(&huge[..]).next().is_err());
    }
}
