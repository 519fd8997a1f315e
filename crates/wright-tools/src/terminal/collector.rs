//! Collects one command's output with bounded memory. Up to `SPILL_AT` bytes stay in
//! memory; past that everything goes to a file in the scratch area (up to the file-size
//! limit) and only the head and a rolling tail are kept, so a command printing 100 MB
//! costs a few hundred KB.

use crate::scratch::Scratch;
use crate::scratch::ScratchFile;
use crate::ToolError;
use std::collections::VecDeque;
use std::path::PathBuf;

const SPILL_AT: usize = 256 * 1024;
const TAIL_KEEP: usize = 64 * 1024;

pub struct Collector {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
    /// Line ends seen, to say truly how long an output kept only in part was.
    newlines: usize,
    spill: Option<ScratchFile>,
    scratch: Scratch,
}

pub struct Collected {
    /// The whole output if it stayed small; else its head, a cut marker and its tail.
    pub bytes: Vec<u8>,
    pub total: usize,
    /// Lines in the whole output (a last line without its newline counts too).
    pub lines: usize,
    /// Where the output was written, if it was too long to keep.
    pub spilled_to: Option<PathBuf>,
    /// Bytes of it in that file: less than `total` when the size limit cut it.
    pub spilled_bytes: u64,
}

impl Collector {
    pub fn new(scratch: Scratch) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            newlines: 0,
            spill: None,
            scratch,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) -> Result<(), ToolError> {
        self.total += chunk.len();
        self.newlines += count_newlines(chunk);
        if let Some(file) = &mut self.spill {
            file.write(chunk).map_err(spill_error)?;
            self.tail.extend(chunk);
            let excess = self.tail.len().saturating_sub(TAIL_KEEP);
            self.tail.drain(..excess);
            return Ok(());
        }
        self.head.extend_from_slice(chunk);
        if self.head.len() > SPILL_AT {
            let mut file = self.scratch.create("output", "txt")?;
            file.write(&self.head).map_err(spill_error)?;
            let keep_from = self.head.len() - TAIL_KEEP.min(self.head.len());
            self.tail.extend(&self.head[keep_from..]);
            self.head.truncate(SPILL_AT / 4);
            self.spill = Some(file);
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
    pub fn drop_last(&mut self, n: usize) -> Result<(), ToolError> {
        let n = n.min(self.total);
        self.newlines -= count_newlines(&self.last_bytes(n)).min(self.newlines);
        self.total -= n;
        if let Some(file) = &mut self.spill {
            file.truncate(self.total as u64).map_err(spill_error)?;
            let keep = self.tail.len().saturating_sub(n);
            self.tail.truncate(keep);
        } else {
            self.head.truncate(self.total);
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<Collected, ToolError> {
        let unterminated = self.total > 0 && self.last_bytes(1) != b"\n";
        let lines = self.newlines + usize::from(unterminated);
        match self.spill.take() {
            None => Ok(Collected {
                bytes: self.head,
                total: self.total,
                lines,
                spilled_to: None,
                spilled_bytes: 0,
            }),
            Some(mut file) => {
                file.flush().map_err(spill_error)?;
                let mut bytes = self.head;
                bytes.extend_from_slice(b"\n");
                bytes.extend(self.tail);
                Ok(Collected {
                    bytes,
                    total: self.total,
                    lines,
                    spilled_bytes: file.written(),
                    spilled_to: Some(file.path),
                })
            }
        }
    }
}

fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

fn spill_error(err: std::io::Error) -> ToolError {
    ToolError::Fatal(format!("cannot save command output: {err}"))
}
