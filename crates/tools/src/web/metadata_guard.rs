//! `fetch_url` runs in quiver itself, outside the sandbox, so it reaches what
//! a sandboxed command cannot: the cloud's instance metadata service. On a
//! cloud VM or CI runner `http://169.254.169.254/` (AWS, Azure, GCP's
//! `metadata.google.internal`, AWS's IPv6 `fd00:ec2::254`) hands out the
//! machine's credentials, and a page of a cloned repository is enough to ask
//! a model to fetch them. No page an agent needs lives at a link-local
//! address, so none is fetched: not by literal address, not through a
//! redirect, not by a name that resolves there.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// AWS's instance metadata service over IPv6 (outside fe80::/10).
const AWS_IMDS_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// Link-local (169.254.0.0/16, fe80::/10, either inside an IPv4-mapped IPv6
/// address) or AWS's IPv6 metadata address.
pub(crate) fn forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            v6.to_ipv4_mapped().is_some_and(|v4| v4.is_link_local())
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6 == AWS_IMDS_V6
        }
    }
}

/// The refusal for a URL whose host is a forbidden address literal.
pub(crate) fn check_literal(url: &Url) -> Result<(), String> {
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        _ => return Ok(()),
    };
    if forbidden(ip) {
        return Err(refusal(&ip.to_string()));
    }
    Ok(())
}

fn refusal(what: &str) -> String {
    format!(
        "{what} is a link-local address, where cloud machines serve their own credentials (instance metadata); \
         fetch_url never reaches it"
    )
}

/// The system resolver with forbidden addresses dropped; a name that
/// resolves to nothing else fails.
pub(crate) struct NoLinkLocal;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Resolve for NoLinkLocal {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await.map_err(BoxError::from)?.collect();
            let kept: Vec<SocketAddr> = found.iter().copied().filter(|a| !forbidden(a.ip())).collect();
            if let (true, Some(first)) = (kept.is_empty(), found.first()) {
                return Err(BoxError::from(refusal(&format!("`{host}` resolves to {}, which", first.ip()))));
            }
            Ok::<Addrs, BoxError>(Box::new(kept.into_iter()))
        })
    }
}
