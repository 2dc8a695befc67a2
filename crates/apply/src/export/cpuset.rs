//! A FreeBSD shell script binding interrupts to CPUs with `cpuset -l LIST -x IRQ` (cpuset(1)),
//! for queue binding; run it from rc.local or a small rc.d script.

use super::{partition, Item, Omitted};

/// Path, body and omissions. The export adds the `#!/bin/sh` line above the header.
pub fn render(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| match (i.key.as_str(), i.instance) {
        ("irq.affinity", Some(_)) => Ok(()),
        ("irq.affinity", None) => Err("needs an IRQ number (irq.affinity@N)".into()),
        _ => Err(super::kind_reason(i).into()),
    });
    let mut out = String::from("set -e\n");
    for item in kept {
        let irq = item.instance.expect("kept");
        out += &format!("cpuset -l {} -x {irq}\n", item.value.plain());
    }
    ("/usr/local/etc/nictune-cpuset.sh".into(), out, omitted)
}

#[cfg(test)]
mod tests {
    use super::super::tests::items;

    #[test]
    fn one_cpuset_line_per_interrupt() {
        let (_, text, _) = super::render(&items());
        assert_eq!(text, "set -e\ncpuset -l 2-3 -x 45\n");
    }
}
