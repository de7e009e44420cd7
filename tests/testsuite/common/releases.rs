//! A project with a longer history: `count` more releases made through `locref release` (the library
//! call behind the command), each of a few answers changed, as a curator releasing weekly would make
//! them. Deterministic: the same call on the same sources makes the same releases, byte for byte (the
//! facts edited are picked by a fixed sequence, the versions and times are fixed).
//!
//! Used by the history benchmark (`BENCH_MORE_RELEASES=N` in `benches/rebuild.rs`) and by the test that
//! a release of a few changed answers costs the repository a few kilobytes.

use std::path::Path;

/// The facts table whose values the releases change.
const FACTS: &str = "sources/tables/countries.csv";

/// Makes `count` releases after the project's last, each changing the values of `edits` facts of
/// `sources/tables/countries.csv` (each value gets a revision mark, replacing the one an earlier
/// release gave it). Versions `2098.1.1-1`, `2098.1.1-2`, … a minute apart from 2098-01-01T00:00:00Z:
/// after any release a test or the dataset makes today, before the ones the tests make (dated 2099).
/// Returns the bytes each release added under `sources/releases/`.
pub fn add_releases(root: &Path, count: usize, edits: usize) -> Vec<u64> {
    let path = root.join(FACTS);
    let mut reader = csv::ReaderBuilder::new()
        .from_path(&path)
        .unwrap_or_else(|e| panic!("{FACTS}: {e}"));
    let header = reader.headers().unwrap().clone();
    let value = header
        .iter()
        .position(|h| h == "value")
        .expect("a value column");
    let mut rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    // A fixed sequence (a linear congruential generator), so the releases are the same on every run.
    let mut state: u64 = 0x5eed;
    let mut next = |below: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % below
    };
    let start: jiff::Timestamp = "2098-01-01T00:00:00Z".parse().unwrap();
    let mut added = Vec::with_capacity(count);
    for n in 1..=count {
        for _ in 0..edits {
            let row = next(rows.len());
            let old = rows[row][value].to_string();
            let base = old.split(" (revision ").next().unwrap_or(&old).to_string();
            let mut cells: Vec<String> = rows[row].iter().map(str::to_string).collect();
            cells[value] = format!("{base} (revision {n})");
            rows[row] = csv::StringRecord::from(cells);
        }
        let mut writer = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_path(&path)
            .unwrap();
        writer.write_record(&header).unwrap();
        for row in &rows {
            writer.write_record(row).unwrap();
        }
        writer.flush().unwrap();
        drop(writer);
        let before = releases_bytes(root);
        let time = (start + jiff::SignedDuration::from_mins(n as i64)).to_string();
        locref::cmd::release::release(
            root,
            &format!("2098.1.1-{n}"),
            &format!("{edits} facts revised"),
            &time,
            locref::cmd::release::NoChange::Refused,
        )
        .unwrap_or_else(|e| panic!("release {n}: {e:?}"));
        added.push(releases_bytes(root) - before);
    }
    added
}

/// The bytes of every file under `sources/releases/`.
pub fn releases_bytes(root: &Path) -> u64 {
    super::snapshot(&root.join("sources/releases"))
        .values()
        .map(|bytes| bytes.len() as u64)
        .sum()
}
