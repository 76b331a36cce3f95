//! A headless Chromium (the distribution's, from `scripts/chromium.sh`) driven over the
//! DevTools protocol on loopback: a test opens a page, evaluates expressions in it to read its
//! DOM (never a screenshot's pixels), and may keep a screenshot for the docs.

use std::io::Read;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::root;

/// The browser's path, or the script's reason it cannot be had here.
pub fn installed() -> Result<String, String> {
    let output = Command::new("scripts/chromium.sh")
        .arg("install")
        .current_dir(root())
        .output()
        .map_err(|e| format!("scripts/chromium.sh could not run: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    }
}

/// A headless Chromium with one page open, ended (its profile removed) when dropped.
pub struct Browser {
    process: Child,
    profile: std::path::PathBuf,
    runtime: tokio::runtime::Runtime,
    socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next_id: u64,
}

/// A GET on loopback: the body (DevTools' server may keep the connection open: the body is
/// `Content-Length` long).
fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    std::io::Write::write_all(
        &mut stream,
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    )
    .ok()?;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&answer).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().ok())
                })
                .flatten();
            if length.is_some_and(|length| body.len() >= length) {
                return Some(body.to_owned());
            }
        }
        match stream.read(&mut buffer) {
            Ok(0) => {
                return String::from_utf8_lossy(&answer)
                    .split_once("\r\n\r\n")
                    .map(|(_, b)| b.to_owned());
            }
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(_) => return None,
        }
    }
}

impl Browser {
    /// Chromium at `binary`, headless, showing `url` (a loopback page); the flags keep it off
    /// every network but loopback.
    pub fn open(binary: &str, url: &str) -> Browser {
        let port = headroom_test_support::harness::free_port();
        let profile =
            std::env::temp_dir().join(format!("headroom-chromium-{}-{port}", std::process::id()));
        let process = Command::new(binary)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1400,1100",
                &format!("--user-data-dir={}", profile.display()),
                &format!("--remote-debugging-port={port}"),
                url,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("chromium starts");
        let mut page = None;
        let found = headroom_test_support::harness::wait_until(Duration::from_secs(30), || {
            let Some(list) = get(port, "/json/list") else {
                return false;
            };
            let Some(body) = list.find('[').map(|at| &list[at..]) else {
                return false;
            };
            let Ok(targets) =
                serde_json::from_str::<Value>(body.trim_end_matches(|c: char| c != ']'))
            else {
                return false;
            };
            page = targets.as_array().and_then(|targets| {
                targets
                    .iter()
                    .find(|t| {
                        t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.starts_with(url))
                    })
                    .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_owned))
            });
            page.is_some()
        });
        assert!(found, "Chromium never showed {url}");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let address = page.expect("the page's debugger address");
        let (socket, _) = runtime
            .block_on(tokio_tungstenite::connect_async(address.as_str()))
            .unwrap_or_else(|e| panic!("the page's DevTools socket at {address}: {e}"));
        Browser {
            process,
            profile,
            runtime,
            socket,
            next_id: 1,
        }
    }

    /// Calls a DevTools method and returns its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({ "id": id, "method": method, "params": params }).to_string();
        let socket = &mut self.socket;
        self.runtime.block_on(async {
            socket
                .send(Message::text(request))
                .await
                .expect("send to the browser");
            loop {
                let message = tokio::time::timeout(Duration::from_secs(30), socket.next())
                    .await
                    .expect("the browser answers within 30 s")
                    .expect("the socket is open")
                    .expect("a message");
                let Message::Text(text) = message else {
                    continue;
                };
                let value: Value = serde_json::from_str(&text).expect("json");
                if value["id"] == id {
                    assert!(value.get("error").is_none(), "{method}: {value}");
                    return value["result"].clone();
                }
            }
        })
    }

    /// The value of `expression` in the page (its JSON).
    pub fn evaluate(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// A PNG of the page as it shows now.
    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine;
        let result = self.call(
            "Page.captureScreenshot",
            json!({ "format": "png", "captureBeyondViewport": true }),
        );
        base64::engine::general_purpose::STANDARD
            .decode(result["data"].as_str().expect("png data"))
            .expect("base64")
    }

    /// A PNG of the whole page, as tall as it is, cut to the body's column and its margins.
    pub fn screenshot_of_the_page(&mut self) -> Vec<u8> {
        use base64::Engine;
        let size = self.evaluate(
            "(() => { const r = document.body.getBoundingClientRect(); \
             return { left: r.left, width: r.width, height: document.documentElement.scrollHeight }; })()",
        );
        let number = |v: &Value| v.as_f64().unwrap_or_else(|| panic!("{size}"));
        let margin = 24.0;
        let clip = json!({
            "x": (number(&size["left"]) - margin).max(0.0),
            "y": 0,
            "width": number(&size["width"]) + 2.0 * margin,
            "height": number(&size["height"]),
            "scale": 1,
        });
        let result = self.call(
            "Page.captureScreenshot",
            json!({ "format": "png", "captureBeyondViewport": true, "clip": clip }),
        );
        base64::engine::general_purpose::STANDARD
            .decode(result["data"].as_str().expect("png data"))
            .expect("base64")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Chromium's renderers and helpers are in its process group: all of them go.
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.process.id())])
            .status();
        let _ = self.process.kill();
        let _ = self.process.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
