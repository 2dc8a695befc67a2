//! The little of ELF64 (little-endian, x86-64) the guest image needs, read from bytes:
//!
//! - [`loadable_image`]: an executable cut down to what the loader maps. The kernel and the
//!   dynamic loader use only the program headers and the segments they describe; section
//!   headers, symbols and debug information after the last segment are not needed to run.
//!   A debug build of nictune is ~120 MB, of which ~8 MB is mapped.
//! - [`needed`]: the interpreter (`PT_INTERP`) and the `DT_NEEDED` libraries of a
//!   dynamically linked object, to copy them into the guest.
//! - [`modinfo`]: a kernel module's `.modinfo` section (`name=`, `depends=`, `parm=`), which
//!   is how the module tools learn a module's dependencies without `modules.dep`.
//!
//! Layouts follow the System V gABI (ELF-64 Object File Format, version 1.5): header 64
//! bytes, program header entries 56, section header entries 64. Every read is bounds-checked:
//! a malformed file is an [`ElfError`], never a panic.

use std::ops::Range;

/// Why a file could not be read as the ELF object we need.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    /// The header is not ELF, or not ELFCLASS64 little-endian.
    #[error("not a 64-bit little-endian ELF file")]
    NotElf64,
    /// A header, table or section points past the end of the file.
    #[error("{what} lies outside the file ({len} bytes)")]
    OutOfBounds {
        /// The part that does not fit.
        what: &'static str,
        /// The file's size, bytes.
        len: usize,
    },
    /// A required part (a section, a `DT_NEEDED` name, ...) is absent.
    #[error("no {0} found")]
    Missing(&'static str),
}

type Result<T> = std::result::Result<T, ElfError>;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
/// Offsets of the header fields used here (gABI figure "ELF Header").
const E_PHOFF: usize = 0x20;
const E_SHOFF: usize = 0x28;
const E_PHENTSIZE: usize = 0x36;
const E_SHNUM: usize = 0x3C;

/// One program header: type, file range, virtual address.
#[derive(Debug, Clone, Copy)]
struct Segment {
    kind: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
}

/// A section: its name's offset in the section-name table, file offset and size.
type SectionRef = (u32, u64, u64);

/// A bounds-checked view of an ELF64 file.
struct Elf<'a> {
    bytes: &'a [u8],
}

impl<'a> Elf<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Elf<'a>> {
        let ok = bytes.len() >= 64
            && bytes[..4] == *b"\x7fELF"
            && bytes[4] == 2 // ELFCLASS64
            && bytes[5] == 1; // ELFDATA2LSB
        if ok {
            Ok(Elf { bytes })
        } else {
            Err(ElfError::NotElf64)
        }
    }

    fn slice(&self, range: Range<u64>, what: &'static str) -> Result<&'a [u8]> {
        let oob = || ElfError::OutOfBounds {
            what,
            len: self.bytes.len(),
        };
        let start = usize::try_from(range.start).map_err(|_| oob())?;
        let end = usize::try_from(range.end).map_err(|_| oob())?;
        self.bytes.get(start..end).ok_or_else(oob)
    }

    fn u16_at(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]])
    }

    fn u64_at(&self, at: usize) -> u64 {
        read_u64(&self.bytes[at..at + 8])
    }

    fn table(&self, off_field: usize, num_field: usize, entsize: u64) -> Result<Vec<&'a [u8]>> {
        let (off, num) = (self.u64_at(off_field), u64::from(self.u16_at(num_field)));
        let end = num
            .checked_mul(entsize)
            .and_then(|n| n.checked_add(off))
            .ok_or(ElfError::OutOfBounds {
                what: "a header table",
                len: self.bytes.len(),
            })?;
        let all = self.slice(off..end, "a header table")?;
        Ok(all.chunks_exact(entsize as usize).collect())
    }

    fn segments(&self) -> Result<Vec<Segment>> {
        let entries = self.table(E_PHOFF, E_PHENTSIZE + 2, 56)?;
        Ok(entries
            .iter()
            .map(|e| Segment {
                kind: u32::from_le_bytes([e[0], e[1], e[2], e[3]]),
                offset: read_u64(&e[8..16]),
                vaddr: read_u64(&e[16..24]),
                filesz: read_u64(&e[32..40]),
            })
            .collect())
    }

    /// Sections as (name offset in shstrtab, file offset, size), and the shstrtab bytes.
    fn sections(&self) -> Result<(Vec<SectionRef>, &'a [u8])> {
        let entries = self.table(E_SHOFF, E_SHNUM, 64)?;
        let list: Vec<SectionRef> = entries
            .iter()
            .map(|e| {
                let name = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                (name, read_u64(&e[24..32]), read_u64(&e[32..40]))
            })
            .collect();
        let strndx = usize::from(self.u16_at(E_SHNUM + 2));
        let &(_, off, size) = list.get(strndx).ok_or(ElfError::Missing("section names"))?;
        let names = self.slice(off..off.saturating_add(size), "the section names")?;
        Ok((list, names))
    }

    /// The file bytes of the first section called `name`.
    fn section(&self, name: &str) -> Result<&'a [u8]> {
        let (list, names) = self.sections()?;
        for (at, off, size) in list {
            if cstr_at(names, at as usize) == Some(name) {
                return self.slice(off..off.saturating_add(size), "a section");
            }
        }
        Err(ElfError::Missing("section"))
    }

    /// The file offset of virtual address `vaddr`, through the loadable segments.
    fn file_offset(&self, segments: &[Segment], vaddr: u64) -> Option<u64> {
        segments
            .iter()
            .filter(|s| s.kind == PT_LOAD)
            .find(|s| vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz)
            .map(|s| s.offset + (vaddr - s.vaddr))
    }
}

fn read_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// The NUL-terminated string at `at` in `table`, if it is UTF-8.
fn cstr_at(table: &[u8], at: usize) -> Option<&str> {
    let rest = table.get(at..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// `bytes` cut after the last byte any segment maps, with the section header table removed
/// from the header (offset, count and name index zeroed): what `sstrip` makes.
pub fn loadable_image(bytes: &[u8]) -> Result<Vec<u8>> {
    let elf = Elf::parse(bytes)?;
    let segments = elf.segments()?;
    let end = segments
        .iter()
        .map(|s| s.offset.saturating_add(s.filesz))
        .max()
        .ok_or(ElfError::Missing("program header"))?;
    // The program header table itself must stay too.
    let ph_end = elf.u64_at(E_PHOFF) + 56 * u64::from(elf.u16_at(E_PHENTSIZE + 2));
    let keep = elf.slice(0..end.max(ph_end), "a segment")?;
    let mut out = keep.to_vec();
    out[E_SHOFF..E_SHOFF + 8].fill(0);
    out[E_SHNUM..E_SHNUM + 4].fill(0); // e_shnum and e_shstrndx
    Ok(out)
}

/// What a dynamically linked object needs at run time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needed {
    /// The program interpreter (`/lib64/ld-linux-x86-64.so.2`), for executables.
    pub interpreter: Option<String>,
    /// `DT_NEEDED` sonames, in order.
    pub libraries: Vec<String>,
}

/// The interpreter and `DT_NEEDED` entries of `bytes` (empty for a static object).
pub fn needed(bytes: &[u8]) -> Result<Needed> {
    let elf = Elf::parse(bytes)?;
    let segments = elf.segments()?;
    let mut out = Needed::default();
    if let Some(s) = segments.iter().find(|s| s.kind == PT_INTERP) {
        let raw = elf.slice(s.offset..s.offset.saturating_add(s.filesz), "PT_INTERP")?;
        out.interpreter = cstr_at(raw, 0).map(str::to_string);
    }
    let Some(dynamic) = segments.iter().find(|s| s.kind == PT_DYNAMIC) else {
        return Ok(out);
    };
    let raw = elf.slice(
        dynamic.offset..dynamic.offset.saturating_add(dynamic.filesz),
        "PT_DYNAMIC",
    )?;
    let entries: Vec<(u64, u64)> = raw
        .chunks_exact(16)
        .map(|e| (read_u64(&e[..8]), read_u64(&e[8..])))
        .take_while(|&(tag, _)| tag != DT_NULL)
        .collect();
    let strtab = entries
        .iter()
        .find(|&&(tag, _)| tag == DT_STRTAB)
        .and_then(|&(_, vaddr)| elf.file_offset(&segments, vaddr))
        .ok_or(ElfError::Missing("dynamic string table"))?;
    let strings = elf.slice(strtab..bytes.len() as u64, "the dynamic string table")?;
    for &(tag, at) in &entries {
        if tag == DT_NEEDED {
            let name = usize::try_from(at).ok().and_then(|a| cstr_at(strings, a));
            out.libraries
                .push(name.ok_or(ElfError::Missing("DT_NEEDED name"))?.into());
        }
    }
    Ok(out)
}

/// A kernel module's `.modinfo`: its name, the modules it depends on, its parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModInfo {
    /// The module's name (`name=`), `_` spelling.
    pub name: String,
    /// The modules it needs loaded first (`depends=`, comma-separated in the file); empty when
    /// none.
    pub depends: Vec<String>,
    /// `(parameter, description)` from the `parm=NAME:TEXT` entries.
    pub params: Vec<(String, String)>,
}

/// Reads `.modinfo` (NUL-separated `key=value` strings) from a module file.
pub fn modinfo(bytes: &[u8]) -> Result<ModInfo> {
    let elf = Elf::parse(bytes)?;
    let section = elf.section(".modinfo")?;
    let mut info = ModInfo::default();
    for entry in section.split(|&b| b == 0) {
        let Ok(text) = std::str::from_utf8(entry) else {
            continue;
        };
        match text.split_once('=') {
            Some(("name", v)) => info.name = v.into(),
            Some(("depends", v)) => {
                info.depends = v
                    .split(',')
                    .filter(|d| !d.is_empty())
                    .map(Into::into)
                    .collect()
            }
            Some(("parm", v)) => {
                let (p, d) = v.split_once(':').unwrap_or((v, ""));
                info.params.push((p.into(), d.into()));
            }
            _ => {}
        }
    }
    if info.name.is_empty() {
        return Err(ElfError::Missing("module name in .modinfo"));
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 executable built by hand: header, two program headers (PT_INTERP and
    /// one PT_LOAD covering the first 0x200 bytes), then 0x100 bytes of "debug" data after
    /// the segment, and a section header table (two entries: null and `.shstrtab`).
    fn tiny_exe() -> Vec<u8> {
        let mut b = vec![0u8; 0x400];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[E_PHOFF..E_PHOFF + 8].copy_from_slice(&64u64.to_le_bytes());
        b[E_PHENTSIZE..E_PHENTSIZE + 2].copy_from_slice(&56u16.to_le_bytes());
        b[E_PHENTSIZE + 2..E_PHENTSIZE + 4].copy_from_slice(&2u16.to_le_bytes());
        let ph = |b: &mut Vec<u8>, at: usize, kind: u32, off: u64, size: u64| {
            b[at..at + 4].copy_from_slice(&kind.to_le_bytes());
            b[at + 8..at + 16].copy_from_slice(&off.to_le_bytes());
            b[at + 16..at + 24].copy_from_slice(&off.to_le_bytes());
            b[at + 32..at + 40].copy_from_slice(&size.to_le_bytes());
        };
        ph(&mut b, 64, PT_INTERP, 0x100, 12);
        ph(&mut b, 120, PT_LOAD, 0, 0x200);
        b[0x100..0x10c].copy_from_slice(b"/lib/ld.so\0\0");
        b[0x200..0x300].fill(0xdb); // debug data, outside every segment
                                    // section headers at 0x300: [null, .shstrtab at 0x380]
        b[E_SHOFF..E_SHOFF + 8].copy_from_slice(&0x300u64.to_le_bytes());
        b[E_SHNUM..E_SHNUM + 2].copy_from_slice(&2u16.to_le_bytes());
        b[E_SHNUM + 2..E_SHNUM + 4].copy_from_slice(&1u16.to_le_bytes());
        let sh = 0x340;
        b[sh..sh + 4].copy_from_slice(&1u32.to_le_bytes());
        b[sh + 24..sh + 32].copy_from_slice(&0x3c0u64.to_le_bytes());
        b[sh + 32..sh + 40].copy_from_slice(&11u64.to_le_bytes());
        b[0x3c0..0x3cb].copy_from_slice(b"\0.shstrtab\0");
        b
    }

    #[test]
    fn the_loadable_image_ends_at_the_last_segment_and_has_no_section_table() {
        let img = loadable_image(&tiny_exe()).unwrap();
        assert_eq!(img.len(), 0x200);
        assert_eq!(read_u64(&img[E_SHOFF..]), 0);
        assert_eq!(u16::from_le_bytes([img[E_SHNUM], img[E_SHNUM + 1]]), 0);
        assert_eq!(
            needed(&img).unwrap().interpreter.as_deref(),
            Some("/lib/ld.so")
        );
    }

    #[test]
    fn the_interpreter_is_read_and_a_static_object_needs_no_libraries() {
        let n = needed(&tiny_exe()).unwrap();
        assert_eq!(n.interpreter.as_deref(), Some("/lib/ld.so"));
        assert!(n.libraries.is_empty());
    }

    #[test]
    fn a_file_without_modinfo_says_so() {
        assert_eq!(modinfo(&tiny_exe()), Err(ElfError::Missing("section")));
    }

    #[test]
    fn this_test_binary_reads_as_the_loader_sees_it() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let n = needed(&exe).unwrap();
        assert!(
            n.interpreter
                .as_ref()
                .is_some_and(|i| i.contains("ld-linux")),
            "{n:?}"
        );
        assert!(
            n.libraries.iter().any(|l| l.starts_with("libc.so")),
            "{n:?}"
        );
        let img = loadable_image(&exe).unwrap();
        assert!(img.len() <= exe.len());
        assert_eq!(needed(&img).unwrap(), needed(&exe).unwrap());
    }

    #[test]
    fn truncated_and_garbage_inputs_are_errors_not_panics() {
        let exe = tiny_exe();
        for cut in [0, 3, 10, 63, 64, 100, 150, 0x150, 0x350] {
            let _ = loadable_image(&exe[..cut]);
            let _ = needed(&exe[..cut]);
            let _ = modinfo(&exe[..cut]);
        }
        let mut huge = exe.clone();
        huge[E_PHOFF..E_PHOFF + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(loadable_image(&huge).is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = loadable_image(&bytes);
            let _ = needed(&bytes);
            let _ = modinfo(&bytes);
        }

        #[test]
        fn a_mutated_header_never_panics(at in 0usize..0x400, value in proptest::num::u8::ANY) {
            let mut exe = tiny_exe();
            exe[at] = value;
            let _ = loadable_image(&exe);
            let _ = needed(&exe);
            let _ = modinfo(&exe);
        }
    }
}
