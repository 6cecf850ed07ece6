//! Restart pacing for a downstream server that keeps failing (exits, hangs,
//! or cannot start). The first restart is immediate — a server that crashed
//! on one bad call should serve the next one — then each consecutive failure
//! doubles the wait before the next start, up to a cap. A server that stayed
//! up for the healthy period starts over from zero failures. While a wait is
//! pending, calls fail at once with the time left instead of piling up
//! restarts (a crash loop would otherwise respawn on every call).

use std::time::{Duration, Instant};

/// The pacing parameters (defaults: 1 s doubling to 60 s, healthy after 60 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The wait after the second consecutive failure.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
    /// How long a server must stay up for its failures to be forgotten.
    pub healthy_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(60),
            healthy_after: Duration::from_secs(60),
        }
    }
}

impl Backoff {
    /// The wait before the next start after `failures` consecutive failures.
    pub fn delay(&self, failures: u32) -> Duration {
        if failures <= 1 {
            return Duration::ZERO;
        }
        let doublings = (failures - 2).min(30);
        self.initial.saturating_mul(1u32 << doublings).min(self.max)
    }
}

/// One server's failure record.
#[derive(Debug, Default)]
pub(crate) struct Failures {
    pub backoff: Backoff,
    /// Consecutive failures (reset by a healthy period).
    count: u32,
    /// The start number whose failure was last counted: a start fails once,
    /// however many paths notice it (a listing, the call that saw it die).
    counted_start: u32,
    /// When the current (or last) process finished starting.
    connected_at: Option<Instant>,
    /// No start before this.
    retry_at: Option<Instant>,
}

impl Failures {
    pub fn connected(&mut self, now: Instant) {
        self.connected_at = Some(now);
        self.retry_at = None;
    }

    /// Records that start number `start` failed (to start, or later).
    pub fn record(&mut self, start: u32, now: Instant) {
        if start == self.counted_start {
            return;
        }
        self.counted_start = start;
        let healthy = self.connected_at.take().is_some_and(|at| now.duration_since(at) >= self.backoff.healthy_after);
        self.count = if healthy { 1 } else { self.count.saturating_add(1) };
        let delay = self.backoff.delay(self.count);
        self.retry_at = (!delay.is_zero()).then(|| now + delay);
    }

    /// How long the next start must still wait, if at all.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        self.retry_at.and_then(|at| at.checked_duration_since(now)).filter(|d| !d.is_zero())
    }

    /// Consecutive failures as of `now` (zero once a running server has been
    /// up for the healthy period).
    pub fn count(&self, now: Instant) -> u32 {
        match self.connected_at {
            Some(at) if now.duration_since(at) >= self.backoff.healthy_after => 0,
            _ => self.count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn delays_double_from_the_second_failure_up_to_the_cap() {
        let b = Backoff { initial: ms(100), max: ms(1000), healthy_after: ms(5000) };
        let delays: Vec<u64> = (1..=7).map(|n| b.delay(n).as_millis() as u64).collect();
        assert_eq!(delays, vec![0, 100, 200, 400, 800, 1000, 1000]);
        assert_eq!(b.delay(u32::MAX), ms(1000), "no overflow on a very long crash loop");
    }

    #[test]
    fn a_start_counts_once_and_a_healthy_period_resets() {
        let t0 = Instant::now();
        let mut f = Failures {
            backoff: Backoff { initial: ms(100), max: ms(1000), healthy_after: ms(500) },
            ..Default::default()
        };
        f.record(1, t0);
        f.record(1, t0); // the same start noticed twice
        assert_eq!(f.count(t0), 1);
        assert_eq!(f.wait(t0), None, "the first restart is immediate");
        f.record(2, t0);
        assert_eq!(f.count(t0), 2);
        assert_eq!(f.wait(t0), Some(ms(100)));
        assert_eq!(f.wait(t0 + ms(100)), None);
        // Start 3 runs for longer than the healthy period, then fails: count restarts at 1.
        f.connected(t0 + ms(100));
        assert_eq!(f.count(t0 + ms(700)), 0, "healthy while up");
        f.record(3, t0 + ms(700));
        assert_eq!(f.count(t0 + ms(700)), 1);
        assert_eq!(f.wait(t0 + ms(700)), None);
        // A start that fails soon after connecting keeps counting.
        f.connected(t0 + ms(800));
        f.record(4, t0 + ms(900));
        assert_eq!(f.count(t0 + ms(900)), 2);
        assert_eq!(f.wait(t0 + ms(900)), Some(ms(100)));
    }
}
