//! The shape of one catalog entry. Every field is plain data, deserialised from the embedded
//! TOML files and serialised unchanged into `nictune.explain/v1`.

use serde::{Deserialize, Serialize};

/// One tunable: a coalescing attribute, a sysctl, a module parameter, a FreeBSD tunable, ...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Canonical `family.name` key, e.g. `coalesce.rx-usecs`.
    pub key: String,
    /// One line: what the knob does.
    pub summary: String,
    /// More explanation, when one line is not enough.
    #[serde(default)]
    pub details: Option<String>,
    /// The operating system the knob exists on.
    pub os: Os,
    /// What one value applies to (a device, a queue, the host, ...).
    pub scope: Scope,
    /// For driver module parameters and driver tunables: the driver that owns the knob.
    #[serde(default)]
    pub driver: Option<String>,
    /// The type of one value.
    #[serde(rename = "type")]
    pub value_type: ValueType,
    /// Unit of the value as the user types it.
    pub unit: Unit,
    /// Module parameters take one value per port: `8000,8000`.
    #[serde(default)]
    pub per_port: bool,
    /// Names for enum values (`disabled`, `enabled`, ...) and the numbers they stand for.
    #[serde(default)]
    pub choices: Vec<Choice>,
    /// Other names: ethtool CLI name, netlink attribute, module parameter, sysctl, ...
    #[serde(default)]
    pub aliases: Vec<Alias>,
    /// First kernel / driver / OS release that has the knob, when known.
    #[serde(default)]
    pub since: Option<String>,
    /// Valid values and defaults, per driver and driver generation.
    #[serde(default)]
    pub specs: Vec<Spec>,
    /// Known disagreements between documentation and source.
    #[serde(default)]
    pub conflicts: Vec<Conflict>,
    /// Things to know before changing the value, with the condition that triggers each.
    #[serde(default)]
    pub caveats: Vec<Caveat>,
    /// How to set the knob on each OS, now and persistently.
    #[serde(default)]
    pub set: Vec<SetMethod>,
    /// Where the facts come from (`repo:path#function`, documents, datasheets).
    #[serde(default)]
    pub sources: Vec<String>,
}

/// Operating system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    /// Linux.
    Linux,
    /// FreeBSD.
    Freebsd,
}

/// What one value of a knob applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// One network device (all its queues).
    Device,
    /// One mount (a mount option, e.g. NFS `rsize`).
    Mount,
    /// One route (a route attribute, e.g. `window`).
    Route,
    /// One queue of a device.
    Queue,
    /// One NAPI instance.
    Napi,
    /// One interrupt line.
    Irq,
    /// The whole host (a sysctl).
    Host,
    /// A kernel module, one value per port.
    Module,
    /// The kernel build (a compile-time option).
    KernelBuild,
}

/// Type of one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValueType {
    /// A signed integer.
    Integer,
    /// on/off.
    Bool,
    /// One of [`Entry::choices`].
    Enum,
    /// A CPU list such as `0-3,8`.
    CpuList,
    /// A hexadecimal CPU mask such as `f` or `ff,00000000` (32-bit groups).
    CpuMask,
    /// A DIM moderation profile: up to 5 `usec,pkts[,comps]` entries joined by `_`.
    DimProfile,
    /// Three integers, minimum, default and maximum (`tcp_rmem`: `4096 131072 6291456`).
    IntegerTriple,
}

/// Unit of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// No unit (flags, enums, CPU sets).
    None,
    /// Microseconds.
    Usecs,
    /// Nanoseconds.
    Nsecs,
    /// Seconds.
    Secs,
    /// Interrupts per second.
    IntsPerSec,
    /// Packets per second.
    PktsPerSec,
    /// Hardware delay-timer ticks of 1.024 µs (e1000 RDTR/RADV/TIDV/TADV).
    #[serde(rename = "ticks-1024ns")]
    Ticks1024ns,
    /// Frames (packets).
    Frames,
    /// Packets.
    Packets,
    /// Descriptors.
    Descriptors,
    /// Bytes.
    Bytes,
    /// A plain count (polls, clusters, queues, ...).
    Count,
    /// Percent.
    Percent,
    /// Clock ticks per second.
    Hz,
}

impl Unit {
    /// Short symbol shown after numbers.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Usecs => "µs",
            Unit::Nsecs => "ns",
            Unit::Secs => "s",
            Unit::IntsPerSec => "interrupts/s",
            Unit::PktsPerSec => "packets/s",
            Unit::Ticks1024ns => "ticks of 1.024 µs",
            Unit::Frames => "frames",
            Unit::Packets => "packets",
            Unit::Descriptors => "descriptors",
            Unit::Bytes => "bytes",
            Unit::Count => "",
            Unit::Percent => "%",
            Unit::Hz => "Hz",
        }
    }
}

/// A named value of an enum knob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    /// The name the user may type, e.g. `busy-poll`.
    pub name: String,
    /// The number the kernel uses for it, also accepted as input.
    pub number: i64,
    /// What it means.
    #[serde(default)]
    pub meaning: Option<String>,
}

/// Another name of a knob and where that name is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alias {
    /// The name, e.g. `rx-usecs` or `ETHTOOL_A_COALESCE_RX_USECS`.
    pub name: String,
    /// Where the name comes from.
    pub kind: AliasKind,
}

/// Where an alias comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AliasKind {
    /// `ethtool -C/-G/-L/-K` argument name.
    EthtoolCli,
    /// ethtool or netdev netlink attribute.
    Netlink,
    /// Legacy ioctl struct field.
    Ioctl,
    /// Kernel module parameter.
    ModuleParam,
    /// sysctl name.
    Sysctl,
    /// sysfs or procfs file name.
    Sysfs,
    /// FreeBSD loader tunable or kernel option.
    Tunable,
    /// systemd `.link` key.
    SystemdLink,
    /// NetworkManager setting.
    Networkmanager,
    /// A common short name.
    Short,
    /// The key's earlier canonical spelling, still read (`channels.rx` before `channel.rx`).
    Former,
}

/// Valid values and defaults for one driver (or any driver) and one driver generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Driver this applies to; `None` = the kernel's generic limits, any driver.
    #[serde(default)]
    pub driver: Option<String>,
    /// Driver or kernel generation id (e.g. `7.3+`, `7.0`); `None` = every generation.
    #[serde(default)]
    pub generation: Option<String>,
    /// Whether this is the generation assumed when none is given.
    #[serde(default = "yes")]
    pub current: bool,
    /// Device models (substring match) this applies to; empty = all devices of the driver.
    #[serde(default)]
    pub devices: Vec<String>,
    /// Human label, e.g. `e1000 7.3.x and later`.
    pub label: String,
    /// Accepted integer intervals, inclusive.
    #[serde(default)]
    pub ranges: Vec<[i64; 2]>,
    /// Accepted values with a special meaning outside (or inside) the ranges.
    #[serde(default)]
    pub specials: Vec<Special>,
    /// Default value(s), each with where it comes from (several when sources disagree).
    #[serde(default)]
    pub defaults: Vec<Claim>,
    /// How the value maps to hardware units.
    #[serde(default)]
    pub conversion: Option<ConversionKind>,
    /// What the driver does with a value outside the ranges.
    #[serde(default)]
    pub on_invalid: Option<String>,
    /// Anything else about this driver's handling.
    #[serde(default)]
    pub note: Option<String>,
    /// Where the range and defaults come from.
    pub source: String,
}

fn yes() -> bool {
    true
}

/// A value with a special meaning, e.g. `InterruptThrottleRate=1` → dynamic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Special {
    /// The value.
    pub value: i64,
    /// What it selects.
    pub meaning: String,
}

/// A value as one source states it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The value as stated (kept as text: `0x20`, `2 jiffies`, ...).
    pub value: String,
    /// What kind of source states it.
    pub kind: SourceKind,
    /// Which source: `repo:path#symbol`, document name, manual section.
    pub source: String,
    /// Condition or comment, e.g. `if FLAG2_DMA_BURST`.
    #[serde(default)]
    pub note: Option<String>,
}

/// Kind of source behind a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// Driver or kernel source code.
    Code,
    /// Official documentation (kernel docs, man pages, vendor guides).
    Doc,
    /// Hardware datasheet or developer's manual.
    Datasheet,
    /// A comment in the source that disagrees with the code next to it.
    Comment,
    /// Secondary material (mirrors, blog posts, vendor manuals copying old values).
    Secondary,
    /// Measured on a real system.
    Measured,
}

/// A known disagreement between sources, with every side's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conflict {
    /// What the sources disagree about, e.g. `default`.
    pub topic: String,
    /// Each side.
    pub claims: Vec<Claim>,
    /// Which side to believe and why.
    #[serde(default)]
    pub resolution: Option<String>,
}

/// Something to know before using a value, and when it applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Caveat {
    /// `warning` counts as a problem in `check`; `note` is shown only.
    pub severity: Severity,
    /// When the caveat applies; an empty condition always applies.
    #[serde(default)]
    pub when: Condition,
    /// What can happen.
    pub text: String,
    /// Where it comes from.
    pub source: String,
    /// Another setting that, checked together with this one, makes the caveat moot.
    #[serde(default)]
    pub unless: Option<Guard>,
}

/// "Unless KEY is also set above N": e.g. `napi.defer-hard-irqs` needs
/// `napi.gro-flush-timeout` > 0 to have any effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guard {
    /// Canonical key of the other setting.
    pub key: String,
    /// The other setting's value must be above this.
    pub value_above: i64,
}

/// How serious a caveat is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; not a problem with the value.
    Note,
    /// The value may cause trouble; `check` exits 1.
    Warning,
}

/// When a caveat applies. Value tests are alternatives (any one matches); the value part,
/// the driver lists, the device list and the other setting must all match. An empty
/// condition always applies.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// Value strictly greater than this.
    #[serde(default)]
    pub value_above: Option<i64>,
    /// Value strictly less than this.
    #[serde(default)]
    pub value_below: Option<i64>,
    /// Value equal to one of these.
    #[serde(default)]
    pub value_in: Vec<i64>,
    /// Value different from this.
    #[serde(default)]
    pub value_not: Option<i64>,
    /// Only on these drivers.
    #[serde(default)]
    pub drivers: Vec<String>,
    /// Only on drivers outside this list (a feature only the listed drivers have).
    #[serde(default)]
    pub drivers_not: Vec<String>,
    /// Value strictly greater than this other setting's, when the two are checked together
    /// (`kern.polling.each_burst` above `kern.polling.burst_max`).
    #[serde(default)]
    pub above_setting: Option<String>,
    /// Only on device models containing one of these strings.
    #[serde(default)]
    pub devices: Vec<String>,
}

/// One way of setting a knob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetMethod {
    /// Operating system.
    pub os: Os,
    /// Mechanism.
    pub via: Via,
    /// Command or configuration line; placeholders `{dev}`, `{value}`, `{n}` (port/unit
    /// number), `{queue}`, `{irq}`, `{napi_id}`, `{ifindex}`.
    pub template: String,
    /// Survives a reboot.
    pub persistent: bool,
    /// Conditions, side effects.
    #[serde(default)]
    pub note: Option<String>,
}

impl SetMethod {
    /// The template with `{value}` and `{dev}` filled in (other placeholders stay).
    pub fn render(&self, value: &str, dev: &str) -> String {
        self.template
            .replace("{value}", value)
            .replace("{dev}", dev)
    }
}

/// Mechanism of a [`SetMethod`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// The `ethtool` command.
    Ethtool,
    /// ethtool generic netlink message.
    EthtoolNetlink,
    /// netdev generic netlink (`napi-set`).
    NetdevNetlink,
    /// A sysfs or procfs file.
    Sysfs,
    /// `sysctl -w` / `sysctl` (FreeBSD).
    Sysctl,
    /// `/etc/sysctl.conf` or `/etc/sysctl.d/*.conf`.
    SysctlConf,
    /// `/etc/modprobe.d/*.conf`.
    ModprobeConf,
    /// FreeBSD `/boot/loader.conf`.
    LoaderConf,
    /// FreeBSD `/etc/rc.conf`.
    RcConf,
    /// FreeBSD kernel configuration file.
    KernelConfig,
    /// FreeBSD `ifconfig`.
    Ifconfig,
    /// FreeBSD `cpuset`.
    Cpuset,
    /// systemd `.link` file.
    SystemdLink,
    /// NetworkManager connection setting.
    Networkmanager,
    /// A udev rule (`/etc/udev/rules.d/*.rules`).
    UdevRule,
    /// `ynl` or another netdev-netlink client.
    Ynl,
    /// A mount option: `mount -o` and the options field of `/etc/fstab`.
    Fstab,
    /// An `ip route` attribute.
    IpRoute,
}

/// How a value maps to hardware or other units (see [`super::convert`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConversionKind {
    /// Interrupts/s → e1000-class ITR register in 256 ns units.
    #[serde(rename = "itr-rate-256ns")]
    ItrRate256ns,
    /// Interrupts/s → ixgbe EITR: 256 ns arithmetic in the driver, 2 µs hardware steps.
    IxgbeItrRate,
    /// Delay-timer ticks of 1.024 µs → time.
    #[serde(rename = "ticks-1024ns")]
    Ticks1024ns,
    /// ethtool µs → igb `itr_val` in 0.25 µs steps.
    IgbUsecs,
    /// ethtool µs → ixgbe EITR in 2 µs steps.
    IxgbeUsecs,
    /// µs between interrupts → interrupts/s.
    UsecsToRate,
    /// Interrupts/s → µs between interrupts.
    RateToUsecs,
    /// ns → µs.
    NsecsToUsecs,
    /// FreeBSD em µs tunable → 1.024 µs register ticks and back.
    EmUsecsToTicks,
    /// Clock rate → tick length.
    HzToTick,
}
