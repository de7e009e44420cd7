//! The x10 and x100 datasets: a copy of the project's `sources/` and `rules/` grown towards the workload
//! of the Hugo comparison site at scale N (its `gen.py`: 12·N facts per country; 150, 100, 300 and 200·N
//! partners, local ERPs, partner flags and news items), the way the shared `scale_locref.py` grows it.
//!
//! A port of that script, with the same growth rules and the same random choices (Python's Mersenne
//! Twister, seeded with 42, drawn in the same order), so both write the same bytes from the same
//! sources. What can grow and what cannot, by locref's validation:
//!
//! - `tables/countries.csv`: at most one row per (country, label of `rules/facts.toml`): the missing
//!   pairs are added (`unverified`), then every fact's value is padded with filler words after its own
//!   clauses (so the toggle rules read the same clauses) until the table is about the size of Hugo's facts;
//! - `tables/partners.csv` and `tables/local_erps.csv`: 150·N and 100·N rows (ids are unique by name),
//!   then padded (`summary`, `description`) to about Hugo's bytes;
//! - `tables/local_partner_flags.csv`: at most one row per (country, ERP): all 671 pairs, notes padded;
//! - `news.json`: 200·N items, titles padded;
//! - every other file (the registers, the matrix, reporting, VAT, mandates, connectors, obligations, and
//!   any table added later) is copied unchanged.
//!
//! Columns are found by name in each table's header, so a column added to a table is left empty in the
//! synthetic rows rather than shifting them. Synthetic rows are `unverified` where the honesty rule
//! applies; since every answer but unknown must cite a source and a check date, a synthetic fact is an
//! unknown (`unknown/unverified: …`), and a synthetic partner, local ERP or partner flag cites the source
//! of its table's first shipped row, read on 2026-11-27: the evidence rule refuses a reserved host
//! (`.example`) and any host missing from `sources/registers/publishers.csv`, so the synthetic rows name a
//! registered publisher and invent no address. In that, and only that, this port differs from the shared
//! `scale_locref.py`, whose synthetic rows the current check refuses.

use std::path::Path;

use serde_json::{Value, json};

/// The byte sizes of the Hugo site's data at each scale (facts, partners, local ERPs, partner flags,
/// news), measured from `gen.py`'s output (JSON, indent 1): what each grown table is padded towards.
fn hugo_bytes(scale: u32) -> [usize; 5] {
    match scale {
        10 => [2369611, 291369, 172333, 672171, 822945],
        100 => [23882011, 2927211, 1732872, 6748150, 8228688],
        _ => panic!("scale {scale}: the datasets are x1, x10 and x100"),
    }
}

const WORDS: &str = "invoice tax authority portal mandate format schema supplier buyer clearance \
    report deadline signature archive network access point phase rollout threshold \
    turnover exemption validation receipt credit note correction penalty registration \
    platform government business consumer electronic structured";

/// The row counts of the grown tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grown {
    pub facts: usize,
    pub partners: usize,
    pub local_erps: usize,
    pub partner_flags: usize,
    pub news: usize,
}

/// A copy of the project's `sources/` and `rules/` in a fresh temporary folder, grown to `scale` (1, 10
/// or 100; x1 is the shipped sources unchanged).
pub fn scaled_project(scale: u32) -> tempfile::TempDir {
    let dir = super::copy_project();
    grow(dir.path(), scale);
    dir
}

/// Grows the copy of the project at `root` to `scale` in place (see the module documentation).
pub fn grow(root: &Path, scale: u32) -> Option<Grown> {
    if scale == 1 {
        return None;
    }
    let n = scale as usize;
    let [
        facts_bytes,
        partners_bytes,
        local_bytes,
        flags_bytes,
        news_bytes,
    ] = hugo_bytes(scale);
    let mut rng = PyRandom::new(42);
    let sources = root.join("sources");
    let countries: Vec<String> = Table::read(&sources.join("registers/countries.csv"))
        .rows
        .iter()
        .map(|r| r[0].clone())
        .collect();
    let erps_json: Value =
        serde_json::from_slice(&std::fs::read(sources.join("registers/erps.json")).unwrap())
            .unwrap();
    let erps: Vec<String> = erps_json
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let words: Vec<&str> = WORDS.split_whitespace().collect();

    // Facts: every (country, label), then the bytes.
    let facts_toml: toml::Value =
        toml::from_str(&std::fs::read_to_string(root.join("rules/facts.toml")).unwrap()).unwrap();
    let labels: Vec<String> = facts_toml["fact"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["label"].as_str().unwrap().to_string())
        .collect();
    let path = sources.join("tables/countries.csv");
    let mut table = Table::read(&path);
    let have: std::collections::BTreeSet<(String, String)> = table
        .rows
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    for cc in &countries {
        for label in &labels {
            if !have.contains(&(cc.clone(), label.clone())) {
                // Unknown: the one answer that needs no source.
                let note = format!("unknown/unverified: synthetic {label} note for {cc}.");
                table.push(&[
                    ("country_code", cc),
                    ("fact", label),
                    ("value", &note),
                    ("evidence", "unverified"),
                    ("verification", "unverified"),
                ]);
            }
        }
    }
    let label_rank = |label: &str| labels.iter().position(|l| l == label).unwrap();
    table
        .rows
        .sort_by(|a, b| (&a[0], label_rank(&a[1])).cmp(&(&b[0], label_rank(&b[1]))));
    table.pad(&mut rng, &words, "value", facts_bytes, " Notes: ");
    table.write(&path);
    let facts = table.rows.len();

    // Partners.
    let path = sources.join("tables/partners.csv");
    let mut table = Table::read(&path);
    let source = table.first_source("source_urls");
    let mut i = 0;
    while table.rows.len() < 150 * n {
        let cc = rng.choice(&countries).clone();
        let erp = rng.choice(&erps).clone();
        let summary = filler(&mut rng, &words, 40);
        let date = format!("2025-{:02}-{:02}", rng.randint(1, 12), rng.randint(1, 28));
        table.push(&[
            ("country_code", &cc),
            ("erp", &erp),
            ("name", &format!("Synthetic Partner {i:05}")),
            ("partner_type", "ISV"),
            ("summary", &summary),
            ("source_urls", &source),
            ("source_kind", "vendor documentation"),
            ("last_checked", &date),
        ]);
        i += 1;
    }
    table.pad(&mut rng, &words, "summary", partners_bytes, " ");
    table.write(&path);
    let partners = table.rows.len();

    // Local ERPs.
    let path = sources.join("tables/local_erps.csv");
    let mut table = Table::read(&path);
    let source = table.first_source("source");
    let mut i = 0;
    while table.rows.len() < 100 * n {
        let cc = rng.choice(&countries).clone();
        let description = filler(&mut rng, &words, 30);
        table.push(&[
            ("country_code", &cc),
            ("name", &format!("Synthetic ERP {i:05}")),
            ("segment", "ERP (SME)"),
            ("description", &description),
            ("website", ""),
            ("source", &source),
            ("verification", "unverified"),
            ("last_verified", "2026-11-27"),
        ]);
        i += 1;
    }
    table.pad(&mut rng, &words, "description", local_bytes, " ");
    table.write(&path);
    let local_erps = table.rows.len();

    // Partner flags: one per (country, ERP) at most.
    let path = sources.join("tables/local_partner_flags.csv");
    let mut table = Table::read(&path);
    let source = table.first_source("source");
    let flags = [
        "local partner",
        "local partner / add-on",
        "limited native / partner",
        "partner",
        "not available",
    ];
    let have: std::collections::BTreeSet<(String, String)> = table
        .rows
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    for cc in &countries {
        for erp in &erps {
            if !have.contains(&(cc.clone(), erp.clone())) && table.rows.len() < 300 * n {
                let flag = *rng.choice(&flags);
                let note = filler(&mut rng, &words, 40);
                table.push(&[
                    ("country_code", cc),
                    ("erp", erp),
                    ("flag", flag),
                    ("note", &note),
                    ("source", &source),
                    ("verification", "unverified"),
                    ("last_verified", "2026-11-27"),
                ]);
            }
        }
    }
    let erp_rank = |erp: &str| erps.iter().position(|e| e == erp).unwrap();
    table
        .rows
        .sort_by(|a, b| (&a[0], erp_rank(&a[1])).cmp(&(&b[0], erp_rank(&b[1]))));
    table.pad(&mut rng, &words, "note", flags_bytes, " ");
    table.write(&path);
    let partner_flags = table.rows.len();

    // News.
    let path = sources.join("news.json");
    let mut news: Vec<Value> = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    // A news link is held to the publishers register: the synthetic items link the first shipped
    // item's page (a registered host), told apart by their query.
    let page = news[0]["url"].as_str().unwrap().to_string();
    let mut i = 0;
    while news.len() < 200 * n {
        let title = filler(&mut rng, &words, 60);
        let url = format!("{page}?c={}&n={i:06}", rng.choice(&countries));
        let date = format!(
            "20{:02}-{:02}-{:02}",
            rng.randint(23, 25),
            rng.randint(1, 12),
            rng.randint(1, 28)
        );
        let erp = rng.choice(&erps).clone();
        news.push(json!({
            "id": format!("n{i:06}"), "title": title, "url": url, "date": date,
            "first_seen": null, "erps": [erp], "source": "Synthetic news source",
        }));
        i += 1;
    }
    let size = serde_json::to_string_pretty(&news).unwrap().len();
    let per = news_bytes.saturating_sub(size) / news.len();
    if per > 2 {
        for item in &mut news {
            let more = filler(&mut rng, &words, per - 1);
            let title = format!("{} {more}", item["title"].as_str().unwrap());
            item["title"] = Value::String(title);
        }
    }
    let mut text = serde_json::to_string_pretty(&news).unwrap();
    text.push('\n');
    std::fs::write(&path, text).unwrap();

    Some(Grown {
        facts,
        partners,
        local_erps,
        partner_flags,
        news: news.len(),
    })
}

/// Filler words drawn until they hold at least `chars` characters (with their spaces).
fn filler(rng: &mut PyRandom, words: &[&str], chars: usize) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut n = 0;
    while n < chars {
        let word = *rng.choice(words);
        out.push(word);
        n += word.len() + 1;
    }
    out.join(" ")
}

/// A CSV table: its header and rows of cells, written back as Python's `csv` module writes (a cell is
/// quoted only when it holds a comma, a quote or a line break; `\n` ends a record).
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn read(path: &Path) -> Table {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_path(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut records = reader
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect::<Vec<_>>());
        let header = records.next().expect("a header");
        Table {
            header,
            rows: records.collect(),
        }
    }

    /// Appends a row from (column name, value) pairs; columns not named are empty.
    /// The first URL of `column` in the table's first row: a registered source for synthetic rows.
    fn first_source(&self, column: &str) -> String {
        let i = self.header.iter().position(|h| h == column).expect(column);
        self.rows[0][i]
            .split_whitespace()
            .next()
            .expect("a source")
            .to_string()
    }

    fn push(&mut self, cells: &[(&str, &str)]) {
        let mut row = vec![String::new(); self.header.len()];
        for (name, value) in cells {
            let i = self.column(name);
            row[i] = value.to_string();
        }
        self.rows.push(row);
    }

    fn column(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column `{name}` in {:?}", self.header))
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for record in std::iter::once(&self.header).chain(&self.rows) {
            for (i, cell) in record.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if cell.contains([',', '"', '\n', '\r']) {
                    out.push('"');
                    out.push_str(&cell.replace('"', "\"\""));
                    out.push('"');
                } else {
                    out.push_str(cell);
                }
            }
            out.push('\n');
        }
        out
    }

    /// Appends filler words to column `name` of every row so the table is about `target` bytes.
    fn pad(&mut self, rng: &mut PyRandom, words: &[&str], name: &str, target: usize, sep: &str) {
        let current = self.text().len();
        if current >= target || self.rows.is_empty() {
            return;
        }
        let per = (target - current) / self.rows.len();
        if per < 2 {
            return;
        }
        let column = self.column(name);
        for row in &mut self.rows {
            let more = filler(rng, words, per.saturating_sub(sep.len()));
            let cell = &mut row[column];
            if cell.is_empty() {
                *cell = more;
            } else {
                cell.push_str(sep);
                cell.push_str(&more);
            }
        }
    }

    fn write(&self, path: &Path) {
        std::fs::write(path, self.text()).unwrap();
    }
}

/// Python's `random.Random(seed)` for an integer seed: the Mersenne Twister (MT19937) seeded by
/// `init_by_array`, and `choice` / `randint` drawn as CPython draws them (rejection sampling over
/// `getrandbits`), so the generator makes the same choices as `scale_locref.py`.
struct PyRandom {
    mt: [u32; 624],
    index: usize,
}

impl PyRandom {
    fn new(seed: u32) -> PyRandom {
        let mut mt = [0u32; 624];
        mt[0] = 19650218;
        for i in 1..624 {
            mt[i] = 1812433253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        let key = [seed];
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..624.max(key.len()) {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1664525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1566083941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        PyRandom { mt, index: 624 }
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= 624 {
            for i in 0..624 {
                let y = (self.mt[i] & 0x8000_0000) | (self.mt[(i + 1) % 624] & 0x7fff_ffff);
                let mut next = self.mt[(i + 397) % 624] ^ (y >> 1);
                if y & 1 != 0 {
                    next ^= 0x9908_b0df;
                }
                self.mt[i] = next;
            }
            self.index = 0;
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `_randbelow(n)`: a uniform integer in `0..n` (n < 2^32).
    fn below(&mut self, n: usize) -> usize {
        let bits = usize::BITS - n.leading_zeros();
        loop {
            let r = (self.next_u32() >> (32 - bits)) as usize;
            if r < n {
                return r;
            }
        }
    }

    fn choice<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn randint(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high + 1 - low)
    }
}
