//! Release versions: numbers separated by `.` or `-` (`2026.11.23-2`), compared number by number, so
//! `2026.11.23-10` comes after `2026.11.23-9` and a version is safe in a file name and a URL path.

use std::cmp::Ordering;

/// The longest version accepted (a file name and a URL segment).
const MAX_LEN: usize = 64;

/// A parsed version: its text and its numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    pub text: String,
    numbers: Vec<u64>,
}

impl Version {
    /// Parses `text`, or says why it is not a version.
    pub(crate) fn parse(text: &str) -> Result<Version, String> {
        let expected = "expected numbers separated by `.` or `-`, for example `2026.11.23-1`";
        if text.is_empty() {
            return Err(format!("a release version must not be empty; {expected}"));
        }
        if text.len() > MAX_LEN {
            return Err(format!(
                "a release version has at most {MAX_LEN} characters; {expected}"
            ));
        }
        let mut numbers = Vec::new();
        for part in text.split(['.', '-']) {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("`{text}` is not a release version; {expected}"));
            }
            let n = part
                .parse::<u64>()
                .map_err(|_| format!("`{text}`: the number `{part}` is too large"))?;
            numbers.push(n);
        }
        Ok(Version {
            text: text.to_string(),
            numbers,
        })
    }

    /// Number by number; a version that extends another comes after it (`2026.11` < `2026.11.1`).
    /// Versions with the same numbers compare equal (`2026.11.23-1` and `2026.11.23.1`): one of them
    /// cannot follow the other.
    pub(crate) fn cmp_numbers(&self, other: &Version) -> Ordering {
        self.numbers.cmp(&other.numbers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn versions_compare_number_by_number() {
        assert_eq!(
            v("2026.11.23-10").cmp_numbers(&v("2026.11.23-9")),
            Ordering::Greater
        );
        assert_eq!(
            v("2026.11.21-1").cmp_numbers(&v("2026.11.23-1")),
            Ordering::Less
        );
        assert_eq!(v("2026.11").cmp_numbers(&v("2026.11.1")), Ordering::Less);
        assert_eq!(v("1.01").cmp_numbers(&v("1-1")), Ordering::Equal);
        for bad in [
            "",
            "v1",
            "1..2",
            "1.",
            "-1",
            "1.2a",
            "1/2",
            "１",
            "99999999999999999999999",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn any_text_parses_or_says_why(text in "\\PC{0,80}") {
            if let Ok(version) = Version::parse(&text) {
                prop_assert!(version.text.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'-'));
            }
        }
    }
}
