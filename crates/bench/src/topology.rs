//! The emulated network of one bench: namespaces for prover, verifier and
//! server, and three point-to-point links between them.
//!
//! ```text
//!   prover 198.18.1.1 ==pv== 198.18.1.2 verifier 198.18.2.1 ==vs== 198.18.2.2 server
//!   prover 198.18.3.1 =================ps================== 198.18.3.2 server
//! ```
//! `pv` carries the proof protocol; `vs` is the application link in proxy
//! mode, `ps` otherwise. Addresses are from 198.18.0.0/15, the range set
//! aside for benchmarking (RFC 2544), and exist only inside the namespaces.
//!
//! Two backends give the same link model (see [`crate::emu::shaper`]):
//! - [`Backend::Netem`]: veth pairs with `tc netem` (delay, jitter, loss)
//!   and a `tbf` child (rate, bounded queue) on each egress, as the field's
//!   harnesses do; used when the kernel has netem.
//! - [`Backend::Userspace`]: TUN pairs joined by this process's delay-line
//!   threads ([`crate::emu`]), for kernels without netem.

use crate::config::LinkSpec;
use crate::emu::shaper::DirectionParams;
use crate::emu::{open_tun, TunLink};
use crate::netns::{ip, run, Namespace, NetError, PREFIX};
use std::net::Ipv4Addr;

/// Which way links are emulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Netem,
    Userspace,
}

impl Backend {
    pub fn as_str(&self) -> &'static str {
        match self {
            Backend::Netem => "netem",
            Backend::Userspace => "userspace",
        }
    }

    /// `netem` if this kernel can attach a netem qdisc, else `userspace`.
    pub fn detect() -> Result<Backend, NetError> {
        let name = format!("{PREFIX}probe-{}", std::process::id());
        let ns = Namespace::create(&name)?;
        let ok = ip(&["-n", ns.name(), "link", "add", "wpb-dummy", "type", "dummy"]).is_ok()
            && run(
                "tc",
                &[
                    "-n",
                    ns.name(),
                    "qdisc",
                    "add",
                    "dev",
                    "wpb-dummy",
                    "root",
                    "netem",
                    "delay",
                    "1ms",
                ],
            )
            .is_ok();
        Ok(if ok {
            Backend::Netem
        } else {
            Backend::Userspace
        })
    }

    pub fn parse(s: &str) -> Option<Backend> {
        match s {
            "netem" => Some(Backend::Netem),
            "userspace" => Some(Backend::Userspace),
            _ => None,
        }
    }
}

/// The three links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkId {
    ProverVerifier,
    VerifierServer,
    ProverServer,
}

impl LinkId {
    pub fn short(&self) -> &'static str {
        match self {
            LinkId::ProverVerifier => "pv",
            LinkId::VerifierServer => "vs",
            LinkId::ProverServer => "ps",
        }
    }
    fn subnet(&self) -> u8 {
        match self {
            LinkId::ProverVerifier => 1,
            LinkId::VerifierServer => 2,
            LinkId::ProverServer => 3,
        }
    }
}

/// One end of a link.
#[derive(Clone, Debug)]
pub struct End {
    pub ns: String,
    pub dev: String,
    pub addr: Ipv4Addr,
}

/// A running link.
pub struct Link {
    pub id: LinkId,
    pub spec: LinkSpec,
    /// `a` is the prover side (pv, ps) or the verifier side (vs).
    pub a: End,
    pub b: End,
    /// Present with the userspace backend; stops the threads on drop.
    pub tun: Option<TunLink>,
}

/// Interface counters of one link end: bytes and packets sent by `a` (tx)
/// and by `b` (rx).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub tx_bytes: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub rx_packets: u64,
}

impl std::ops::Sub for Counters {
    type Output = Counters;
    fn sub(self, o: Counters) -> Counters {
        Counters {
            tx_bytes: self.tx_bytes.saturating_sub(o.tx_bytes),
            rx_bytes: self.rx_bytes.saturating_sub(o.rx_bytes),
            tx_packets: self.tx_packets.saturating_sub(o.tx_packets),
            rx_packets: self.rx_packets.saturating_sub(o.rx_packets),
        }
    }
}

impl Link {
    /// Bytes sent by `a` and by `b` at the link, read from the interface
    /// counters of end `a` (same for both backends).
    pub fn bytes(&self) -> Result<(u64, u64), NetError> {
        let c = self.counters()?;
        Ok((c.tx_bytes, c.rx_bytes))
    }

    /// Bytes and packets each way, from the interface counters of end `a`.
    pub fn counters(&self) -> Result<Counters, NetError> {
        let out = ip(&[
            "-n",
            &self.a.ns,
            "-s",
            "-j",
            "link",
            "show",
            "dev",
            &self.a.dev,
        ])?;
        let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| NetError::Command {
            cmd: "ip -s -j link show".into(),
            stderr: format!("unparsable output: {e}"),
        })?;
        let s = &v[0]["stats64"];
        let n = |d: &str, k: &str| s[d][k].as_u64().unwrap_or(0);
        Ok(Counters {
            tx_bytes: n("tx", "bytes"),
            rx_bytes: n("rx", "bytes"),
            tx_packets: n("tx", "packets"),
            rx_packets: n("rx", "packets"),
        })
    }

    /// Link-layer bytes per packet besides IP (veth carries Ethernet
    /// headers; TUN devices carry bare IP packets).
    pub fn l2_header_bytes(&self) -> u64 {
        if self.tun.is_some() {
            0
        } else {
            14
        }
    }
}

/// Namespaces and links of one bench; everything is removed on drop
/// (links first, then namespaces, which also removes their devices).
pub struct Topology {
    pub backend: Backend,
    pub links: Vec<Link>,
    // Declared after links so they are dropped after them.
    pub prover: Namespace,
    pub verifier: Namespace,
    pub server: Namespace,
}

/// Per-direction parameters for a link spec.
pub fn direction_params(spec: &LinkSpec) -> DirectionParams {
    let rate_bps = spec.bandwidth_mbps * 1e6;
    let rtt_ns = (spec.rtt_ms * 1e6) as u64;
    DirectionParams {
        rate_bps,
        delay_ns: rtt_ns / 2,
        jitter_ns: (spec.jitter_ms * 1e6) as u64,
        loss: spec.loss_percent / 100.0,
        queue_bytes: DirectionParams::default_queue(rate_bps, rtt_ns),
    }
}

impl Topology {
    /// Build the network for one bench. `tag` (4 characters) keeps device
    /// names unique and under 15 bytes. `compensation_ns` is subtracted
    /// from each direction's delay on the userspace backend (its own path
    /// cost, see [`crate::probe::calibrate_userspace`]).
    pub fn build(
        tag: &str,
        backend: Backend,
        protocol: LinkSpec,
        app: LinkSpec,
        seed: u64,
        compensation_ns: u64,
    ) -> Result<Topology, NetError> {
        let ns = |role: &str| Namespace::create(&format!("{PREFIX}{tag}-{role}"));
        let prover = ns("prover")?;
        let verifier = ns("verifier")?;
        let server = ns("server")?;
        let mut topo = Topology {
            backend,
            links: Vec::new(),
            prover,
            verifier,
            server,
        };
        let plan = [
            (
                LinkId::ProverVerifier,
                protocol,
                topo.prover.name().to_string(),
                topo.verifier.name().to_string(),
            ),
            (
                LinkId::VerifierServer,
                app,
                topo.verifier.name().to_string(),
                topo.server.name().to_string(),
            ),
            (
                LinkId::ProverServer,
                app,
                topo.prover.name().to_string(),
                topo.server.name().to_string(),
            ),
        ];
        for (i, (id, spec, a_ns, b_ns)) in plan.into_iter().enumerate() {
            let a = End {
                ns: a_ns,
                dev: format!("{PREFIX}{tag}-{}a", id.short()),
                addr: Ipv4Addr::new(198, 18, id.subnet(), 1),
            };
            let b = End {
                ns: b_ns,
                dev: format!("{PREFIX}{tag}-{}b", id.short()),
                addr: Ipv4Addr::new(198, 18, id.subnet(), 2),
            };
            let link = match backend {
                Backend::Userspace => {
                    userspace_link(id, spec, a, b, seed.wrapping_add(i as u64), compensation_ns)?
                }
                Backend::Netem => netem_link(id, spec, a, b)?,
            };
            topo.links.push(link);
        }
        Ok(topo)
    }

    pub fn link(&self, id: LinkId) -> &Link {
        self.links
            .iter()
            .find(|l| l.id == id)
            .expect("all links are built")
    }

    pub fn namespace(&self, name: &str) -> &Namespace {
        [&self.prover, &self.verifier, &self.server]
            .into_iter()
            .find(|n| n.name() == name)
            .expect("namespace of this topology")
    }
}

fn address(end: &End, peer: &End) -> Result<(), NetError> {
    ip(&[
        "-n",
        &end.ns,
        "addr",
        "add",
        &format!("{}/32", end.addr),
        "peer",
        &format!("{}/32", peer.addr),
        "dev",
        &end.dev,
    ])?;
    ip(&[
        "-n",
        &end.ns,
        "link",
        "set",
        &end.dev,
        "mtu",
        "1500",
        "txqueuelen",
        "10000",
        "up",
    ])?;
    Ok(())
}

fn userspace_link(
    id: LinkId,
    spec: LinkSpec,
    a: End,
    b: End,
    seed: u64,
    compensation_ns: u64,
) -> Result<Link, NetError> {
    let fa = open_tun(&a.dev).map_err(|source| NetError::Namespace {
        name: a.dev.clone(),
        source,
    })?;
    let fb = open_tun(&b.dev).map_err(|source| NetError::Namespace {
        name: b.dev.clone(),
        source,
    })?;
    // The fds stay with us; the devices move into the namespaces.
    ip(&["link", "set", &a.dev, "netns", &a.ns])?;
    ip(&["link", "set", &b.dev, "netns", &b.ns])?;
    address(&a, &b)?;
    address(&b, &a)?;
    let mut params = direction_params(&spec);
    params.delay_ns = params.delay_ns.saturating_sub(compensation_ns);
    let tun = TunLink::start(fa, fb, params, seed);
    Ok(Link {
        id,
        spec,
        a,
        b,
        tun: Some(tun),
    })
}

fn netem_link(id: LinkId, spec: LinkSpec, a: End, b: End) -> Result<Link, NetError> {
    ip(&[
        "link", "add", &a.dev, "type", "veth", "peer", "name", &b.dev,
    ])?;
    ip(&["link", "set", &a.dev, "netns", &a.ns])?;
    ip(&["link", "set", &b.dev, "netns", &b.ns])?;
    address(&a, &b)?;
    address(&b, &a)?;
    let p = direction_params(&spec);
    for end in [&a, &b] {
        let delay = format!("{}us", p.delay_ns / 1000);
        let mut args: Vec<String> = [
            "-n", &end.ns, "qdisc", "add", "dev", &end.dev, "root", "handle", "1:", "netem",
            "delay", &delay,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if p.jitter_ns > 0 {
            args.push(format!("{}us", p.jitter_ns / 1000));
        }
        if p.loss > 0.0 {
            args.push("loss".into());
            args.push(format!("{}%", spec.loss_percent));
        }
        // netem's own queue must not be the limit: the tbf child is.
        args.push("limit".into());
        args.push("100000".into());
        let args_ref: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        run("tc", &args_ref)?;
        let rate = format!("{}kbit", (spec.bandwidth_mbps * 1000.0).round() as u64);
        // Bucket: a few packets (GSO super-packets on veth are up to 64 KiB).
        let burst = format!("{}", 64 * 1024 + 3000);
        let limit = format!("{}", p.queue_bytes);
        run(
            "tc",
            &[
                "-n", &end.ns, "qdisc", "add", "dev", &end.dev, "parent", "1:", "handle", "2:",
                "tbf", "rate", &rate, "burst", &burst, "limit", &limit,
            ],
        )?;
    }
    Ok(Link {
        id,
        spec,
        a,
        b,
        tun: None,
    })
}
