//! What is filled into the strings the runner runs and the load sends: `{port}`,
//! `{port.NAME}`, `{headroom}`, `{env:NAME}` (and variables, where the compiler left them).

use std::collections::BTreeMap;
use std::path::Path;

use headroom_spec::placeholder::{self, PlaceholderName, builtin};

/// Fills a rooms socket's `{room}` and `{peer}` (the rest was filled before).
pub fn per_socket(text: &str, room: u32, peer: u32) -> String {
    placeholder::fill(text, |name| match name {
        PlaceholderName::Name(builtin::ROOM) => Some(room.to_string()),
        PlaceholderName::Name(builtin::PEER) => Some(peer.to_string()),
        _ => None,
    })
}

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
            // Where the point's variables are given, a name among them is filled and any
            // other is an error; without them, the name is for a later stage (`{room}`).
            PlaceholderName::Name(variable) => match self.vars {
                Some(vars) => match vars.get(variable) {
                    Some(value) => Some(value.to_string()),
                    None => {
                        missing = Some(format!(
                            "`{text}` names `{variable}`, which is no variable of this point"
                        ));
                        None
                    }
                },
                None => None,
            },
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

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_spec::VarValue;

    /// ARCHITECTURE.md, resolved values: a `[measure]` command's variable is filled from the
    /// point, and a name the point lacks is an error, never left in the text.
    #[test]
    fn an_unknown_variable_is_an_error() {
        let vars = BTreeMap::from([("rooms".to_owned(), VarValue::Integer(16))]);
        let fills = Fills {
            vars: Some(&vars),
            ..Fills::new(8080, Path::new("/bin/headroom"))
        };
        assert_eq!(
            fills.fill("count {rooms} on {port}").as_deref(),
            Ok("count 16 on 8080")
        );
        assert_eq!(
            fills.fill("count {room}"),
            Err("`count {room}` names `room`, which is no variable of this point".to_owned())
        );
        // Without the point's variables, a name is a later stage's (`{room}` in a rooms URL).
        let later = Fills::new(8080, Path::new("/bin/headroom"));
        assert_eq!(
            later.fill("ws://127.0.0.1:{port}/{room}").as_deref(),
            Ok("ws://127.0.0.1:8080/{room}")
        );
    }
}
