//! `ifconfig` (all interfaces): names, MTU and the `options=` flags (POLLING among them).

use serde::Serialize;

/// One interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IfInfo {
    /// Interface name, e.g. `em0`.
    pub name: String,
    /// The `mtu` value of the flags line, bytes; `None` when absent or not a number.
    pub mtu: Option<u32>,
    /// Flags in `options=8b<RXCSUM,TXCSUM,VLAN_MTU,POLLING>`.
    pub options: Vec<String>,
}

impl IfInfo {
    /// Whether `options=` lists POLLING, i.e. device polling (polling(4)) is on.
    pub fn polling(&self) -> bool {
        self.options.iter().any(|o| o == "POLLING")
    }
}

/// Parses `ifconfig` output: a line starting in column 0 opens an interface.
pub fn parse_ifconfig(text: &str) -> Vec<IfInfo> {
    let mut out: Vec<IfInfo> = Vec::new();
    for line in text.lines() {
        if !line.starts_with(char::is_whitespace) && line.contains(": flags=") {
            let name = line.split(':').next().unwrap_or("").to_string();
            let mtu = line
                .split_whitespace()
                .skip_while(|w| *w != "mtu")
                .nth(1)
                .and_then(|m| m.parse().ok());
            out.push(IfInfo {
                name,
                mtu,
                options: Vec::new(),
            });
        } else if let (Some(last), Some(opts)) =
            (out.last_mut(), line.trim().strip_prefix("options="))
        {
            if let Some(inner) = opts.split_once('<').and_then(|(_, r)| r.split_once('>')) {
                last.options = inner.0.split(',').map(String::from).collect();
            }
        }
    }
    // Names outside the interface-name rule would end up in the doctor's fix commands.
    out.retain(|i| nictune_core::names::check_iface(&i.name).is_ok());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interfaces_mtu_and_polling() {
        let text = "igb0: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> metric 0 mtu 1500\n\
                    \toptions=1bb<RXCSUM,TXCSUM,VLAN_MTU,POLLING>\n\
                    lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> metric 0 mtu 16384\n";
        let ifs = parse_ifconfig(text);
        assert_eq!(ifs.len(), 2);
        assert_eq!((ifs[0].name.as_str(), ifs[0].mtu), ("igb0", Some(1500)));
        assert!(ifs[0].polling());
        assert!(!ifs[1].polling());
    }
}
