//! The apply engine's view of one testbed namespace: a [`HostWrite`] whose calls run on a
//! dedicated thread that entered the namespace (network namespace plus its own mount
//! namespace with a fresh `/sys`, so `/sys/class/net` lists the namespace's veth end).
//!
//! Only that thread changes namespaces: the main thread, which journals and runs the bench
//! engine's threads, stays where it started.

use super::LinuxWriter;
use crate::netns::{self, NetnsError};
use nictune_host::write::identity::{IfaceId, IrqActions};
use nictune_host::write::setting::Setting;
use nictune_host::write::value::HostValue;
use nictune_host::write::{HostError, HostErrorKind, HostWrite, Op};
use std::sync::mpsc;
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce(&mut LinuxWriter) + Send>;

/// A [`LinuxWriter`] living on its own thread inside one named network namespace.
#[derive(Debug)]
pub struct NsHost {
    netns: String,
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl NsHost {
    /// Starts the thread and enters `netns` on it.
    pub fn start(netns: &str) -> Result<NsHost, NetnsError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, entered) = mpsc::channel();
        let name = netns.to_string();
        let thread = std::thread::Builder::new()
            .name(format!("ns {netns}"))
            .spawn(move || {
                if let Err(e) = netns::enter(&name) {
                    let _ = ready.send(Err(e));
                    return;
                }
                let _ = ready.send(Ok(()));
                let mut host = LinuxWriter::live();
                for job in queue {
                    job(&mut host);
                }
            })
            .map_err(|e| NetnsError {
                action: "entering",
                name: netns.to_string(),
                step: "starting its thread",
                source: e,
            })?;
        let host = NsHost {
            netns: netns.to_string(),
            jobs: Some(jobs),
            thread: Some(thread),
        };
        entered.recv().map_err(|_| NetnsError {
            action: "entering",
            name: netns.to_string(),
            step: "waiting for its thread",
            source: std::io::Error::other("the thread ended before entering"),
        })??;
        Ok(host)
    }

    /// The namespace's name.
    pub fn netns(&self) -> &str {
        &self.netns
    }

    /// Runs `f` on the namespace's thread and waits for its answer.
    fn call<R: Send + 'static>(
        &self,
        op: Op,
        what: &str,
        f: impl FnOnce(&mut LinuxWriter) -> Result<R, HostError> + Send + 'static,
    ) -> Result<R, HostError> {
        let (answer, reply) = mpsc::channel();
        let job: Job = Box::new(move |host| {
            let _ = answer.send(f(host));
        });
        let gone = || HostError {
            op,
            setting: what.to_string(),
            kind: HostErrorKind::NotFound(format!("the thread inside {} ended", self.netns)),
        };
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send(job).map_err(|_| gone())?;
        reply.recv().map_err(|_| gone())?
    }
}

impl Drop for NsHost {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl HostWrite for NsHost {
    fn napi_count(&mut self, iface: &str) -> Result<u32, HostError> {
        let name = iface.to_string();
        self.call(Op::List, iface, move |h| h.napi_count(&name))
    }

    fn queue_counts(&mut self, iface: &str) -> Result<(u32, u32), HostError> {
        let name = iface.to_string();
        self.call(Op::List, iface, move |h| h.queue_counts(&name))
    }

    fn read(&mut self, setting: &Setting) -> Result<HostValue, HostError> {
        let s = setting.clone();
        self.call(Op::Read, &setting.to_string(), move |h| h.read(&s))
    }

    fn limit(&mut self, setting: &Setting) -> Result<Option<u64>, HostError> {
        let s = setting.clone();
        self.call(Op::Read, &setting.to_string(), move |h| h.limit(&s))
    }

    fn write(&mut self, setting: &Setting, value: &HostValue) -> Result<(), HostError> {
        let (s, v) = (setting.clone(), value.clone());
        self.call(Op::Write, &setting.to_string(), move |h| h.write(&s, &v))
    }

    fn write_all(&mut self, items: &[(&Setting, &HostValue)]) -> Result<(), HostError> {
        let Some((first, _)) = items.first() else {
            return Ok(());
        };
        let owned: Vec<(Setting, HostValue)> = items
            .iter()
            .map(|(s, v)| ((*s).clone(), (*v).clone()))
            .collect();
        self.call(Op::Write, &first.to_string(), move |h| {
            let refs: Vec<(&Setting, &HostValue)> = owned.iter().map(|(s, v)| (s, v)).collect();
            h.write_all(&refs)
        })
    }

    fn iface_id(&mut self, iface: &str) -> Result<IfaceId, HostError> {
        let name = iface.to_string();
        self.call(Op::Read, iface, move |h| h.iface_id(&name))
    }

    fn irq_actions(&mut self) -> Result<IrqActions, HostError> {
        self.call(Op::Read, "irq", HostWrite::irq_actions)
    }

    fn irqs_of(&mut self, iface: &str) -> Result<Vec<u32>, HostError> {
        let name = iface.to_string();
        self.call(Op::List, iface, move |h| h.irqs_of(&name))
    }
}
