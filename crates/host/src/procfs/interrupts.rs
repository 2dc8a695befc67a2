//! `/proc/interrupts`: interrupts per source and CPU since boot.
//!
//! Layout (kernel/irq/proc.c, arch show_interrupts): a header of CPU columns (online CPUs
//! only), then one line per source. Device lines start with the IRQ number and, after the
//! counts, name the chip, the hardware IRQ (often glued to the flow handler, `5-edge`), an
//! optional `Level`/`Edge` (CONFIG_GENERIC_IRQ_SHOW_LEVEL, ARM), an optional `-name`, then the
//! actions joined by `, ` — the names drivers request, such as `eth0-TxRx-3` or
//! `virtio2-input.0`. Architecture lines start with a mnemonic (`LOC`, `CAL`, `RES`, `NMI`,
//! ...) and end with a description; `ERR` and `MIS` carry one total instead of per-CPU counts.

use crate::error::{dec, ParseError};
use serde::Serialize;

const INPUT: &str = "/proc/interrupts";

/// Which interrupt source a line counts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IrqSource {
    /// A numbered device interrupt (the `N` in `/proc/irq/N`).
    Device(u32),
    /// An architecture line such as `LOC` or `CAL`.
    Arch(String),
}

/// What an architecture line counts, for CPU accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchKind {
    /// The local timer tick (`LOC`, ARM `arch_timer` is a device line).
    Timer,
    /// Inter-processor interrupts: rescheduling, function calls, TLB shootdowns, IRQ work.
    Ipi,
    /// Everything else: NMI, spurious, thermal, hypervisor callbacks, errors.
    Other,
}

/// One line of `/proc/interrupts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqLine {
    /// The numbered device IRQ or the architecture mnemonic that starts the line.
    pub source: IrqSource,
    /// Count per CPU column, in header order; empty for total-only lines (`ERR`, `MIS`).
    pub per_cpu: Vec<u64>,
    /// Sum over CPUs, or the single number of a total-only line.
    pub total: u64,
    /// Interrupt chip, e.g. `PCI-MSIX-0000:00:03.0`, `IR-PCI-MSI`, `IO-APIC` (device lines).
    pub chip: Option<String>,
    /// Hardware IRQ and flow as printed, e.g. `1-edge` or `27 Level` (device lines).
    pub hwirq: Option<String>,
    /// Action names (device lines), or the description of an architecture line.
    pub actions: Vec<String>,
}

impl IrqLine {
    /// The IRQ number of a device line.
    pub fn irq(&self) -> Option<u32> {
        match self.source {
            IrqSource::Device(n) => Some(n),
            IrqSource::Arch(_) => None,
        }
    }

    /// The kind of an architecture line; `None` for device lines.
    pub fn arch_kind(&self) -> Option<ArchKind> {
        let IrqSource::Arch(name) = &self.source else {
            return None;
        };
        Some(match name.as_str() {
            "LOC" => ArchKind::Timer,
            "RES" | "CAL" | "TLB" | "IWI" | "IPI" => ArchKind::Ipi,
            n if n.starts_with("IPI") => ArchKind::Ipi,
            _ => ArchKind::Other,
        })
    }
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ProcInterrupts {
    /// CPU ids of the count columns.
    pub cpus: Vec<u32>,
    /// Every line in file order, device and architecture lines alike.
    pub lines: Vec<IrqLine>,
}

impl ProcInterrupts {
    /// The line of device IRQ `irq`.
    pub fn irq(&self, irq: u32) -> Option<&IrqLine> {
        self.lines.iter().find(|l| l.irq() == Some(irq))
    }

    /// Device lines with an action whose name contains `needle` (e.g. an interface name).
    pub fn by_action<'a>(&'a self, needle: &'a str) -> impl Iterator<Item = &'a IrqLine> + 'a {
        self.lines
            .iter()
            .filter(move |l| l.irq().is_some() && l.actions.iter().any(|a| a.contains(needle)))
    }

    /// The count column of CPU `cpu`, if that CPU is listed.
    pub fn column_of(&self, cpu: u32) -> Option<usize> {
        self.cpus.iter().position(|&c| c == cpu)
    }
}

/// Parses the text of `/proc/interrupts`.
pub fn parse_interrupts(text: &str) -> Result<ProcInterrupts, ParseError> {
    let (cpus, rows) = super::cpu_table(INPUT, text)?;
    let lines = rows
        .map(|(n, line)| parse_line(line, n, cpus.len()))
        .collect::<Result<_, _>>()?;
    Ok(ProcInterrupts { cpus, lines })
}

fn parse_line(line: &str, n: usize, ncpu: usize) -> Result<IrqLine, ParseError> {
    let (label, rest) = line
        .split_once(':')
        .ok_or_else(|| ParseError::new(INPUT, n, format!("no `:` in {line:?}")))?;
    let label = label.trim();
    let source = match label.parse::<u32>() {
        Ok(irq) => IrqSource::Device(irq),
        Err(_) if !label.is_empty() => IrqSource::Arch(label.to_string()),
        Err(_) => return Err(ParseError::new(INPUT, n, "empty IRQ label")),
    };
    let words: Vec<&str> = rest.split_whitespace().collect();
    let counted = words
        .iter()
        .take(ncpu)
        .take_while(|w| w.bytes().all(|b| b.is_ascii_digit()))
        .count();
    let counts = words[..counted]
        .iter()
        .map(|w| dec(INPUT, n, "count", w))
        .collect::<Result<Vec<u64>, _>>()?;
    let tail = &words[counted..];
    let mut parsed = match source {
        IrqSource::Device(_) => device_tail(tail),
        IrqSource::Arch(_) => arch_tail(tail),
    };
    parsed.total = super::total(&counts);
    parsed.per_cpu = if counted == ncpu { counts } else { Vec::new() };
    parsed.source = source;
    Ok(parsed)
}

/// Chip, hwirq/flow, optional `-name`, then comma-separated actions.
fn device_tail(words: &[&str]) -> IrqLine {
    let mut rest = words;
    let chip = take(&mut rest, |_| true);
    let mut hwirq = take(&mut rest, looks_like_hwirq);
    if let Some(level) = take(&mut rest, |w| matches!(w, "Level" | "Edge")) {
        hwirq = Some(match hwirq {
            Some(h) => format!("{h} {level}"),
            None => level,
        });
    }
    take(&mut rest, |w| w.starts_with('-') && w.len() > 1);
    let joined = rest.join(" ");
    let actions = joined
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(String::from)
        .collect();
    IrqLine {
        source: IrqSource::Device(0),
        per_cpu: Vec::new(),
        total: 0,
        chip,
        hwirq,
        actions,
    }
}

fn arch_tail(words: &[&str]) -> IrqLine {
    let description = words.join(" ");
    IrqLine {
        source: IrqSource::Arch(String::new()),
        per_cpu: Vec::new(),
        total: 0,
        chip: None,
        hwirq: None,
        actions: (!description.is_empty())
            .then_some(description)
            .into_iter()
            .collect(),
    }
}

/// `5-edge`, `524288-edge`, `27`, `0x1f` — a hardware IRQ number, maybe with a flow suffix.
fn looks_like_hwirq(word: &str) -> bool {
    let number = word.split('-').next().unwrap_or("");
    let hex = number.strip_prefix("0x").unwrap_or(number);
    !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
        && number.as_bytes()[0].is_ascii_digit()
}

/// Takes the first word when `accept` says so.
fn take(rest: &mut &[&str], accept: impl Fn(&str) -> bool) -> Option<String> {
    let (first, tail) = rest.split_first()?;
    if !accept(first) {
        return None;
    }
    *rest = tail;
    Some((*first).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../../fixtures/linux-vm-6.18/proc/interrupts");

    #[test]
    fn parses_the_captured_virtio_machine() {
        let p = parse_interrupts(FIXTURE).unwrap();
        assert_eq!(p.cpus, vec![0, 1]);
        let input = p.by_action("virtio2-input.0").next().unwrap();
        assert_eq!(input.irq(), Some(38));
        assert_eq!(input.chip.as_deref(), Some("PCI-MSIX-0000:00:03.0"));
        assert_eq!(input.hwirq.as_deref(), Some("1-edge"));
        assert_eq!(input.per_cpu.len(), 2);
        assert_eq!(input.total, input.per_cpu.iter().sum::<u64>());
        let ttys = p.irq(26).unwrap();
        assert_eq!(
            (ttys.chip.as_deref(), ttys.actions.as_slice()),
            (Some("IO-APIC"), &["ttyS0".to_string()][..])
        );
    }

    #[test]
    fn architecture_lines_are_classified() {
        let p = parse_interrupts(FIXTURE).unwrap();
        let kind = |name: &str| {
            p.lines
                .iter()
                .find(|l| l.source == IrqSource::Arch(name.into()))
                .and_then(IrqLine::arch_kind)
        };
        assert_eq!(kind("LOC"), Some(ArchKind::Timer));
        assert_eq!(kind("CAL"), Some(ArchKind::Ipi));
        assert_eq!(kind("RES"), Some(ArchKind::Ipi));
        assert_eq!(kind("NMI"), Some(ArchKind::Other));
        let loc = p
            .lines
            .iter()
            .find(|l| l.source == IrqSource::Arch("LOC".into()))
            .unwrap();
        assert_eq!(loc.actions, vec!["Local timer interrupts".to_string()]);
    }

    #[test]
    fn total_only_lines_keep_their_total() {
        let p = parse_interrupts(FIXTURE).unwrap();
        let err = p
            .lines
            .iter()
            .find(|l| l.source == IrqSource::Arch("ERR".into()))
            .unwrap();
        assert!(err.per_cpu.is_empty());
        assert_eq!(err.arch_kind(), Some(ArchKind::Other));
    }

    #[test]
    fn intel_msi_lines_with_shared_actions() {
        // Shape of an igb port on a 4-CPU host with interrupt remapping (hand-written).
        let text = "           CPU0       CPU1       CPU2       CPU3\n\
 130:        5          0          0     90210  IR-PCI-MSI 1048577-edge      eth2-TxRx-0\n\
  17:        1          2          3          4  IO-APIC  17-fasteoi   ehci_hcd:usb1, eth0\n";
        let p = parse_interrupts(text).unwrap();
        let q0 = p.irq(130).unwrap();
        assert_eq!(q0.chip.as_deref(), Some("IR-PCI-MSI"));
        assert_eq!(q0.hwirq.as_deref(), Some("1048577-edge"));
        assert_eq!(q0.actions, vec!["eth2-TxRx-0"]);
        assert_eq!(q0.per_cpu[3], 90210);
        assert_eq!(p.irq(17).unwrap().actions, vec!["ehci_hcd:usb1", "eth0"]);
        assert_eq!(p.by_action("eth2").count(), 1);
    }

    #[test]
    fn arm_gic_lines_with_level_and_offline_cpu_columns() {
        // ARM64 shape: CPU1 offline, so the header skips it; GIC prints `hwirq Level`.
        let text = "           CPU0       CPU2\n\
  11:      12345      67890     GICv3  27 Level     arch_timer\n\
  IPI0:       10         20       Rescheduling interrupts\n";
        let p = parse_interrupts(text).unwrap();
        assert_eq!(p.cpus, vec![0, 2]);
        assert_eq!(p.column_of(2), Some(1));
        let t = p.irq(11).unwrap();
        assert_eq!(t.hwirq.as_deref(), Some("27 Level"));
        assert_eq!(t.actions, vec!["arch_timer"]);
        assert_eq!(p.lines[1].arch_kind(), Some(ArchKind::Ipi));
    }

    #[test]
    fn a_line_without_colon_is_an_error_naming_the_line() {
        let err = parse_interrupts("  CPU0\n 5 7 chip x\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(parse_interrupts("").is_err());
        assert!(parse_interrupts("CPUx\n").is_err());
    }
}
