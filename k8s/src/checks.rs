//! What a cluster would refuse, refused before anything is written: an image reference, a
//! namespace, a quantity (storage, CPU, memory) of the forms Kubernetes takes, and a bench
//! name that cannot name its objects.

use crate::K8sError;

/// A DNS label (RFC 1123), as namespaces and the objects' names are: lower-case letters,
/// digits and `-`, starting and ending with a letter or digit, `most` characters at most.
pub(crate) fn dns_label(text: &str, most: usize) -> bool {
    let edges_ok = text.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && text.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit());
    !text.is_empty()
        && text.len() <= most
        && edges_ok
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A bench name that names every object (`headroom-<bench>-results` is the longest, and pod
/// `headroom-<bench>-0` a DNS label of 63 at most): a DNS label of 40 characters at most,
/// starting with a letter.
pub(crate) fn bench_name(bench: &str) -> Result<(), K8sError> {
    if dns_label(bench, 40) && bench.starts_with(|c: char| c.is_ascii_lowercase()) {
        Ok(())
    } else {
        Err(K8sError::Name(bench.to_owned()))
    }
}

/// A namespace: a DNS label of 63 characters at most.
pub(crate) fn namespace(namespace: &str) -> Result<(), K8sError> {
    if dns_label(namespace, 63) {
        Ok(())
    } else {
        Err(K8sError::Namespace(namespace.to_owned()))
    }
}

/// An image reference as a container runtime reads it: `[HOST[:PORT]/]PATH[:TAG][@DIGEST]`,
/// the path's components lower-case letters and digits joined by `.`, `_`, `__` or `-`, a tag
/// of at most 128 word characters, `.` and `-`, a digest `ALGORITHM:HEX`.
pub(crate) fn image(reference: &str) -> Result<(), K8sError> {
    let refused = || K8sError::Image(reference.to_owned());
    let (name, digest) = match reference.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (reference, None),
    };
    if let Some(digest) = digest {
        let (algorithm, hex) = digest.split_once(':').ok_or_else(refused)?;
        let algorithm_ok = !algorithm.is_empty()
            && algorithm
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-_".contains(c));
        if !algorithm_ok || hex.len() < 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(refused());
        }
    }
    // A tag follows the last `:` after the last `/` (a `:` before it is a registry's port).
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (path, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if let Some(tag) = tag {
        let tag_ok = !tag.is_empty()
            && tag.len() <= 128
            && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !tag_ok {
            return Err(refused());
        }
    }
    let mut components: Vec<&str> = path.split('/').collect();
    // The first component is a registry when it has a `.` or a `:`, or is `localhost`.
    if components.len() > 1 && (components[0].contains(['.', ':']) || components[0] == "localhost")
    {
        let host = components.remove(0);
        let (host, port) = match host.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host, None),
        };
        let host_ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        let port_ok = port.is_none_or(|port| port.parse::<u16>().is_ok_and(|p| p > 0));
        if !host_ok || !port_ok {
            return Err(refused());
        }
    }
    if components.is_empty() || !components.iter().all(|c| path_component(c)) {
        return Err(refused());
    }
    Ok(())
}

/// `[a-z0-9]+` joined by `.`, `_`, `__` or one or more `-`.
fn path_component(component: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if !component.starts_with(alnum) || !component.ends_with(alnum) {
        return false;
    }
    let mut separator = String::new();
    for c in component.chars() {
        if alnum(c) {
            let ok = separator.is_empty()
                || separator == "."
                || separator == "_"
                || separator == "__"
                || separator.chars().all(|s| s == '-');
            if !ok {
                return false;
            }
            separator.clear();
        } else if matches!(c, '.' | '_' | '-') {
            separator.push(c);
        } else {
            return false;
        }
    }
    true
}

/// A quantity Kubernetes takes, above 0: a decimal number and a suffix (`1Gi`, `500M`,
/// `250m`, `2`); `flag` names it in the error.
pub(crate) fn quantity(flag: &'static str, text: &str) -> Result<(), K8sError> {
    const SUFFIXES: [&str; 14] = [
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let value: Option<f64> = number.parse().ok();
    if value.is_some_and(|v| v > 0.0 && v.is_finite()) && SUFFIXES.contains(&suffix) {
        Ok(())
    } else {
        Err(K8sError::Quantity {
            flag,
            value: text.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_as_a_runtime_reads_them() {
        for good in [
            "headroom",
            "registry.example/headroom:0.1.0",
            "localhost:5000/team/headroom:latest",
            "ghcr.io/owner/head_room-x:v1.2.3-rc1",
            "docker.io/library/headroom@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "registry.example:443/a/b:tag@sha256:0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(image(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            " ",
            "Registry.Example/Headroom",
            "headroom:",
            "headroom:tag with space",
            "/headroom",
            "headroom/",
            "registry.example:0/headroom",
            "headroom@sha256:xyz",
            "head..room",
        ] {
            assert_eq!(image(bad), Err(K8sError::Image(bad.to_owned())), "{bad}");
        }
    }

    #[test]
    fn namespaces_bench_names_and_quantities_as_a_cluster_takes_them() {
        assert_eq!(namespace("load-test"), Ok(()));
        for bad in [
            "",
            "Load",
            "-load",
            "load-",
            "a".repeat(64).as_str(),
            "lo_ad",
        ] {
            assert_eq!(
                namespace(bad),
                Err(K8sError::Namespace(bad.to_owned())),
                "{bad}"
            );
        }
        assert_eq!(bench_name("chat-2"), Ok(()));
        for bad in ["chat-", "2chat", "Chat_1", ""] {
            assert_eq!(
                bench_name(bad),
                Err(K8sError::Name(bad.to_owned())),
                "{bad}"
            );
        }
        for good in ["1Gi", "500M", "250m", "2", "0.5", "1.5Ti"] {
            assert_eq!(quantity("--storage", good), Ok(()), "{good}");
        }
        for bad in ["abc", "", "0", "0Gi", "1GB", "-1Gi", "1 Gi"] {
            assert!(quantity("--storage", bad).is_err(), "{bad}");
        }
    }
}
