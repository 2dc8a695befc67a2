//! The file operations the journal and the state directory use, behind one small trait: the
//! std implementation for real use, and [`FaultyFs`] for tests, which fails the Nth operation
//! (a write, an fsync, a rename, an open, a read…) so every injection point of `apply` and
//! `revert` can be walked.

use nictune_core::input;
use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file open for appending.
pub trait AppendFile: Debug + Send {
    /// Writes every byte (or fails, possibly after writing some).
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Waits until what was written is on disk (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
}

/// What the journal and the state directory do with files.
pub trait Fs: Debug + Send + Sync {
    /// Creates `dir` and any missing parents (the state directory, `changes/`).
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Creates `path` for appending; fails if it exists.
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>>;
    /// Opens an existing `path` for appending.
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn AppendFile>>;
    /// Makes the directory's entries durable (`fsync` of the directory).
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// The whole file as UTF-8 text (a journal); the real file system bounds its size.
    fn read_to_string(&self, path: &Path) -> io::Result<String>;
    /// The entries of `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>>;
    /// Renames `from` to `to`, replacing `to` (`rename(2)`, atomic on one file system).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Copies the contents of `from` to `to`, replacing `to`.
    fn copy(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the file at `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdFs;

#[derive(Debug)]
struct StdFile(File);

impl AppendFile for StdFile {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_all(bytes)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }
}

impl Fs for StdFs {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)?;
        Ok(Box::new(StdFile(file)))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(Box::new(StdFile(file)))
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
    /// Bounded by [`input::JOURNAL`]: the journals and the lock are the files read here.
    fn read_to_string(&self, path: &Path) -> io::Result<String> {
        input::read_file(path, input::JOURNAL).map_err(|e| match e {
            input::ReadError::Io { error, .. } => error,
            other => io::Error::new(io::ErrorKind::InvalidData, other),
        })
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        fs::read_dir(dir)?.map(|e| e.map(|e| e.path())).collect()
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn copy(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::copy(from, to).map(|_| ())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
}

/// The kinds of operation [`FaultyFs`] counts, for naming an injection point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsOp {
    /// [`Fs::create_dir_all`].
    CreateDir,
    /// [`Fs::create_new`].
    Create,
    /// [`Fs::open_append`].
    Open,
    /// [`AppendFile::write_all`] on a file the faulty file system opened.
    Write,
    /// [`AppendFile::sync_data`] on such a file.
    Sync,
    /// [`Fs::sync_dir`].
    SyncDir,
    /// [`Fs::read_to_string`].
    Read,
    /// [`Fs::list`].
    List,
    /// [`Fs::rename`].
    Rename,
    /// [`Fs::copy`].
    Copy,
    /// [`Fs::remove_file`].
    Remove,
}

/// How an injected write failure behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteFault {
    /// Nothing is written (`ENOSPC` before the first byte).
    Refused,
    /// The first half of the bytes is written, then the error (a torn line).
    Torn,
}

#[derive(Debug, Default)]
struct Counter {
    /// Operations so far, in order.
    seen: Vec<FsOp>,
    fail_at: Option<usize>,
}

/// The real file system with one injected failure: operation number `fail_at` (counting from
/// 0 over every operation of this value and the files it opened) fails with `ENOSPC`.
/// Without `fail_at` it only counts, which tells a test how many injection points there are.
#[derive(Debug, Clone)]
pub struct FaultyFs {
    counter: Arc<Mutex<Counter>>,
    write_fault: WriteFault,
}

impl FaultyFs {
    /// Counts operations and fails none.
    pub fn counting() -> FaultyFs {
        FaultyFs::failing(None, WriteFault::Refused)
    }

    /// Fails operation `fail_at`; a failing write behaves as `write_fault` says.
    pub fn failing(fail_at: Option<usize>, write_fault: WriteFault) -> FaultyFs {
        let counter = Counter {
            seen: Vec::new(),
            fail_at,
        };
        FaultyFs {
            counter: Arc::new(Mutex::new(counter)),
            write_fault,
        }
    }

    /// The operations counted so far, in order.
    pub fn seen(&self) -> Vec<FsOp> {
        self.lock().seen.clone()
    }

    /// Whether the injected failure has happened.
    pub fn fired(&self) -> bool {
        let c = self.lock();
        c.fail_at.is_some_and(|at| at < c.seen.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counter> {
        self.counter.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts one `op`; true when it is the one to fail.
    fn fails(&self, op: FsOp) -> bool {
        let mut c = self.lock();
        let index = c.seen.len();
        c.seen.push(op);
        c.fail_at == Some(index)
    }

    fn check(&self, op: FsOp) -> io::Result<()> {
        match self.fails(op) {
            true => Err(injected(op)),
            false => Ok(()),
        }
    }
}

fn injected(op: FsOp) -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        format!("injected failure of a {op:?} (no space left on device)"),
    )
}

#[derive(Debug)]
struct FaultyFile {
    fs: FaultyFs,
    file: Box<dyn AppendFile>,
}

impl AppendFile for FaultyFile {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if !self.fs.fails(FsOp::Write) {
            return self.file.write_all(bytes);
        }
        if self.fs.write_fault == WriteFault::Torn {
            self.file.write_all(&bytes[..bytes.len() / 2])?;
        }
        Err(injected(FsOp::Write))
    }
    fn sync_data(&mut self) -> io::Result<()> {
        self.fs.check(FsOp::Sync)?;
        self.file.sync_data()
    }
}

impl FaultyFs {
    fn wrap(&self, file: Box<dyn AppendFile>) -> Box<dyn AppendFile> {
        Box::new(FaultyFile {
            fs: self.clone(),
            file,
        })
    }
}

impl Fs for FaultyFs {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.check(FsOp::CreateDir)?;
        StdFs.create_dir_all(dir)
    }
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        self.check(FsOp::Create)?;
        Ok(self.wrap(StdFs.create_new(path)?))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        self.check(FsOp::Open)?;
        Ok(self.wrap(StdFs.open_append(path)?))
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.check(FsOp::SyncDir)?;
        StdFs.sync_dir(dir)
    }
    fn read_to_string(&self, path: &Path) -> io::Result<String> {
        self.check(FsOp::Read)?;
        StdFs.read_to_string(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        self.check(FsOp::List)?;
        StdFs.list(dir)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(FsOp::Rename)?;
        StdFs.rename(from, to)
    }
    fn copy(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(FsOp::Copy)?;
        StdFs.copy(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check(FsOp::Remove)?;
        StdFs.remove_file(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chosen_operation_fails_once_and_a_torn_write_leaves_half_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let fs = FaultyFs::failing(Some(2), WriteFault::Torn);
        let mut file = fs.create_new(&path).unwrap(); // op 0
        file.write_all(b"abcd\n").unwrap(); // op 1
        let err = file.write_all(b"efgh\n").unwrap_err(); // op 2: fails
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert!(fs.fired());
        file.write_all(b"ijkl\n").unwrap(); // op 3
        assert_eq!(fs.read_to_string(&path).unwrap(), "abcd\nefijkl\n");
        assert_eq!(
            fs.seen(),
            [
                FsOp::Create,
                FsOp::Write,
                FsOp::Write,
                FsOp::Write,
                FsOp::Read
            ]
        );
    }
}
