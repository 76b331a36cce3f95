//! Where a point's load goes: the target's port and hosts, what TLS trusts, and the load
//! threads. Read by the HTTP and rooms scenarios alike.

use std::path::PathBuf;

use crate::web;

/// Where a point's load goes and what it runs on.
pub struct Reach {
    /// The target's port.
    pub port: u16,
    /// This binary, for `{headroom}` in URLs.
    pub headroom_bin: PathBuf,
    /// The hosts load may go to.
    pub allowed: web::Allowed,
    /// Load threads for each HTTP scenario.
    pub threads: usize,
    /// What TLS trusts.
    pub trust: crate::tls::Trust,
    /// The spec's folder, which data files are relative to.
    pub spec_dir: PathBuf,
    /// Where connections come from (`[generator] source_addresses`).
    pub source_addresses: Option<headroom_spec::source::SourceAddresses>,
    /// The share of the run this process sends (`--segment`).
    pub segment: crate::stripe::Segment,
    /// The run's seed for Poisson arrivals; each scenario derives its own from it.
    pub seed: u64,
    /// When the load starts, announced by the segments' barrier; soon after the scenario is
    /// ready otherwise.
    pub start_at: Option<tokio::time::Instant>,
    /// Where a segmented run's scenarios meet the other segments (rooms, once their sockets
    /// are open).
    pub meetings: Option<crate::barrier::Meetings>,
}

impl Reach {
    /// Where one point's load goes: the port, the hosts it may reach, TLS trust, the load
    /// threads, the source addresses and the segments' meetings.
    pub fn new(
        port: u16,
        headroom_bin: &std::path::Path,
        allowed: &web::Allowed,
        threads: usize,
        trust: &crate::tls::Trust,
        source_addresses: Option<&headroom_spec::source::SourceAddresses>,
        segment: crate::stripe::Segment,
    ) -> Reach {
        Reach {
            port,
            headroom_bin: headroom_bin.to_path_buf(),
            allowed: allowed.clone(),
            threads,
            trust: trust.clone(),
            spec_dir: trust.spec_dir().to_path_buf(),
            source_addresses: source_addresses.cloned(),
            segment,
            seed: 0,
            start_at: None,
            meetings: None,
        }
    }
}
