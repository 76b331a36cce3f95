//! Issue 34: segments on separate hosts, simulated. The test makes a small network of its own:
//! a namespace per host (the target's, and one per segment), each joined to a bridge in a
//! switch namespace by a veth pair, with an address in 198.18.0.0/24 (RFC 2544's benchmarking
//! range). This is the loopback rule's one exception: those addresses exist only inside the
//! namespaces the test made, and nothing else is reachable from them. Each segment has its own
//! address and reaches the barrier on segment 0's host over that network. Where namespaces
//! cannot be made (not root, no `ip`), each test says it skipped, and why.

use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::process::Child;
use std::time::Instant;

use headroom_results::{Failure, Results};

use super::segments::{
    segment_2_never_came, shares_start_together_each_with_its_own, the_merge_is_the_whole_run,
    the_merge_without_segment_2_is_refused,
};
use super::*;

const SPEC: &str = "tests/fixtures/run/segments-hosts.toml";
/// The target's host and port.
const TARGET: &str = "198.18.0.1";
const PORT: &str = "8080";
/// Segment 0's host serves the barrier.
const BARRIER: &str = "198.18.0.10:7070";

/// The hosts: the target's, and segment i's at 198.18.0.1i.
const HOSTS: [(&str, &str); 4] = [
    ("t", TARGET),
    ("s0", "198.18.0.10"),
    ("s1", "198.18.0.11"),
    ("s2", "198.18.0.12"),
];

/// `ip ARGS`, or what went wrong.
fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("`ip` (iproute2) cannot run here: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), stderr(&output).trim()))
    }
}

/// The test's network: a switch namespace holding the bridge, and a namespace per host.
/// Dropped, it kills whatever still runs in its namespaces and deletes them.
struct Network {
    prefix: String,
    hosts: Vec<String>,
}

impl Network {
    /// The network of `HOSTS`, its namespaces named after the test (`tag`) and this process.
    fn make(tag: &str) -> Result<Network, String> {
        let mut network = Network {
            prefix: format!("headroom-{}-{tag}", std::process::id()),
            hosts: Vec::new(),
        };
        let switch = network.namespace("switch");
        ip(&["netns", "add", &switch])?;
        network.hosts.push("switch".to_owned());
        ip(&["-n", &switch, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &switch, "link", "set", "br0", "up"])?;
        for (host, address) in HOSTS {
            let namespace = network.namespace(host);
            ip(&["netns", "add", &namespace])?;
            network.hosts.push(host.to_owned());
            let port = format!("v-{host}");
            ip(&[
                "-n", &switch, "link", "add", &port, "type", "veth", "peer", "name", "eth0",
                "netns", &namespace,
            ])?;
            ip(&["-n", &switch, "link", "set", &port, "master", "br0", "up"])?;
            let cidr = format!("{address}/24");
            ip(&["-n", &namespace, "addr", "add", &cidr, "dev", "eth0"])?;
            ip(&["-n", &namespace, "link", "set", "eth0", "up"])?;
            ip(&["-n", &namespace, "link", "set", "lo", "up"])?;
        }
        Ok(network)
    }

    /// Where the spec's setup and teardown steps write their names.
    fn steps(&self) -> PathBuf {
        std::env::temp_dir().join(format!("{}-steps.txt", self.prefix))
    }

    fn namespace(&self, host: &str) -> String {
        format!("{}-{host}", self.prefix)
    }

    /// `headroom ARGS` on `host`, its output piped, in a process group of its own.
    fn headroom(&self, host: &str, args: &[&str]) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.namespace(host)])
            .arg(env!("CARGO_BIN_EXE_headroom"))
            .args(args)
            .env("HEADROOM_TEST_EXTERNAL_PORT", PORT)
            .env("HEADROOM_TEST_STEPS", self.steps())
            .current_dir(root())
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// The demo target on its host, once it listens.
    fn start_target(&self, marker: &str) -> Child {
        let mut target = self
            .headroom(
                "t",
                &[
                    "demo-target",
                    "--host",
                    TARGET,
                    "--port",
                    PORT,
                    "--note-size",
                    marker,
                ],
            )
            .stderr(Stdio::null())
            .spawn()
            .expect("the demo target");
        let stdout = target.stdout.take().expect("its output");
        let mut first = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut first)
            .expect("the demo target says it listens");
        assert!(first.contains("listening on 198.18.0.1:8080"), "{first}");
        target
    }

    /// Segment `index` of 3 on its host, writing its part to `out`.
    fn segment(&self, index: usize, out: &Path, extra: &[&str]) -> Child {
        let share = format!("{index}/3");
        let out = out.display().to_string();
        let mut args = vec![
            "run",
            SPEC,
            "--segment",
            &share,
            "--barrier",
            BARRIER,
            "--out",
            &out,
        ];
        args.extend(extra);
        self.headroom(&format!("s{index}"), &args)
            .stdout(Stdio::null())
            .spawn()
            .expect("a segment")
    }

    /// Takes `host`'s link down at the switch: it reaches nothing any more.
    fn cut(&self, host: &str) {
        ip(&[
            "-n",
            &self.namespace("switch"),
            "link",
            "set",
            &format!("v-{host}"),
            "down",
        ])
        .expect("the link taken down");
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for host in self.hosts.iter().rev() {
            let namespace = self.namespace(host);
            // What still runs there (a segment a failed assertion left) goes with it.
            if let Ok(output) = Command::new("ip")
                .args(["netns", "pids", &namespace])
                .output()
            {
                for pid in String::from_utf8_lossy(&output.stdout).split_whitespace() {
                    let _ = Command::new("kill").args(["-KILL", pid]).status();
                }
            }
            let _ = ip(&["netns", "del", &namespace]);
        }
        let _ = std::fs::remove_file(self.steps());
    }
}

/// The network, or the reason the test skips.
fn network(test: &str, tag: &str) -> Option<Network> {
    match Network::make(tag) {
        Ok(network) => Some(network),
        Err(why) => {
            common::say(&format!(
                "skipped {test}: cannot make network namespaces here (needs root and iproute2): {why}"
            ));
            None
        }
    }
}

/// A test's hosts: the network, the demo target running on its host, and the test's folder.
struct Hosts {
    network: Network,
    target: Child,
    dir: PathBuf,
}

impl Hosts {
    /// The network named `tag`, the demo target marked `marker` on it, and the folder for
    /// results named `out`; `None` when namespaces cannot be made (then `test` says it
    /// skipped, and why).
    fn up(test: &str, tag: &str, marker: &str, out: &str) -> Option<Hosts> {
        let network = network(test, tag)?;
        let target = network.start_target(marker);
        let dir = fresh_out(out).parent().expect("a folder").to_owned();
        std::fs::create_dir_all(&dir).expect("a folder");
        Some(Hosts {
            network,
            target,
            dir,
        })
    }
}

/// The segments' parts, read; every segment must have exited with 0.
fn parts_of(segments: Vec<Child>, dir: &Path) -> Vec<(String, Results)> {
    let mut parts = Vec::new();
    for (i, segment) in segments.into_iter().enumerate() {
        let output = segment.wait_with_output().expect("a segment ran");
        assert!(output.status.success(), "segment {i}: {}", stderr(&output));
        let path = dir.join(format!("part-{i}.json"));
        parts.push((path.display().to_string(), typed(&read_results(&path))));
    }
    parts
}

/// The parts merged (by `headroom merge`, on this machine) into `dir/merged.json`.
fn merged(parts: &[(String, Results)], dir: &Path) -> Results {
    let merged_path = dir.join("merged.json");
    let merged_arg = merged_path.display().to_string();
    let mut args = vec!["merge", "--out", merged_arg.as_str()];
    args.extend(parts.iter().map(|(path, _)| path.as_str()));
    let merge = headroom_unlocked(&args, &[]);
    assert!(merge.status.success(), "{}", stderr(&merge));
    typed(&read_results(&merged_path))
}

/// Three segments on three hosts, meeting at the barrier on segment 0's host across the
/// network, merge into the single-host run's load exactly (segments.toml's known answer: the
/// open model's 45 ramp and 180 hold arrivals, seven virtual users as 3 + 2 + 2, five rooms as
/// 2 + 2 + 1, every frame delivered), each share from its own address.
#[test]
fn three_segments_on_three_hosts_merge_into_the_single_host_run() {
    let _machine = shared();
    let Some(Hosts {
        network,
        mut target,
        dir,
    }) = Hosts::up(
        "three_segments_on_three_hosts_merge_into_the_single_host_run",
        "merge",
        "1052B",
        "segments-hosts",
    )
    else {
        return;
    };
    // The whole run, from segment 0's host.
    let whole_path = dir.join("whole.json");
    let whole = network
        .headroom("s0", &["run", SPEC, "--no-page", "--out"])
        .arg(&whole_path)
        .output()
        .expect("the whole run");
    assert!(whole.status.success(), "{}", stderr(&whole));
    let segments: Vec<Child> = (0..3)
        .map(|i| network.segment(i, &dir.join(format!("part-{i}.json")), &[]))
        .collect();
    let parts = parts_of(segments, &dir);
    let _ = target.kill();
    let _ = target.wait();
    // The setup and teardown steps ran once for the whole run, once more on segment 0.
    let steps = std::fs::read_to_string(network.steps()).unwrap_or_default();
    assert_eq!(steps, "sign-up\nseed\nclean-up\n".repeat(2));
    let shares: Vec<Results> = parts.iter().map(|(_, share)| share.clone()).collect();
    shares_start_together_each_with_its_own(&shares);
    let merged = merged(&parts, &dir);
    the_merge_is_the_whole_run(&typed(&read_results(&whole_path)), &merged, &shares);
    assert!(leftovers("1052B").is_empty());
    clean("segments-hosts");
}

/// `child`'s output once it ended, killed first if it has not within `limit`.
fn ended_within(mut child: Child, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    while child.try_wait().expect("its status").is_none() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    let waited = started.elapsed();
    let _ = child.kill();
    (child.wait_with_output().expect("its output"), waited)
}

/// One segment's host is cut off from the others mid-load (its link taken down at the
/// switch): the two still connected fail the run with kind `barrier` naming segment 2/3, within
/// the barrier's timeout; the cut-off one fails too (it reaches neither the target nor the
/// barrier); and `headroom merge` refuses the parts, saying why.
#[test]
fn a_segment_cut_off_mid_load_fails_the_run_and_the_merge_refuses_the_parts() {
    let _machine = shared();
    let Some(Hosts {
        network,
        mut target,
        dir,
    }) = Hosts::up(
        "a_segment_cut_off_mid_load_fails_the_run_and_the_merge_refuses_the_parts",
        "cut",
        "1053B",
        "segments-cut",
    )
    else {
        return;
    };
    let part = |i: usize| dir.join(format!("part-{i}.json"));
    let timeout = ["--barrier-timeout", "5s"];
    let mut segments: Vec<Child> = (0..3)
        .map(|i| network.segment(i, &part(i), &timeout))
        .collect();
    // The load starts half a second after all three met; two seconds in, it is under way.
    std::thread::sleep(Duration::from_secs(2));
    network.cut("s2");
    let cut_off = segments.pop().expect("segment 2");
    for (i, survivor) in segments.into_iter().enumerate() {
        // The meeting after the load waits 5 s for segment 2; the load has 2 s left.
        let (output, waited) = ended_within(survivor, Duration::from_secs(30));
        assert_eq!(
            output.status.code(),
            Some(3),
            "segment {i} after {waited:?}: {}",
            stderr(&output)
        );
        assert!(waited < Duration::from_secs(15), "segment {i}: {waited:?}");
        segment_2_never_came(i, &part(i));
    }
    let (output, waited) = ended_within(cut_off, Duration::from_secs(60));
    assert_ne!(
        output.status.code(),
        Some(0),
        "segment 2 after {waited:?}: {}",
        stderr(&output)
    );
    let _ = target.kill();
    let _ = target.wait();
    // Segment 2 wrote its part, its run failed: the merge keeps the record, merges no
    // figures into a whole run, and says which segment failed and why.
    let parts: Vec<String> = (0..3).map(|i| part(i).display().to_string()).collect();
    let merged_path = dir.join("merged.json");
    let merged_arg = merged_path.display().to_string();
    let mut args = vec!["merge", "--out", merged_arg.as_str()];
    args.extend(parts.iter().map(String::as_str));
    let merge = headroom_unlocked(&args, &[]);
    let said = stderr(&merge);
    common::say(&format!(
        "the merge of the cut-off run's parts said: {}",
        said.trim()
    ));
    assert_eq!(merge.status.code(), Some(3), "{said}");
    assert!(
        said.contains("load point 1 repeat 1: segment 0/3 (")
            && said.contains("segment 2/3 never reached the barrier")
            && said.contains("no SLO is judged on them"),
        "{said}"
    );
    let merged = typed(&read_results(&merged_path));
    let run = typed_runs(&merged)[0];
    assert!(
        matches!(&run.failure, Some(Failure::Barrier { segments, .. }) if segments == &[2]),
        "{:?}",
        run.failure
    );
    assert!(run.slo.is_empty(), "{:?}", run.slo);
    // Without segment 2's part (its host never came back), the set is refused.
    the_merge_without_segment_2_is_refused(&parts);
    assert!(leftovers("1053B").is_empty());
    clean("segments-cut");
}

/// A segment whose host starts it 3 s after the others (clocks cannot be set apart per
/// namespace, so a late start stands for a skewed one): every segment still loads from the one
/// start segment 0 announced, and the rooms' holds start within 50 ms of each other; the merge
/// is the known answer.
#[test]
fn a_segment_started_late_loads_from_the_same_start() {
    let _machine = shared();
    let Some(Hosts {
        network,
        mut target,
        dir,
    }) = Hosts::up(
        "a_segment_started_late_loads_from_the_same_start",
        "late",
        "1054B",
        "segments-late",
    )
    else {
        return;
    };
    let part = |i: usize| dir.join(format!("part-{i}.json"));
    let started = Instant::now();
    let mut segments: Vec<Child> = (0..2).map(|i| network.segment(i, &part(i), &[])).collect();
    std::thread::sleep(Duration::from_secs(3));
    segments.push(network.segment(2, &part(2), &[]));
    let parts = parts_of(segments, &dir);
    let _ = target.kill();
    let _ = target.wait();
    let shares: Vec<Results> = parts.iter().map(|(_, share)| share.clone()).collect();
    shares_start_together_each_with_its_own(&shares);
    // The one start came after the late segment arrived: 3 s after the others were started.
    let start_ms = typed_runs(&shares[0])[0]
        .load_start_ms
        .expect("an announced start");
    let test_started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as u64
        - started.elapsed().as_millis() as u64;
    assert!(
        start_ms >= test_started_ms + 3_000,
        "the start {start_ms} is not after the late segment came ({test_started_ms} + 3 s)"
    );
    let merged = merged(&parts, &dir);
    let all = typed_runs(&merged)[0];
    let api = scenario(all, "api");
    assert_eq!(api.requests, 180);
    // The ramp's 45, and those of the moment before the run's hold started (issue 41).
    let before = super::segments::outside(api);
    assert!((45..=45 + 90).contains(&before), "{before}");
    let chat = rooms_in(all, "chat");
    assert_eq!(chat.messages.delivered, chat.messages.expected);
    assert!(leftovers("1054B").is_empty());
    clean("segments-late");
}
