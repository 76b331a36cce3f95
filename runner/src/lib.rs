//! The runner executes a compiled run matrix: it is the only crate that spawns processes or
//! opens sockets. It is built by the runner issue; until then it holds no code.
