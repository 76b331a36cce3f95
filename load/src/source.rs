//! The local addresses a scenario's connections come from (`[generator] source_addresses`):
//! client `k` binds the pool's `k`-th address before it connects, so clients look like many
//! hosts to the server and each address has its own range of ephemeral ports.

use std::collections::HashSet;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;

use headroom_spec::source::{SourceAddresses, SourcePool};
use tokio::net::{TcpSocket, TcpStream};

/// A scenario's source addresses, and the ones its connections used.
#[derive(Debug)]
pub struct Sources {
    pool: SourcePool,
    used: Mutex<HashSet<IpAddr>>,
}

impl Sources {
    /// The pool of `config` for connections to `targets` (resolved already): `spread`
    /// becomes IPv4 loopback's block, and every address must be of the targets' family and
    /// bindable here (the first and last a scenario of `clients` would use are tried).
    pub fn for_targets(
        config: &SourceAddresses,
        targets: &[SocketAddr],
        clients: u64,
    ) -> Result<Sources, String> {
        if targets.is_empty() {
            return Err("no address to load from source addresses (a headroom bug)".to_owned());
        }
        let mut pool = config
            .pool()
            .map_err(|e| format!("[generator] source_addresses: {e}"))?;
        if pool == SourcePool::Spread {
            // Every target must be IPv4 loopback, and all share its one block.
            for target in targets {
                pool = SourcePool::spread_for(target.ip())?;
            }
        }
        Self::checked(pool, targets, clients)
    }

    /// `for_targets` when `config` is set: `None`, the kernel's choice, otherwise.
    pub fn optional(
        config: Option<&SourceAddresses>,
        targets: &[SocketAddr],
        clients: u64,
    ) -> Result<Option<Sources>, String> {
        config
            .map(|config| Sources::for_targets(config, targets, clients))
            .transpose()
    }

    fn checked(pool: SourcePool, targets: &[SocketAddr], clients: u64) -> Result<Sources, String> {
        for target in targets {
            if !pool.same_family(target.ip()) {
                return Err(format!(
                    "[generator] source_addresses are of another family than {target}, where load goes: list addresses of its family"
                ));
            }
        }
        let last = u64::try_from(pool.size().unwrap_or(1).min(u128::from(clients.max(1))))
            .unwrap_or(u64::MAX)
            - 1;
        for k in [0, last] {
            let Some(address) = pool.address(k) else {
                continue;
            };
            bind(address).map_err(|e| {
                format!(
                    "[generator] source_addresses: cannot bind {address} ({e}): it is not an address of this machine; list its own (`ip -brief address`)"
                )
            })?;
        }
        Ok(Sources {
            pool,
            used: Mutex::new(HashSet::new()),
        })
    }

    /// Client `k`'s address.
    pub fn address(&self, client: u64) -> Option<IpAddr> {
        self.pool.address(client)
    }

    /// A TCP connection to `to` from client `client`'s address.
    pub async fn connect(&self, client: u64, to: SocketAddr) -> io::Result<TcpStream> {
        let Some(from) = self.address(client) else {
            return TcpStream::connect(to).await;
        };
        let socket = bind(from)?;
        let stream = socket.connect(to).await?;
        if let Ok(mut used) = self.used.lock() {
            used.insert(from);
        }
        Ok(stream)
    }

    /// How many addresses connections came from.
    pub fn used(&self) -> u64 {
        self.used.lock().map_or(0, |used| used.len() as u64)
    }
}

/// A TCP socket bound to `address` and a port the kernel picks.
fn bind(address: IpAddr) -> io::Result<TcpSocket> {
    let socket = match address {
        IpAddr::V4(_) => TcpSocket::new_v4()?,
        IpAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.bind(SocketAddr::new(address, 0))?;
    Ok(socket)
}

/// Whether a connect failed for want of a local port: `EADDRNOTAVAIL` from a connect that let
/// the kernel pick (every port of the one address in use to that server), `EADDRINUSE` from a
/// bind to a source address with none left.
pub fn out_of_ports(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::AddrNotAvailable | io::ErrorKind::AddrInUse
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(text: &str) -> SocketAddr {
        text.parse().expect("a socket address")
    }

    #[test]
    fn spread_gives_each_client_its_own_loopback_address() {
        let config = SourceAddresses::Named("spread".into());
        let sources =
            Sources::for_targets(&config, &[target("127.0.0.1:80")], 1_000).expect("a pool");
        assert_eq!(sources.address(0), Some("127.0.0.1".parse().expect("ip")));
        assert_eq!(
            sources.address(999),
            Some("127.0.3.232".parse().expect("ip"))
        );
        let v6 = Sources::for_targets(&config, &[target("[::1]:80")], 1).expect_err("refused");
        assert!(v6.contains("IPv6 has one loopback address"), "{v6}");
    }

    #[test]
    fn addresses_of_another_family_or_not_this_machines_are_refused() {
        let list = SourceAddresses::List(vec!["127.0.0.2".into()]);
        let error = Sources::for_targets(&list, &[target("[::1]:80")], 1).expect_err("refused");
        assert!(error.contains("another family"), "{error}");
        // TEST-NET-3 is documentation only: no machine has it.
        let far = SourceAddresses::List(vec!["203.0.113.7".into()]);
        let error = Sources::for_targets(&far, &[target("127.0.0.1:80")], 1).expect_err("refused");
        assert!(error.contains("not an address of this machine"), "{error}");
    }
}
