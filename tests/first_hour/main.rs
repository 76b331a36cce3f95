//! Issue 30: a newcomer's first hour against their own server. No figure from a server that
//! answered nothing, virtual users that do not move in step, and the results a plan reads
//! chosen on purpose. Each test runs `headroom` as a user does, on loopback. A module per
//! theme.

#[path = "../common/mod.rs"]
mod common;

mod nothing_measured;
mod own_server;
mod refusals;
mod users;

use std::path::Path;

use headroom_results::{Failure, SegmentRef};
use headroom_spec::vars::VarValue;
use headroom_test_support::results::{relay, to_text};

use common::run::*;
