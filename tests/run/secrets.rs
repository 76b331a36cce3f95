//! Issue 42: a secret given to a run leaves in clear through no door. The target's env and a
//! readiness and request URL's query are filled from the environment, a query value is written
//! in the spec, and the remote write's URL carries `user:password@`: the results, the page and
//! its plots, the target's logs, the JSON-lines stream, the dashboard's export, what every command printed and
//! `compare`'s table (terminal and Markdown, as docs/ci.md posts it) hold none of them. The
//! remote write still authenticates with them (Basic), and `compare` still says the values
//! changed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::*;

/// A Prometheus remote-write receiver on loopback that answers 204 to every POST and keeps
/// each request's `authorization` header; it stops by itself after `life`.
fn receiver(life: Duration) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    std::thread::spawn(move || {
        let until = std::time::Instant::now() + life;
        while std::time::Instant::now() < until {
            let Ok((stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            };
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut reader = BufReader::new(stream);
            let (mut length, mut authorization) = (0usize, String::new());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some((name, value)) = line.trim_end().split_once(':') {
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.trim().parse().unwrap_or(0),
                        "authorization" => value.trim().clone_into(&mut authorization),
                        _ => {}
                    }
                }
                line.clear();
            }
            let mut body = vec![0; length.min(1 << 24)];
            let _ = reader.read_exact(&mut body);
            kept.lock().expect("kept").push(authorization);
            let _ = reader.get_mut().write_all(
                b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (port, seen)
}

/// Every file under `dir`, with its text (lossy for bytes that are not UTF-8).
fn every_file(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("a folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("a file");
                files.push((
                    path.display().to_string(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
            }
        }
    }
    files
}

/// `headroom run` of the secrets fixture into `dir/NAME.json`, the target's and the query's
/// secrets from the environment, streaming JSON lines and remote write, its dashboard
/// exported: what it printed. The requests carried the query (every one answered) and the
/// target's value is recorded by its keyed hash.
fn run_given_secrets(dir: &Path, name: &str, write_url: &str, target: &str, query: &str) -> String {
    let results = dir.join(format!("{name}.json"));
    let lines = format!("json-lines={}", dir.join(format!("{name}.jsonl")).display());
    let stream = format!("prometheus-rw={write_url}");
    let export = dir.join(format!("{name}.dashboard.html"));
    let output = headroom(
        &[
            "run",
            "tests/fixtures/run/secrets.toml",
            "--out",
            &results.display().to_string(),
            "--stream",
            &lines,
            "--stream",
            &stream,
            "--dashboard-export",
            &export.display().to_string(),
        ],
        &[
            ("HR_TEST_TARGET_SECRET", target.to_owned()),
            ("HR_TEST_QUERY_SECRET", query.to_owned()),
        ],
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(&output)
    );
    assert_eq!(output.status.code(), Some(0), "{said}");
    let typed = typed(&read_results(&results));
    let api = headroom_test_support::results::scenario(&typed.phases[0].points[0].runs[0], "api");
    assert!(api.requests > 20 && api.ok == api.requests, "{api:?}");
    let recorded = typed.env.get("HR_TEST_TARGET_SECRET");
    let hashed = headroom_results::EnvFill::of("secrets", "HR_TEST_TARGET_SECRET", target);
    assert_eq!(recorded, Some(&hashed), "{:?}", typed.env);
    said
}

#[test]
fn no_secret_leaves_in_clear_through_any_output() {
    let out = fresh_out("secrets");
    let dir = out.parent().expect("a folder").to_path_buf();
    std::fs::create_dir_all(&dir).expect("a folder");
    let (port, authorizations) = receiver(Duration::from_secs(120));
    let write_url = format!("http://hr-user:rw-Pa55word@127.0.0.1:{port}/api/v1/write");
    let secrets = [
        "t4rget-S3cret",
        "qu3ry-S3cret",
        "wr1tt3nInTheSp3c",
        "hr-user",
        "rw-Pa55word",
        "n3w-t4rget-S3cret",
        "n3w-qu3ry-S3cret",
    ];
    let mut printed = String::new();
    for (name, target, query) in [
        ("one", "t4rget-S3cret", "qu3ry-S3cret"),
        ("two", "n3w-t4rget-S3cret", "n3w-qu3ry-S3cret"),
    ] {
        printed.push_str(&run_given_secrets(&dir, name, &write_url, target, query));
    }
    for format in ["table", "md", "json"] {
        let (code, table, said) = common::headroom_in(
            &dir,
            &["compare", "one.json", "two.json", "--format", format],
        );
        assert!(code == 0 || code == 2, "{said}");
        printed.push_str(&table);
        printed.push_str(&said);
        if format != "json" {
            assert!(
                table.contains("env HR_TEST_QUERY_SECRET: changed")
                    && table.contains("env HR_TEST_TARGET_SECRET: changed"),
                "compare says the values changed, not to what: {table}\n{said}"
            );
        }
    }
    // The remote write was sent, authenticated by the URL's userinfo.
    let authorizations = authorizations.lock().expect("kept").clone();
    assert!(!authorizations.is_empty(), "no remote write arrived");
    // base64 of `hr-user:rw-Pa55word`.
    let basic = "Basic aHItdXNlcjpydy1QYTU1d29yZA==";
    assert!(
        authorizations.iter().all(|a| a == basic),
        "{authorizations:?}"
    );
    let files = every_file(&dir);
    assert!(
        ["one.capacity.md", "one.jsonl", "one.dashboard.html"]
            .iter()
            .all(|file| files.iter().any(|(path, _)| path.ends_with(file))),
        "the page, the stream and the dashboard were written: {:?}",
        files.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for secret in secrets {
        for (path, text) in &files {
            assert!(!text.contains(secret), "{path} holds `{secret}`");
        }
        assert!(!printed.contains(secret), "printed `{secret}`:\n{printed}");
    }
    // What is masked is said so, where it was.
    let one = std::fs::read_to_string(dir.join("one.json")).expect("results");
    assert!(
        one.contains("/healthz?key={env:HR_TEST_QUERY_SECRET}&lit=***"),
        "{one}"
    );
    assert!(leftovers("1059B").is_empty());
    clean("secrets");
}
