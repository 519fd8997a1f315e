//! What the machine offers the engine: its physical cores (llama.cpp runs best with one
//! thread per core, hyper-threads only add contention) and the memory free now.

use std::collections::HashSet;

/// Physical cores, from `/proc/cpuinfo` (distinct physical id and core id pairs); the
/// logical count where that file does not say.
pub fn physical_cores() -> u32 {
    let logical = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") else {
        return logical;
    };
    let cores = count_cores(&text);
    if cores == 0 {
        logical
    } else {
        // A process confined to fewer CPUs (taskset, a container) gets no more threads.
        cores.min(logical)
    }
}

fn count_cores(cpuinfo: &str) -> u32 {
    let mut seen = HashSet::new();
    for block in cpuinfo.split("\n\n") {
        let field = |name: &str| {
            block.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == name).then(|| value.trim().to_string())
            })
        };
        if let (Some(package), Some(core)) = (field("physical id"), field("core id")) {
            seen.insert((package, core));
        }
    }
    seen.len() as u32
}

/// Memory available to new allocations now (`MemAvailable`), in bytes; None where the
/// kernel does not say.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_available(&text)
}

fn parse_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyperthreads_count_once() {
        let info = "processor: 0\nphysical id: 0\ncore id: 0\n\nprocessor: 1\nphysical id: 0\ncore id: 0\n\nprocessor: 2\nphysical id: 0\ncore id: 1\n";
        assert_eq!(count_cores(info), 2);
        assert_eq!(count_cores("processor: 0\n"), 0);
    }

    #[test]
    fn available_memory_is_read_in_bytes() {
        let info = "MemTotal: 100 kB\nMemFree: 10 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(parse_available(info), Some(2048 * 1024));
    }
}
