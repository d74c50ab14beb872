//! The emulated link measures what it was set to. Needs root (namespaces,
//! TUN); skipped loudly otherwise.

use std::time::Duration;
use webproof_bench::config::LinkSpec;
use webproof_bench::netns::is_root;
use webproof_bench::probe::measure;
use webproof_bench::topology::{Backend, LinkId, Topology};

fn spec(rtt_ms: f64, mbps: f64) -> LinkSpec {
    LinkSpec {
        rtt_ms,
        bandwidth_mbps: mbps,
        jitter_ms: 0.0,
        loss_percent: 0.0,
    }
}

#[test]
fn userspace_link_20mbps_40ms_within_10_percent() {
    if !is_root() {
        eprintln!(
            "SKIPPED: userspace_link_20mbps_40ms_within_10_percent needs root (namespaces, TUN)"
        );
        return;
    }
    let topo = Topology::build(
        "t20a",
        Backend::Userspace,
        spec(40.0, 20.0),
        spec(10.0, 100.0),
        1,
    )
    .expect("build topology");
    let link = topo.link(LinkId::ProverVerifier);
    let m = measure(&topo, link, Duration::from_millis(1200)).expect("measure");
    eprintln!("{m:?}");
    let (rtt_err, bw_err) = m.errors();
    assert!(rtt_err < 0.10, "RTT {} ms vs 40 ms", m.rtt_ms);
    assert!(bw_err < 0.10, "rate {} Mbps vs 20 Mbps", m.mbps);
    // The app link is independent of the protocol link.
    let app = measure(
        &topo,
        topo.link(LinkId::ProverServer),
        Duration::from_millis(400),
    )
    .expect("measure app");
    eprintln!("{app:?}");
    assert!(app.errors().0 < 0.10, "app RTT {} ms vs 10 ms", app.rtt_ms);
    // Nothing is left behind.
    drop(topo);
    let left = webproof_bench::netns::ip(&["netns", "list"]).unwrap();
    assert!(!left.contains("wpb-t20a"), "leftover namespaces: {left}");
}
