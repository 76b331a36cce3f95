//! `[target]`: a command or a URL, one readiness check, and load only to allowed hosts.

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use headroom_spec::Scenario;
use headroom_spec::placeholder::builtin;

impl<'a> Checker<'a> {
    pub(super) fn target(&mut self) {
        self.target_strings();
        self.target_lifecycle();
        self.readiness();
        self.tls_settings();
    }

    /// Every URL load, readiness checks or scrapes go to, with its pointer.
    pub(super) fn urls(&self) -> Vec<(String, &'a str)> {
        let spec = self.spec;
        let target = &spec.target;
        let mut urls = Vec::new();
        for (pointer, url) in [
            ("/target/url", &target.url),
            ("/target/metrics", &target.metrics),
            ("/target/ready/http", &target.ready.http),
        ] {
            if let Some(url) = url {
                urls.push((pointer.to_owned(), url.as_str()));
            }
        }
        for (i, scenario) in spec.scenarios.iter().enumerate() {
            match scenario {
                Scenario::Http(http) => {
                    for (j, request) in http.requests.iter().enumerate() {
                        urls.push((format!("/scenario/{i}/requests/{j}/url"), &request.url));
                    }
                }
                Scenario::Rooms(rooms) => {
                    urls.push((format!("/scenario/{i}/url"), &rooms.url));
                    if let Some(reload) = &rooms.reload {
                        urls.push((format!("/scenario/{i}/reload/url"), &reload.url));
                    }
                }
            }
        }
        urls
    }

    /// `ca` and `insecure_skip_verify`: used by some `https://` or `wss://` URL, not both,
    /// and certificates unchecked on loopback only.
    fn tls_settings(&mut self) {
        let target = &self.spec.target;
        let insecure = target.insecure_skip_verify;
        if target.ca.is_none() && !insecure {
            return;
        }
        let key = if insecure {
            "insecure_skip_verify"
        } else {
            "ca"
        };
        let pointer = format!("/target/{key}");
        let secure: Vec<(String, &str)> = self
            .urls()
            .into_iter()
            .filter(|(_, url)| url.starts_with("https://") || url.starts_with("wss://"))
            .collect();
        if secure.is_empty() {
            self.push(
                Diagnostic::new(
                    Code::UnusedTls,
                    format!("`{key}` is set, and no URL of this spec uses TLS"),
                )
                .at(&pointer, self.key_span(&pointer))
                .label("applies to https:// and wss:// URLs only")
                .hint("remove it, or load the server over https:// or wss://"),
            );
            return;
        }
        if !insecure {
            return;
        }
        if target.ca.is_some() {
            self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    "`ca` and `insecure_skip_verify` are both set",
                )
                .at(&pointer, self.key_span(&pointer))
                .label("then `ca` would check nothing")
                .hint(
                    "keep `ca` (certificates checked against it) and remove `insecure_skip_verify`",
                ),
            );
        }
        let mut refused = false;
        for (at, url) in &secure {
            let Some(host) = url_host(url) else {
                continue;
            };
            if host.contains('{') || is_loopback(host) {
                continue;
            }
            refused = true;
            let start = url.find(host).unwrap_or(0);
            let span = self.inner_span(at, start..start + host.len());
            self.push(
                Diagnostic::new(
                    Code::InsecureTls,
                    format!("`insecure_skip_verify` would accept any certificate from `{host}`, which is not loopback"),
                )
                .at(at, span)
                .label("certificates go unchecked on loopback only")
                .hint("set `ca = \"file.pem\"` in [target] to the CA that signed its certificate, and remove `insecure_skip_verify`"),
            );
        }
        // Refused already: a warning on top would say less.
        if refused {
            return;
        }
        self.push(
            Diagnostic::new(
                Code::UncheckedCertificates,
                "the server's certificate is not checked",
            )
            .at(&pointer, self.key_span(&pointer))
            .label("any certificate is accepted")
            .hint("for a loopback server with a throwaway certificate only; `ca = \"cert.pem\"` checks it instead"),
        );
    }

    /// The target's strings (placeholders, hosts) and parameters.
    fn target_strings(&mut self) {
        let target = &self.spec.target;
        let everywhere = builtin::EVERYWHERE;
        for (i, arg) in target.command.iter().flatten().enumerate() {
            self.string(
                &format!("/target/command/{i}"),
                arg,
                everywhere,
                "the target",
            );
        }
        for (key, value) in &target.env {
            self.string(
                &format!("/target/env/{}", escape(key)),
                value,
                everywhere,
                "the target",
            );
        }
        if let Some(cwd) = &target.cwd {
            self.string("/target/cwd", cwd, everywhere, "the target");
        }
        if let Some(url) = &target.url {
            self.string("/target/url", url, everywhere, "the target");
            self.host("/target/url", url);
        }
        if let Some(metrics) = &target.metrics {
            // A stack's metrics may be any service's: `http://127.0.0.1:{port.db}/metrics`.
            let with_services = [everywhere, &[builtin::SERVICE_PORTS]].concat();
            self.string("/target/metrics", metrics, &with_services, "the target");
            self.host("/target/metrics", metrics);
        }
        if let Some(http) = &target.ready.http {
            self.string("/target/ready/http", http, everywhere, "the target");
            self.host("/target/ready/http", http);
        }
        if let Some(limits) = &target.limits {
            if let Some(cpus) = &limits.cpus {
                self.param("/target/limits/cpus", cpus);
            }
            if let Some(memory) = &limits.memory {
                self.param("/target/limits/memory", memory);
            }
        }
        self.param(
            "/bench/people_per_unit",
            &self.spec.bench.people_per_unit.clone(),
        );
    }

    /// A target headroom starts (`command`) or one running elsewhere (`url`), and the
    /// settings that mean something only for one of them.
    fn target_lifecycle(&mut self) {
        let target = &self.spec.target;
        match (&target.command, &target.url) {
            // A stack: its own checks.
            _ if !target.services.is_empty() => {}
            (Some(_), Some(_)) => self.push(
                Diagnostic::new(Code::ConflictingSettings, "[target] has both `command` and `url`")
                    .at("/target/url", self.key_span("/target/url"))
                    .label("a target is started by headroom or runs elsewhere, not both")
                    .hint("keep `command` to let headroom start a fresh server per point, or `url` for an external server"),
            ),
            (None, None) => self.push(
                Diagnostic::new(Code::MissingSetting, "[target] has neither `command` nor `url`")
                    .at("/target", self.key_span("/target"))
                    .label("nothing to start and nowhere to send load")
                    .hint("add `command = [\"{headroom}\", \"demo-target\", \"--port\", \"{port}\"]`, `url = \"http://127.0.0.1:8080\"` or a stack under `[target.services.NAME]`"),
            ),
            (None, Some(_)) => {
                // An external target has no lifecycle: settings about starting it mean nothing.
                let lifecycle = ["cwd", "env", "stop", "process", "limits"];
                for key in lifecycle {
                    let pointer = format!("/target/{key}");
                    if self.document.place(&pointer).is_some() {
                        self.push(
                            Diagnostic::new(Code::ConflictingSettings, format!("`{key}` has no effect on an external target (`url`)"))
                                .at(&pointer, self.key_span(&pointer))
                                .label("headroom does not start or stop this server")
                                .hint(format!("remove `{key}`, or start the server with `command` instead of `url`")),
                        );
                    }
                }
                if self.document.place("/target/ready/log").is_some() {
                    self.push(
                        Diagnostic::new(Code::ConflictingSettings, "`ready.log` reads the output of a server headroom starts; an external target's output is not read")
                            .at("/target/ready/log", self.key_span("/target/ready/log"))
                            .label("no log line would ever match")
                            .hint("write `ready = { http = \"/healthz\" }` or `ready = { tcp = true }`: headroom waits for it before every run"),
                    );
                }
            }
            (Some(_), None) => {
                if self.document.place("/target/pid_file").is_some() {
                    self.push(
                        Diagnostic::new(Code::ConflictingSettings, "`pid_file` is for an external target; headroom knows the pid of the server it starts")
                            .at("/target/pid_file", self.key_span("/target/pid_file"))
                            .label("not used with `command`")
                            .hint("remove `pid_file`"),
                    );
                }
            }
        }
    }

    /// The target's readiness check, when headroom starts it.
    fn readiness(&mut self) {
        let target = &self.spec.target;
        self.readiness_of("/target/ready", &target.ready, target.command.is_some());
    }

    /// One readiness check (`http`, `tcp` or `log`), that can pass; `base` is its pointer,
    /// `started` whether headroom starts the process (and so waits for it).
    pub(super) fn readiness_of(
        &mut self,
        base: &str,
        ready: &headroom_spec::target::Ready,
        started: bool,
    ) {
        if ready.timeout.as_micros() == 0 && started {
            self.push(
                Diagnostic::new(
                    Code::OutOfRange,
                    "`ready.timeout = \"0s\"` gives the target no time to get ready",
                )
                .at(
                    format!("{base}/timeout"),
                    self.value_span(&format!("{base}/timeout")),
                )
                .label("every run would fail before its first check")
                .hint("give the target time to start: `timeout = \"30s\"` (the default)"),
            );
        }
        if ready.tcp == Some(false) {
            self.push(
                Diagnostic::new(
                    Code::UnknownChoice,
                    "`tcp = false` is not a readiness check",
                )
                .at(
                    format!("{base}/tcp"),
                    self.value_span(&format!("{base}/tcp")),
                )
                .label("the only value is `true`: ready when a TCP connect to `{port}` succeeds")
                .hint("write `ready = { tcp = true }`, or use `http` or `log`"),
            );
        }
        if let Some(pattern) = &ready.log
            && let Err(error) = regex::Regex::new(pattern)
        {
            let why = regex_error(&error);
            self.push(
                Diagnostic::new(Code::BadPattern, format!("`ready.log` is not a regular expression: {why}"))
                    .at(format!("{base}/log"), self.value_span(&format!("{base}/log")))
                    .label("does not compile")
                    .hint("write a Rust regex (https://docs.rs/regex); escape `.`, `(`, `[` and `{` to match them literally"),
            );
        }
        let ready = [
            ("http", ready.http.is_some()),
            ("tcp", ready.tcp.is_some()),
            ("log", ready.log.is_some()),
        ];
        let set: Vec<&str> = ready
            .iter()
            .filter(|(_, set)| *set)
            .map(|(k, _)| *k)
            .collect();
        if set.len() > 1 {
            let pointer = format!("{base}/{}", set[1]);
            self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    format!("`ready` has both `{}` and `{}`", set[0], set[1]),
                )
                .at(&pointer, self.key_span(&pointer))
                .label("one readiness check at a time")
                .hint("keep one of `http`, `tcp` and `log`"),
            );
        }
    }

    /// Load goes to loopback, or to a host the spec allows by name.
    pub(super) fn host(&mut self, pointer: &str, url: &str) {
        let Some(host) = url_host(url) else {
            return;
        };
        if host.contains('{') {
            return;
        }
        if is_loopback(host) || self.spec.target.allow_hosts.iter().any(|h| h == host) {
            return;
        }
        let start = url.find(host).unwrap_or(0);
        let span = self.inner_span(pointer, start..start + host.len());
        self.push(
            Diagnostic::new(Code::HostNotAllowed, format!("load to `{host}` is not allowed: it is not loopback"))
                .at(pointer, span)
                .label("not 127.0.0.1, ::1 or localhost")
                .hint(format!("use 127.0.0.1, or add `allow_hosts = [\"{host}\"]` to [target] if this host is yours to load")),
        );
    }
}

/// The host of a URL (`[…]` stripped from IPv6), if it has one.
pub(super) fn url_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map(|(_, rest)| rest)?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    (!host.is_empty()).then_some(host)
}

/// 127.0.0.0/8, ::1 or localhost.
pub(super) fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// What is wrong with a regular expression, in its error's last line.
pub(super) fn regex_error(error: &regex::Error) -> String {
    match error {
        regex::Error::Syntax(text) => {
            let last = text.lines().last().unwrap_or(text).trim();
            last.strip_prefix("error: ").unwrap_or(last).to_owned()
        }
        other => other.to_string(),
    }
}
