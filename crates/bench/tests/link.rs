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

/// Tests here create and remove `wpb-*` namespaces: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn userspace_link_20mbps_40ms_within_10_percent() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !is_root() {
        eprintln!(
            "SKIPPED: userspace_link_20mbps_40ms_within_10_percent needs root (namespaces, TUN)"
        );
        return;
    }
    // As a run does: the emulator's own path cost is calibrated first.
    let comp = webproof_bench::probe::calibrate_userspace("t20c").expect("calibrate");
    eprintln!("userspace path cost per direction: {comp} ns");
    let topo = Topology::build(
        "t20a",
        Backend::Userspace,
        spec(40.0, 20.0),
        spec(10.0, 100.0),
        1,
        comp,
    )
    .expect("build topology");
    let link = topo.link(LinkId::ProverVerifier);
    // As a run does, a measurement disturbed by other load is repeated (up to 3 times).
    let mut m = measure(&topo, link, Duration::from_millis(1200)).expect("measure");
    for _ in 0..2 {
        eprintln!("{m:?}");
        let (r, b) = m.errors();
        if r < 0.10 && b < 0.10 {
            break;
        }
        m = measure(&topo, link, Duration::from_millis(1200)).expect("measure");
    }
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

#[test]
fn clean_removes_leftovers_and_detect_picks_a_backend() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !is_root() {
        eprintln!("SKIPPED: clean_removes_leftovers needs root");
        return;
    }
    use webproof_bench::netns::{clean_all, ip};
    // What a killed run leaves: a namespace and a root-namespace veth.
    ip(&["netns", "add", "wpb-test-left"]).unwrap();
    ip(&[
        "link",
        "add",
        "wpb-tleft-a",
        "type",
        "veth",
        "peer",
        "name",
        "wpb-tleft-b",
    ])
    .unwrap();
    let r = clean_all().unwrap();
    assert!(r.namespaces.contains(&"wpb-test-left".to_string()), "{r:?}");
    assert!(r.links.iter().any(|l| l.starts_with("wpb-tleft")), "{r:?}");
    assert!(!ip(&["netns", "list"]).unwrap().contains("wpb-"));
    assert!(!ip(&["-o", "link", "show"]).unwrap().contains("wpb-"));
    // Detection leaves nothing behind either.
    let b = Backend::detect().unwrap();
    eprintln!("backend on this host: {}", b.as_str());
    assert!(!ip(&["netns", "list"]).unwrap().contains("wpb-"));
}
