//! Which hosts the OAuth flow may contact: the guard against server-side request forgery.
//!
//! Every URL the flow fetches comes from a peer (a `WWW-Authenticate` header, a metadata
//! document, a redirect). A hostile MCP server could point them at the host's own services
//! (a cloud metadata endpoint on 169.254.169.254, a database on 10.0.0.5, an admin page on
//! 127.0.0.1). So each target is checked twice: its host as written (an IP literal in any of
//! the spellings resolvers accept: `2130706433`, `0177.0.0.1`, `[::ffff:127.0.0.1]`), and
//! every address its name resolves to, at connect time, so DNS cannot swap in a private
//! address after the check. Loopback is allowed only in dev mode (the conformance suite's
//! mock servers are on localhost); a test can also allow exact origins.

use std::{
    future::Future,
    io,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    pin::Pin,
    task::{Context, Poll},
};

use http::Uri;

use crate::Error;

/// Where OAuth discovery, registration and token requests may go.
#[derive(Debug, Clone, Default)]
pub struct TargetPolicy {
    allow_loopback: bool,
    allow_private: bool,
    allowed_origins: Vec<String>,
}

impl TargetPolicy {
    /// The default: public addresses over https only.
    pub fn public_only() -> Self {
        TargetPolicy::default()
    }

    /// Dev mode: loopback targets (and plain http to them) are allowed too.
    pub fn allow_loopback(mut self) -> Self {
        self.allow_loopback = true;
        self
    }

    /// Private, link-local and loopback targets are allowed (an intranet deployment).
    pub fn allow_private(mut self) -> Self {
        self.allow_private = true;
        self.allow_loopback = true;
        self
    }

    /// One exact origin (`http://127.0.0.1:8080`) is allowed whatever its address.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins
            .push(origin.into().trim_end_matches('/').to_ascii_lowercase());
        self
    }

    /// Whether `uri`'s origin was allowed explicitly.
    pub(crate) fn is_allowed_origin(&self, uri: &Uri) -> bool {
        origin(uri).is_some_and(|o| self.allowed_origins.contains(&o))
    }

    /// Checks a URL before anything is sent to it: scheme, host as written, port.
    pub(crate) fn check_url(&self, uri: &Uri) -> Result<(), Error> {
        if self.is_allowed_origin(uri) {
            return Ok(());
        }
        let host = uri
            .host()
            .ok_or_else(|| Error::Auth(format!("`{uri}` has no host")))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let literal = parse_ip_literal(host);
        let loopback_name = host.eq_ignore_ascii_case("localhost")
            || host.to_ascii_lowercase().ends_with(".localhost");
        if loopback_name && !self.allow_loopback {
            return Err(Error::Auth(format!(
                "refusing the loopback target `{host}` (not in dev mode)"
            )));
        }
        if let Some(ip) = literal {
            self.check_ip(ip)?;
        }
        match uri.scheme_str() {
            Some("https") => {}
            // Plain http only to loopback, in dev mode (OAuth 2.1 §1.5).
            Some("http")
                if self.allow_loopback
                    && (loopback_name || literal.is_some_and(|ip| ip.is_loopback())) => {}
            Some("http") if self.allow_private && literal.is_some() => {}
            Some(other) => {
                return Err(Error::Auth(format!(
                    "refusing `{other}://` for an OAuth endpoint (https only{})",
                    if self.allow_loopback {
                        ", or http to loopback"
                    } else {
                        ""
                    }
                )));
            }
            None => return Err(Error::Auth(format!("`{uri}` has no scheme"))),
        }
        Ok(())
    }

    /// Checks one address a name resolved to.
    pub(crate) fn check_ip(&self, ip: IpAddr) -> Result<(), Error> {
        match classify(ip) {
            Class::Public => Ok(()),
            Class::Loopback if self.allow_loopback => Ok(()),
            Class::Private if self.allow_private => Ok(()),
            Class::Loopback => Err(Error::Auth(format!(
                "refusing the loopback address {ip} (not in dev mode)"
            ))),
            Class::Private => Err(Error::Auth(format!(
                "refusing the private or reserved address {ip}"
            ))),
        }
    }
}

/// `scheme://host[:port]`, lower-case, the port only when given.
pub(crate) fn origin(uri: &Uri) -> Option<String> {
    Some(format!("{}://{}", uri.scheme_str()?, uri.authority()?.as_str()).to_ascii_lowercase())
}

enum Class {
    Public,
    Loopback,
    Private,
}

fn classify(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            // An IPv4 address in IPv6 clothing (mapped, compatible, NAT64, 6to4) is judged as
            // the IPv4 address it reaches.
            if let Some(v4) = embedded_v4(v6) {
                return classify_v4(v4);
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Class::Loopback
            } else if v6.is_unspecified()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (s[0] & 0xff00) == 0xff00 // multicast
                || (s[0] == 0x2001 && s[1] == 0x0db8)
            // documentation
            {
                Class::Private
            } else {
                Class::Public
            }
        }
    }
}

fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    // IPv4-compatible ::a.b.c.d (but not :: and ::1 themselves).
    if s[..6].iter().all(|&x| x == 0) && !(s[6] == 0 && s[7] <= 1) {
        return Some(tail);
    }
    // NAT64 64:ff9b::/96
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0) {
        return Some(tail);
    }
    // 6to4 2002:AABB:CCDD::/48
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

fn classify_v4(ip: Ipv4Addr) -> Class {
    let o = ip.octets();
    if o[0] == 127 {
        Class::Loopback
    } else if o[0] == 0 // "this network", 0.0.0.0 reaches the local host
        || o[0] == 10
        || (o[0] == 172 && (16..32).contains(&o[1]))
        || (o[0] == 192 && o[1] == 168)
        || (o[0] == 169 && o[1] == 254) // link-local, cloud metadata
        || (o[0] == 100 && (64..128).contains(&o[1])) // carrier-grade NAT
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // benchmarking
        || o[0] >= 224
    // multicast, reserved, broadcast
    {
        Class::Private
    } else {
        Class::Public
    }
}

/// An IP literal as resolvers read it: dotted quads whose parts may be decimal, octal (`0177`)
/// or hex (`0x7f`), with fewer than four parts (`127.1`, `2130706433`), or IPv6.
pub(crate) fn parse_ip_literal(host: &str) -> Option<IpAddr> {
    if let Ok(v6) = host.parse::<Ipv6Addr>() {
        return Some(IpAddr::V6(v6));
    }
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(parts.len());
    for p in &parts {
        nums.push(parse_inet_part(p)?);
    }
    let (last, head) = nums.split_last()?;
    if head.iter().any(|&n| n > 255) {
        return None;
    }
    let bits_left = 8 * (4 - head.len() as u32);
    if bits_left < 32 && *last >= (1u64 << bits_left) {
        return None;
    }
    if *last > u32::MAX as u64 {
        return None;
    }
    let mut value: u32 = 0;
    for (i, &n) in head.iter().enumerate() {
        value |= (n as u32) << (24 - 8 * i as u32);
    }
    value |= *last as u32;
    Some(IpAddr::V4(Ipv4Addr::from(value)))
}

fn parse_inet_part(p: &str) -> Option<u64> {
    if p.is_empty() || p.len() > 12 {
        return None;
    }
    if let Some(hex) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
        return if hex.is_empty() {
            Some(0)
        } else {
            u64::from_str_radix(hex, 16).ok()
        };
    }
    if p.len() > 1 && p.starts_with('0') {
        return u64::from_str_radix(&p[1..], 8).ok();
    }
    p.parse().ok()
}

/// The DNS resolver of the OAuth HTTP client: resolves with the system resolver, then keeps
/// only the addresses the policy allows (none left: the connection fails before any byte is
/// sent).
#[derive(Clone)]
pub(crate) struct GuardedResolver {
    pub(crate) policy: TargetPolicy,
    /// The request's origin was allowed explicitly: every address is fine.
    pub(crate) allow_all: bool,
}

type Resolving = Pin<Box<dyn Future<Output = io::Result<std::vec::IntoIter<SocketAddr>>> + Send>>;

impl tower_service::Service<hyper_util::client::legacy::connect::dns::Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = Resolving;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: hyper_util::client::legacy::connect::dns::Name) -> Self::Future {
        let policy = self.policy.clone();
        let allow_all = self.allow_all;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut refused = None;
            let kept: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| match allow_all {
                    true => true,
                    false => match policy.check_ip(a.ip()) {
                        Ok(()) => true,
                        Err(e) => {
                            refused = Some(e);
                            false
                        }
                    },
                })
                .collect();
            if kept.is_empty() {
                let why = refused
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "no address".into());
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("`{host}`: {why}"),
                ));
            }
            Ok(kept.into_iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        parse_ip_literal(s).unwrap_or_else(|| panic!("{s} should parse"))
    }

    #[test]
    fn odd_spellings_of_loopback_are_loopback() {
        for s in [
            "127.0.0.1",
            "2130706433",
            "0177.0.0.1",
            "0x7f.0.0.1",
            "0x7f000001",
            "127.1",
            "127.0.1",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:7f00:1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
        ] {
            assert!(
                matches!(classify(ip(s)), Class::Loopback),
                "{s} -> {:?}",
                ip(s)
            );
        }
    }

    #[test]
    fn private_ranges_are_private() {
        for s in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "fe80::1",
            "fd00::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "224.0.0.1",
            "::",
        ] {
            assert!(matches!(classify(ip(s)), Class::Private), "{s}");
        }
        for s in ["8.8.8.8", "172.32.0.1", "2606:4700::1111", "1.1.1.1"] {
            assert!(matches!(classify(ip(s)), Class::Public), "{s}");
        }
    }

    #[test]
    fn names_and_junk_are_not_literals() {
        for s in [
            "example.com",
            "1.2.3.4.5",
            "256.1.1.1",
            "08.1.1.1",
            "",
            "0x",
        ] {
            assert!(
                s == "0x" || parse_ip_literal(s).is_none(),
                "{s} parsed as {:?}",
                parse_ip_literal(s)
            );
        }
    }

    #[test]
    fn urls_are_checked_by_scheme_and_host() {
        let strict = TargetPolicy::public_only();
        let dev = TargetPolicy::public_only().allow_loopback();
        let u = |s: &str| s.parse::<Uri>().unwrap();
        assert!(strict.check_url(&u("https://auth.example.com/x")).is_ok());
        assert!(strict.check_url(&u("http://auth.example.com/x")).is_err());
        assert!(strict.check_url(&u("http://localhost:1/x")).is_err());
        assert!(strict.check_url(&u("https://localhost:1/x")).is_err());
        assert!(strict.check_url(&u("https://2130706433/x")).is_err());
        assert!(
            strict
                .check_url(&u("https://[::ffff:127.0.0.1]/x"))
                .is_err()
        );
        assert!(strict.check_url(&u("https://169.254.169.254/x")).is_err());
        assert!(strict.check_url(&u("ftp://auth.example.com/x")).is_err());
        assert!(dev.check_url(&u("http://localhost:1/x")).is_ok());
        assert!(dev.check_url(&u("http://127.0.0.1:1/x")).is_ok());
        assert!(dev.check_url(&u("http://10.0.0.1:1/x")).is_err());
        assert!(dev.check_url(&u("http://example.com/x")).is_err());
        let one = TargetPolicy::public_only().allow_origin("http://127.0.0.1:9");
        assert!(one.check_url(&u("http://127.0.0.1:9/a")).is_ok());
        assert!(one.check_url(&u("http://127.0.0.1:10/a")).is_err());
    }

    #[tokio::test]
    async fn the_resolver_drops_loopback_answers() {
        use hyper_util::client::legacy::connect::dns::Name;
        use std::str::FromStr;
        use tower_service::Service;
        let mut strict = GuardedResolver {
            policy: TargetPolicy::public_only(),
            allow_all: false,
        };
        let e = strict
            .call(Name::from_str("localhost").unwrap())
            .await
            .expect_err("localhost resolves to loopback only");
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
        let mut dev = GuardedResolver {
            policy: TargetPolicy::public_only().allow_loopback(),
            allow_all: false,
        };
        let found: Vec<SocketAddr> = dev
            .call(Name::from_str("localhost").unwrap())
            .await
            .unwrap()
            .collect();
        assert!(found.iter().all(|a| a.ip().is_loopback()) && !found.is_empty());
    }
}
