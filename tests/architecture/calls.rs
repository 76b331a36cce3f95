//! What a module's code calls that only some crates may: printing, sockets, file writes.
//! Each check reads the code with its tests cut off and comments left out.

/// What prints from a library: a library returns what it has to say, and the binary (or a
/// test, through `say`) decides where it goes.
const PRINTING: [&str; 7] = [
    "println!",
    "eprintln!",
    "print!(",
    "eprint!(",
    "dbg!(",
    "io::stdout()",
    "io::stderr()",
];

/// The lines of a module's code (tests left out) that print.
pub fn printing_lines(text: &str) -> Vec<usize> {
    lines_naming(text, &PRINTING)
}

/// What opens a socket: the standard library's and tokio's sockets, socket2, and the
/// clients and servers built on them.
const SOCKETS: [&str; 9] = [
    "TcpStream",
    "TcpListener",
    "UdpSocket",
    "UnixStream",
    "UnixListener",
    "tokio::net",
    "socket2",
    "connect_async",
    "axum::serve",
];

/// The lines of a module's code (tests left out) that open a socket.
pub fn socket_lines(text: &str) -> Vec<usize> {
    lines_naming(text, &SOCKETS)
}

/// What writes a file: every way the standard library makes, replaces or renames one, and
/// the results crate's atomic write.
const WRITING: [&str; 6] = [
    "write_atomically",
    "fs::write",
    "File::create",
    "OpenOptions",
    "fs::copy",
    "fs::rename",
];

/// The lines of a file's code (its tests left out) that write a file.
pub fn writing_lines(text: &str) -> Vec<usize> {
    lines_naming(text, &WRITING)
}

fn lines_naming(text: &str, names: &[&str]) -> Vec<usize> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines()
        .enumerate()
        .filter(|(_, line)| {
            !line.trim_start().starts_with("//") && names.iter().any(|name| line.contains(name))
        })
        .map(|(number, _)| number + 1)
        .collect()
}

#[cfg(test)]
mod checks {
    use super::*;

    #[test]
    fn printing_sockets_and_writes_are_found_outside_tests() {
        let text = "fn f() {\n    println!(\"x\");\n    let _ = std::io::stderr();\n}\n// println! in a comment\n#[cfg(test)]\nmod tests { fn g() { eprintln!(\"y\"); } }\n";
        assert_eq!(printing_lines(text), [2, 3]);
        let text = "use tokio::net::TcpListener;\nfn f() { let _ = std::net::TcpStream::connect(\"127.0.0.1:1\"); }\n";
        assert_eq!(socket_lines(text), [1, 2]);
        assert!(socket_lines("fn f() -> u16 { 8080 }").is_empty());
        let text = "fn f() { write_atomically(p, t); }\n// std::fs::write in a comment\n#[cfg(test)]\nmod tests { fn g() { std::fs::write(p, t); } }\n";
        assert_eq!(writing_lines(text), [1]);
    }
}
