//! Which servers a verifier may contact on a prover's behalf.
//!
//! A verifier on the open internet connects wherever its provers ask, so
//! without a policy it is a server-side request forgery tool: a prover could
//! reach the verifier's loopback services, its private network or a cloud
//! metadata endpoint. [`ServerPolicy`] denies those address classes by
//! default. It is checked on every resolved address before connecting *and*
//! on the address the socket actually connected to, so a name that resolves
//! differently the second time (DNS rebinding) gains nothing.
//!
//! IPv6 addresses that lead to an IPv4 host (IPv4-mapped, SIIT
//! IPv4-translated `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`,
//! Teredo `2001::/32` with its server and obfuscated client addresses) are
//! judged by the IPv4 policy of the addresses they carry, and by the deny
//! list's IPv4 networks; the local-use NAT64 prefix `64:ff9b:1::/48`
//! (RFC 8215), whose embedding the operator chooses, is refused unless
//! allow-listed. ISATAP and other operator-specific translations cannot be
//! recognised from the address: deny their prefixes in the configuration.
//!
//! Tests and local deployments allow-list what they need
//! ([`ServerPolicy::allow_all`], or [`ServerPolicy::allow`] with networks).
//! The policy is the verifier's decision, so it lives here; the runtime
//! that resolves and connects applies it to every address
//! (`webproof_net::policy::connect_checked`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// An IP network: an address and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    /// The network `addr/prefix`; `None` if the prefix is too long.
    pub fn new(addr: IpAddr, prefix: u8) -> Option<Self> {
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then_some(IpNet { addr, prefix })
    }

    /// Whether `ip` lies in this network (IPv4 never matches an IPv6 network).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                prefix_eq(u32::from(n) as u128, u32::from(a) as u128, 32, self.prefix)
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                prefix_eq(u128::from(n), u128::from(a), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_eq(a: u128, b: u128, bits: u32, prefix: u8) -> bool {
    if prefix == 0 {
        return true;
    }
    let shift = bits - prefix as u32;
    (a >> shift) == (b >> shift)
}

impl FromStr for IpNet {
    type Err = String;
    /// `10.0.0.0/8`, `::1/128`, or a bare address (a single host).
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, p) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = a
            .trim()
            .parse()
            .map_err(|_| format!("{s:?} is not an IP address or network"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            Some(p) => p
                .trim()
                .parse::<u8>()
                .map_err(|_| format!("{s:?}: bad prefix length"))?,
            None => max,
        };
        IpNet::new(addr, prefix).ok_or_else(|| format!("{s:?}: prefix longer than {max}"))
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// Why an address is not public, if it is not.
pub fn special_purpose(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    let n = u32::from(ip);
    let within = |base: [u8; 4], prefix: u32| {
        prefix_eq(
            u32::from_be_bytes(base) as u128,
            n as u128,
            32,
            prefix as u8,
        )
    };
    if ip.is_unspecified() || o[0] == 0 {
        Some("the unspecified / this-network range (0.0.0.0/8)")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if within([169, 254, 169, 254], 32) || within([100, 100, 100, 200], 32) {
        Some("a cloud metadata endpoint")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if ip.is_private() {
        Some("a private network (RFC 1918)")
    } else if within([100, 64, 0, 0], 10) {
        Some("shared address space (carrier-grade NAT)")
    } else if within([192, 0, 0, 0], 24) {
        Some("IETF protocol assignments")
    } else if within([198, 18, 0, 0], 15) {
        Some("the benchmarking range")
    } else if within([192, 0, 2, 0], 24)
        || within([198, 51, 100, 0], 24)
        || within([203, 0, 113, 0], 24)
    {
        Some("a documentation range")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if o[0] >= 240 {
        Some("reserved or broadcast")
    } else {
        None
    }
}

/// How an IPv6 address leads to an IPv4 host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Embedding {
    /// The address *is* the IPv4 address on the wire or after translation
    /// (IPv4-mapped `::ffff:0:0/96`, SIIT IPv4-translated `::ffff:0:0:0/96`,
    /// NAT64 well-known prefix `64:ff9b::/96`, IPv4-compatible `::/96`).
    Is,
    /// The packets travel through a tunnel endpoint at the IPv4 address
    /// (6to4 relay, Teredo server or Teredo client's NAT).
    Via,
}

/// The IPv4 addresses an IPv6 address reaches or is routed through by a
/// standard translation or tunnelling mechanism.
fn embedded_v4(ip: Ipv6Addr) -> Vec<(Ipv4Addr, Embedding, &'static str)> {
    let s = ip.segments();
    let last32 = Ipv4Addr::from(((s[6] as u32) << 16) | s[7] as u32);
    let mut out = Vec::new();
    if let Some(v4) = ip.to_ipv4_mapped() {
        out.push((v4, Embedding::Is, "an IPv4-mapped address"));
    } else if s[0..6] == [0, 0, 0, 0, 0xffff, 0] {
        // SIIT (RFC 2765, RFC 6145): `::ffff:0:a.b.c.d` is translated to
        // the IPv4 address in the last 32 bits.
        out.push((last32, Embedding::Is, "an IPv4-translated (SIIT) address"));
    } else if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        // NAT64 well-known prefix (RFC 6052): the last 32 bits are the target.
        out.push((last32, Embedding::Is, "a NAT64 address"));
    } else if s[0..6] == [0, 0, 0, 0, 0, 0] && !ip.is_unspecified() && !ip.is_loopback() {
        out.push((last32, Embedding::Is, "an IPv4-compatible address"));
    }
    if s[0] == 0x2002 {
        // 6to4 (RFC 3056): the next 32 bits are the IPv4 relay address.
        let v4 = Ipv4Addr::from(((s[1] as u32) << 16) | s[2] as u32);
        out.push((v4, Embedding::Via, "a 6to4 address"));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        // Teredo (RFC 4380): `2001:0:SSSS:SSSS:flags:port:CCCC:CCCC`, the
        // server's IPv4 address in clear, the client's (its NAT's public
        // address, where the packets go) with every bit inverted.
        let server = Ipv4Addr::from(((s[2] as u32) << 16) | s[3] as u32);
        let client = Ipv4Addr::from(!(((s[6] as u32) << 16) | s[7] as u32));
        out.push((server, Embedding::Via, "a Teredo address (server)"));
        out.push((client, Embedding::Via, "a Teredo address (client)"));
    }
    out
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    // Addresses that carry an IPv4 address reach that address (or go
    // through it): the IPv4 policy applies to it.
    for (v4, how, _) in embedded_v4(ip) {
        match how {
            Embedding::Is if s[0..6] == [0, 0, 0, 0, 0, 0] => {
                // IPv4-compatible: deprecated, refused below whatever it holds.
            }
            Embedding::Is => return special_v4(v4),
            Embedding::Via => {
                if let Some(why) = special_v4(v4) {
                    return Some(why);
                }
            }
        }
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        // Local-use NAT64 prefix (RFC 8215): the operator picks the prefix
        // length inside it (RFC 6052 formats /48 to /96), so the IPv4
        // target cannot be read off the address.
        return Some("the local-use NAT64 prefix (64:ff9b:1::/48)");
    }
    if ip.is_unspecified() {
        Some("the unspecified address")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if s[0..6] == [0, 0, 0, 0, 0, 0] {
        Some("an IPv4-compatible address")
    } else if (s[0] & 0xfe00) == 0xfc00 {
        Some("a unique local address (fc00::/7)")
    } else if (s[0] & 0xffc0) == 0xfe80 {
        Some("link-local")
    } else if (s[0] & 0xffc0) == 0xfec0 {
        Some("site-local")
    } else if s[0] == 0xfd00 && s[1..7] == [0, 0, 0, 0, 0, 0] && s[7] == 0x0254 {
        Some("a cloud metadata endpoint")
    } else if s[0] & 0xff00 == 0xff00 {
        Some("multicast")
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        Some("the documentation range")
    } else if s[0] == 0x0100 && s[1..4] == [0, 0, 0] {
        Some("the discard-only range")
    } else {
        None
    }
}

/// Which server addresses a verifier may connect to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerPolicy {
    /// Allow every address (tests, local demos).
    allow_everything: bool,
    /// Networks allowed even though they are special-purpose.
    allowed: Vec<IpNet>,
    /// Networks denied even though they are public.
    denied: Vec<IpNet>,
}

impl ServerPolicy {
    /// The default: public unicast addresses only.
    pub fn public_only() -> Self {
        Self::default()
    }

    /// Allow every address. For tests and a verifier on a trusted network.
    pub fn allow_all() -> Self {
        ServerPolicy {
            allow_everything: true,
            ..Self::default()
        }
    }

    /// Also allow these networks (e.g. `127.0.0.1/32` for a local test server).
    pub fn allow(mut self, nets: impl IntoIterator<Item = IpNet>) -> Self {
        self.allowed.extend(nets);
        self
    }

    /// Deny these networks even if they are public.
    pub fn deny(mut self, nets: impl IntoIterator<Item = IpNet>) -> Self {
        self.denied.extend(nets);
        self
    }

    /// Whether every address is allowed.
    pub fn allows_everything(&self) -> bool {
        self.allow_everything && self.denied.is_empty()
    }

    /// Check one address; the error says why it is refused.
    pub fn check(&self, ip: IpAddr) -> Result<(), String> {
        if let Some(net) = self.denied.iter().find(|n| n.contains(ip)) {
            return Err(format!("{ip} is in the denied network {net}"));
        }
        // An IPv6 form of a denied IPv4 address (mapped, NAT64, SIIT, or a
        // tunnel through it) is denied too.
        if let IpAddr::V6(v6) = ip {
            for (v4, _, how) in embedded_v4(v6) {
                if let Some(net) = self.denied.iter().find(|n| n.contains(IpAddr::V4(v4))) {
                    return Err(format!(
                        "{ip} is {how} for {v4}, in the denied network {net}"
                    ));
                }
            }
        }
        if self.allow_everything || self.allowed.iter().any(|n| n.contains(ip)) {
            return Ok(());
        }
        match special_purpose(ip) {
            Some(why) => Err(format!(
                "{ip} is {why}; this verifier only connects to public addresses \
                 (allow it in the verifier's server policy if this is intended)"
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn default_denies_special_addresses() {
        let p = ServerPolicy::public_only();
        for a in [
            "127.0.0.1",
            "127.5.6.7",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.1.1",
            "100.64.0.1",
            "100.100.100.200",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd00::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::1",
            "ff02::1",
        ] {
            assert!(p.check(ip(a)).is_err(), "{a} should be denied");
        }
    }

    #[test]
    fn default_allows_public_addresses() {
        let p = ServerPolicy::public_only();
        for a in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "172.15.255.255",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "64:ff9b::808:808",
        ] {
            assert!(p.check(ip(a)).is_ok(), "{a} should be allowed");
        }
    }

    /// RFC 8215 local-use NAT64, SIIT IPv4-translated and Teredo addresses
    /// (review finding 8): the IPv4 policy applies to the embedded
    /// addresses; public ones stay allowed.
    #[test]
    fn translated_and_tunnelled_addresses_follow_the_ipv4_policy() {
        let p = ServerPolicy::public_only();
        for a in [
            // Local-use NAT64: the target cannot be decoded, refused whole.
            "64:ff9b:1::a9fe:a9fe",
            "64:ff9b:1::808:808",
            "64:ff9b:1:7f00:1::",
            "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
            // SIIT ::ffff:0:a.b.c.d.
            "::ffff:0:127.0.0.1",
            "::ffff:0:10.0.0.1",
            "::ffff:0:169.254.169.254",
            "::ffff:0:0.0.0.0",
            "::ffff:0:192.168.0.1",
            // Teredo, client 127.0.0.1 (obfuscated 80ff:fffe), public server.
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
            // Teredo, client 10.0.0.1 (f5ff:fffe).
            "2001:0:4136:e378:8000:63bf:f5ff:fffe",
            // Teredo, client 169.254.169.254 (5601:5601).
            "2001:0:4136:e378:8000:63bf:5601:5601",
            // Teredo, private server 10.0.0.1, public client 1.1.1.1.
            "2001:0:a00:1:8000:63bf:fefe:fefe",
            // Teredo, loopback server.
            "2001:0:7f00:1:8000:63bf:fefe:fefe",
            // RFC 4380's example: client 192.0.2.45, a documentation address.
            "2001:0000:4136:e378:8000:63bf:3fff:fdd2",
        ] {
            let why = p.check(ip(a));
            assert!(why.is_err(), "{a} should be denied");
        }
        for a in [
            // SIIT and NAT64 forms of public addresses.
            "::ffff:0:8.8.8.8",
            "::ffff:0:1.1.1.1",
            "64:ff9b::808:808",
            // Teredo: public server 65.54.227.120, public client 1.1.1.1.
            "2001:0:4136:e378:8000:63bf:fefe:fefe",
            // Just outside the prefixes.
            "64:ff9b:2::808:808",
            "2001:1::1",
            "2001:4860:4860::8888",
        ] {
            assert!(p.check(ip(a)).is_ok(), "{a} should be allowed");
        }
        // An operator may still allow the local-use prefix explicitly.
        let local = ServerPolicy::public_only().allow(["64:ff9b:1::/48".parse().unwrap()]);
        assert!(local.check(ip("64:ff9b:1::a00:1")).is_ok());
    }

    /// A denied IPv4 network is denied in every IPv6 form that reaches it.
    #[test]
    fn denied_ipv4_networks_cover_their_ipv6_forms() {
        let p = ServerPolicy::allow_all().deny(["1.1.1.0/24".parse().unwrap()]);
        for a in [
            "1.1.1.1",
            "::ffff:1.1.1.1",
            "::ffff:0:1.1.1.1",
            "64:ff9b::101:101",
            "::1.1.1.1",
            "2002:101:101::1",
            "2001:0:101:101:8000:63bf:0:0",
            "2001:0:4136:e378:8000:63bf:fefe:fefe",
        ] {
            assert!(p.check(ip(a)).is_err(), "{a} should be denied");
        }
        for a in [
            "1.0.0.1",
            "::ffff:1.0.0.1",
            "2001:0:4136:e378:8000:63bf:feff:fefe",
        ] {
            assert!(p.check(ip(a)).is_ok(), "{a} should be allowed");
        }
    }

    #[test]
    fn allow_and_deny_lists() {
        let p = ServerPolicy::public_only()
            .allow(["127.0.0.1".parse().unwrap()])
            .deny(["1.1.1.0/24".parse().unwrap()]);
        assert!(p.check(ip("127.0.0.1")).is_ok());
        assert!(p.check(ip("127.0.0.2")).is_err());
        assert!(p.check(ip("1.1.1.1")).is_err());
        assert!(p.check(ip("1.0.0.1")).is_ok());
        let all = ServerPolicy::allow_all();
        assert!(all.check(ip("10.0.0.1")).is_ok());
        assert!(all.allows_everything());
        let all_but = ServerPolicy::allow_all().deny(["10.0.0.0/8".parse().unwrap()]);
        assert!(all_but.check(ip("10.0.0.1")).is_err());
    }

    #[test]
    fn network_parsing() {
        assert_eq!(
            "10.0.0.0/8".parse::<IpNet>().unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!("::1".parse::<IpNet>().unwrap().to_string(), "::1/128");
        assert!("10.0.0.0/33".parse::<IpNet>().is_err());
        assert!("::/129".parse::<IpNet>().is_err());
        assert!("nonsense".parse::<IpNet>().is_err());
        assert!("10.0.0.0/x".parse::<IpNet>().is_err());
        let any: IpNet = "0.0.0.0/0".parse().unwrap();
        assert!(any.contains(ip("8.8.8.8")));
        assert!(!any.contains(ip("::1")));
    }
}
