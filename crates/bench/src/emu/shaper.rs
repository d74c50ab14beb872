//! The link model, free of I/O and clocks, so tests can check it exactly.
//!
//! One direction of a link is a FIFO bottleneck of `rate` bits/s with a
//! bounded backlog (what `tc tbf` gives, with a one-packet bucket), followed
//! by a propagation delay of RTT/2 plus optional jitter, and optional random
//! loss before the queue. Times are nanoseconds on any monotonic clock.

use rand::Rng;

/// Parameters of one direction.
#[derive(Clone, Copy, Debug)]
pub struct DirectionParams {
    /// Bits per second at the bottleneck.
    pub rate_bps: f64,
    /// One-way propagation delay, ns.
    pub delay_ns: u64,
    /// Jitter amplitude, ns: the delay is drawn uniformly in delay +- jitter,
    /// never below zero, and never reorders packets (as netem does with a
    /// rate set).
    pub jitter_ns: u64,
    /// Probability that a packet is dropped, in [0, 1).
    pub loss: f64,
    /// Maximum backlog waiting for the bottleneck, bytes. Beyond it, packets
    /// are dropped (tail drop), which is what TCP's congestion control sees on
    /// a real link.
    pub queue_bytes: u64,
}

impl DirectionParams {
    /// A queue of one bandwidth-delay product of the whole link, at least
    /// 64 packets: enough for one TCP flow to fill the pipe without making
    /// the queue the dominant delay.
    pub fn default_queue(rate_bps: f64, rtt_ns: u64) -> u64 {
        let bdp = rate_bps / 8.0 * rtt_ns as f64 / 1e9;
        (bdp as u64).max(64 * 1500)
    }
}

/// What happens to one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Deliver at this time (ns).
    Deliver(u64),
    /// Dropped by random loss.
    Lost,
    /// Dropped because the backlog is full.
    QueueFull,
}

/// State of one direction: when the bottleneck is next free and the last
/// delivery time (to keep order under jitter).
#[derive(Clone, Debug)]
pub struct Shaper {
    params: DirectionParams,
    link_free_at: u64,
    last_delivery: u64,
    /// Counters: packets and bytes delivered, dropped.
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub dropped_packets: u64,
}

impl Shaper {
    pub fn new(params: DirectionParams) -> Self {
        Shaper {
            params,
            link_free_at: 0,
            last_delivery: 0,
            delivered_packets: 0,
            delivered_bytes: 0,
            dropped_packets: 0,
        }
    }

    pub fn params(&self) -> &DirectionParams {
        &self.params
    }

    /// Serialisation time of `len` bytes at the bottleneck rate, ns.
    pub fn tx_time_ns(&self, len: usize) -> u64 {
        (len as f64 * 8.0 * 1e9 / self.params.rate_bps).round() as u64
    }

    /// Decide the fate of a packet of `len` bytes arriving at `now`.
    pub fn admit(&mut self, now: u64, len: usize, rng: &mut impl Rng) -> Verdict {
        if self.params.loss > 0.0 && rng.gen::<f64>() < self.params.loss {
            self.dropped_packets += 1;
            return Verdict::Lost;
        }
        let start = self.link_free_at.max(now);
        // Backlog ahead of this packet, in bytes.
        let backlog = (start - now) as f64 * self.params.rate_bps / 8.0 / 1e9;
        if backlog + len as f64 > self.params.queue_bytes as f64 {
            self.dropped_packets += 1;
            return Verdict::QueueFull;
        }
        self.link_free_at = start + self.tx_time_ns(len);
        let mut delay = self.params.delay_ns as i64;
        if self.params.jitter_ns > 0 {
            let j = self.params.jitter_ns as i64;
            delay += rng.gen_range(-j..=j);
        }
        let at = (self.link_free_at as i64 + delay.max(0)) as u64;
        let at = at.max(self.last_delivery);
        self.last_delivery = at;
        self.delivered_packets += 1;
        self.delivered_bytes += len as u64;
        Verdict::Deliver(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::mock::StepRng;
    use rand::SeedableRng;

    fn params(rate_mbps: f64, delay_ms: u64) -> DirectionParams {
        DirectionParams {
            rate_bps: rate_mbps * 1e6,
            delay_ns: delay_ms * 1_000_000,
            jitter_ns: 0,
            loss: 0.0,
            queue_bytes: 1 << 20,
        }
    }

    #[test]
    fn lone_packet_gets_serialisation_plus_delay() {
        let mut s = Shaper::new(params(20.0, 20));
        let mut rng = StepRng::new(0, 0);
        // 1500 B at 20 Mbit/s = 600 us.
        assert_eq!(
            s.admit(1_000, 1500, &mut rng),
            Verdict::Deliver(1_000 + 600_000 + 20_000_000)
        );
    }

    #[test]
    fn back_to_back_packets_are_spaced_by_the_rate() {
        let mut s = Shaper::new(params(10.0, 5));
        let mut rng = StepRng::new(0, 0);
        let mut last = 0;
        for i in 0..100u64 {
            match s.admit(0, 1250, &mut rng) {
                // 1250 B at 10 Mbit/s = 1 ms each.
                Verdict::Deliver(t) => {
                    assert_eq!(t, (i + 1) * 1_000_000 + 5_000_000);
                    last = t;
                }
                v => panic!("{v:?}"),
            }
        }
        // 100 packets of 10 kbit took 100 ms at the bottleneck.
        assert_eq!(last, 105_000_000);
    }

    #[test]
    fn queue_overflow_drops_and_does_not_advance_the_link() {
        let mut p = params(8.0, 0);
        p.queue_bytes = 3000;
        let mut s = Shaper::new(p);
        let mut rng = StepRng::new(0, 0);
        assert!(matches!(s.admit(0, 1500, &mut rng), Verdict::Deliver(_)));
        assert!(matches!(s.admit(0, 1500, &mut rng), Verdict::Deliver(_)));
        assert_eq!(s.admit(0, 1500, &mut rng), Verdict::QueueFull);
        // After the first packet left (1.5 ms at 8 Mbit/s) there is room again.
        assert!(matches!(
            s.admit(1_500_000, 1500, &mut rng),
            Verdict::Deliver(_)
        ));
        assert_eq!(s.dropped_packets, 1);
    }

    #[test]
    fn jitter_never_reorders_and_stays_in_bounds() {
        let mut p = params(1000.0, 10);
        p.jitter_ns = 3_000_000;
        let mut s = Shaper::new(p);
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut prev = 0;
        for i in 0..1000u64 {
            let now = i * 100_000;
            let Verdict::Deliver(t) = s.admit(now, 100, &mut rng) else {
                panic!()
            };
            assert!(t >= prev);
            assert!(t <= now + 13_000_000 + 1_000_000);
            assert!(t >= now + 7_000_000);
            prev = t;
        }
    }

    #[test]
    fn loss_rate_is_respected() {
        let mut p = params(1000.0, 0);
        p.loss = 0.1;
        let mut s = Shaper::new(p);
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let n = 20_000;
        let lost = (0..n)
            .filter(|i| s.admit(*i as u64 * 10_000, 100, &mut rng) == Verdict::Lost)
            .count();
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.1).abs() < 0.01, "{rate}");
    }
}
