//! `[generator] source_addresses`: the local addresses the generator's connections come from.
//!
//! Every client sharing one source address turns a server's per-address rate limit or
//! connection cap into a false cliff, and runs out of ephemeral ports near one port range
//! (about 28,000 sockets on Linux's default). Spreading clients over addresses lifts both.

use std::net::{IpAddr, Ipv4Addr};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the generator's connections come from, as written in the spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SourceAddresses {
    /// `"spread"` (every client its own loopback address, 127.0.0.0/8, for a loopback
    /// target) or an address block (`"127.0.0.0/24"`) whose addresses clients take in turn.
    Named(String),
    /// These addresses, which clients take in turn.
    List(#[schemars(length(min = 1, max = 65536))] Vec<String>),
}

/// The keyword for one loopback address per client.
pub const SPREAD: &str = "spread";

/// The addresses clients bind before they connect: client `k` takes the `k`-th, round-robin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourcePool {
    /// Every client its own address of the target's loopback block (127.0.0.0/8); which
    /// block depends on the target, known once its host is resolved.
    Spread,
    /// `count` consecutive addresses from `first`.
    Block {
        /// The block's first usable address.
        first: IpAddr,
        /// How many addresses follow it, `first` included (at least one).
        count: u128,
    },
    /// These addresses.
    List(Vec<IpAddr>),
}

/// What is wrong with a `source_addresses` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// A string that is neither `spread` nor an address block.
    #[error("`{0}` is not `spread` nor an address block like `127.0.0.0/24`")]
    NotABlock(String),
    /// A block whose prefix length is out of range for its family.
    #[error("`{text}`: a prefix is at most {max} bits for this address family")]
    Prefix {
        /// The block as written.
        text: String,
        /// The family's longest prefix.
        max: u8,
    },
    /// A list item that is not an IP address, by its index.
    #[error("`{text}` is not an IP address")]
    NotAnAddress {
        /// Its index in the list.
        index: usize,
        /// The item as written.
        text: String,
    },
    /// A list mixing IPv4 and IPv6, at the first item of the other family.
    #[error("`{text}` is not of the same family as the first address")]
    MixedFamilies {
        /// Its index in the list.
        index: usize,
        /// The item as written.
        text: String,
    },
}

impl SourceAddresses {
    /// The addresses this value names.
    pub fn pool(&self) -> Result<SourcePool, SourceError> {
        match self {
            SourceAddresses::Named(text) if text == SPREAD => Ok(SourcePool::Spread),
            SourceAddresses::Named(text) => block(text),
            SourceAddresses::List(items) => {
                let mut addresses = Vec::with_capacity(items.len());
                for (index, text) in items.iter().enumerate() {
                    let address: IpAddr =
                        text.trim().parse().map_err(|_| SourceError::NotAnAddress {
                            index,
                            text: text.clone(),
                        })?;
                    if let Some(first) = addresses.first()
                        && is_v4(first) != is_v4(&address)
                    {
                        return Err(SourceError::MixedFamilies {
                            index,
                            text: text.clone(),
                        });
                    }
                    addresses.push(address);
                }
                Ok(SourcePool::List(addresses))
            }
        }
    }
}

fn is_v4(address: &IpAddr) -> bool {
    matches!(address, IpAddr::V4(_))
}

/// `ADDRESS/PREFIX`: its usable addresses. An IPv4 block longer than two addresses leaves out
/// its network and broadcast addresses, an IPv6 one its subnet-router anycast address.
fn block(text: &str) -> Result<SourcePool, SourceError> {
    let not_a_block = || SourceError::NotABlock(text.to_owned());
    let (address, prefix) = text.trim().split_once('/').ok_or_else(not_a_block)?;
    let address: IpAddr = address.parse().map_err(|_| not_a_block())?;
    let prefix: u8 = prefix.parse().map_err(|_| not_a_block())?;
    let bits: u8 = if is_v4(&address) { 32 } else { 128 };
    if prefix > bits {
        return Err(SourceError::Prefix {
            text: text.to_owned(),
            max: bits,
        });
    }
    let host_bits = u32::from(bits - prefix);
    let size: u128 = 1u128.checked_shl(host_bits).unwrap_or(u128::MAX);
    let mask: u128 = if host_bits >= 128 {
        0
    } else {
        !((1u128 << host_bits) - 1)
    };
    let network = to_bits(address) & mask;
    // Blocks of one or two addresses (/31, /32, /127, /128) are all usable.
    let (skip, count) = match (is_v4(&address), size) {
        (_, 1 | 2) => (0, size),
        (true, _) => (1, size - 2),
        (false, _) => (1, size - 1),
    };
    Ok(SourcePool::Block {
        first: from_bits(network + skip, is_v4(&address)),
        count,
    })
}

impl SourcePool {
    /// Client `k`'s address, once the pool is concrete (`Spread` resolved to a block).
    pub fn address(&self, k: u64) -> Option<IpAddr> {
        match self {
            SourcePool::Spread => None,
            SourcePool::Block { first, count } => {
                let offset = u128::from(k) % (*count).max(1);
                Some(from_bits(to_bits(*first) + offset, is_v4(first)))
            }
            SourcePool::List(addresses) => {
                let index = usize::try_from(k % addresses.len().max(1) as u64).ok()?;
                addresses.get(index).copied()
            }
        }
    }

    /// How many addresses it holds (`None` for `Spread`, not resolved yet).
    pub fn size(&self) -> Option<u128> {
        match self {
            SourcePool::Spread => None,
            SourcePool::Block { count, .. } => Some(*count),
            SourcePool::List(addresses) => Some(addresses.len() as u128),
        }
    }

    /// `Spread` for a target at `target`: IPv4 loopback's block, 127.0.0.1 to
    /// 127.255.255.254. Other targets have no block to spread over (IPv6 has one loopback
    /// address): the error says what to write instead.
    pub fn spread_for(target: IpAddr) -> Result<SourcePool, String> {
        match target {
            IpAddr::V4(v4) if v4.is_loopback() => Ok(SourcePool::Block {
                first: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)),
                count: (1 << 24) - 2,
            }),
            IpAddr::V6(v6) if v6.is_loopback() => Err(format!(
                "`source_addresses = \"spread\"` needs an IPv4 loopback target: IPv6 has one loopback address ({v6}); load 127.0.0.1 instead"
            )),
            other => Err(format!(
                "`source_addresses = \"spread\"` spreads over loopback addresses, which reach only a loopback target, not {other}; list this machine's own addresses instead (`source_addresses = [\"10.0.0.5\", \"10.0.0.6\"]`)"
            )),
        }
    }

    /// Whether its addresses are of `target`'s family (`Spread`: decided by `spread_for`).
    pub fn same_family(&self, target: IpAddr) -> bool {
        self.address(0).is_none_or(|a| is_v4(&a) == is_v4(&target))
    }
}

fn to_bits(address: IpAddr) -> u128 {
    match address {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn from_bits(bits: u128, v4: bool) -> IpAddr {
    if v4 {
        // A v4 block's offsets stay within 32 bits.
        IpAddr::V4(Ipv4Addr::from(u32::try_from(bits).unwrap_or(u32::MAX)))
    } else {
        IpAddr::V6(bits.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(text: &str) -> Result<SourcePool, SourceError> {
        SourceAddresses::Named(text.to_owned()).pool()
    }

    #[test]
    fn a_block_leaves_out_its_network_and_broadcast_addresses() {
        let pool = named("127.0.0.0/24").expect("a block");
        assert_eq!(pool.size(), Some(254));
        assert_eq!(pool.address(0), Some("127.0.0.1".parse().expect("ip")));
        assert_eq!(pool.address(253), Some("127.0.0.254".parse().expect("ip")));
        assert_eq!(pool.address(254), Some("127.0.0.1".parse().expect("ip")));
        // An address inside the block names the same block.
        assert_eq!(named("127.0.0.77/24"), Ok(pool));
    }

    #[test]
    fn the_smallest_blocks_are_all_usable() {
        let one = named("127.0.0.9/32").expect("a block");
        assert_eq!(one.size(), Some(1));
        assert_eq!(one.address(5), Some("127.0.0.9".parse().expect("ip")));
        let two = named("127.0.0.8/31").expect("a block");
        assert_eq!(two.address(1), Some("127.0.0.9".parse().expect("ip")));
        let v6 = named("fd00::/126").expect("a block");
        assert_eq!(v6.size(), Some(3));
        assert_eq!(v6.address(0), Some("fd00::1".parse().expect("ip")));
        assert!(named("::/0").is_ok_and(|p| p.size() == Some(u128::MAX - 1)));
    }

    #[test]
    fn a_list_goes_round_robin_within_one_family() {
        let list = SourceAddresses::List(vec!["127.0.0.2".into(), "127.0.0.3".into()]);
        let pool = list.pool().expect("a list");
        assert_eq!(pool.address(3), Some("127.0.0.3".parse().expect("ip")));
        let mixed = SourceAddresses::List(vec!["127.0.0.2".into(), "::1".into()]);
        assert!(matches!(
            mixed.pool(),
            Err(SourceError::MixedFamilies { index: 1, .. })
        ));
        let wrong = SourceAddresses::List(vec!["127.0.0.2".into(), "127.0.0".into()]);
        assert!(matches!(
            wrong.pool(),
            Err(SourceError::NotAnAddress { index: 1, .. })
        ));
    }

    #[test]
    fn bad_blocks_say_why() {
        assert!(matches!(named("spraed"), Err(SourceError::NotABlock(_))));
        assert!(matches!(
            named("127.0.0.0/x"),
            Err(SourceError::NotABlock(_))
        ));
        assert!(matches!(
            named("127.0.0.0/33"),
            Err(SourceError::Prefix { max: 32, .. })
        ));
    }

    #[test]
    fn spread_is_ipv4_loopback_only() {
        let pool = SourcePool::spread_for("127.0.0.1".parse().expect("ip")).expect("a block");
        assert_eq!(pool.size(), Some(16_777_214));
        assert_eq!(pool.address(0), Some("127.0.0.1".parse().expect("ip")));
        assert_eq!(
            pool.address(16_777_213),
            Some("127.255.255.254".parse().expect("ip"))
        );
        let v6 = SourcePool::spread_for("::1".parse().expect("ip")).expect_err("refused");
        assert!(v6.contains("IPv6 has one loopback address"), "{v6}");
        let far = SourcePool::spread_for("10.0.0.1".parse().expect("ip")).expect_err("refused");
        assert!(far.contains("list this machine's own addresses"), "{far}");
    }
}
