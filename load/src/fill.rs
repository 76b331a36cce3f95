//! What is filled into the strings the runner runs and the load sends: `{port}`,
//! `{port.NAME}`, `{headroom}`, `{env:NAME}` (and variables, where the compiler left them).

use std::collections::BTreeMap;
use std::path::Path;

use headroom_spec::placeholder::{self, PlaceholderName, builtin};

/// No stack: no service ports to fill.
static NO_SERVICES: BTreeMap<String, u16> = BTreeMap::new();

/// What the runner fills into a command, a URL or a step: `{port}` (the process's own, or the
/// front service's), `{port.NAME}` (a service's), `{headroom}` and `{env:NAME}`; and, where
/// given, the point's variables (series commands, which the compiler leaves unfilled).
#[derive(Clone, Copy)]
pub struct Fills<'a> {
    /// `{port}`.
    pub port: u16,
    /// `{port.NAME}`: each service's port.
    pub services: &'a BTreeMap<String, u16>,
    /// `{headroom}`.
    pub headroom_bin: &'a Path,
    /// The point's variables, when the compiler did not fill them.
    pub vars: Option<&'a BTreeMap<String, headroom_spec::VarValue>>,
}

impl<'a> Fills<'a> {
    /// `{port}` and `{headroom}` only (no stack).
    pub fn new(port: u16, headroom_bin: &'a Path) -> Fills<'a> {
        Fills {
            port,
            services: &NO_SERVICES,
            headroom_bin,
            vars: None,
        }
    }

    /// `text` filled, or what it names that is not there.
    pub fn fill(&self, text: &str) -> Result<String, String> {
        let mut missing = None;
        let filled = placeholder::fill(text, |name| match name {
            PlaceholderName::Name(builtin::PORT) => Some(self.port.to_string()),
            PlaceholderName::Name(builtin::HEADROOM) => {
                Some(self.headroom_bin.display().to_string())
            }
            PlaceholderName::Name(variable) => self
                .vars
                .and_then(|vars| vars.get(variable))
                .map(ToString::to_string),
            PlaceholderName::Port(service) => match self.services.get(service) {
                Some(port) => Some(port.to_string()),
                None => {
                    missing = Some(format!(
                        "`{text}` names the port of `{service}`, which is no service of the stack"
                    ));
                    None
                }
            },
            PlaceholderName::Env(variable) => match std::env::var(variable) {
                Ok(value) => Some(value),
                Err(_) => {
                    missing = Some(format!(
                        "the environment variable `{variable}` that `{text}` names is not set"
                    ));
                    None
                }
            },
            PlaceholderName::Row(_) | PlaceholderName::Capture(_) => None,
        });
        match missing {
            Some(why) => Err(why),
            None => Ok(filled),
        }
    }
}

/// Fills `{port}`, `{headroom}` and `{env:NAME}`; variables were filled by the compiler.
pub fn fill(text: &str, port: u16, headroom_bin: &Path) -> Result<String, String> {
    Fills::new(port, headroom_bin).fill(text)
}
