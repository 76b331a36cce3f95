//! `--stream prometheus-rw=URL`: Prometheus remote write 1.0 (a protobuf `WriteRequest`,
//! snappy-compressed, POSTed), each burst of seconds as it arrives. The series and their
//! labels are documented in docs/live.md; the names follow Prometheus's conventions (base
//! units, `_seconds`, a `quantile` label for the percentiles).

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use anyhow::{Context, bail};
use headroom_runner::results::stream::{
    RunLabels, SecondKind, StreamLine, StreamSecond, StreamServer,
};

use super::sink::Sink;

/// How long one write may take before it counts as failed.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// The remote write protocol's messages (prometheus/prompb `remote.proto`, `types.proto`).
mod wire {
    /// A batch of series.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct WriteRequest {
        #[prost(message, repeated, tag = "1")]
        pub(crate) timeseries: Vec<TimeSeries>,
    }

    /// One series: its labels (`__name__` among them, sorted by name) and its samples.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct TimeSeries {
        #[prost(message, repeated, tag = "1")]
        pub(crate) labels: Vec<Label>,
        #[prost(message, repeated, tag = "2")]
        pub(crate) samples: Vec<Sample>,
    }

    /// A label.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Label {
        #[prost(string, tag = "1")]
        pub(crate) name: String,
        #[prost(string, tag = "2")]
        pub(crate) value: String,
    }

    /// A value at a time (Unix milliseconds).
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Sample {
        #[prost(double, tag = "1")]
        pub(crate) value: f64,
        #[prost(int64, tag = "2")]
        pub(crate) timestamp: i64,
    }
}

/// The remote write endpoint, checked: `http://` to loopback or a host `[target]
/// allow_hosts` names.
pub(crate) struct RemoteWrite {
    /// The URL as said in messages: its userinfo and query values masked.
    url: String,
    authority: String,
    /// `user:password@` in the URL, sent as Basic authentication.
    authorization: Option<String>,
    path: String,
    address: SocketAddr,
    runtime: tokio::runtime::Runtime,
}

/// Where `url` points, or why load's rule refuses it: loopback, or a host the spec allows.
pub(crate) fn endpoint(
    url: &str,
    allow_hosts: &[String],
) -> anyhow::Result<(headroom_load::web::WebUrl, SocketAddr)> {
    let flag = format!(
        "--stream prometheus-rw={}",
        headroom_results::masked_urls(url)
    );
    let Some(parsed) = headroom_load::web::parse_web_url(url) else {
        bail!(
            "{flag}: not an http:// URL (Prometheus's receiver is http://HOST:9090/api/v1/write)"
        );
    };
    if parsed.secure {
        bail!(
            "{flag}: https:// is not supported: write to a Prometheus on this machine (http://127.0.0.1:9090/api/v1/write) or through a local proxy"
        );
    }
    let address = parsed
        .dial
        .to_socket_addrs()
        .with_context(|| format!("{flag}: cannot resolve {}", parsed.dial))?
        .next()
        .with_context(|| format!("{flag}: {} resolves to no address", parsed.dial))?;
    let host = parsed
        .authority
        .rsplit_once(':')
        .map_or(parsed.authority.as_str(), |(host, _)| host);
    headroom_load::web::Allowed::new(allow_hosts)
        .check(host, address, &headroom_results::masked_urls(url))
        .map_err(|why| anyhow::anyhow!("{flag}: {why}"))?;
    Ok((parsed, address))
}

impl RemoteWrite {
    pub(crate) fn open(url: &str, allow_hosts: &[String]) -> anyhow::Result<RemoteWrite> {
        let (parsed, address) = endpoint(url, allow_hosts)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the remote write's runtime")?;
        Ok(RemoteWrite {
            url: headroom_results::masked_urls(url),
            authorization: parsed.basic_authorization(),
            authority: parsed.authority,
            path: parsed.path,
            address,
            runtime,
        })
    }

    /// One POST of `body`; an answer other than 2xx is a failure, with what it said.
    async fn post(&self, body: Vec<u8>) -> Result<(), String> {
        use http_body_util::BodyExt;
        let stream = tokio::net::TcpStream::connect(self.address)
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", self.url))?;
        let io = hyper_util::rt::TokioIo::new(stream);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| format!("{}: {e}", self.url))?;
        tokio::spawn(connection);
        let mut request = hyper::Request::post(&self.path).header("host", &self.authority);
        if let Some(authorization) = &self.authorization {
            request = request.header("authorization", authorization);
        }
        let request = request
            .header("content-type", "application/x-protobuf")
            .header("content-encoding", "snappy")
            .header("x-prometheus-remote-write-version", "0.1.0")
            .header(
                "user-agent",
                concat!("headroom/", env!("CARGO_PKG_VERSION")),
            )
            .body(http_body_util::Full::new(bytes::Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let answer = sender
            .send_request(request)
            .await
            .map_err(|e| format!("{}: {e}", self.url))?;
        let status = answer.status();
        if status.is_success() {
            return Ok(());
        }
        let text = answer
            .into_body()
            .collect()
            .await
            .map(|body| String::from_utf8_lossy(&body.to_bytes()).trim().to_owned())
            .unwrap_or_default();
        Err(format!("{} answered {status}: {text}", self.url))
    }
}

impl Sink for RemoteWrite {
    fn send(&mut self, lines: &[StreamLine]) -> Result<(), String> {
        use prost::Message;
        let request = write_request(lines);
        if request.timeseries.is_empty() {
            return Ok(());
        }
        let body = snap::raw::Encoder::new()
            .compress_vec(&request.encode_to_vec())
            .map_err(|e| format!("cannot compress a write: {e}"))?;
        let post = self.post(body);
        self.runtime.block_on(async {
            tokio::time::timeout(WRITE_TIMEOUT, post)
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "{}: no answer within {}s",
                        self.url,
                        WRITE_TIMEOUT.as_secs()
                    ))
                })
        })
    }
}

/// A label name from a variable's: Prometheus's `[a-zA-Z_][a-zA-Z0-9_]*`.
fn label_name(name: &str) -> String {
    let mut label: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if label.starts_with(|c: char| c.is_ascii_digit()) {
        label.insert(0, '_');
    }
    label
}

/// The labels every series of a run has: `run_id`, `bench`, `phase`, `point`, `repeat`,
/// `segment` (a segmented run's), and `var_NAME` for each swept variable.
fn run_labels(labels: &RunLabels) -> BTreeMap<String, String> {
    let mut out = BTreeMap::from([
        ("run_id".to_owned(), labels.run_id.clone()),
        ("bench".to_owned(), labels.bench.clone()),
        ("phase".to_owned(), labels.phase.clone()),
        ("point".to_owned(), labels.point.to_string()),
        ("repeat".to_owned(), labels.repeat.to_string()),
    ]);
    if let Some(segment) = &labels.segment {
        out.insert("segment".to_owned(), segment.clone());
    }
    for (name, value) in &labels.at {
        out.insert(format!("var_{}", label_name(name)), value.to_string());
    }
    out
}

/// The lines as series: a scenario's second gives `headroom_requests_per_second` (a rooms
/// scenario's: `headroom_deliveries_per_second`, what its seconds count),
/// `headroom_errors_per_second` and `headroom_latency_seconds{quantile=…}` (over the
/// second's expected answers; none: no sample); a server reading gives
/// `headroom_server_rss_bytes` and `headroom_server_cpu_cores`. Samples of one series stay
/// in the lines' order.
pub(crate) fn write_request(lines: &[StreamLine]) -> wire::WriteRequest {
    let mut samples = Samples::default();
    for line in lines {
        match line {
            StreamLine::Second(second) => samples.second(second),
            StreamLine::Server(reading) => samples.server(reading),
        }
    }
    samples.request()
}

/// Samples by their series' labels (its name among them), each series in the lines' order.
#[derive(Default)]
struct Samples(BTreeMap<Vec<(String, String)>, Vec<wire::Sample>>);

impl Samples {
    fn add(&mut self, name: &str, mut labels: BTreeMap<String, String>, value: f64, at: u64) {
        labels.insert("__name__".to_owned(), name.to_owned());
        self.0
            .entry(labels.into_iter().collect())
            .or_default()
            .push(wire::Sample {
                value,
                timestamp: i64::try_from(at).unwrap_or(i64::MAX),
            });
    }

    /// A scenario's second: its requests (a rooms scenario's deliveries), its errors, and its
    /// latency quantiles when an expected answer came.
    fn second(&mut self, second: &StreamSecond) {
        let mut labels = run_labels(&second.labels);
        labels.insert("scenario".to_owned(), second.scenario.clone());
        let window = &second.window;
        let counted = match second.kind {
            SecondKind::Http => "headroom_requests_per_second",
            SecondKind::Rooms => "headroom_deliveries_per_second",
        };
        let at = second.unix_ms;
        self.add(counted, labels.clone(), window.requests as f64, at);
        let errors = window.errors as f64;
        self.add("headroom_errors_per_second", labels.clone(), errors, at);
        if window.requests <= window.errors {
            return;
        }
        for (quantile, ms) in [
            ("0.5", window.p50_ms),
            ("0.95", window.p95_ms),
            ("0.99", window.p99_ms),
        ] {
            let mut labels = labels.clone();
            labels.insert("quantile".to_owned(), quantile.to_owned());
            self.add("headroom_latency_seconds", labels, ms / 1000.0, at);
        }
    }

    /// A server reading: its RSS, and its CPU when read.
    fn server(&mut self, reading: &StreamServer) {
        let mut labels = run_labels(&reading.labels);
        if let Some(service) = &reading.service {
            labels.insert("service".to_owned(), service.clone());
        }
        let (sample, at) = (&reading.sample, reading.unix_ms);
        let rss = sample.rss_bytes as f64;
        self.add("headroom_server_rss_bytes", labels.clone(), rss, at);
        if let Some(pct) = sample.cpu_pct {
            self.add("headroom_server_cpu_cores", labels, pct / 100.0, at);
        }
    }

    fn request(self) -> wire::WriteRequest {
        wire::WriteRequest {
            timeseries: self
                .0
                .into_iter()
                .map(|(labels, samples)| wire::TimeSeries {
                    labels: labels
                        .into_iter()
                        .map(|(name, value)| wire::Label { name, value })
                        .collect(),
                    samples,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 44: a rooms second counts deliveries seen, not the messages sent that the
    /// scenario's `requests` total counts: it is exported under its own name.
    #[test]
    fn a_rooms_second_is_deliveries_not_requests() {
        let text =
            crate::live::tests::SECOND_LINE.replace("\"kind\":\"http\"", "\"kind\":\"rooms\"");
        let line: StreamLine = serde_json::from_str(&text).expect("a line");
        let request = write_request(&[line]);
        let names: Vec<&str> = request
            .timeseries
            .iter()
            .filter_map(|series| {
                series
                    .labels
                    .iter()
                    .find(|l| l.name == "__name__")
                    .map(|l| l.value.as_str())
            })
            .collect();
        assert!(
            names.contains(&"headroom_deliveries_per_second"),
            "{names:?}"
        );
        assert!(
            !names.contains(&"headroom_requests_per_second"),
            "{names:?}"
        );
    }

    #[test]
    fn a_second_becomes_its_series_with_sorted_labels() {
        let line: StreamLine =
            serde_json::from_str(crate::live::tests::SECOND_LINE).expect("a line");
        let request = write_request(&[line]);
        let names: Vec<String> = request
            .timeseries
            .iter()
            .map(|series| {
                let labels: Vec<&str> = series.labels.iter().map(|l| l.name.as_str()).collect();
                let mut sorted = labels.clone();
                sorted.sort_unstable();
                assert_eq!(labels, sorted, "labels sorted by name");
                series.labels[0].value.clone()
            })
            .collect();
        assert_eq!(
            names,
            [
                "headroom_errors_per_second",
                "headroom_latency_seconds",
                "headroom_latency_seconds",
                "headroom_latency_seconds",
                "headroom_requests_per_second",
            ]
        );
        let requests = &request.timeseries[4];
        assert_eq!(
            requests.samples,
            [wire::Sample {
                value: 3.0,
                timestamp: 1_796_283_661_000
            }]
        );
        let p95 = &request.timeseries[2];
        assert!(
            p95.labels
                .iter()
                .any(|l| l.name == "quantile" && l.value == "0.95")
        );
        assert_eq!(p95.samples[0].value, 0.002);
    }

    #[test]
    fn variables_become_label_names_prometheus_takes() {
        assert_eq!(label_name("readers"), "readers");
        assert_eq!(label_name("people-per-cpu"), "people_per_cpu");
        assert_eq!(label_name("9lives"), "_9lives");
    }

    /// The loopback rule at the check itself: no socket is opened.
    #[test]
    fn an_endpoint_off_loopback_is_refused_unless_allowed() {
        let refused = endpoint("http://10.1.2.3:9090/api/v1/write", &[])
            .expect_err("not loopback")
            .to_string();
        assert!(
            refused.contains("--stream prometheus-rw=http://10.1.2.3:9090/api/v1/write"),
            "{refused}"
        );
        assert!(
            endpoint(
                "http://10.1.2.3:9090/api/v1/write",
                &["10.1.2.3".to_owned()]
            )
            .is_ok()
        );
        assert!(endpoint("http://127.0.0.1:9090/api/v1/write", &[]).is_ok());
        let tls = endpoint("https://127.0.0.1:9090/api/v1/write", &[]).expect_err("https");
        assert!(
            tls.to_string().contains("https:// is not supported"),
            "{tls}"
        );
        assert!(endpoint("ftp://127.0.0.1/", &[]).is_err());
    }
}
