//! `kern.sched.topology_spec` (in `sysctl -a` output): which CPUs are SMT siblings. The
//! value is XML spread over many lines; a `<cpu count=".." mask="..">0, 12</cpu>` list
//! followed, before the next list, by `<flag name="SMT">` or `<flag name="THREAD">` is one
//! core's hardware threads.

use crate::cpuset::CpuSet;

/// SMT sibling sets, one per core that has more than one thread.
pub fn parse_smt_groups(sysctl_text: &str) -> Vec<CpuSet> {
    let Some(start) = sysctl_text.find("kern.sched.topology_spec:") else {
        return Vec::new();
    };
    let spec = &sysctl_text[start..];
    let spec = &spec[..spec.find("</groups>").unwrap_or(spec.len())];
    let mut out = Vec::new();
    let mut rest = spec;
    while let Some(at) = rest.find("<cpu ") {
        rest = &rest[at..];
        let Some(open_end) = rest.find('>') else {
            break;
        };
        let Some(close) = rest.find("</cpu>") else {
            break;
        };
        let list = &rest[open_end + 1..close];
        rest = &rest[close..];
        let next = rest.find("<cpu ").unwrap_or(rest.len());
        let scope = &rest[..next];
        let smt = scope.contains("name=\"SMT\"") || scope.contains("name=\"THREAD\"");
        let cpus: CpuSet = list
            .split(',')
            .filter_map(|c| c.trim().parse().ok())
            .collect();
        if smt && cpus.len() > 1 {
            out.push(cpus);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_groups_are_sibling_sets() {
        let text = "hw.ncpu: 4\nkern.sched.topology_spec: <groups>\n\
 <group level=\"1\" cache-level=\"0\">\n  <cpu count=\"4\" mask=\"f\">0, 1, 2, 3</cpu>\n  <children>\n\
  <group level=\"2\" cache-level=\"1\">\n   <cpu count=\"2\" mask=\"3\">0, 1</cpu>\n\
   <flags><flag name=\"THREAD\">THREAD group</flag><flag name=\"SMT\">SMT group</flag></flags>\n  </group>\n\
  <group level=\"2\" cache-level=\"1\">\n   <cpu count=\"2\" mask=\"c\">2, 3</cpu>\n\
   <flags><flag name=\"THREAD\">THREAD group</flag></flags>\n  </group>\n  </children>\n </group>\n</groups>\n\
kern.other: 1\n";
        let groups = parse_smt_groups(text);
        assert_eq!(
            groups.iter().map(CpuSet::to_list).collect::<Vec<_>>(),
            ["0-1", "2-3"]
        );
        assert!(parse_smt_groups("hw.ncpu: 4\n").is_empty());
    }
}
