//! The operator's explicit host mappings, curl-style.
//!
//! `--resolve HOST:PORT:ADDR[,ADDR…]` answers the name lookup for HOST on PORT;
//! `--connect-to HOST:PORT:ADDR:PORT2` sends connections for HOST:PORT to ADDR:PORT2.
//! In both, URLs, `Host` headers and the TLS server name stay HOST, so a replay of real hosts on a
//! local port keeps real URLs in the evidence. A mapped host is the operator's choice and is exempt
//! from the SSRF policy.
use std::net::IpAddr;

use crate::net::policy::canonical_host;

/// One `--resolve` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolveRule {
    pub host: String,
    pub port: u16,
    pub addrs: Vec<IpAddr>,
}

/// One `--connect-to` entry. `target_host` may be an address or a name (looked up without the SSRF policy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectToRule {
    pub host: String,
    pub port: u16,
    pub target_host: String,
    pub target_port: u16,
}

/// A mapping argument that does not have the documented shape; the message names the input and the form.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid {flag} value {input:?}: expected {form}")]
pub struct MappingError {
    pub flag: &'static str,
    pub input: String,
    pub form: &'static str,
}

const RESOLVE_FORM: &str =
    "HOST:PORT:ADDR[,ADDR...], e.g. horizon.stellar.org:443:127.0.0.1 (IPv6 in brackets)";
const CONNECT_TO_FORM: &str =
    "HOST:PORT:ADDR:PORT2, e.g. horizon.stellar.org:443:127.0.0.1:8443 (IPv6 in brackets)";

/// Splits on ':' outside square brackets, so `[::1]` stays one field.
fn fields(input: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, ch) in input.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => {
                out.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&input[start..]);
    out
}

fn parse_ip(text: &str) -> Option<IpAddr> {
    text.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

fn parse_host(text: &str) -> Option<String> {
    let host = canonical_host(text);
    let ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':'));
    ok.then_some(host)
}

fn parse_port(text: &str) -> Option<u16> {
    text.parse::<u16>().ok().filter(|p| *p != 0)
}

impl std::str::FromStr for ResolveRule {
    type Err = MappingError;

    fn from_str(input: &str) -> Result<Self, MappingError> {
        let err = || MappingError {
            flag: "--resolve",
            input: input.to_string(),
            form: RESOLVE_FORM,
        };
        let parts = fields(input);
        let [host, port, addrs] = parts.as_slice() else {
            return Err(err());
        };
        let addrs: Option<Vec<IpAddr>> = addrs.split(',').map(parse_ip).collect();
        Ok(ResolveRule {
            host: parse_host(host).ok_or_else(err)?,
            port: parse_port(port).ok_or_else(err)?,
            addrs: addrs.filter(|a| !a.is_empty()).ok_or_else(err)?,
        })
    }
}

impl std::str::FromStr for ConnectToRule {
    type Err = MappingError;

    fn from_str(input: &str) -> Result<Self, MappingError> {
        let err = || MappingError {
            flag: "--connect-to",
            input: input.to_string(),
            form: CONNECT_TO_FORM,
        };
        let parts = fields(input);
        let [host, port, target_host, target_port] = parts.as_slice() else {
            return Err(err());
        };
        Ok(ConnectToRule {
            host: parse_host(host).ok_or_else(err)?,
            port: parse_port(port).ok_or_else(err)?,
            target_host: parse_host(target_host).ok_or_else(err)?,
            target_port: parse_port(target_port).ok_or_else(err)?,
        })
    }
}

/// Where a connection for `host:port` goes, as the operator mapped it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mapped {
    /// Connect to these addresses on the requested port.
    Addrs(Vec<IpAddr>),
    /// Connect to this host (address or name) and port instead.
    ConnectTo(String, u16),
}

/// All operator mappings; `--connect-to` wins over `--resolve` for the same HOST:PORT, as in curl.
#[derive(Clone, Debug, Default)]
pub struct Mappings {
    pub resolve: Vec<ResolveRule>,
    pub connect_to: Vec<ConnectToRule>,
}

impl Mappings {
    /// The operator's mapping for `host:port`, if any. `host` must be canonical.
    pub fn lookup(&self, host: &str, port: u16) -> Option<Mapped> {
        if let Some(rule) = self
            .connect_to
            .iter()
            .find(|r| r.host == host && r.port == port)
        {
            return Some(Mapped::ConnectTo(
                rule.target_host.clone(),
                rule.target_port,
            ));
        }
        self.resolve
            .iter()
            .find(|r| r.host == host && r.port == port)
            .map(|r| Mapped::Addrs(r.addrs.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_resolve() {
        let rule: ResolveRule = "Horizon.Stellar.org:443:127.0.0.1,[::1]".parse().unwrap();
        assert_eq!(rule.host, "horizon.stellar.org");
        assert_eq!(rule.port, 443);
        assert_eq!(
            rule.addrs,
            vec![
                "127.0.0.1".parse::<IpAddr>().unwrap(),
                "::1".parse().unwrap()
            ]
        );
    }

    #[test]
    fn parses_connect_to() {
        let rule: ConnectToRule = "circle.com:443:127.0.0.1:8443".parse().unwrap();
        assert_eq!(rule.target_host, "127.0.0.1");
        assert_eq!(rule.target_port, 8443);
        let v6: ConnectToRule = "circle.com:443:[::1]:8443".parse().unwrap();
        assert_eq!(v6.target_host, "::1");
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "host",
            "host:443",
            "host:0:127.0.0.1",
            "host:x:127.0.0.1",
            "host:443:notip",
            "host:443:1.2.3.4:1:2",
        ] {
            assert!(bad.parse::<ResolveRule>().is_err(), "{bad}");
        }
        for bad in ["", "a:443:b", "a:443:b:0", "a:443:b:99999", "a b:443:c:1"] {
            assert!(bad.parse::<ConnectToRule>().is_err(), "{bad}");
        }
        let err = "x".parse::<ResolveRule>().unwrap_err().to_string();
        assert!(
            err.contains("--resolve") && err.contains("HOST:PORT:ADDR"),
            "{err}"
        );
    }

    #[test]
    fn connect_to_wins_over_resolve() {
        let maps = Mappings {
            resolve: vec!["a.com:443:1.2.3.4".parse().unwrap()],
            connect_to: vec!["a.com:443:127.0.0.1:9000".parse().unwrap()],
        };
        assert_eq!(
            maps.lookup("a.com", 443),
            Some(Mapped::ConnectTo("127.0.0.1".into(), 9000))
        );
        assert_eq!(maps.lookup("a.com", 80), None);
    }
}
