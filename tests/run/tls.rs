//! TLS and source addresses: HTTPS, HTTP/2 and WSS against a certificate made here, one from
//! another CA, and sockets spread over source addresses in a narrow port range.
//! Results are read through their types.

use super::*;

/// Writes `tls.toml` (the fixture, edited by `edit`) beside a self-signed certificate for
/// localhost and 127.0.0.1 made here (`server.pem`, `server.key`) and the CA file the spec
/// trusts (`ca.pem`: that certificate, or `ca` when given); the spec's path.
fn tls_spec(test: &str, ca: Option<&str>, edit: impl Fn(String) -> String) -> PathBuf {
    let dir = fresh_out(test).parent().expect("a folder").to_path_buf();
    std::fs::create_dir_all(&dir).expect("test folder");
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("a certificate");
    std::fs::write(dir.join("server.pem"), certified.cert.pem()).expect("write");
    std::fs::write(
        dir.join("server.key"),
        certified.signing_key.serialize_pem(),
    )
    .expect("write");
    let trusted = ca.map_or_else(|| certified.cert.pem(), str::to_owned);
    std::fs::write(dir.join("ca.pem"), trusted).expect("write");
    let fixture = std::fs::read_to_string(root().join("tests/fixtures/run/tls.toml"))
        .expect("the tls fixture");
    let spec = dir.join("tls.toml");
    std::fs::write(&spec, edit(fixture)).expect("write");
    spec
}

/// Issue 17: HTTPS over HTTP/1.1 and HTTP/2 and WSS rooms against the demo target serving a
/// certificate made in the test, trusted through `ca`: every answer passes its check, every
/// frame arrives, readiness and scrapes go over HTTPS too, and HTTP/2 carries requests held by
/// the target's stalls (50 ms, twice a second) on fewer connections than HTTP/1.1 needs.
#[test]
fn https_http2_and_wss_run_against_a_certificate_made_here() {
    let spec = tls_spec("tls", None, |text| text);
    let out = out("tls");
    let (spec_arg, out_arg) = (spec.display().to_string(), out.display().to_string());
    let output = headroom(&["run", &spec_arg, "--out", &out_arg, "--no-page"], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&read_results(&out));
    let run = typed_runs(&results)[0];
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let opened = |name: &str| {
        let scenario = run.scenarios.get(name).expect("the scenario");
        assert!(scenario.requests >= 150, "{name}: {}", scenario.requests);
        assert_eq!(scenario.ok, scenario.requests, "{name}");
        // Every connection opened was a TLS session, its handshake timed apart.
        let opened = scenario.connections.as_ref().map_or(0, |c| c.opened);
        let tls = scenario.tls.as_ref().expect("TLS figures");
        assert_eq!(tls.handshakes, opened, "{name}: {tls:?}");
        assert!(tls.handshake.p50_ms > 0.0, "{tls:?}");
        opened
    };
    let (h1, h2) = (opened("h1"), opened("h2"));
    // 100/s held 50 ms: about five requests at once on HTTP/1.1, each on its own connection;
    // HTTP/2 multiplexes twice the rate on one connection per load thread.
    assert!(h1 >= 5, "HTTP/1.1 opened {h1}");
    assert!(h2 < h1 && h2 <= 4, "HTTP/2 opened {h2}, HTTP/1.1 {h1}");
    let rooms = rooms_in(run, "chat");
    let messages = &rooms.messages;
    assert!(messages.sent >= 30, "{messages:?}");
    assert_eq!(messages.expected, messages.sent * 4);
    assert_eq!(messages.delivered, messages.expected, "{messages:?}");
    assert_eq!(rooms.sockets.opened, 10);
    let chat_tls = run.scenarios.get("chat").and_then(|c| c.tls.as_ref());
    assert_eq!(chat_tls.map(|t| t.handshakes), Some(10));
    // The run's line counts every handshake, apart from the requests' latencies.
    let line = stderr(&output);
    assert!(
        line.contains(&format!("{} TLS handshakes, p50 ", h1 + h2 + 10)),
        "{line}"
    );
    // The scrape went over HTTPS (to 127.0.0.1: the certificate's address name).
    assert_eq!(run.metrics.steady.get("peers"), Some(&10.0));
    assert!(leftovers("1034B").is_empty());
    clean("tls");
}

/// Issue 17: a certificate not signed by the CA the spec trusts fails the point before any
/// load, naming the host and the fix (readiness by TCP here, so the load's own check says it).
/// `headroom ARGS` in a network namespace of its own whose ephemeral port range is 1,000
/// ports (`40000 40999`): one source address can hold 1,000 sockets to a server there. `None`
/// when this machine cannot make one (not root, no `unshare`): the test says it skipped.
fn headroom_in_narrow_namespace(args: &[&str]) -> Option<Output> {
    let script = "ip link set lo up && sysctl -q -w net.ipv4.ip_local_port_range='40000 40999' && exec \"$0\" \"$@\"";
    let probe = Command::new("unshare")
        .args(["-n", "sh", "-c", script, "true"])
        .output();
    match probe {
        Ok(probe) if probe.status.success() => {}
        Ok(probe) => {
            common::say(&format!(
                "skipped: cannot make a network namespace with a narrow port range here (needs root): {}",
                String::from_utf8_lossy(&probe.stderr).trim()
            ));
            return None;
        }
        Err(e) => {
            common::say(&format!(
                "skipped: `unshare` (util-linux) cannot run here: {e}"
            ));
            return None;
        }
    }
    let _machine = shared();
    let output = Command::new("unshare")
        .args(["-n", "sh", "-c", script, env!("CARGO_BIN_EXE_headroom")])
        .args(args)
        .current_dir(root())
        .output()
        .expect("run headroom in a namespace");
    Some(output)
}

/// Issue 18, item 0: 1,500 sockets to one server where an address has 1,000 ports. From one
/// address the run is refused before it starts, naming the fix (it would be a false cliff);
/// with `source_addresses = "spread"` every socket opens from its own loopback address, every
/// frame arrives, the server counts 1,500 peers and the results 1,500 addresses.
#[test]
fn spread_source_addresses_hold_more_sockets_than_one_address_has_ports() {
    let out = fresh_out("spread");
    let dir = out.parent().expect("a folder");
    std::fs::create_dir_all(dir).expect("a folder");
    let spec = std::fs::read_to_string(root().join("tests/fixtures/run/spread.toml"))
        .expect("the fixture");
    let single = dir.join("single.toml");
    let without: String = spec
        .lines()
        .filter(|line| !line.starts_with("[generator]") && !line.starts_with("source_addresses"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(without, spec, "the fixture spreads its sources");
    std::fs::write(&single, without).expect("a spec");
    let single_out = dir.join("single").join("results.json");
    let args = [
        "run",
        single.to_str().expect("a path"),
        "--out",
        single_out.to_str().expect("a path"),
    ];
    let Some(refused) = headroom_in_narrow_namespace(&args) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("holds 1,500 sockets open at once, from one source address, which has 1,000 local ports here")
            && stderr.contains("set `source_addresses = \"spread\"` in [generator]"),
        "{stderr}"
    );
    assert!(!single_out.exists(), "refused before any run");

    let out_arg = out.display().to_string();
    let args = ["run", "tests/fixtures/run/spread.toml", "--out", &out_arg];
    let output = headroom_in_narrow_namespace(&args).expect("the namespace made before");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let results = typed(&read_results(&out));
    let run = typed_runs(&results)[0];
    let chat = run.scenarios.get("chat").expect("chat");
    assert_eq!(chat.source_addresses, Some(1500));
    let rooms = rooms_in(run, "chat");
    let sockets = &rooms.sockets;
    assert_eq!(sockets.opened, 1500, "{sockets:?}");
    assert_eq!(sockets.failed.total(), 0, "{sockets:?}");
    let messages = &rooms.messages;
    assert_eq!(messages.delivered, messages.expected, "{messages:?}");
    assert!(messages.delivered > 0, "{messages:?}");
    assert_eq!(run.metrics.steady.get("peers"), Some(&1500.0));
    assert!(leftovers("1037B").is_empty());
    clean("spread");
}

#[test]
fn a_certificate_from_another_ca_fails_with_the_host_named() {
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "another CA");
    let key = rcgen::KeyPair::generate().expect("key");
    let stranger = params.self_signed(&key).expect("another certificate");
    let spec = tls_spec("tls-wrong-ca", Some(&stranger.pem()), |text| {
        text.replace(
            r#"ready = { http = "https://localhost:{port}/healthz", timeout = "20s" }"#,
            r#"ready = { tcp = true, timeout = "20s" }"#,
        )
        // A marker of its own: the other TLS test may run beside it.
        .replace("1034B", "1035B")
        .replace("metrics = \"https://127.0.0.1:{port}/metrics\"\n", "")
        .replace(
            "[measure]\nseries = [{ name = \"peers\", metric = \"demo_peers\" }]\n",
            "",
        )
    });
    let out = out("tls-wrong-ca");
    let (spec_arg, out_arg) = (spec.display().to_string(), out.display().to_string());
    let output = headroom(&["run", &spec_arg, "--out", &out_arg, "--no-page"], &[]);
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = typed(&read_results(&out));
    let failure = typed_runs(&results)[0]
        .failure
        .as_ref()
        .map(headroom_results::Failure::describe)
        .unwrap_or_default();
    assert!(
        failure.contains("TLS to `localhost:") && failure.contains("not signed by a CA"),
        "{failure}"
    );
    assert!(failure.contains("ca = "), "{failure}");
    assert!(leftovers("1035B").is_empty());
    clean("tls-wrong-ca");
}
