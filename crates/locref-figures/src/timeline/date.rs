//! Dates as the sources give them: a day, or only a month or a year. A partial date is a span (the
//! whole month or year), never a guessed day.

use jiff::civil::Date;

/// How precisely a date is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Precision {
    Day,
    Month,
    Year,
}

/// A parsed date: its first day and how far it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct When {
    pub start: Date,
    pub precision: Precision,
}

impl When {
    /// Parses `YYYY-MM-DD`, `YYYY-MM` or `YYYY` (four-digit years); anything else is `None`.
    pub(crate) fn parse(text: &str) -> Option<When> {
        let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
        let mut parts = text.split('-');
        let year = parts.next().filter(|y| digits(y, 4))?.parse::<i16>().ok()?;
        let month = parts.next();
        let day = parts.next();
        if parts.next().is_some() {
            return None;
        }
        let number = |s: &str| {
            if digits(s, 2) {
                s.parse::<i8>().ok()
            } else {
                None
            }
        };
        let (start, precision) = match (month, day) {
            (None, _) => (Date::new(year, 1, 1).ok()?, Precision::Year),
            (Some(m), None) => (Date::new(year, number(m)?, 1).ok()?, Precision::Month),
            (Some(m), Some(d)) => (
                Date::new(year, number(m)?, number(d)?).ok()?,
                Precision::Day,
            ),
        };
        Some(When { start, precision })
    }

    pub(crate) fn year(&self) -> i16 {
        self.start.year()
    }

    /// Where the date starts and ends within its year, as fractions of the year (0 = 1 January, 1 = the
    /// end of 31 December). A day is a point; a month or a year is its whole span.
    pub(crate) fn span_in_year(&self) -> (f64, f64) {
        let start = year_fraction(self.start);
        match self.precision {
            Precision::Day => (start, start),
            Precision::Month => {
                let days = f64::from(self.start.days_in_month());
                let year_days = f64::from(self.start.days_in_year());
                (start, start + days / year_days)
            }
            Precision::Year => (0.0, 1.0),
        }
    }
}

/// The start of `date` as a fraction of its year.
pub(crate) fn year_fraction(date: Date) -> f64 {
    f64::from(date.day_of_year() - 1) / f64::from(date.days_in_year())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms() {
        let day = When::parse("2026-09-01").unwrap();
        assert_eq!(day.precision, Precision::Day);
        assert_eq!(day.start, Date::constant(2026, 9, 1));
        let month = When::parse("2027-02").unwrap();
        assert_eq!(month.precision, Precision::Month);
        let (a, b) = month.span_in_year();
        assert!((a - 31.0 / 365.0).abs() < 1e-9 && (b - 59.0 / 365.0).abs() < 1e-9);
        let year = When::parse("2028").unwrap();
        assert_eq!(
            (year.precision, year.span_in_year()),
            (Precision::Year, (0.0, 1.0))
        );
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "",
            "2026-13",
            "2026-02-30",
            "26",
            "2026-1-01",
            "2026-01-01-01",
            "２０２６",
            "+202",
            "2026-",
            "-2026",
            "2026--01",
        ] {
            assert_eq!(When::parse(bad), None, "{bad}");
        }
    }
}
