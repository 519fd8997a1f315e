//! Collects one command's output with bounded memory. Up to `SPILL_AT` bytes stay in
//! memory; past that everything goes to a file in the scratch area and only the head and
//! a rolling tail are kept, so a command printing 100 MB costs a few hundred KB.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

const SPILL_AT: usize = 256 * 1024;
const TAIL_KEEP: usize = 64 * 1024;

pub struct Collector {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
    spill: Option<(PathBuf, File)>,
    spill_path: PathBuf,
}

pub struct Collected {
    /// The whole output if it stayed small; else its head, a cut marker and its tail.
    pub bytes: Vec<u8>,
    pub total: usize,
    /// Where the whole output was written, if it was too long to keep.
    pub spilled_to: Option<PathBuf>,
}

impl Collector {
    pub fn new(spill_path: PathBuf) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            spill: None,
            spill_path,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        self.total += chunk.len();
        if let Some((_, file)) = &mut self.spill {
            file.write_all(chunk)?;
            self.tail.extend(chunk);
            let excess = self.tail.len().saturating_sub(TAIL_KEEP);
            self.tail.drain(..excess);
            return Ok(());
        }
        self.head.extend_from_slice(chunk);
        if self.head.len() > SPILL_AT {
            let mut file = File::create(&self.spill_path)?;
            file.write_all(&self.head)?;
            let keep_from = self.head.len() - TAIL_KEEP.min(self.head.len());
            self.tail.extend(&self.head[keep_from..]);
            self.head.truncate(SPILL_AT / 4);
            self.spill = Some((self.spill_path.clone(), file));
        }
        Ok(())
    }

    /// The last `n` bytes seen (for finding the prompt marker across chunk borders).
    pub fn last_bytes(&self, n: usize) -> Vec<u8> {
        if self.spill.is_some() {
            let skip = self.tail.len().saturating_sub(n);
            self.tail.iter().skip(skip).copied().collect()
        } else {
            self.head[self.head.len().saturating_sub(n)..].to_vec()
        }
    }

    /// Drops the last `n` bytes (the prompt marker) from everything kept and written.
    pub fn drop_last(&mut self, n: usize) -> std::io::Result<()> {
        let n = n.min(self.total);
        self.total -= n;
        if let Some((_, file)) = &mut self.spill {
            file.flush()?;
            file.set_len(self.total as u64)?;
            let keep = self.tail.len().saturating_sub(n);
            self.tail.truncate(keep);
        } else {
            self.head.truncate(self.total);
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<Collected> {
        match self.spill.take() {
            None => Ok(Collected {
                bytes: self.head,
                total: self.total,
                spilled_to: None,
            }),
            Some((path, mut file)) => {
                file.flush()?;
                let mut bytes = self.head;
                bytes.extend_from_slice(b"\n");
                bytes.extend(self.tail);
                Ok(Collected {
                    bytes,
                    total: self.total,
                    spilled_to: Some(path),
                })
            }
        }
    }
}
