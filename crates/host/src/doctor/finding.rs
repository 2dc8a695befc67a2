//! A doctor finding: what, how bad, on what, the numbers read, why it matters, how to fix.

use serde::Serialize;

/// How bad a finding is. `Warning` and `Error` make `doctor` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing, not by itself a problem (it may still carry a fix); alone it leaves
    /// `doctor`'s exit status 0.
    Info,
    /// Likely costs latency, CPU or packets and worth changing; makes `doctor` exit 1.
    Warning,
    /// A setting is not in effect or a resource is too short to work (e.g. receive rings cannot be
    /// filled); makes `doctor` exit 1.
    Error,
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One number (or short fact) read from the host, named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// What the number is, e.g. `rx vector interrupts/s`, `rx-usecs (read back)`.
    pub what: String,
    /// The value as printed, unit included where it has one.
    pub value: String,
}

/// One finding (`nictune.doctor/v1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable rule id, e.g. `irq-pileup`, `mbuf-clusters-limit`.
    pub id: &'static str,
    /// How bad; decides the exit status.
    pub severity: Severity,
    /// What it is about: an interface, an IRQ, a CPU, the host.
    pub subject: String,
    /// The numbers read that triggered the rule, in the order the rule added them.
    pub evidence: Vec<Evidence>,
    /// Why it matters, in plain sentences; empty until `explain` sets it.
    pub explanation: String,
    /// Commands for this OS that fix it, in order.
    pub fix: Vec<String>,
}

impl Finding {
    /// A finding of rule `id` about `subject`, with no evidence, explanation or fix yet.
    pub fn new(id: &'static str, severity: Severity, subject: impl Into<String>) -> Self {
        Finding {
            id,
            severity,
            subject: subject.into(),
            evidence: Vec::new(),
            explanation: String::new(),
            fix: Vec::new(),
        }
    }

    /// Adds one piece of evidence.
    pub fn evidence(mut self, what: impl Into<String>, value: impl ToString) -> Self {
        self.evidence.push(Evidence {
            what: what.into(),
            value: value.to_string(),
        });
        self
    }

    /// Sets the explanation, replacing any earlier one.
    pub fn explain(mut self, text: impl Into<String>) -> Self {
        self.explanation = text.into();
        self
    }

    /// Appends one fix command.
    pub fn fix(mut self, command: impl Into<String>) -> Self {
        self.fix.push(command.into());
        self
    }
}

/// Human text of a list of findings.
pub fn render(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "no findings\n".into();
    }
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!("{:<8} {}  {}\n", f.severity, f.id, f.subject));
        for e in &f.evidence {
            out.push_str(&format!("  {}: {}\n", e.what, e.value));
        }
        if !f.explanation.is_empty() {
            out.push_str(&format!("  why: {}\n", f.explanation));
        }
        if !f.fix.is_empty() {
            out.push_str("  fix:\n");
            for c in &f.fix {
                out.push_str(&format!("    {c}\n"));
            }
        }
        out.push('\n');
    }
    out
}
