//! Where a point's load goes: the target's port and hosts, what TLS trusts, and the load
//! threads. Read by the HTTP and rooms scenarios alike.

use std::path::PathBuf;

use crate::http;

/// Where a point's load goes and what it runs on.
pub(crate) struct Reach {
    /// The target's port.
    pub(crate) port: u16,
    /// This binary, for `{headroom}` in URLs.
    pub(crate) headroom_bin: PathBuf,
    /// The hosts load may go to.
    pub(crate) allowed: http::Allowed,
    /// Load threads for each HTTP scenario.
    pub(crate) threads: usize,
    /// What TLS trusts.
    pub(crate) trust: crate::tls::Trust,
    /// The spec's folder, which data files are relative to.
    pub(crate) spec_dir: PathBuf,
    /// Where connections come from (`[generator] source_addresses`).
    pub(crate) source_addresses: Option<headroom_spec::source::SourceAddresses>,
    /// The share of the run this process sends (`--segment`).
    pub(crate) segment: crate::stripe::Segment,
    /// The run's seed for Poisson arrivals; each scenario derives its own from it.
    pub(crate) seed: u64,
    /// When the load starts, announced by the segments' barrier; soon after the scenario is
    /// ready otherwise.
    pub(crate) start_at: Option<tokio::time::Instant>,
    /// Where a segmented run's scenarios meet the other segments (rooms, once their sockets
    /// are open).
    pub(crate) meetings: Option<crate::barrier::Meetings>,
}

impl Reach {
    pub(crate) fn new(
        port: u16,
        headroom_bin: &std::path::Path,
        allowed: &http::Allowed,
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
