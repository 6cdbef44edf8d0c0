//! Masking a run's secrets in its output: every value the monitor handed the command is
//! written to the log as `[secret NAME]`.
//!
//! The command's output arrives in reads of whatever size its pipes give, so a value may
//! be split across two reads. Each stream (stdout, stderr) keeps back its last bytes
//! while they could still be the start of a value (never more than the longest value
//! less one byte) and writes them once the next read shows what they are, or when the
//! stream ends.

use std::borrow::Cow;

/// The secrets to mask and the bytes each stream keeps back.
#[derive(Debug, Default)]
pub struct Masks {
    /// Longest first, so that a value containing another is masked whole.
    secrets: Vec<Secret>,
    /// Per stream (0: stdout, 1: stderr): bytes read and not yet written.
    held: [Vec<u8>; 2],
}

#[derive(Debug)]
struct Secret {
    value: Vec<u8>,
    mask: Vec<u8>,
}

impl Masks {
    /// Masks for `secrets`, (name, value) pairs; empty values are left out (there is
    /// nothing to find).
    pub fn new<'a>(secrets: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut secrets: Vec<Secret> = secrets
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(name, value)| Secret {
                value: value.as_bytes().to_vec(),
                mask: format!("[secret {name}]").into_bytes(),
            })
            .collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.value.len()));
        Self {
            secrets,
            held: Default::default(),
        }
    }

    /// What of `bytes`, read from `stream`, may be written now, masked; what could be
    /// the start of a value is kept back for the next read. A run without secrets (most
    /// runs) gets its bytes back as they are, uncopied.
    pub fn pass<'b>(&mut self, stream: usize, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        if self.secrets.is_empty() {
            return Cow::Borrowed(bytes);
        }
        let mut input = std::mem::take(&mut self.held[stream]);
        input.extend_from_slice(bytes);
        let (out, held) = self.masked(&input, false);
        self.held[stream] = held.to_vec();
        Cow::Owned(out)
    }

    /// What `stream` kept back, masked, once it has ended: no more bytes can follow.
    pub fn end(&mut self, stream: usize) -> Vec<u8> {
        let input = std::mem::take(&mut self.held[stream]);
        self.masked(&input, true).0
    }

    /// `input` with every value masked, and (unless `last`) its tail that could begin a
    /// value, kept back.
    fn masked<'i>(&self, input: &'i [u8], last: bool) -> (Vec<u8>, &'i [u8]) {
        let mut out = Vec::with_capacity(input.len());
        let mut i = 0;
        'scan: while i < input.len() {
            let rest = &input[i..];
            // A longer value may still come whole with the next read: wait for it
            // before masking a shorter one found here.
            let open = |s: &Secret| s.value.len() > rest.len() && s.value.starts_with(rest);
            if !last && self.secrets.iter().any(open) {
                return (out, rest);
            }
            for secret in &self.secrets {
                if rest.starts_with(&secret.value) {
                    out.extend_from_slice(&secret.mask);
                    i += secret.value.len();
                    continue 'scan;
                }
            }
            out.push(input[i]);
            i += 1;
        }
        (out, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::Masks;

    fn pass(m: &mut Masks, stream: usize, bytes: &[u8]) -> Vec<u8> {
        m.pass(stream, bytes).into_owned()
    }

    fn masks() -> Masks {
        Masks::new([("API_TOKEN", "s3cr3t-v4lue"), ("SHORT", "s3cr3t")])
    }

    #[test]
    fn values_are_masked_by_name() {
        let mut m = masks();
        let out = pass(&mut m, 0, b"token=s3cr3t-v4lue and s3cr3t.\n");
        assert_eq!(out, b"token=[secret API_TOKEN] and [secret SHORT].\n");
        assert!(m.end(0).is_empty());
    }

    #[test]
    fn a_value_split_across_reads_is_masked() {
        // Every split point of the line, as two reads.
        let line = b"a s3cr3t-v4lue z";
        for at in 0..=line.len() {
            let mut m = masks();
            let mut out = pass(&mut m, 1, &line[..at]);
            out.extend(pass(&mut m, 1, &line[at..]));
            out.extend(m.end(1));
            assert_eq!(out, b"a [secret API_TOKEN] z", "split at {at}");
        }
    }

    #[test]
    fn only_what_could_begin_a_value_is_kept_back() {
        let mut m = masks();
        assert_eq!(pass(&mut m, 0, b"hello s3c"), b"hello ");
        // The other stream is its own.
        assert_eq!(pass(&mut m, 1, b"r3t"), b"r3t");
        assert_eq!(pass(&mut m, 0, b"ret"), b"s3cret");
        // A stream that ends writes what it kept back: the value never came.
        assert_eq!(pass(&mut m, 0, b"s3cr3t-v4"), b"");
        assert_eq!(m.end(0), b"[secret SHORT]-v4");
    }

    #[test]
    fn no_secrets_pass_everything_at_once() {
        let mut m = Masks::new([("EMPTY", "")]);
        assert_eq!(pass(&mut m, 0, b"anything"), b"anything");
        assert!(m.end(0).is_empty());
    }
}
