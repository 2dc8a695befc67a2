//! Which CPU services each (port, queue) interrupt vector.
//!
//! FreeBSD igb (8.x) binds queue N of every port to CPU N, so one busy CPU slows the same
//! queue on all ports; the Case 5 fix gives every (port, queue) vector a CPU of its own
//! (`cpuset -l <cpu> -x <irq>`). An explicit map is read from text, one vector per line:
//! `igb7:que 0 12` (the `vmstat -i` name, then the CPU) or the field case's own
//! `igb7:0:12` (interface, queue, CPU); `#` starts a comment.

/// One interrupt vector: a queue of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Vector {
    /// Port (interface unit number).
    pub port: u32,
    /// Queue on that port.
    pub queue: u32,
}

/// A binding policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// igb default: queue N of every port on CPU N (mod the CPU count).
    Default,
    /// Every vector on its own CPU, in port-major order (wrapping when vectors outnumber
    /// CPUs).
    Spread,
    /// An explicit map; vectors not listed fall back to the default.
    Explicit(Vec<(Vector, u32)>),
}

impl Binding {
    /// The CPU of `v` on a host of `ncpus` CPUs whose ports have `queues` queues each.
    pub fn cpu(&self, v: Vector, queues: u32, ncpus: u32) -> u32 {
        let ncpus = ncpus.max(1);
        match self {
            Binding::Default => v.queue % ncpus,
            Binding::Spread => (v.port * queues + v.queue) % ncpus,
            Binding::Explicit(map) => map
                .iter()
                .find(|(m, _)| *m == v)
                .map_or(v.queue % ncpus, |&(_, cpu)| cpu),
        }
    }
}

/// A line of a binding map that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("binding map line {line}: {problem} in {text:?}; expected `<driver><unit>:que <queue> <cpu>` such as `igb7:que 0 12`, or `<driver><unit>:<queue>:<cpu>` such as `igb7:0:12`")]
pub struct BindingParseError {
    /// 1-based line number.
    pub line: usize,
    /// The line.
    pub text: String,
    /// What was wrong.
    pub problem: &'static str,
}

/// Parses an explicit map for `driver` (e.g. `igb`), checking CPUs against `ncpus`.
pub fn parse_map(text: &str, driver: &str, ncpus: u32) -> Result<Binding, BindingParseError> {
    let mut map = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |problem| BindingParseError {
            line: i + 1,
            text: raw.to_owned(),
            problem,
        };
        map.push(parse_line(line, driver, ncpus).map_err(err)?);
    }
    Ok(Binding::Explicit(map))
}

fn parse_line(line: &str, driver: &str, ncpus: u32) -> Result<(Vector, u32), &'static str> {
    // `igb7:0:12` is `igb7:que 0 12` written the field case's way.
    let colons: String;
    let line = match line.split(':').collect::<Vec<_>>()[..] {
        [name, queue, cpu] if !line.contains(char::is_whitespace) => {
            colons = format!("{name}:que {queue} {cpu}");
            colons.as_str()
        }
        _ => line,
    };
    let mut words = line.split_whitespace();
    let name = words.next().ok_or("missing interface")?;
    let unit = name
        .strip_prefix(driver)
        .and_then(|rest| rest.strip_suffix(":que"))
        .ok_or("interface is not `<driver><unit>:que`")?;
    let port = unit.parse().map_err(|_| "interface unit is not a number")?;
    let queue = words
        .next()
        .ok_or("missing queue")?
        .parse()
        .map_err(|_| "queue is not a number")?;
    let cpu: u32 = words
        .next()
        .ok_or("missing CPU")?
        .parse()
        .map_err(|_| "CPU is not a number")?;
    if words.next().is_some() {
        return Err("trailing words");
    }
    if cpu >= ncpus {
        return Err("CPU beyond the host's CPU count");
    }
    Ok((Vector { port, queue }, cpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(port: u32, queue: u32) -> Vector {
        Vector { port, queue }
    }

    #[test]
    fn default_puts_the_same_queue_of_every_port_on_one_cpu() {
        let b = Binding::Default;
        assert_eq!(b.cpu(v(0, 2), 4, 24), 2);
        assert_eq!(b.cpu(v(9, 2), 4, 24), 2);
    }

    #[test]
    fn spread_gives_each_vector_its_own_cpu() {
        let b = Binding::Spread;
        let cpus: Vec<u32> = (0..6)
            .flat_map(|p| (0..4).map(move |q| v(p, q)))
            .map(|x| b.cpu(x, 4, 24))
            .collect();
        assert_eq!(cpus, (0..24).collect::<Vec<_>>());
        assert_eq!(b.cpu(v(6, 0), 4, 24), 0, "wraps after 24 vectors");
    }

    #[test]
    fn explicit_map_from_the_case_5_fix() {
        let text = "# igb7 on 12-15\nigb7:que 0 12\nigb7:que 1 13\n\nigb9:que 3 23 # last\n";
        let b = parse_map(text, "igb", 24).unwrap();
        assert_eq!(b.cpu(v(7, 1), 4, 24), 13);
        assert_eq!(b.cpu(v(9, 3), 4, 24), 23);
        assert_eq!(b.cpu(v(0, 1), 4, 24), 1, "unlisted: driver default");
    }

    #[test]
    fn the_field_case_map_format_reads_the_same() {
        let colons = parse_map("igb7:0:12\nigb7:1:13 # next\n", "igb", 24).unwrap();
        let words = parse_map("igb7:que 0 12\nigb7:que 1 13\n", "igb", 24).unwrap();
        assert_eq!(colons, words);
        let e = parse_map("igb7:0:24", "igb", 24).unwrap_err();
        assert_eq!(e.problem, "CPU beyond the host's CPU count");
        assert!(e.to_string().contains("igb7:0:12"), "{e}");
        let e = parse_map("igb7:x:1", "igb", 24).unwrap_err();
        assert_eq!(e.problem, "queue is not a number");
    }

    #[test]
    fn bad_lines_name_the_line_and_the_problem() {
        let e = parse_map("igb7:que 0 12\nem0:que 0 1\n", "igb", 24).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("igb7:que 0 12"), "{e}");
        let e = parse_map("igb1:que 0 24", "igb", 24).unwrap_err();
        assert_eq!(e.problem, "CPU beyond the host's CPU count");
        assert_eq!(
            parse_map("igbx:que 0 1", "igb", 24).unwrap_err().problem,
            "interface unit is not a number"
        );
        assert_eq!(
            parse_map("igb1:que 0", "igb", 24).unwrap_err().problem,
            "missing CPU"
        );
    }
}
