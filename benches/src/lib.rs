//! Shared pieces of the benchmark binaries: the raw limit's message handling, process
//! measurements read from `/proc`, the clients' timing, and CPU pinning.

pub mod client_timing;
pub mod proc_stats;
pub mod raw;

/// Pins the calling thread (and what it spawns afterwards) to one CPU.
pub fn pin_to_cpu(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// This process's own CPU time (user + system, all threads), in microseconds.
pub fn self_cpu_us() -> u64 {
    // SAFETY: getrusage writes a rusage struct we own.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(usage.ru_utime) + us(usage.ru_stime)
}

/// How long a client benchmark measures each scenario: at least `min_calls` calls and
/// `min_secs`, at most `max_secs` (from `BENCH_MIN_CALLS`, `BENCH_MIN_SECS`, `BENCH_MAX_SECS`).
#[derive(Debug, Clone, Copy)]
pub struct StopRule {
    /// Fewest calls.
    pub min_calls: u64,
    /// Fewest seconds.
    pub min_secs: f64,
    /// Most seconds.
    pub max_secs: f64,
}

impl StopRule {
    /// Reads the rule from the environment (defaults 10,000 calls, 1 s, 3 s).
    pub fn from_env() -> StopRule {
        let get = |name: &str, default: f64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(default)
        };
        StopRule {
            min_calls: get("BENCH_MIN_CALLS", 10_000.0) as u64,
            min_secs: get("BENCH_MIN_SECS", 1.0),
            max_secs: get("BENCH_MAX_SECS", 3.0),
        }
    }

    /// Whether to stop after `calls` calls in `secs` seconds.
    pub fn done(&self, calls: u64, secs: f64) -> bool {
        secs >= self.max_secs || (calls >= self.min_calls && secs >= self.min_secs)
    }
}
