//! The `wright` binary as built: every sandboxed process starts by loading it (it is its
//! own sandbox launcher), so how it is linked is part of each start's cost.

/// The tags of the binary's dynamic section (`PT_DYNAMIC`), read from its ELF headers.
fn dynamic_tags(elf: &[u8]) -> Vec<u64> {
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap());
    assert_eq!(&elf[..5], b"\x7fELF\x02", "a 64-bit ELF file");
    let (phoff, phentsize, phnum) = (u64_at(0x20) as usize, u16_at(0x36), u16_at(0x38));
    let mut tags = Vec::new();
    for header in (0..phnum).map(|i| phoff + i * phentsize) {
        const PT_DYNAMIC: u32 = 2;
        if u32::from_le_bytes(elf[header..header + 4].try_into().unwrap()) != PT_DYNAMIC {
            continue;
        }
        let (offset, size) = (u64_at(header + 8) as usize, u64_at(header + 32) as usize);
        tags.extend((offset..offset + size).step_by(16).map(u64_at));
    }
    tags
}

/// glibc's version on this machine, from `ldd --version`'s first line.
fn glibc() -> Option<(u32, u32)> {
    let output = std::process::Command::new("ldd")
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let first = text.lines().next()?;
    if !first.contains("GLIBC") && !first.contains("GNU libc") {
        return None;
    }
    let (major, minor) = first.split_whitespace().last()?.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[test]
fn relative_relocations_are_packed_where_glibc_applies_them() {
    const DT_RELR: u64 = 0x24;
    let elf = std::fs::read(env!("CARGO_BIN_EXE_wright")).unwrap();
    let tags = dynamic_tags(&elf);
    assert!(
        !tags.is_empty(),
        "wright is dynamically linked: no dynamic section found"
    );
    match glibc() {
        Some(version) if version >= (2, 36) => assert!(
            tags.contains(&DT_RELR),
            "glibc {version:?} applies packed relative relocations, yet wright was linked \
             without them: each sandboxed start reads a relocation table of megabytes"
        ),
        _ => assert!(
            !tags.contains(&DT_RELR),
            "packed relative relocations need glibc 2.36: wright could not start here"
        ),
    }
}
