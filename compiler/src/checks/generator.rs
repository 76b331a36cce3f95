//! `[generator]`: the source addresses, well formed and fit for the hosts load goes to.

use std::net::IpAddr;

use headroom_spec::source::{SourceError, SourcePool};

use super::target::{is_loopback, url_host};

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};

impl Checker<'_> {
    pub(super) fn generator(&mut self) {
        let Some(sources) = &self.spec.generator.source_addresses else {
            return;
        };
        let pointer = "/generator/source_addresses";
        let pool = match sources.pool() {
            Ok(pool) => pool,
            Err(error) => {
                let at = match &error {
                    SourceError::NotAnAddress { index, .. }
                    | SourceError::MixedFamilies { index, .. } => format!("{pointer}/{index}"),
                    SourceError::NotABlock(_) | SourceError::Prefix { .. } => pointer.to_owned(),
                };
                let hint = match &error {
                    SourceError::MixedFamilies { .. } => {
                        "list addresses of one family: the target is reached over one"
                    }
                    _ => {
                        "write `\"spread\"`, a block like `\"127.0.0.0/24\"`, or addresses like `[\"127.0.0.2\", \"127.0.0.3\"]`"
                    }
                };
                self.push(
                    Diagnostic::new(Code::SourceAddresses, error.to_string())
                        .at(&at, self.value_span(&at))
                        .label("not a source address")
                        .hint(hint),
                );
                return;
            }
        };
        // Hosts written as addresses are known now; names (localhost) once resolved.
        for (at, url) in self.urls() {
            if !at.starts_with("/scenario/") {
                continue;
            }
            let Some(host) = url_host(url) else { continue };
            let Ok(ip) = host.parse::<IpAddr>() else {
                continue;
            };
            let (why, label) = match &pool {
                SourcePool::Spread if SourcePool::spread_for(ip).is_err() => (
                    format!(
                        "`source_addresses = \"spread\"` needs an IPv4 loopback target, and load goes to `{host}`"
                    ),
                    if is_loopback(host) {
                        "IPv6 has this one loopback address"
                    } else {
                        "not loopback: no loopback address reaches it"
                    },
                ),
                SourcePool::Spread => continue,
                _ if !pool.same_family(ip) => (
                    format!("the source addresses are of another family than `{host}`"),
                    "a connection cannot go from one family to the other",
                ),
                _ => continue,
            };
            let start = url.find(host).unwrap_or(0);
            let span = self.inner_span(&at, start..start + host.len());
            self.push(
                Diagnostic::new(Code::SourceAddresses, why)
                    .at(&at, span)
                    .label(label)
                    .hint("load 127.0.0.1, or list this machine's own addresses of the target's family"),
            );
            return;
        }
    }
}
