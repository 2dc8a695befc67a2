//! The doctor: rules that read a snapshot (and rates when sampled) and return findings with
//! evidence, a plain explanation and the fix as commands for the OS. Pure.

mod finding;
pub mod freebsd;
pub mod linux;
pub mod spread;

pub use finding::{render, Evidence, Finding, Severity};

/// True when any finding is a warning or worse (`doctor` exits 1).
pub fn has_problems(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity >= Severity::Warning)
}
