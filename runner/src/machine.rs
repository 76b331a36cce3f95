//! What this machine allows one run, read when a run starts: open files per process and memory
//! available. A point that cannot fit is refused before any target starts, with its figures,
//! instead of failing half-way with sockets that never opened and /proc that cannot be read.
//!
//! `validate` checks fixed bounds that hold on any machine (E038); this checks the machine the
//! run is on, which may not be the one the spec was written on.

use headroom_matrix::Point;
use headroom_matrix::RunMatrix;
use headroom_matrix::resolved::Scenario;
use headroom_spec::scenario::Executor;

/// Descriptors a run takes besides its sockets: standard streams, logs, the event loop, the
/// metrics scrapes, /proc readings.
pub const RESERVED_FILES: u64 = 64;

/// The generator's memory per open socket, at least: 185 MB for 20,000 WebSocket clients
/// (9.5 KiB each) measured on the runner with `examples`-style rooms. The target's own memory
/// per socket comes on top and is not known before it runs.
pub const GENERATOR_BYTES_PER_SOCKET: u64 = 8 * 1024;

/// The limits of this machine for one process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    /// Files one process may open (the soft limit, after headroom raised it to the hard one).
    pub open_files: u64,
    /// `MemAvailable` of /proc/meminfo, when it could be read.
    pub available_memory: Option<u64>,
    /// Ephemeral ports of one source address (`net.ipv4.ip_local_port_range`), when it could
    /// be read: the sockets one address can hold open to a server.
    pub local_ports: Option<u64>,
}

impl Machine {
    /// This machine now. Call after [`crate::raise_open_files`].
    pub fn read() -> Machine {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        let available_memory = crate::environment::meminfo().and_then(|m| m.mem_available);
        Machine {
            open_files: limit.current.unwrap_or(u64::MAX),
            available_memory,
            local_ports: local_ports(),
        }
    }
}

/// The size of `net.ipv4.ip_local_port_range` (`32768 60999`: 28,232 ports).
fn local_ports() -> Option<u64> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut ends = range.split_whitespace().map(str::parse::<u64>);
    let (low, high) = (ends.next()?.ok()?, ends.next()?.ok()?);
    (high >= low).then(|| high - low + 1)
}

/// How many source addresses `[generator] source_addresses` gives (1: the kernel's one).
fn source_count(matrix: &RunMatrix) -> u64 {
    use headroom_spec::source::SourcePool;
    match matrix.generator.source_addresses.as_ref().map(|s| s.pool()) {
        // Its block is known once the target resolves: IPv4 loopback's is the only one.
        Some(Ok(SourcePool::Spread)) => (1 << 24) - 2,
        Some(Ok(pool)) => u64::try_from(pool.size().unwrap_or(1)).unwrap_or(u64::MAX),
        Some(Err(_)) | None => 1,
    }
}

/// What one run of a point holds open at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// WebSocket clients of every rooms scenario, and the virtual users of closed-model HTTP
    /// scenarios (one connection each): all open together.
    pub sockets: u64,
    /// Generator memory for those sockets and a message in flight on each, at least.
    pub memory_bytes: u64,
}

/// The sockets and memory a point's run needs, counted from its resolved scenarios.
pub fn needs(point: &Point) -> Needs {
    let mut needs = Needs::default();
    for scenario in &point.scenarios {
        let (sockets, message) = match scenario {
            Scenario::Rooms(rooms) => {
                let sockets = rooms.sockets();
                let message = rooms.send.as_ref().map_or(0, |send| send.size.bytes());
                (sockets, message)
            }
            Scenario::Http(http) => match http.executor {
                Executor::ConstantVus | Executor::RampingVus => {
                    let vus = http.vus.unwrap_or(0);
                    (vus.max(http.start_vus.unwrap_or(0)), 0)
                }
                // An open model's connections follow its answers' latency, up to
                // `max_in_flight`: not a count known before the run.
                Executor::ConstantArrivalRate | Executor::RampingArrivalRate => (0, 0),
            },
        };
        needs.sockets = needs.sockets.saturating_add(sockets);
        needs.memory_bytes = needs.memory_bytes.saturating_add(
            sockets.saturating_mul(GENERATOR_BYTES_PER_SOCKET.saturating_add(message)),
        );
    }
    needs
}

/// The first point of the selected phases that this machine cannot run, in words with the
/// fix; `None` when every point fits.
pub fn refusal(matrix: &RunMatrix, phases: &[&str], machine: &Machine) -> Option<String> {
    for phase in matrix
        .phases
        .iter()
        .filter(|p| phases.contains(&p.name.as_str()))
    {
        for point in &phase.points {
            let needs = needs(point);
            let at = describe(phase.name.as_str(), point);
            let files = needs.sockets.saturating_add(RESERVED_FILES);
            if files > machine.open_files {
                return Some(format!(
                    "{at} holds {} sockets open at once ({} files with the run's own), and a process here may open {} (`ulimit -Hn`): raise the hard limit (`ulimit -Hn {}` as root, `LimitNOFILE=` under systemd, `--ulimit nofile=` in Docker) or run fewer sockets; both headroom and the target need one file per socket",
                    count(needs.sockets),
                    count(files),
                    count(machine.open_files),
                    files.next_power_of_two().max(65_536),
                ));
            }
            if let Some(ports) = machine.local_ports
                && needs.sockets > ports.saturating_mul(source_count(matrix))
            {
                let sources = source_count(matrix);
                let from = if sources == 1 {
                    "one source address, which has".to_owned()
                } else {
                    format!("{} source addresses, which have", count(sources))
                };
                return Some(format!(
                    "{at} holds {} sockets open at once, from {from} {} local ports here (`net.ipv4.ip_local_port_range`): the rest would fail to connect, a cliff of the generator's and not the server's; set `source_addresses = \"spread\"` in [generator] (a loopback target), or run fewer sockets",
                    count(needs.sockets),
                    count(ports.saturating_mul(sources)),
                ));
            }
            if let Some(available) = machine.available_memory
                && needs.memory_bytes > available
            {
                return Some(format!(
                    "{at} holds {} sockets open at once: the generator alone needs at least {} MiB for them, and this machine has {} MiB available; run fewer sockets or on a larger machine",
                    count(needs.sockets),
                    count(needs.memory_bytes / (1024 * 1024)),
                    count(available / (1024 * 1024)),
                ));
            }
        }
    }
    None
}

/// `point 3 of phase `rooms` (rooms = 128)`.
fn describe(phase: &str, point: &Point) -> String {
    let at = headroom_spec::vars::point_label(&point.at);
    if at.is_empty() {
        format!("phase `{phase}`")
    } else {
        format!("point {} of phase `{phase}` ({})", point.index + 1, at)
    }
}

/// `20,000`: limits are read as people write them.
fn count(n: u64) -> String {
    headroom_spec::numbers::count(n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(people: &[u64], size: &str) -> RunMatrix {
        let values: Vec<String> = people.iter().map(u64::to_string).collect();
        let spec = format!(
            r#"
[bench]
name = "sockets"

[vars]
people = 100

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]

[[scenario]]
name = "chat"
kind = "rooms"
url = "ws://127.0.0.1:{{port}}/channels/{{room}}?user={{peer}}"
rooms = 10
peers = "{{people}}"
send = {{ rate = "1/m", per = "sender", size = "{size}" }}
stages = {{ hold = "10s" }}

[[scenario]]
name = "browse"
kind = "http"
executor = "constant-vus"
vus = 50
requests = [{{ url = "http://127.0.0.1:{{port}}/" }}]
stages = {{ hold = "10s" }}

[[phase]]
name = "people"
vary = {{ people = [{}] }}
"#,
            values.join(", ")
        );
        let compilation = headroom_compiler::Compiler::new().compile(
            &spec,
            &headroom_pricing::PriceTable::embedded().expect("prices"),
        );
        compilation
            .matrix
            .unwrap_or_else(|| panic!("{:?}", compilation.diagnostics))
    }

    #[test]
    fn sockets_of_every_scenario_count() {
        let matrix = matrix(&[100, 20_000], "1KiB");
        let points = &matrix.phases[0].points;
        assert_eq!(
            needs(&points[0]),
            Needs {
                sockets: 150,
                memory_bytes: 100 * (8 * 1024 + 1024) + 50 * 8 * 1024
            }
        );
        assert_eq!(needs(&points[1]).sockets, 20_050);
    }

    #[test]
    fn a_point_past_the_file_limit_is_refused_with_the_limit_and_the_fix() {
        let matrix = matrix(&[100, 20_000], "300B");
        let small = Machine {
            open_files: 20_000,
            available_memory: Some(64 << 30),
            local_ports: Some(28_232),
        };
        let refusal = refusal(&matrix, &["people"], &small).expect("refused");
        assert_eq!(
            refusal,
            "point 2 of phase `people` (people = 20000) holds 20,050 sockets open at once (20,114 files with the run's own), and a process here may open 20,000 (`ulimit -Hn`): raise the hard limit (`ulimit -Hn 65536` as root, `LimitNOFILE=` under systemd, `--ulimit nofile=` in Docker) or run fewer sockets; both headroom and the target need one file per socket"
        );
        // A phase not selected is not checked; a machine with room runs it.
        assert_eq!(super::refusal(&matrix, &[], &small), None);
        let large = Machine {
            open_files: 1 << 20,
            available_memory: Some(64 << 30),
            local_ports: Some(28_232),
        };
        assert_eq!(super::refusal(&matrix, &["people"], &large), None);
    }

    #[test]
    fn a_point_past_the_memory_is_refused() {
        let matrix = matrix(&[100, 20_000], "16MiB");
        let machine = Machine {
            open_files: 1 << 20,
            available_memory: Some(8 << 30),
            local_ports: Some(28_232),
        };
        let refusal = refusal(&matrix, &["people"], &machine).expect("refused");
        assert!(
            refusal.starts_with("point 2 of phase `people` (people = 20000) holds 20,050 sockets open at once: the generator alone needs at least 320,"),
            "{refusal}"
        );
        assert!(
            refusal.ends_with(
                "and this machine has 8,192 MiB available; run fewer sockets or on a larger machine"
            ),
            "{refusal}"
        );
    }

    /// Issue 18: more sockets than one address has local ports is a cliff of the generator's;
    /// refused with the fix, and run when the addresses are spread.
    #[test]
    fn more_sockets_than_one_address_has_ports_is_refused_unless_spread() {
        let mut matrix = matrix(&[100, 20_000], "300B");
        let narrow = Machine {
            open_files: 1 << 20,
            available_memory: Some(64 << 30),
            local_ports: Some(1_000),
        };
        let refusal = refusal(&matrix, &["people"], &narrow).expect("refused");
        assert_eq!(
            refusal,
            "point 2 of phase `people` (people = 20000) holds 20,050 sockets open at once, from one source address, which has 1,000 local ports here (`net.ipv4.ip_local_port_range`): the rest would fail to connect, a cliff of the generator's and not the server's; set `source_addresses = \"spread\"` in [generator] (a loopback target), or run fewer sockets"
        );
        use headroom_spec::source::SourceAddresses;
        matrix.generator.source_addresses = Some(SourceAddresses::Named("127.0.0.0/28".into()));
        let refusal = super::refusal(&matrix, &["people"], &narrow).expect("refused");
        assert!(
            refusal.contains("from 14 source addresses, which have 14,000 local ports"),
            "{refusal}"
        );
        matrix.generator.source_addresses = Some(SourceAddresses::Named("spread".into()));
        assert_eq!(super::refusal(&matrix, &["people"], &narrow), None);
    }
}
