//! A busy machine (R-HOOK-7): the multi-part comparisons run with one
//! spinning thread per core beside the agent, so part timing is checked
//! where jitter is widest — a loaded 2-core machine, as CI is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// One busy loop per core while it lives.
pub(crate) struct CpuLoad {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<u64>>,
}

impl CpuLoad {
    /// Starts a spinning thread per available core.
    pub(crate) fn per_core() -> Self {
        let n = std::thread::available_parallelism().map_or(2, usize::from);
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x: u64 = 1;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        }
                        std::hint::black_box(x);
                    }
                    x
                })
            })
            .collect();
        Self { stop, threads }
    }

    /// How many threads spin.
    pub(crate) fn threads(&self) -> usize {
        self.threads.len()
    }
}

impl Drop for CpuLoad {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_spins_per_core_and_stops_when_dropped() {
        let load = CpuLoad::per_core();
        assert!(load.threads() >= 1);
        let stop = Arc::clone(&load.stop);
        drop(load);
        assert!(stop.load(Ordering::Relaxed));
    }
}
