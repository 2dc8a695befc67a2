//! A writer for the "newc" cpio format, the one the Linux kernel unpacks as an initramfs
//! (Documentation/driver-api/early-userspace/buffer-format.rst): per entry a 110-byte ASCII
//! header of `070701` and thirteen 8-digit hex fields, the NUL-terminated name padded to a
//! multiple of 4, then the data padded to a multiple of 4; the archive ends with an entry
//! named `TRAILER!!!`. The kernel accepts it uncompressed.

const MAGIC: &str = "070701";
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;

/// An archive being written in memory.
#[derive(Debug, Default)]
pub struct Archive {
    bytes: Vec<u8>,
    next_ino: u32,
}

impl Archive {
    /// An empty archive; entries get inode numbers from 1 (0 is the trailer's).
    pub fn new() -> Archive {
        Archive {
            bytes: Vec::new(),
            next_ino: 1,
        }
    }

    /// A directory (parents must come first, as in any cpio archive the kernel unpacks).
    pub fn dir(&mut self, path: &str) {
        self.entry(path, S_IFDIR | 0o755, 2, &[]);
    }

    /// A regular file with permission bits `mode` (e.g. `0o755`).
    pub fn file(&mut self, path: &str, mode: u32, data: &[u8]) {
        self.entry(path, S_IFREG | (mode & 0o7777), 1, data);
    }

    /// A symbolic link at `path` pointing to `target`.
    pub fn symlink(&mut self, path: &str, target: &str) {
        self.entry(path, S_IFLNK | 0o777, 1, target.as_bytes());
    }

    /// Closes the archive with its trailer and returns the bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.next_ino = 0;
        self.entry("TRAILER!!!", 0, 1, &[]);
        self.bytes
    }

    /// Size so far, bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True before the first entry.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn entry(&mut self, path: &str, mode: u32, nlink: u32, data: &[u8]) {
        let name = path.trim_start_matches('/');
        let ino = self.next_ino;
        self.next_ino += 1;
        // ino mode uid gid nlink mtime filesize devmajor devminor rdevmajor rdevminor namesize check
        let fields = [
            ino,
            mode,
            0,
            0,
            nlink,
            0,
            data.len() as u32,
            0,
            0,
            0,
            0,
            name.len() as u32 + 1,
            0,
        ];
        self.bytes.extend_from_slice(MAGIC.as_bytes());
        for f in fields {
            self.bytes.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads back (name, mode, data) triples: an independent parser of the same layout.
    fn entries(bytes: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
        let mut out = Vec::new();
        let mut at = 0;
        let field = |b: &[u8], i: usize| {
            u32::from_str_radix(std::str::from_utf8(&b[6 + 8 * i..14 + 8 * i]).unwrap(), 16)
                .unwrap()
        };
        loop {
            let h = &bytes[at..at + 110];
            assert_eq!(&h[..6], b"070701");
            let (mode, size, namesize) = (field(h, 1), field(h, 6), field(h, 11));
            let name_at = at + 110;
            let name = std::str::from_utf8(&bytes[name_at..name_at + namesize as usize - 1])
                .unwrap()
                .to_string();
            let data_at = (name_at + namesize as usize).next_multiple_of(4);
            let data = bytes[data_at..data_at + size as usize].to_vec();
            at = (data_at + size as usize).next_multiple_of(4);
            if name == "TRAILER!!!" {
                assert_eq!(at, bytes.len());
                return out;
            }
            out.push((name, mode, data));
        }
    }

    #[test]
    fn entries_round_trip_with_their_padding() {
        let mut a = Archive::new();
        a.dir("/bin");
        a.file("/bin/x", 0o755, b"hello");
        a.symlink("/bin/sh", "busybox");
        a.file("init", 0o700, b"");
        let bytes = a.finish();
        assert_eq!(bytes.len() % 4, 0);
        let e = entries(&bytes);
        assert_eq!(e[0], ("bin".into(), 0o040755, vec![]));
        assert_eq!(e[1], ("bin/x".into(), 0o100755, b"hello".to_vec()));
        assert_eq!(e[2], ("bin/sh".into(), 0o120777, b"busybox".to_vec()));
        assert_eq!(e[3], ("init".into(), 0o100700, vec![]));
    }

    #[test]
    fn the_header_is_110_ascii_bytes() {
        let mut a = Archive::new();
        a.file("a", 0o644, b"z");
        let bytes = a.finish();
        assert!(bytes[..110].iter().all(u8::is_ascii_hexdigit));
        assert_eq!(&bytes[110..112], b"a\0");
    }
}
