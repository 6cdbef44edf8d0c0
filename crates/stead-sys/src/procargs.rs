//! The layout of macOS's `KERN_PROCARGS2` answer, read here so that its rules are tested
//! on every platform: a native-endian `int` argument count, the executable's path, NUL
//! padding, then the arguments and the environment, each NUL-terminated, the environment
//! ending at an empty string.

/// The environment entries (`NAME=VALUE`) of a `KERN_PROCARGS2` area; none when the
/// area is too short to hold a count.
pub fn environment(area: &[u8]) -> Vec<&[u8]> {
    let Some(argc) = area
        .get(..4)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .and_then(|n| usize::try_from(n).ok())
    else {
        return Vec::new();
    };
    let mut strings = area[4..]
        .split(|&b| b == 0)
        // The executable's path, then the padding after it.
        .skip(1)
        .skip_while(|s| s.is_empty());
    for _ in strings.by_ref().take(argc) {}
    strings.take_while(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(argc: i32, path: &str, pad: usize, strings: &[&str]) -> Vec<u8> {
        let mut area = argc.to_ne_bytes().to_vec();
        area.extend(path.as_bytes());
        area.extend(std::iter::repeat_n(0u8, 1 + pad));
        for s in strings {
            area.extend(s.as_bytes());
            area.push(0);
        }
        area
    }

    #[test]
    fn the_environment_follows_the_arguments() {
        let a = area(
            2,
            "/bin/sleep",
            5,
            &[
                "sleep",
                "30",
                "HOME=/Users/me",
                "STEAD_INVOCATION_ID=abc",
                "",
                "junk",
            ],
        );
        assert_eq!(
            environment(&a),
            [&b"HOME=/Users/me"[..], &b"STEAD_INVOCATION_ID=abc"[..]]
        );
    }

    #[test]
    fn an_argument_that_looks_like_an_entry_is_not_one() {
        let a = area(
            2,
            "/bin/env",
            0,
            &["env", "STEAD_INVOCATION_ID=abc", "PATH=/bin"],
        );
        assert_eq!(environment(&a), [&b"PATH=/bin"[..]]);
    }

    #[test]
    fn a_short_or_empty_area_has_no_environment() {
        assert!(environment(&[]).is_empty());
        assert!(environment(&[1, 0]).is_empty());
        assert!(environment(&area(0, "/bin/x", 0, &[])).is_empty());
        assert!(environment(&(-1i32).to_ne_bytes()).is_empty());
    }
}
