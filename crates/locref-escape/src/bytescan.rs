//! Finding the first byte of interest in a long text (a 24 MB page at x100): the escapes and the HTML
//! check look for a handful of ASCII bytes (or UTF-8 lead bytes) that most texts hardly contain. The
//! HTML, Markdown-cell and XML escapes share one writer of the runs between them ([`write_replacing`]).
//!
//! `memchr` finds up to three bytes; these searches want five or more, so the text is taken 32 bytes at
//! a time with a test the compiler turns into vector compares over the whole chunk (no early exit
//! inside it), and only a chunk that holds a wanted byte is searched byte by byte. A byte at a time with
//! an early exit was a tenth of an x100 fact edit.

/// Bytes taken at once: two 16-byte vectors, or one 32-byte one.
const CHUNK: usize = 32;

/// The position of the first byte of `bytes` for which `wanted` holds. `wanted` should be comparisons
/// joined by `|` (not `||` nor `matches!`, which compile to branches or bit tests): it is applied to
/// every byte of a chunk.
#[inline]
pub fn find_byte(bytes: &[u8], wanted: impl Fn(u8) -> bool) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(CHUNK);
    let mut offset = 0;
    for chunk in &mut chunks {
        let chunk: &[u8; CHUNK] = chunk.try_into().expect("chunks_exact gives whole chunks");
        // Every byte tested into an array first, then the array searched: the form the compiler
        // vectorizes (a fold or a `matches!` became scalar bit tests, 7x slower on 24 MB of text).
        let mut hits = [false; CHUNK];
        for (hit, &byte) in hits.iter_mut().zip(chunk) {
            *hit = wanted(byte);
        }
        if hits.contains(&true) {
            return chunk
                .iter()
                .position(|&byte| wanted(byte))
                .map(|at| offset + at);
        }
        offset += CHUNK;
    }
    chunks
        .remainder()
        .iter()
        .position(|&byte| wanted(byte))
        .map(|at| offset + at)
}

/// Writes `text` into `out` with the runs between its bytes of interest copied whole. At each byte for
/// which `wanted` holds, `replacement` is given the text from that byte on and answers what to write
/// instead and how many bytes it stands for, or `None` to keep the byte (`wanted` may cast a wider net,
/// in the form [`find_byte`] wants). A replaced sequence must be whole characters (an ASCII byte, or a
/// whole UTF-8 sequence), so every run is too.
pub fn write_replacing(
    out: &mut impl std::fmt::Write,
    text: &str,
    wanted: impl Fn(u8) -> bool,
    replacement: impl Fn(&[u8]) -> Option<(&'static str, usize)>,
) -> std::fmt::Result {
    let bytes = text.as_bytes();
    let (mut run_start, mut at) = (0, 0);
    while let Some(found) = find_byte(&bytes[at..], &wanted) {
        at += found;
        match replacement(&bytes[at..]) {
            Some((with, width)) => {
                out.write_str(&text[run_start..at])?;
                out.write_str(with)?;
                at += width;
                run_start = at;
            }
            None => at += 1,
        }
    }
    out.write_str(&text[run_start..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn finds_the_first_wanted_byte_wherever_it_is(
            bytes in prop::collection::vec(prop_oneof![Just(b'<'), Just(b'&'), any::<u8>(), Just(b'a')], 0..100),
        ) {
            let wanted = |byte: u8| matches!(byte, b'<' | b'&' | 0x80..=0x9F);
            prop_assert_eq!(find_byte(&bytes, wanted), bytes.iter().position(|&b| wanted(b)));
        }
    }
}
