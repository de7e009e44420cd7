//! The evidence rule: what may be cited, who published it, and which grade it can give.
//!
//! Every URL cited anywhere in the tables names a host of `sources/registers/publishers.csv` (or one
//! folder of a shared host), which says who publishes it and what kind of publisher it is. From that kind
//! the grade is earned, not typed: `official` only where the publisher may settle that kind of answer (a
//! government, tax authority or EU body for obligations, regimes, VAT and country facts; the ERP's own
//! vendor for that ERP's cells). What can never be a source (a search engine's results, reserved and
//! documentation hosts, IP addresses, staging or QA hosts, the site itself) is refused whatever the
//! register says. Check dates lie between [`EARLIEST_CHECK`] and the day of the build. An absence check
//! rests on two publishers, not two URLs.
//!
//! One query per table, so an edit re-checks only its table (and every table when the register changes).

use std::collections::BTreeSet;

use crate::diagnostics::Diagnostic;
use crate::parse::json_sources::{NEWS, SPONSORS, locate_json_value, news_rows, sponsor_rows};
use crate::parse::rules::{fact_labels, vocabulary};
use crate::parse::tables::{
    Basis, Located, Pos, PublisherKind, PublisherRow, Verification, connector_rows,
    country_fact_rows_by_key, local_erp_rows, mandate_rows, matrix_rows, obligation_rows,
    partner_flag_rows, partner_rows, publisher_rows, regime_rows, reporting_support_rows,
    reporting_table, vat_rows,
};

/// No source of this dataset was read before this day: an earlier check date is a typing error.
pub(crate) const EARLIEST_CHECK: &str = "2000-01-01";

/// The host and path of an http(s) URL: the host in lower case without `www.` and without its port, the
/// path from its `/` (empty for none). `None` when it is not an http(s) URL (the parse layer says why).
pub(crate) fn host_and_path(url: &str) -> Option<(String, &str)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    };
    let host = host.to_ascii_lowercase();
    let host = host
        .strip_prefix("www.")
        .map(str::to_string)
        .unwrap_or(host);
    Some((host, &rest[end..]))
}

/// Why `url` can never be the source of an answer, whoever publishes it; `site_host` is the host of the
/// site's own base URL (a page of locref cannot be its own evidence).
pub(crate) fn refused(url: &str, site_host: &str) -> Option<String> {
    let (host, path) = host_and_path(url)?;
    let labels: Vec<&str> = host.split('.').collect();
    let tld = labels.last().copied().unwrap_or("");
    let is_ipv4 = labels.len() == 4 && labels.iter().all(|l| l.parse::<u8>().is_ok());
    if is_ipv4 || host.starts_with('[') {
        return Some("an IP address publishes nothing a reader can check: cite the publisher's page by its name".into());
    }
    if labels.len() < 2 {
        return Some(format!("`{host}` is not a public host name"));
    }
    let reserved_tld = [
        "test",
        "invalid",
        "localhost",
        "example",
        "local",
        "internal",
    ];
    let reserved_domain = ["example.com", "example.net", "example.org"];
    if reserved_tld.contains(&tld)
        || reserved_domain
            .iter()
            .any(|d| host == *d || host.ends_with(&format!(".{d}")))
    {
        return Some(format!(
            "`{host}` is a reserved or documentation host, never a publisher's page"
        ));
    }
    let search_hosts = [
        "google",
        "bing",
        "duckduckgo",
        "yahoo",
        "yandex",
        "baidu",
        "ecosia",
        "startpage",
        "qwant",
    ];
    let path_lower = path.to_ascii_lowercase();
    let is_search_engine = labels.iter().any(|l| search_hosts.contains(l))
        && (path_lower.starts_with("/search")
            || path_lower.starts_with("/url")
            || path_lower.starts_with("/html")
            || path_lower.contains("?q=")
            || path_lower.contains("&q=")
            || path.is_empty()
            || path == "/");
    let is_site_search = path_lower.contains("?s=")
        || path_lower.contains("&s=")
        || path_lower.starts_with("/search?")
        || path_lower.contains("/search/?");
    if is_search_engine || is_site_search {
        return Some(
            "a search results page is not a source: cite the page the answer was read on".into(),
        );
    }
    let staging = |l: &str| {
        [
            "dev", "test", "qa", "uat", "stage", "staging", "preview", "sandbox",
        ]
        .contains(&l)
            || ["wpqa", "qa-", "dev-", "test-", "stage-", "uat-"]
                .iter()
                .any(|p| l.starts_with(p))
            || l.contains("staging")
            || l.contains("fullystage")
    };
    if labels[..labels.len() - 1].iter().any(|l| staging(l)) {
        return Some(format!(
            "`{host}` is a staging or QA host, not the publisher's public page: cite the page on its public host"
        ));
    }
    if !site_host.is_empty() && host == site_host {
        return Some(
            "a page of this site is not evidence for itself: cite what it rests on".into(),
        );
    }
    None
}

/// The register's row for `url`: the longest `path_prefix` of its host that the URL's path starts with,
/// or the host's row without one.
pub(crate) fn publisher_of<'a>(
    register: &'a [Located<PublisherRow>],
    url: &str,
) -> Option<&'a PublisherRow> {
    let (host, path) = host_and_path(url)?;
    register
        .iter()
        .map(|r| &*r.row)
        .filter(|p| p.host == host && path.starts_with(p.path_prefix.as_str()))
        .max_by_key(|p| p.path_prefix.len())
}

/// A name as [`self_published`] compares names: its letters and digits, in lower case
/// (`Business Line` and `Businessline` are one name).
fn plain_name(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether a publisher is the subject named `subject`: one name holds the other (`Tilde (Jumis)` is
/// Jumis's publisher; a name of fewer than three letters matches nothing).
fn names_subject(publisher: &PublisherRow, subject: &str) -> bool {
    let (a, b) = (plain_name(&publisher.publisher), plain_name(subject));
    a.len() >= 3 && b.len() >= 3 && (a.contains(&b) || b.contains(&a))
}

/// Whether a listing rests only on its own subject's pages: every one of `sources` is published by the
/// subject itself, as the register says. The subject is named `name`; where the listing gives its own
/// `website`, whoever publishes that site is the subject too, and where it gives none, the vendor of a
/// local ERP (an `erp-vendor` of no ERP of the register) is taken for the listing's own. Such a listing is
/// at most `secondary` (only a public body gives a listing `official`), and pages say "self-published"
/// beside it. `false` for a listing with no source, or one a source of the register does not name.
pub(crate) fn self_published(
    register: &[Located<PublisherRow>],
    name: &str,
    website: Option<&str>,
    sources: &[String],
) -> bool {
    let own_site = website.and_then(|w| publisher_of(register, w));
    !sources.is_empty()
        && sources.iter().all(|url| {
            publisher_of(register, url).is_some_and(|p| {
                names_subject(p, name)
                    || own_site.is_some_and(|site| site.publisher == p.publisher)
                    || (website.is_none()
                        && p.kind == PublisherKind::ErpVendor
                        && p.erps.is_empty())
            })
        })
}

/// Who may settle an answer as `official`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settles<'a> {
    /// An obligation, a regime, a VAT rate, a tax report: a government, tax authority or EU body.
    Law,
    /// A country fact: the law's publishers, and the standards bodies (a currency, a language).
    Fact,
    /// A cell about one ERP: that ERP's own vendor.
    Vendor(&'a str),
    /// A listing of a local ERP: only a public body; a listing is never settled by its subject.
    Listing,
}

impl Settles<'_> {
    fn allows(self, publisher: &PublisherRow) -> bool {
        use PublisherKind::*;
        match self {
            Settles::Law | Settles::Listing => matches!(publisher.kind, Government | EuBody),
            Settles::Fact => matches!(publisher.kind, Government | EuBody | StandardsBody),
            Settles::Vendor(erp) => {
                publisher.kind == ErpVendor && publisher.erps.iter().any(|e| e == erp)
            }
        }
    }

    fn who(self) -> String {
        match self {
            Settles::Law => "a government, tax authority or EU body".into(),
            Settles::Fact => "a government, tax authority, EU body or standards body".into(),
            Settles::Vendor(erp) => format!("the vendor of `{erp}`"),
            Settles::Listing => {
                "a government or EU body (a listing is never settled by its subject)".into()
            }
        }
    }
}

/// One row's citations, as the checks read them.
struct Cited<'a> {
    pos: &'a Pos,
    column: &'static str,
    urls: &'a [String],
    /// The row's grade and what it must rest on to be `official` (`None`: the table has no grade).
    grade: Option<(Verification, Settles<'a>)>,
    /// The column of the check date and its value.
    checked: Option<(&'static str, Option<&'a str>)>,
}

/// The checks every citation meets, with the register and the site's host read once.
struct EvidenceCheck<'db> {
    register: &'db [Located<PublisherRow>],
    site_host: String,
    today: String,
    diagnostics: Vec<Diagnostic>,
}

impl<'db> EvidenceCheck<'db> {
    fn new(db: &'db dyn salsa::Database) -> Self {
        let base = crate::model::base_url(db);
        let site_host = host_and_path(base.as_str())
            .map(|(h, _)| h)
            .unwrap_or_default();
        EvidenceCheck {
            register: &publisher_rows(db).value,
            site_host,
            today: crate::db::BuildOptions::get(db).last_check_day(db).clone(),
            diagnostics: Vec::new(),
        }
    }

    /// The register's publisher of `url`, or why it cannot be cited: what can never be a source, or a
    /// host the register does not name. `Ok(None)` for what is not an http(s) URL (its own error says so).
    fn publisher(&self, url: &str) -> Result<Option<&'db PublisherRow>, String> {
        let Some((host, _)) = host_and_path(url) else {
            return Ok(None);
        };
        if let Some(why) = refused(url, &self.site_host) {
            return Err(format!("`{url}` cannot be cited: {why}"));
        }
        match publisher_of(self.register, url) {
            Some(publisher) => Ok(Some(publisher)),
            None => Err(format!(
                "`{host}` is not in sources/registers/publishers.csv: add who publishes it and what kind of publisher it is before citing it"
            )),
        }
    }

    /// The publishers of `urls` that the register names (refused and unregistered URLs are reported).
    fn publishers(&mut self, pos: &Pos, column: &str, urls: &[String]) -> Vec<&'db PublisherRow> {
        let mut found = Vec::new();
        for url in urls {
            match self.publisher(url) {
                Ok(publisher) => found.extend(publisher),
                Err(why) => self.diagnostics.push(pos.error(column, why)),
            }
        }
        found
    }

    fn check(&mut self, cited: Cited<'_>) -> Vec<&'db PublisherRow> {
        let publishers = self.publishers(cited.pos, cited.column, cited.urls);
        if let Some((Verification::Official, settles)) = cited.grade {
            // The grade rests on the first source, the one the quote is read from.
            let first = cited
                .urls
                .first()
                .and_then(|url| publisher_of(self.register, url));
            if let Some(first) = first
                && !settles.allows(first)
            {
                self.diagnostics.push(cited.pos.error(
                    "verification",
                    format!(
                        "`official` is earned by the first source's publisher, which must be {}; {} is {} (`{}`): grade it `secondary`",
                        settles.who(),
                        first.publisher,
                        kind_words(first.kind),
                        first.kind.as_str()
                    ),
                ));
            }
        }
        // A malformed date is the parser's error; only a day can be too early or too late.
        if let Some((column, Some(day))) = cited.checked
            && crate::parse::is_iso_date(day)
        {
            if day < EARLIEST_CHECK {
                self.diagnostics.push(cited.pos.error(
                    column,
                    format!("`{day}` is before {EARLIEST_CHECK}: a check date is the day the source was read"),
                ));
            } else if !self.today.is_empty() && day > self.today.as_str() {
                self.diagnostics.push(cited.pos.error(
                    column,
                    format!(
                        "`{day}` is after today ({}): a check date is the day the source was read, never a future one",
                        self.today
                    ),
                ));
            }
        }
        publishers
    }
}

/// One ERP's cell (of the matrix, or of the reporting table's evidence), as [`EvidenceCheck::erp_cell`]
/// checks it.
struct ErpCell<'a> {
    pos: &'a Pos,
    column: &'static str,
    urls: &'a [String],
    erp: &'a str,
    verification: Verification,
    last_verified: Option<&'a str>,
    quote: &'a str,
    /// The cell as the messages name it (`a matrix cell`).
    what: &'static str,
}

impl EvidenceCheck<'_> {
    /// An ERP's cell: its sources registered, `official` from its ERP's vendor only, no other ERP's vendor
    /// among its sources, its check date in range, and its quote naming the ERP or its product
    /// (`products`: `[erp_products]` of `rules/vocabulary.toml`).
    fn erp_cell(
        &mut self,
        cell: ErpCell<'_>,
        products: &std::collections::BTreeMap<String, Vec<String>>,
    ) {
        let publishers = self.check(Cited {
            pos: cell.pos,
            column: cell.column,
            urls: cell.urls,
            grade: Some((cell.verification, Settles::Vendor(cell.erp))),
            checked: Some(("last_verified", cell.last_verified)),
        });
        if let Some(other) = publishers.iter().find(|p| {
            p.kind == PublisherKind::ErpVendor
                && !p.erps.is_empty()
                && !p.erps.iter().any(|e| e == cell.erp)
        }) {
            self.diagnostics.push(cell.pos.error(
                cell.column,
                format!(
                    "{} is the vendor of other ERPs ({}), not of `{}`: {}'s source is its ERP's vendor, a partner the cell names or an independent publisher",
                    other.publisher,
                    other.erps.join(", "),
                    cell.erp,
                    cell.what
                ),
            ));
        }
        // The quote names the ERP or its product: a sentence about another product settles nothing here.
        if !cell.quote.is_empty()
            && let Some(names) = products.get(cell.erp)
        {
            let quote = cell.quote.to_lowercase();
            if !names.iter().any(|n| quote.contains(&n.to_lowercase())) {
                self.diagnostics.push(cell.pos.error(
                    "quote",
                    format!(
                        "the quote of a `{}` cell names its product ({}): quote the sentence that does",
                        cell.erp,
                        names.join(", ")
                    ),
                ));
            }
        }
    }
}

fn kind_words(kind: PublisherKind) -> &'static str {
    match kind {
        PublisherKind::Government => "a government body",
        PublisherKind::EuBody => "an EU body",
        PublisherKind::StandardsBody => "a standards body",
        PublisherKind::ErpVendor => "an ERP vendor",
        PublisherKind::ServiceProvider => "a service provider",
        PublisherKind::Consultancy => "a consultancy",
        PublisherKind::News => "a news publisher",
        PublisherKind::Community => "a community site",
    }
}

/// The register itself: no host twice with the same path, and no row for what can never be cited.
#[salsa::tracked(returns(ref))]
pub(crate) fn check_publishers(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut seen = std::collections::BTreeMap::new();
    let known: BTreeSet<&str> = super::erps(db).iter().map(|e| e.id.as_str()).collect();
    for r in &publisher_rows(db).value {
        let key = format!("{}{}", r.row.host, r.row.path_prefix);
        if let Some(first) = seen.insert(key.clone(), r.pos.line) {
            diagnostics.push(r.pos.error(
                "host",
                format!("duplicate publisher `{key}` (first on line {first})"),
            ));
        }
        if let Some(why) = refused(&format!("https://{key}"), "") {
            diagnostics.push(r.pos.error(
                "host",
                format!("`{}` cannot be a publisher: {why}", r.row.host),
            ));
        }
        for erp in &r.row.erps {
            if !known.is_empty() && !known.contains(erp.as_str()) {
                diagnostics.push(r.pos.error(
                    "erps",
                    format!("unknown ERP id `{erp}` (not in sources/registers/erps.json)"),
                ));
            }
        }
    }
    diagnostics
}

/// The obligations: every source registered, `official` from the law's publishers, check dates in range,
/// and an absence check resting on two publishers with a note on what was read.
#[salsa::tracked(returns(ref))]
pub(crate) fn check_obligation_evidence(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut check = EvidenceCheck::new(db);
    for r in &obligation_rows(db).value {
        let row = &r.row;
        let publishers = check.check(Cited {
            pos: &r.pos,
            column: "source",
            urls: &row.source,
            grade: Some((row.verification, Settles::Law)),
            checked: Some(("last_verified", row.last_verified.as_deref())),
        });
        if row.basis == Some(Basis::Absence) {
            let names: BTreeSet<&str> = publishers.iter().map(|p| p.publisher.as_str()).collect();
            if names.len() < 2 && !row.source.is_empty() {
                check.diagnostics.push(r.pos.error(
                    "source",
                    format!(
                        "an absence check rests on two different publishers (the comprehensive list and the national page); these sources name {}",
                        match names.iter().next() {
                            Some(name) => format!("only {name}"),
                            None => "no registered publisher".to_string(),
                        }
                    ),
                ));
            }
            if row.notes.split_whitespace().count() < 4 {
                check.diagnostics.push(r.pos.error(
                    "notes",
                    "an absence check's note names what was read: the list the country is missing from (and its date) and the national page".to_string(),
                ));
            }
        }
        if row.basis == Some(Basis::Stated) {
            let notes = row.notes.to_lowercase();
            if ["assume", "not found", "no mention", "not mentioned"]
                .iter()
                .any(|w| notes.contains(w))
            {
                check.diagnostics.push(r.pos.error(
                    "basis",
                    "a `stated` no rests on a source that says so; a note about what was not found makes it an absence check (`absence`, two publishers) or `unclear`".to_string(),
                ));
            }
        }
    }
    check.diagnostics
}

/// The regimes and the VAT rows: the law's publishers.
#[salsa::tracked(returns(ref))]
pub(crate) fn check_regime_and_vat_evidence(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut check = EvidenceCheck::new(db);
    for r in &regime_rows(db).value {
        check.check(Cited {
            pos: &r.pos,
            column: "source",
            urls: &r.row.source,
            grade: Some((r.row.verification, Settles::Law)),
            checked: Some(("last_verified", r.row.last_verified.as_deref())),
        });
    }
    for r in &vat_rows(db).value {
        check.check(Cited {
            pos: &r.pos,
            column: "source",
            urls: &r.row.source,
            grade: Some((r.row.verification, Settles::Law)),
            checked: Some(("last_verified", r.row.last_verified.as_deref())),
        });
    }
    for r in &mandate_rows(db).value {
        check.check(Cited {
            pos: &r.pos,
            column: "mandate_source",
            urls: &r.row.mandate_source,
            grade: None,
            checked: None,
        });
    }
    check.diagnostics
}

/// The ERP tables: a cell's `official` comes from its ERP's vendor, and a cell cites no other ERP's
/// vendor (a matrix or reporting cell's source is its ERP's vendor, a partner the cell names, or an
/// independent publisher).
#[salsa::tracked(returns(ref))]
pub(crate) fn check_erp_evidence(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut check = EvidenceCheck::new(db);
    let products = &vocabulary(db).value.erp_products;
    for r in &matrix_rows(db).value {
        let row = &r.row;
        check.erp_cell(
            ErpCell {
                pos: &r.pos,
                column: "erp_source",
                urls: &row.erp_source,
                erp: &row.erp,
                verification: row.verification,
                last_verified: row.last_verified.as_deref(),
                quote: &row.quote,
                what: "a matrix cell",
            },
            products,
        );
    }
    for r in &reporting_support_rows(db).value {
        let row = &r.row;
        check.erp_cell(
            ErpCell {
                pos: &r.pos,
                column: "source",
                urls: &row.source,
                erp: &row.erp,
                verification: row.verification,
                last_verified: row.last_verified.as_deref(),
                quote: &row.quote,
                what: "a reporting cell",
            },
            products,
        );
    }
    for r in &reporting_table(db).value.rows {
        check.check(Cited {
            pos: &r.pos,
            column: "source",
            urls: &r.row.source,
            grade: Some((r.row.verification, Settles::Law)),
            checked: Some(("source_checked", r.row.source_checked.as_deref())),
        });
    }
    for r in &connector_rows(db).value {
        check.check(Cited {
            pos: &r.pos,
            column: "source_urls",
            urls: &r.row.source_urls,
            grade: Some((r.row.verification, Settles::Vendor(&r.row.erp))),
            checked: Some(("last_verified", r.row.last_verified.as_deref())),
        });
    }
    for r in &partner_flag_rows(db).value {
        check.check(Cited {
            pos: &r.pos,
            column: "source",
            urls: &r.row.source,
            grade: Some((r.row.verification, Settles::Vendor(&r.row.erp))),
            checked: Some(("last_verified", r.row.last_verified.as_deref())),
        });
    }
    for r in &local_erp_rows(db).value {
        check.check(Cited {
            pos: &r.pos,
            column: "source",
            urls: &r.row.source,
            grade: Some((r.row.verification, Settles::Listing)),
            checked: Some(("last_verified", r.row.last_verified.as_deref())),
        });
    }
    for r in &partner_rows(db).value {
        check.check(Cited {
            pos: &r.pos,
            column: "source_urls",
            urls: &r.row.source_urls,
            grade: None,
            checked: Some(("last_checked", r.row.last_checked.as_deref())),
        });
    }
    check.diagnostics
}

/// The news items and the sponsors: the page a news item links (a vendor's release notes, a readiness
/// page) and a sponsor's site are held to the register like every cited URL, each problem located at the
/// URL in its JSON file.
#[salsa::tracked(returns(ref))]
pub(crate) fn check_news_and_sponsor_evidence(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let check = EvidenceCheck::new(db);
    let mut diagnostics = Vec::new();
    let mut each = |path: &str, urls: Vec<&str>| {
        let Ok(text) = crate::parse::source_text(db, path) else {
            return;
        };
        for url in urls {
            if let Err(why) = check.publisher(url) {
                diagnostics.push(locate_json_value(path, text, url, why));
            }
        }
    };
    each(
        NEWS,
        news_rows(db).value.iter().map(|n| n.url.as_str()).collect(),
    );
    each(
        SPONSORS,
        sponsor_rows(db)
            .value
            .iter()
            .filter_map(|s| s.url.as_deref())
            .collect(),
    );
    diagnostics
}

/// The country facts: `official` from the law's publishers or a standards body, or for an ERP's
/// localization fact from that ERP's vendor.
#[salsa::tracked(returns(ref))]
pub(crate) fn check_fact_evidence(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut check = EvidenceCheck::new(db);
    let labels = &fact_labels(db).value;
    for rows in country_fact_rows_by_key(db) {
        for r in &rows.value {
            let row = &r.row;
            let settles = match labels
                .iter()
                .find(|l| l.label == row.fact)
                .and_then(|l| l.erp.as_deref())
            {
                Some(erp) => Settles::Vendor(erp),
                None => Settles::Fact,
            };
            check.check(Cited {
                pos: &r.pos,
                column: "source",
                urls: &row.source,
                grade: Some((row.verification, settles)),
                checked: Some(("last_verified", row.last_verified.as_deref())),
            });
        }
    }
    check.diagnostics
}

#[cfg(test)]
mod tests {
    use super::{host_and_path, refused, self_published};
    use crate::parse::tables::{Located, Pos, PublisherKind, PublisherRow};

    fn publisher(host: &str, name: &str, kind: PublisherKind) -> Located<PublisherRow> {
        Located {
            pos: Pos::default(),
            row: std::sync::Arc::new(PublisherRow {
                host: host.to_string(),
                path_prefix: String::new(),
                publisher: name.to_string(),
                kind,
                erps: Vec::new(),
            }),
        }
    }

    #[test]
    fn a_listing_sourced_only_by_its_subject_is_self_published() {
        let register = [
            publisher("abacus.ch", "Abacus Research AG", PublisherKind::ErpVendor),
            publisher("ayudas.axoft.com", "Axoft", PublisherKind::ErpVendor),
            publisher("apideck.com", "Apideck", PublisherKind::ServiceProvider),
            publisher(
                "businesslineglobal.com",
                "Businessline",
                PublisherKind::Consultancy,
            ),
        ];
        let urls = |list: &[&str]| list.iter().map(|u| u.to_string()).collect::<Vec<_>>();
        // Its own site, by the website's publisher.
        assert!(self_published(
            &register,
            "Abacus",
            Some("https://www.abacus.ch/"),
            &urls(&["https://abacus.ch/a", "https://www.abacus.ch/b"])
        ));
        // One independent page among its sources: not self-published.
        assert!(!self_published(
            &register,
            "Abacus",
            Some("https://www.abacus.ch/"),
            &urls(&["https://abacus.ch/a", "https://apideck.com/x"])
        ));
        // No website: its local ERP vendor's help pages.
        assert!(self_published(
            &register,
            "Tango Gestión",
            None,
            &urls(&["https://ayudas.axoft.com/x"])
        ));
        // A partner by name: `Business Line` is `Businessline`.
        assert!(self_published(
            &register,
            "Business Line",
            None,
            &urls(&["https://businesslineglobal.com/?p=1"])
        ));
        assert!(!self_published(
            &register,
            "Continia Software",
            None,
            &urls(&["https://apideck.com/x"])
        ));
        assert!(!self_published(&register, "Abacus", None, &[]));
    }

    #[test]
    fn what_can_never_be_cited_is_refused() {
        let refused_urls = [
            "https://www.google.com/search?q=ksef+poland",
            "https://www.bing.com/search?q=peppol",
            "https://duckduckgo.com/?q=peppol",
            "https://example.com/pl",
            "https://docs.example.org/x",
            "http://localhost/fr",
            "https://a",
            "http://10.0.0.1/invoice",
            "https://[::1]/x",
            "https://pagero-new.fullystage.se/de/compliance",
            "https://wpqa.orbitax.com/news",
            "https://staging.vendor.com/docs",
            "https://vendor.test/",
            "https://www.vatupdate.com/?s=ksef",
            "https://locref.example.org/pl/",
            "https://data.locref.dev/pl/",
        ];
        for url in refused_urls {
            assert!(
                refused(url, "data.locref.dev").is_some(),
                "{url} was accepted"
            );
        }
        let accepted = [
            "https://www.vatupdate.com/?p=339460",
            "https://learn.microsoft.com/en-us/dynamics365/finance/localizations/pl",
            "https://developers.apideck.com/apis",
            "https://taxation-customs.ec.europa.eu/x",
            "https://github.com/MicrosoftDocs/dynamics365smb-docs/blob/main/x.md",
            "https://www.gov.pl/web/kas/krajowy-system-e-faktur",
        ];
        for url in accepted {
            assert_eq!(refused(url, "data.locref.dev"), None, "{url} was refused");
        }
    }

    #[test]
    fn hosts_are_read_without_www_case_or_port() {
        assert_eq!(
            host_and_path("https://WWW.Example-Vendor.com:8443/a/b?c"),
            Some(("example-vendor.com".to_string(), "/a/b?c"))
        );
        assert_eq!(
            host_and_path("http://github.com"),
            Some(("github.com".to_string(), ""))
        );
        assert_eq!(host_and_path("ftp://x.org/"), None);
    }
}
