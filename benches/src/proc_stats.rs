//! What a process costs, read from `/proc`: CPU time and context switches summed over its
//! threads, resident memory now and at its peak.

use std::fs;

/// CPU and context-switch counters of a process, summed over its live threads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    /// Nanoseconds on CPU (schedstat's first field).
    pub cpu_ns: u64,
    /// Voluntary plus involuntary context switches.
    pub switches: u64,
}

impl Counters {
    /// Reads the counters of `pid`; a thread that exits meanwhile is skipped.
    pub fn read(pid: u32) -> Counters {
        let mut total = Counters::default();
        let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
            return total;
        };
        for task in tasks.flatten() {
            let path = task.path();
            if let Ok(s) = fs::read_to_string(path.join("schedstat")) {
                total.cpu_ns += s
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
            if let Ok(s) = fs::read_to_string(path.join("status")) {
                for line in s.lines() {
                    if line.starts_with("voluntary_ctxt_switches:")
                        || line.starts_with("nonvoluntary_ctxt_switches:")
                    {
                        total.switches += line
                            .split_whitespace()
                            .nth(1)
                            .and_then(|v| v.parse::<u64>().ok())
                            .unwrap_or(0);
                    }
                }
            }
        }
        total
    }

    /// The counters of `pid` and every process below it.
    pub fn read_tree(pid: u32) -> Counters {
        with_descendants(pid)
            .into_iter()
            .map(Counters::read)
            .fold(Counters::default(), |a, b| Counters {
                cpu_ns: a.cpu_ns + b.cpu_ns,
                switches: a.switches + b.switches,
            })
    }

    /// The difference since `earlier`.
    pub fn since(self, earlier: Counters) -> Counters {
        Counters {
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
            switches: self.switches.saturating_sub(earlier.switches),
        }
    }
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
pub fn memory_kib(pid: u32) -> (u64, u64) {
    let Ok(s) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return (0, 0);
    };
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The process and all its descendants (an `npx` or `uv run` launcher's real server included).
pub fn with_descendants(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let parent = all[i];
        if let Ok(tasks) = fs::read_dir(format!("/proc/{parent}/task")) {
            for task in tasks.flatten() {
                if let Ok(s) = fs::read_to_string(task.path().join("children")) {
                    all.extend(s.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
                }
            }
        }
        i += 1;
    }
    all
}
