//! `[target]`: a command or a URL, one readiness check, and load only to allowed hosts.

use super::*;

impl<'a> Checker<'a> {
    pub(super) fn target(&mut self) {
        self.target_strings();
        self.target_lifecycle();
        self.readiness();
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
            self.string("/target/metrics", metrics, everywhere, "the target");
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
                    .hint("add `command = [\"{headroom}\", \"demo-target\", \"--port\", \"{port}\"]` or `url = \"http://127.0.0.1:8080\"`"),
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
        if target.process == headroom_spec::target::ProcessMode::PerPhase
            && target.command.is_some()
        {
            self.push(
                Diagnostic::new(Code::NotImplemented, "`process = \"per-phase\"` is not carried out yet: every run starts a fresh target")
                    .at("/target/process", self.value_span("/target/process"))
                    .label("one server for a whole phase is not implemented")
                    .hint("remove `process` (a fresh server per point and repeat is the default and what runs)"),
            );
        }
    }

    /// One readiness check (`http`, `tcp` or `log`), that can pass.
    fn readiness(&mut self) {
        let target = &self.spec.target;
        if target.ready.timeout.as_micros() == 0 && target.command.is_some() {
            self.push(
                Diagnostic::new(
                    Code::OutOfRange,
                    "`ready.timeout = \"0s\"` gives the target no time to get ready",
                )
                .at(
                    "/target/ready/timeout",
                    self.value_span("/target/ready/timeout"),
                )
                .label("every run would fail before its first check")
                .hint("give the target time to start: `timeout = \"30s\"` (the default)"),
            );
        }
        if target.ready.tcp == Some(false) {
            self.push(
                Diagnostic::new(
                    Code::UnknownChoice,
                    "`tcp = false` is not a readiness check",
                )
                .at("/target/ready/tcp", self.value_span("/target/ready/tcp"))
                .label("the only value is `true`: ready when a TCP connect to `{port}` succeeds")
                .hint("write `ready = { tcp = true }`, or use `http` or `log`"),
            );
        }
        if let Some(pattern) = &target.ready.log
            && let Err(error) = regex::Regex::new(pattern)
        {
            let why = regex_error(&error);
            self.push(
                Diagnostic::new(Code::BadPattern, format!("`ready.log` is not a regular expression: {why}"))
                    .at("/target/ready/log", self.value_span("/target/ready/log"))
                    .label("does not compile")
                    .hint("write a Rust regex (https://docs.rs/regex); escape `.`, `(`, `[` and `{` to match them literally"),
            );
        }
        let ready = [
            ("http", target.ready.http.is_some()),
            ("tcp", target.ready.tcp.is_some()),
            ("log", target.ready.log.is_some()),
        ];
        let set: Vec<&str> = ready
            .iter()
            .filter(|(_, set)| *set)
            .map(|(k, _)| *k)
            .collect();
        if set.len() > 1 {
            let pointer = format!("/target/ready/{}", set[1]);
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
        let Some(rest) = url.split_once("://").map(|(_, rest)| rest) else {
            return;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let authority = authority.rsplit('@').next().unwrap_or_default();
        let host = if let Some(v6) = authority.strip_prefix('[') {
            v6.split(']').next().unwrap_or_default()
        } else {
            authority.split(':').next().unwrap_or_default()
        };
        if host.is_empty() || host.contains('{') {
            return;
        }
        let loopback = host == "localhost"
            || host == "::1"
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback());
        if loopback || self.spec.target.allow_hosts.iter().any(|h| h == host) {
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
