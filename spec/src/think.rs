//! A virtual user's think time (its pause between an answer and its next request) and when
//! the users start: real users neither pause alike nor arrive together.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::param::Param;
use crate::units::Duration;

/// A virtual user's pause between an answer and its next request: the same every time
/// (`"1s"`), or drawn afresh each time (`{ uniform = ["0.5s", "1.5s"] }`, `{ exponential = "1s" }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Think {
    /// The same pause every time: `"1s"` or `"{think}"`.
    Fixed(Param<Duration>),
    /// A pause drawn afresh after every answer.
    Drawn(DrawnThink),
}

/// A drawn think time: exactly one of `uniform` or `exponential`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrawnThink {
    /// Uniformly between the two, least first (Locust's `between(a, b)`): `["0.5s", "1.5s"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uniform: Option<[Param<Duration>; 2]>,
    /// Exponentially distributed with this mean (the gaps of a Poisson process: many short
    /// pauses and a few long ones): `"1s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exponential: Option<Param<Duration>>,
}

impl Think {
    /// Every duration it names, with its pointer below the `think` key (`""`, `/uniform/0`).
    pub fn params(&self) -> Vec<(String, &Param<Duration>)> {
        match self {
            Think::Fixed(fixed) => vec![(String::new(), fixed)],
            Think::Drawn(drawn) => {
                let mut params = Vec::new();
                for (i, bound) in drawn.uniform.iter().flatten().enumerate() {
                    params.push((format!("/uniform/{i}"), bound));
                }
                if let Some(mean) = &drawn.exponential {
                    params.push(("/exponential".to_owned(), mean));
                }
                params
            }
        }
    }
}

/// When a scenario's virtual users send their first request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UserStart {
    /// Each user waits a random part of its first think time first, so the users' sends
    /// spread over the think time as independent users' do (a ramp spreads them too).
    #[default]
    Spread,
    /// Every user sends at once when it becomes active: the users stay in step, a burst every
    /// think time (a thundering herd, on purpose).
    Together,
}

impl UserStart {
    /// As written in a spec.
    pub fn as_str(self) -> &'static str {
        match self {
            UserStart::Spread => "spread",
            UserStart::Together => "together",
        }
    }
}
