//! Wraps a host and keeps a copy of every input read — a capture is the recording of one
//! snapshot build.

use super::{EthtoolInfo, FakeHost, HostRead, LinkAttrs, NetdevInfo, ReadError, ReadErrorKind};
use crate::snapshot::Readable;
use std::cell::RefCell;

/// A [`HostRead`] that records what passes through it.
#[derive(Debug)]
pub struct Recorder<'a> {
    inner: &'a dyn HostRead,
    seen: RefCell<FakeHost>,
}

impl<'a> Recorder<'a> {
    /// A recorder over `inner` with nothing recorded yet.
    pub fn new(inner: &'a dyn HostRead) -> Self {
        Recorder {
            inner,
            seen: RefCell::new(FakeHost::new()),
        }
    }

    /// Everything read so far.
    pub fn into_recording(self) -> FakeHost {
        self.seen.into_inner()
    }

    fn note_error(&self, err: &ReadError) {
        if err.kind != ReadErrorKind::NotFound {
            let mut seen = self.seen.borrow_mut();
            seen.errors.insert(err.path.clone(), err.clone());
        }
    }
}

impl HostRead for Recorder<'_> {
    fn file(&self, path: &str) -> Result<String, ReadError> {
        let r = self.inner.file(path);
        match &r {
            Ok(text) => {
                self.seen
                    .borrow_mut()
                    .files
                    .insert(path.into(), text.clone());
            }
            Err(e) => self.note_error(e),
        }
        r
    }

    fn link(&self, path: &str) -> Result<String, ReadError> {
        let r = self.inner.link(path);
        match &r {
            Ok(t) => {
                self.seen.borrow_mut().links.insert(path.into(), t.clone());
            }
            Err(e) => self.note_error(e),
        }
        r
    }

    fn dir(&self, path: &str) -> Result<Vec<String>, ReadError> {
        let r = self.inner.dir(path);
        match &r {
            Ok(entries) => {
                self.seen
                    .borrow_mut()
                    .dirs
                    .insert(path.into(), entries.clone());
            }
            Err(e) => self.note_error(e),
        }
        r
    }

    fn ethtool(&self, iface: &str) -> EthtoolInfo {
        let info = self.inner.ethtool(iface);
        self.seen
            .borrow_mut()
            .ethtool
            .insert(iface.into(), info.clone());
        info
    }

    fn netdev(&self) -> NetdevInfo {
        let info = self.inner.netdev();
        self.seen.borrow_mut().netdev = info.clone();
        info
    }

    fn link_attrs(&self, iface: &str) -> Readable<LinkAttrs> {
        let attrs = self.inner.link_attrs(iface);
        self.seen
            .borrow_mut()
            .link_attrs
            .insert(iface.into(), attrs.clone());
        attrs
    }

    fn process_names(&self) -> Result<Vec<String>, ReadError> {
        let r = self.inner.process_names();
        if let Ok(names) = &r {
            self.seen.borrow_mut().processes = names.clone();
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_what_was_read_and_denials_but_not_absences() {
        let mut host = FakeHost::new().with_file("/proc/stat", "cpu 1 2 3 4\n");
        host.errors.insert(
            "/proc/irq/5/smp_affinity_list".into(),
            ReadError::new(
                "/proc/irq/5/smp_affinity_list",
                ReadErrorKind::Denied,
                "EACCES",
            ),
        );
        let rec = Recorder::new(&host);
        rec.file("/proc/stat").unwrap();
        rec.file("/proc/irq/5/smp_affinity_list").unwrap_err();
        rec.file("/missing").unwrap_err();
        let seen = rec.into_recording();
        assert_eq!(seen.files.len(), 1);
        assert_eq!(seen.errors.len(), 1);
        assert_eq!(seen.file("/proc/stat").unwrap(), "cpu 1 2 3 4\n");
    }
}
