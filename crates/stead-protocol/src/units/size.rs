//! Sizes as a person writes them (`512MiB`, `2GiB`, `100MB`, `65536`): `[logs] keep_free`
//! and `[retention] logs_max_total` in `config.toml`.

/// Why a size was rejected; the message quotes it and says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid size {value:?}: expected a whole number of bytes, or one with a unit \
     (B, KiB, MiB, GiB, TiB, kB, MB, GB, TB), such as 512MiB or 100MB"
)]
pub struct SizeError {
    /// The size as given.
    pub value: String,
}

const KIB: u64 = 1024;

/// The binary units, largest first, as [`format_size`] writes them.
const BINARY: [(&str, u64); 4] = [
    ("TiB", KIB * KIB * KIB * KIB),
    ("GiB", KIB * KIB * KIB),
    ("MiB", KIB * KIB),
    ("KiB", KIB),
];

/// Parses a size: a whole number of bytes, with a binary (`KiB`..`TiB`) or decimal
/// (`kB`..`TB`) unit or none; a space may stand between the number and the unit.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let wrong = || SizeError {
        value: text.to_string(),
    };
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let number: u64 = number.parse().map_err(|_| wrong())?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        unit => BINARY
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, scale)| *scale)
            .ok_or_else(wrong)?,
    };
    number.checked_mul(scale).ok_or_else(wrong)
}

/// Formats a size the way [`parse_size`] reads it, in the largest binary unit that
/// divides it exactly: 1073741824 is `1GiB`, 1536 is `1536` (bytes, as 1.5 KiB is not
/// whole), so `parse_size(&format_size(n)) == n` for every `n`.
pub fn format_size(bytes: u64) -> String {
    BINARY
        .iter()
        .find(|(_, scale)| bytes != 0 && bytes.is_multiple_of(*scale))
        .map_or_else(
            || bytes.to_string(),
            |(name, scale)| format!("{}{name}", bytes / scale),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_binary_and_decimal_units_or_bytes() {
        assert_eq!(parse_size(" 0 "), Ok(0));
        assert_eq!(parse_size("65536"), Ok(65_536));
        assert_eq!(parse_size("7B"), Ok(7));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("2 GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1TiB"), Ok(1 << 40));
        assert_eq!(parse_size("3KiB"), Ok(3 << 10));
        assert_eq!(parse_size("100MB"), Ok(100_000_000));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("2kB"), Ok(2_000));
        for bad in [
            "",
            "-1",
            "1.5GiB",
            "12XB",
            "GiB",
            "1 G",
            "99999999999999999999",
        ] {
            assert_eq!(
                parse_size(bad),
                Err(SizeError {
                    value: bad.to_string()
                }),
                "{bad:?}"
            );
        }
        assert!(
            parse_size("12XB")
                .unwrap_err()
                .to_string()
                .starts_with("invalid size \"12XB\": expected a whole number of bytes"),
        );
    }

    #[test]
    fn sizes_format_in_the_largest_whole_unit_and_round_trip() {
        assert_eq!(format_size(1 << 30), "1GiB");
        assert_eq!(format_size(512 << 20), "512MiB");
        assert_eq!(format_size(1536), "1536");
        assert_eq!(format_size(0), "0");
        assert_eq!(format_size(3 << 40), "3TiB");
        for n in [
            0,
            1,
            1023,
            1024,
            1 << 20,
            (1 << 30) + 1,
            u64::MAX,
            4096 * 1000,
        ] {
            assert_eq!(parse_size(&format_size(n)), Ok(n), "{n}");
        }
    }
}
