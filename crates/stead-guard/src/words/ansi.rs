//! ANSI-C quoting (`$'…'`): the escapes bash decodes, so that `$'\x70kill'` reads as
//! `pkill`.

/// Decodes the body of a `$'…'` word.
pub(super) fn decode(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'x' => push_code(&mut out, digits(&mut chars, 16, 2)),
            'u' => push_code(&mut out, digits(&mut chars, 16, 4)),
            'U' => push_code(&mut out, digits(&mut chars, 16, 8)),
            'c' => match chars.next() {
                Some(ctl) => out.push(char::from((ctl as u8) & 0x1f)),
                None => out.push_str("\\c"),
            },
            '0'..='7' => {
                let rest = digits(&mut chars, 8, 2);
                let value = rest.map_or(e as u32 - '0' as u32, |(v, n)| {
                    ((e as u32 - '0' as u32) << (3 * n)) | v
                });
                push_code(&mut out, Some((value & 0xff, 1)));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// Up to `max` digits in `radix`: their value and how many there were.
fn digits(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    radix: u32,
    max: usize,
) -> Option<(u32, usize)> {
    let mut value = 0u32;
    let mut n = 0;
    while n < max {
        let Some(d) = chars.peek().and_then(|c| c.to_digit(radix)) else {
            break;
        };
        chars.next();
        value = value * radix + d;
        n += 1;
    }
    (n > 0).then_some((value, n))
}

fn push_code(out: &mut String, code: Option<(u32, usize)>) {
    match code.and_then(|(v, _)| char::from_u32(v)) {
        Some(c) => out.push(c),
        None => out.push('\u{fffd}'),
    }
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn escapes() {
        assert_eq!(decode(r"\x70kill"), "pkill");
        assert_eq!(decode(r"\163tead"), "stead");
        assert_eq!(decode(r"\u0073tead"), "stead");
        assert_eq!(decode(r"a\tb\\"), "a\tb\\");
    }
}
