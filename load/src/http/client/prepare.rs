//! A scenario's requests made ready before the load: placeholders filled, hosts resolved and
//! checked, TLS to each address probed once, each request encoded once (or kept as a template
//! when its row or captures vary it).

use super::super::checks::Checks;
use super::super::flow;
use super::super::flow::{Captor, Rows, Template};
use super::super::h2::H2Request;
use super::{Address, Client, Prepared, encode};
use crate::tls::Trust;
use crate::{tls, web};
use headroom_matrix::resolved::HttpScenario;
use headroom_spec::scenario::{Expect, HttpVersion};
use hyper::header::{HeaderName, HeaderValue};
use std::path::Path;

/// What preparing a scenario's requests reads.
struct Setting<'a> {
    scenario: &'a HttpScenario,
    port: u16,
    headroom_bin: &'a Path,
    allowed: &'a web::Allowed,
    trust: &'a Trust,
}

/// The addresses requests go to, each resolved, checked and probed once.
#[derive(Default)]
struct Addresses {
    /// (scheme, host:port) of each, in the order of `list`.
    dialed: Vec<(bool, String)>,
    list: Vec<Address>,
}

impl Addresses {
    /// The index of `url`'s address (`full` as filled in, `written` as the spec wrote it),
    /// resolved and checked the first time it comes.
    async fn index(
        &mut self,
        url: &web::WebUrl,
        full: &str,
        written: &str,
        setting: &Setting<'_>,
    ) -> Result<usize, String> {
        let key = (url.secure, url.dial.clone());
        if let Some(i) = self.dialed.iter().position(|d| *d == key) {
            return Ok(i);
        }
        let socket = web::resolve(&url.dial, full, written, setting.allowed).await?;
        let tls = if url.secure {
            let alpn = match setting.scenario.http_version {
                HttpVersion::Http1 => tls::ALPN_HTTP1,
                HttpVersion::Http2 => tls::ALPN_H2,
            };
            let timeout = setting.scenario.connect_timeout.as_std() * 2;
            let trust = setting.trust;
            Some(
                trust
                    .session_to(alpn, socket, &url.authority, full, timeout)
                    .await?,
            )
        } else {
            if setting.scenario.http_version == HttpVersion::Http2 {
                let timeout = setting.scenario.connect_timeout.as_std() * 2;
                crate::http::h2::speaks_h2c(socket, full, timeout).await?;
            }
            None
        };
        self.dialed.push(key);
        self.list.push(Address { socket, tls });
        Ok(self.dialed.len() - 1)
    }
}

impl Client {
    /// The scenario's requests with their placeholders filled and their hosts resolved and
    /// checked (`allowed`) before any connection is made.
    pub(in crate::http) async fn prepare(
        scenario: &HttpScenario,
        port: u16,
        headroom_bin: &Path,
        allowed: &web::Allowed,
        trust: &Trust,
        rows: Option<Rows>,
    ) -> Result<Client, String> {
        let setting = Setting {
            scenario,
            port,
            headroom_bin,
            allowed,
            trust,
        };
        let captures = flow::capture_names(scenario.requests.iter().map(|r| &r.capture));
        let mut addresses = Addresses::default();
        let mut requests = Vec::new();
        for request in &scenario.requests {
            let url = crate::fill::fill(&request.url, port, headroom_bin)?;
            let parsed = web::parse_web_url(&url).ok_or_else(|| {
                format!("`{url}` is not an http:// or https:// URL the runner can load")
            })?;
            if parsed.authority.contains('{') {
                return Err(format!(
                    "`{url}`: a placeholder in the host; only the path, headers and body vary per request"
                ));
            }
            let address = addresses
                .index(&parsed, &url, &request.url, &setting)
                .await?;
            requests.push(prepared(
                request, &url, parsed, address, &setting, &captures,
            )?);
        }
        let once = (0..requests.len()).filter(|&i| requests[i].once).collect();
        // `once` requests are a user's first steps, not picked afterwards.
        let total_weight = requests.iter().filter(|r| !r.once).map(|r| r.weight).sum();
        Ok(Client {
            requests,
            addresses: addresses.list,
            version: scenario.http_version,
            rows,
            captures,
            once,
            total_weight,
            timeout: scenario.timeout.as_std(),
            connect_timeout: scenario.connect_timeout.as_std(),
            sources: None,
        })
    }
}

/// One request made ready: `url` as filled in and taken apart, to the address at `address`;
/// `captures` are the names of the scenario's captures.
fn prepared(
    request: &headroom_spec::scenario::Request,
    url: &str,
    parsed: web::WebUrl,
    address: usize,
    setting: &Setting<'_>,
    captures: &[String],
) -> Result<Prepared, String> {
    let basic = parsed.basic_authorization();
    let web::WebUrl {
        secure,
        authority,
        path,
        ..
    } = parsed;
    let (port, headroom_bin) = (setting.port, setting.headroom_bin);
    let mut headers = filled_headers(&request.headers, url, port, headroom_bin)?;
    // `user:password@` in the URL is Basic authentication, as curl sends it, unless the
    // request sets its own.
    if let Some(basic) = basic
        && !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    {
        headers.push(("authorization".to_owned(), basic));
    }
    let body = match &request.body {
        Some(body) => crate::fill::fill(body, port, headroom_bin)?,
        None => String::new(),
    };
    let method = request.method.as_str();
    let varies = flow::varies(&path)
        || flow::varies(&body)
        || headers.iter().any(|(_, value)| flow::varies(value));
    if path.contains(char::is_whitespace) {
        return Err(format!(
            "the path of `{url}` has white space: encode it (%20)"
        ));
    }
    let expect = request
        .expect
        .as_ref()
        .map_or_else(Vec::new, Expect::statuses);
    let checks = match request.expect.as_ref().and_then(Expect::checks) {
        Some(checks) => Some(Checks::of(checks, url)?),
        None => None,
    };
    // A request that varies is encoded at each send, from its template.
    let (encoded, h2) = match setting.scenario.http_version {
        _ if varies => (Vec::new(), None),
        HttpVersion::Http1 => (
            encode(method, &path, &authority, &headers, body.as_bytes()),
            None,
        ),
        HttpVersion::Http2 => {
            let parts =
                H2Request::new(method, secure, &authority, &path, &headers, body.as_bytes())
                    .map_err(|e| format!("`{url}`: {e}"))?;
            (Vec::new(), Some(parts))
        }
    };
    let captors = request
        .capture
        .iter()
        .map(|(name, capture)| {
            let index = captures.iter().position(|n| n == name).unwrap_or(0);
            Captor::of(capture, url).map(|captor| (index, captor))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let template = varies.then(|| Template {
        method: method.to_owned(),
        secure,
        authority,
        path,
        headers,
        body,
    });
    Ok(Prepared {
        address,
        encoded,
        h2,
        head_only: method == "HEAD",
        expect,
        checks,
        weight: request.weight,
        template,
        captors,
        once: request.once,
    })
}

/// A request's headers with their placeholders filled, each checked as HTTP allows.
fn filled_headers(
    headers: &std::collections::BTreeMap<String, String>,
    url: &str,
    port: u16,
    headroom_bin: &Path,
) -> Result<Vec<(String, String)>, String> {
    let mut filled = Vec::new();
    for (name, value) in headers {
        let value = crate::fill::fill(value, port, headroom_bin)?;
        HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("header `{name}` of `{url}`: {e}"))?;
        HeaderValue::from_str(&value)
            .map_err(|e| format!("the value of header `{name}` of `{url}`: {e}"))?;
        filled.push((name.clone(), value));
    }
    Ok(filled)
}
