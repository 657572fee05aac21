//! Which destinations an attacker-influenced fetch may reach.
//!
//! `home_domain` is free text any account can set, and a stellar.toml may redirect or link anywhere,
//! so a fetch derived from them must never reach the scanning machine's own network: loopback,
//! private ranges, link-local (including cloud metadata at 169.254.169.254), CGNAT, benchmarking,
//! reserved, multicast and unspecified addresses are refused at connect time, and so are names
//! that only make sense inside a private network. Host names the operator maps explicitly with
//! `--resolve` / `--connect-to` are the operator's choice and never reach this module.
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not a public destination, or `None` when it is.
pub fn refused_address(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let reason = match (a, b, c) {
        _ if ip.is_unspecified() => "unspecified address",
        (0, _, _) => "this-network address (0.0.0.0/8)",
        (127, _, _) => "loopback address",
        (10, _, _) => "private address (10.0.0.0/8)",
        (172, 16..=31, _) => "private address (172.16.0.0/12)",
        (192, 168, _) => "private address (192.168.0.0/16)",
        (169, 254, 169) if ip.octets()[3] == 254 => "cloud metadata address",
        (169, 254, _) => "link-local address",
        (100, 64..=127, _) => "shared address space (100.64.0.0/10)",
        (192, 0, 0) => "IETF protocol assignment (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation address",
        (198, 18..=19, _) => "benchmarking address (198.18.0.0/15)",
        (224..=239, _, _) => "multicast address",
        (240..=255, _, _) => "reserved address (240.0.0.0/4)",
        _ => return None,
    };
    Some(reason)
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refused_v4(v4);
    }
    let seg = ip.segments();
    let reason = match seg[0] {
        _ if ip.is_unspecified() => "unspecified address",
        _ if ip.is_loopback() => "loopback address",
        0xfc00..=0xfdff => "unique local address (fc00::/7)",
        0xfe80..=0xfebf => "link-local address",
        0xfec0..=0xfeff => "site-local address",
        0xff00..=0xffff => "multicast address",
        0x2001 if seg[1] == 0x0db8 => "documentation address",
        0x0064 if seg[1] == 0xff9b => "NAT64 address",
        // IPv4-compatible (deprecated) and the rest of ::/8 carry no public destination.
        0x0000 => "reserved address (::/8)",
        0x2002 => "6to4 address",
        _ => return None,
    };
    Some(reason)
}

/// Why a host name is not a public destination, or `None` when it may be looked up.
///
/// `host` is lowercase without a trailing dot.
pub fn refused_name(host: &str) -> Option<&'static str> {
    const PRIVATE_SUFFIXES: [&str; 7] = [
        "localhost",
        "local",
        "localdomain",
        "internal",
        "home.arpa",
        "lan",
        "corp",
    ];
    if host.is_empty() {
        return Some("empty host name");
    }
    if !host.contains('.') {
        return Some("single-label host name");
    }
    for suffix in PRIVATE_SUFFIXES {
        if host == suffix || host.ends_with(&format!(".{suffix}")) {
            return Some("private-network host name");
        }
    }
    None
}

/// Lowercases a host and drops one trailing dot, so comparisons are on the canonical name.
pub fn canonical_host(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// True for names under RFC 6761's special-use `invalid` domain, which never resolve: the standard asks
/// resolver libraries to answer them negatively at once, so no query ever leaves the machine.
pub fn never_resolves(host: &str) -> bool {
    let host = canonical_host(host);
    host == "invalid" || host.ends_with(".invalid")
}

/// True when `candidate` is `requested` itself or a subdomain of it (never a parent, never a sibling).
pub fn same_host_or_subdomain(requested: &str, candidate: &str) -> bool {
    let requested = canonical_host(requested);
    let candidate = canonical_host(candidate);
    candidate == requested || candidate.ends_with(&format!(".{requested}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_non_public_ipv4() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "192.0.0.8",
            "198.18.0.1",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(refused_address(ip.parse().unwrap()).is_some(), "{ip}");
        }
        assert_eq!(
            refused_address("169.254.169.254".parse().unwrap()),
            Some("cloud metadata address")
        );
    }

    #[test]
    fn admits_public_addresses() {
        for ip in [
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "8.8.8.8",
            "2606:4700::1111",
        ] {
            assert_eq!(refused_address(ip.parse().unwrap()), None, "{ip}");
        }
    }

    #[test]
    fn refuses_non_public_ipv6() {
        for ip in [
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(refused_address(ip.parse().unwrap()).is_some(), "{ip}");
        }
    }

    #[test]
    fn refuses_private_names() {
        for host in [
            "localhost",
            "foo.localhost",
            "printer.local",
            "db.internal",
            "x.home.arpa",
            "intranet",
        ] {
            assert!(refused_name(host).is_some(), "{host}");
        }
        assert_eq!(refused_name("circle.com"), None);
    }

    #[test]
    fn only_the_invalid_domain_never_resolves() {
        for host in ["invalid", "nasdaq.finance.invalid", "X.Invalid."] {
            assert!(never_resolves(host), "{host}");
        }
        for host in [
            "invalid.com",
            "nasdaq.finance",
            "notinvalid",
            "invalid.example",
        ] {
            assert!(!never_resolves(host), "{host}");
        }
    }

    #[test]
    fn subdomain_rule_is_one_directional() {
        assert!(same_host_or_subdomain("circle.com", "www.circle.com"));
        assert!(same_host_or_subdomain("circle.com", "WWW.Circle.com."));
        assert!(same_host_or_subdomain("circle.com", "circle.com"));
        assert!(!same_host_or_subdomain("www.circle.com", "circle.com"));
        assert!(!same_host_or_subdomain("circle.com", "evilcircle.com"));
        assert!(!same_host_or_subdomain("circle.com", "circle.com.evil.net"));
    }
}
