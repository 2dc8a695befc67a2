//! `nictune tune --testbed [veth]`: the workload checked, then one call into
//! [`nictune_live::tune::testbed`] (build the testbed, hold the change lock, run the loop,
//! remove the testbed whatever happens), and the results written and shown.

use super::{finish, hold_error, session_error, Checked, Workload};
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::Result;
use nictune_bench::TestKind;
use nictune_core::error::Hinted;
use nictune_live::tune::testbed::{tune_testbed, TestbedError, TestbedTune};
use nictune_tune::session::TuneConfig;
use std::path::Path;

/// Runs a tune on a fresh testbed with journals under `state_dir`.
pub fn run_testbed(
    c: &Checked,
    config: &TuneConfig,
    state_dir: &Path,
    ctx: &Ctx,
) -> Result<Outcome> {
    let t = TestbedTune {
        config,
        test: test_kind(&c.workload)?,
        predict: c.predict,
        state_dir,
        privilege: ctx.privilege,
        cpus: super::testbed_cpus(),
        out: &c.out,
    };
    let progress = ctx.progress();
    let fail = |e| testbed_error(e, state_dir);
    let end = tune_testbed(&t, progress.as_ref()).map_err(fail)?;
    let shown = finish(c, &end.outcome.map_err(fail)?, ctx)?;
    end.removed.hint(
        "the tune finished but its testbed namespaces could not be removed; `ip netns list` \
         shows them",
    )?;
    Ok(shown)
}

/// A failed testbed tune with what to do next.
fn testbed_error(e: TestbedError, state_dir: &Path) -> anyhow::Error {
    let hint = match e {
        TestbedError::Hold(e) => return hold_error(e, state_dir),
        TestbedError::Session(e) => return session_error(e),
        TestbedError::Ends(e) => return anyhow::Error::new(e),
        // Transparent: the chain reads as the testbed's own error.
        TestbedError::Create(_) => {
            "the testbed needs root and a kernel with network namespaces and veth"
        }
        TestbedError::NotInNapiMode(_) => {
            "this kernel's veth needs GRO on (and TSO off) to run its NAPI instances; tune a \
             real interface with --iface instead"
        }
    };
    anyhow::Error::new(Hinted::new(e, hint))
}

/// The bench test for a workload; mixed and workload files are not measured live yet.
pub(super) fn test_kind(w: &Workload) -> Result<TestKind> {
    match w {
        Workload::Rr => Ok(TestKind::Rr),
        Workload::Stream => Ok(TestKind::Stream),
        Workload::Mixed | Workload::File(_) => {
            let what = match w {
                Workload::File(p) => p.display().to_string(),
                _ => "mixed".into(),
            };
            let message =
                format!("--workload {what}: a live tune measures rr or stream in this build");
            Err(anyhow::Error::new(Hinted::new(
                message,
                "use --workload rr (latency) or --workload stream (throughput)",
            )))
        }
    }
}
