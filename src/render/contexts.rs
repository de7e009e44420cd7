//! What each page shows: one tracked query per page (or per page and key) returning a JSON value for its
//! HTML template and its Markdown twin.
//!
//! Each context reads the narrowest projections it can, so an edit re-renders a page only when data the
//! page shows changed: an ERP page reads that ERP's detail, never another ERP's matrix rows; the partners
//! page reads the partner rows and the registers' names; a topic page reads the per-country reporting rows.
//! Values are passed as the sources hold them; templates show a missing value as "not stated" or
//! "unknown", never a guess.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use super::api::{country_detail, erp_detail, local_erp, news_items, partner, sponsor_items};
use crate::derive::erp_summary;
use crate::derive::filters::{FilterKey, filter_members, filter_rule};
use crate::derive::obligations::country_toggle_derivations;
use crate::derive::toggles::country_toggle_values;
use crate::model::{
    CountryKey, ErpKey, countries, country_mandate, country_matrix, country_obligations,
    country_reporting, erp_name, erps, partner_order, reporting_erps,
};
use crate::parse::rules::{FilterMatch, filter_rules, obligation_rules, site_rules, toggle_rules};
use crate::parse::tables::{LocalErpRow, PartnerRow, local_erp_rows, partner_rows};
use crate::resources::{Fact, FactTopic, Toggles};
use crate::routes::STEMS;

/// What every page shows of `rules/site.toml` (title, notice, licences in the footer).
#[salsa::tracked(returns(ref))]
pub fn site_context(db: &dyn salsa::Database) -> Json {
    let site = &site_rules(db).value;
    json!({
        "title": site.title,
        "description": site.description,
        "notice": site.informational_notice,
        "reference_date": site.reference_date,
        "api_licence": { "name": site.api_licence.name, "url": site.api_licence.url },
        "data_licence": { "name": site.data_licence.name, "url": site.data_licence.url },
    })
}

/// Each toggle's name, short label and description (reference date filled in), in the published order: the
/// headings of toggle columns. A projection of `rules/toggles.toml`, so a pattern edit stops here.
#[salsa::tracked(returns(ref))]
pub fn toggle_labels(db: &dyn salsa::Database) -> Json {
    let rules = &toggle_rules(db).value;
    let reference = &site_rules(db).value.reference_date;
    let labels: Vec<Json> = Toggles::NAMES
        .iter()
        .map(|name| {
            let rule = rules.iter().find(|r| r.name == *name);
            let label = rule
                .and_then(|r| r.label.clone())
                .unwrap_or_else(|| name.replace('_', " "));
            let description = rule.map_or(String::new(), |r| {
                r.description.replace("{reference_date}", reference)
            });
            json!({ "name": name, "label": label, "description": description })
        })
        .collect();
    Json::Array(labels)
}

/// Country code -> name, from the register.
fn country_names(db: &dyn salsa::Database) -> BTreeMap<&str, &str> {
    countries(db)
        .iter()
        .map(|c| (c.code.as_str(), c.name.as_str()))
        .collect()
}

/// A toggle set as `[{name, value}]`, in the published order (the order of [`toggle_labels`]).
fn toggle_list(toggles: &Toggles) -> Vec<Json> {
    toggles
        .values()
        .iter()
        .map(|(name, value)| json!({ "name": name, "value": value }))
        .collect()
}

/// The topic pages of the reporting rows: the reporting table's `topic` is also the page's path and the
/// first part of each row's anchor (`/vat-reporting/#vat-reporting-it-1`).
fn reporting_page(topic: FactTopic) -> Option<&'static str> {
    match topic {
        FactTopic::VatReporting => Some("vat-reporting"),
        FactTopic::Saft => Some("saf-t"),
        _ => None,
    }
}

/// The anchor of a reporting fact (`it-vat-reporting-1` -> `vat-reporting-it-1`), the same on the country
/// page and on the topic page.
fn reporting_anchor(fact: &Fact) -> Option<String> {
    let page = reporting_page(fact.topic)?;
    let n = fact.id.rsplit('-').next()?;
    Some(format!("{page}-{}-{n}", fact.country))
}

/// The home page's data: each country's name, region and toggle values (not its fact texts), the ERPs and
/// filters it links to.
#[salsa::tracked(returns(ref))]
pub fn home_context(db: &dyn salsa::Database) -> Json {
    let rows: Vec<Json> = countries(db)
        .iter()
        .map(|c| {
            let key = CountryKey::new(db, c.code.clone());
            json!({
                "code": c.code,
                "name": c.name,
                "region": c.region,
                "toggles": toggle_list(&country_toggle_values(db, key)),
            })
        })
        .collect();
    let erps: Vec<Json> = erps(db)
        .iter()
        .map(|e| json!({ "id": e.id, "name": e.name }))
        .collect();
    let filters: Vec<Json> = filter_rules(db)
        .value
        .iter()
        .map(|f| json!({ "slug": f.slug, "description": f.description }))
        .collect();
    json!({
        "site": site_context(db),
        "toggles": toggle_labels(db),
        "countries": rows,
        "erps": erps,
        "filters": filters,
        "stems": STEMS,
    })
}

/// The e-invoicing matrix page's data: every cell's support type, verification and source.
#[salsa::tracked(returns(ref))]
pub fn e_invoicing_context(db: &dyn salsa::Database) -> Json {
    let groups: Vec<Json> = countries(db)
        .iter()
        .map(|c| {
            let key = CountryKey::new(db, c.code.clone());
            let rows: Vec<Json> = country_matrix(db, key)
                .iter()
                .map(|row| {
                    json!({
                        "country": c.code,
                        "country_name": c.name,
                        "erp": row.erp,
                        "erp_name": erp_name(db, &row.erp),
                        "support": row.support_type,
                        "verification": row.verification.as_str(),
                        "source_url": row.erp_source.first(),
                    })
                })
                .collect();
            // The country's mandate as its mandates row states it ("unknown" is a value there too).
            let mandate = country_mandate(db, key).as_ref().map(|m| {
                json!({
                    "short_label": m.short_label,
                    "mandate": m.mandate,
                    "deadlines": m.deadlines,
                })
            });
            json!({ "code": c.code, "name": c.name, "mandate": mandate, "rows": rows })
        })
        .collect();
    json!({ "site": site_context(db), "countries": groups })
}

fn fact_json(fact: &Fact) -> Json {
    let mut value = serde_json::to_value(fact).expect("facts serialize");
    if let Some(anchor) = reporting_anchor(fact) {
        value["anchor"] = json!(anchor);
        value["page"] = json!(reporting_page(fact.topic));
    }
    value
}

/// One country page's data: its facts by section, toggles with the fact text that set them, local ERPs,
/// partner flags and partners.
#[salsa::tracked(returns(ref))]
pub fn country_context<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Json {
    let Some(detail) = country_detail(db, key) else {
        return Json::Null;
    };
    let labels = toggle_labels(db);
    let toggles: Vec<Json> = country_toggle_derivations(db, key)
        .iter()
        .zip(labels.as_array().into_iter().flatten())
        .map(|(d, label)| {
            json!({
                "name": d.toggle,
                "label": label["label"],
                "description": label["description"],
                "value": d.value,
                "rule": d.rule,
                "condition": d.condition_text,
                "phase_id": d.phase_id,
                "status": d.status.as_deref().and_then(crate::parse::tables::PhaseStatus::parse).map(|s| s.describe()),
                "applies_from": d.applies_from,
                "scope": d.scope,
                "source_urls": d.source_urls,
                "verification": d.verification,
                "last_checked": d.last_checked,
                "why_null": d.why_null,
            })
        })
        .collect();
    let obligations = obligation_rules(db);
    let phases: Vec<Json> = country_obligations(db, key)
        .iter()
        .map(|p| {
            let label = obligations
                .iter()
                .find(|o| o.id == p.obligation)
                .map_or(p.obligation.as_str(), |o| o.label.as_str());
            json!({
                "id": p.id(),
                "obligation": label,
                "phase": p.phase,
                "status": p.status.describe(),
                "applies_from": p.applies_from.map(|d| d.to_string()),
                "scope": p.scope,
                "notes": p.notes,
                "source_urls": p.source,
                "verification": p.verification,
                "last_checked": p.last_verified,
            })
        })
        .collect();
    let of = |pred: &dyn Fn(FactTopic) -> bool| -> Vec<Json> {
        detail
            .facts
            .iter()
            .filter(|f| pred(f.topic))
            .map(fact_json)
            .collect()
    };
    let with_erp_name = |erp: &str, mut value: Json| {
        value["erp_name"] = json!(erp_name(db, erp));
        value
    };
    json!({
        "site": site_context(db),
        "country": detail.country,
        "toggles": toggles,
        "phases": phases,
        "reference_date": crate::model::reference_date(db),
        "key_facts": of(&|t| !matches!(t, FactTopic::EInvoicing | FactTopic::EInvoicingErpSupport | FactTopic::VatReporting | FactTopic::Saft)),
        "e_invoicing": of(&|t| t == FactTopic::EInvoicing),
        "matrix": of(&|t| t == FactTopic::EInvoicingErpSupport),
        "vat_reporting": of(&|t| t == FactTopic::VatReporting),
        "saft": of(&|t| t == FactTopic::Saft),
        "local_erps": detail.local_erps,
        "partner_flags": detail.partner_flags.iter().map(|p| with_erp_name(&p.erp, json!(p))).collect::<Vec<_>>(),
        "partners": detail.partners.iter().map(|p| with_erp_name(&p.erp, json!(p))).collect::<Vec<_>>(),
        // Releases and changes (history.rs).
        "history": super::history::country_history_context(db, key),
    })
}

/// The ERP index: each ERP's name, vendor, category, website and counts (not its per-country data).
#[salsa::tracked(returns(ref))]
pub fn erps_context(db: &dyn salsa::Database) -> Json {
    let rows: Vec<Json> = erps(db)
        .iter()
        .filter_map(|e| erp_summary(db, ErpKey::new(db, e.id.clone())).as_ref())
        .map(|e| json!(e))
        .collect();
    json!({ "site": site_context(db), "erps": rows })
}

/// One ERP page: its profile, its e-invoicing support in every country of the register (a row per country,
/// "not recorded" where the matrix has none), its providers, partner flags and other facts.
#[salsa::tracked(returns(ref))]
pub fn erp_context<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Json {
    let Some(detail) = erp_detail(db, key) else {
        return Json::Null;
    };
    let names = country_names(db);
    let support: BTreeMap<&str, &Fact> = detail
        .e_invoicing_support
        .iter()
        .map(|f| (f.country.as_str(), f))
        .collect();
    // Only what the page shows: the mandate text in `details` belongs to the country pages.
    let rows: Vec<Json> = countries(db)
        .iter()
        .map(|c| match support.get(c.code.as_str()) {
            Some(f) => json!({
                "code": c.code,
                "name": c.name,
                "support": f.value,
                "vendors": f.details.get("vendors"),
                "notes": f.details.get("notes"),
                "verification": f.verification.as_str(),
                "last_checked": f.last_checked,
                "source_urls": f.source_urls,
            }),
            None => json!({ "code": c.code, "name": c.name, "support": null }),
        })
        .collect();
    let named = |code: &str, mut value: Json| {
        value["country_name"] = json!(names.get(code).copied().unwrap_or(code));
        value
    };
    let providers: Vec<Json> = detail
        .providers
        .iter()
        .map(|p| {
            let mut value = json!(p);
            value["countries"] = p
                .countries_in_scope
                .iter()
                .map(|c| json!({ "code": c, "name": names.get(c.as_str()).copied().unwrap_or(c) }))
                .collect();
            value
        })
        .collect();
    json!({
        "site": site_context(db),
        "erp": detail.erp,
        "rows": rows,
        "providers": providers,
        "partner_flags": detail.partner_flags.iter().map(|p| named(&p.country, json!(p))).collect::<Vec<_>>(),
        "other_facts": detail.other_facts.iter().map(|f| named(&f.country, json!(f))).collect::<Vec<_>>(),
        // Releases and changes (history.rs).
        "history": super::history::erp_history_context(db, key),
    })
}

/// A reporting topic page (`vat-reporting`, `saf-t`): one row per reporting row of every country, with the
/// ten ERP columns of the reporting table.
fn reporting_context(db: &dyn salsa::Database, topic: &str) -> Json {
    let columns: Vec<Json> = reporting_erps(db)
        .iter()
        .map(|id| json!({ "id": id, "name": erp_name(db, id) }))
        .collect();
    let mut rows = Vec::new();
    for c in countries(db) {
        let key = CountryKey::new(db, c.code.clone());
        for report in country_reporting(db, key)
            .iter()
            .filter(|r| r.row.topic == topic)
        {
            let r = &report.row;
            rows.push(json!({
                "anchor": format!("{topic}-{}-{}", c.code, report.n),
                "country": c.code,
                "country_name": c.name,
                "report_en": r.report_en,
                "report_local": (r.report_local != r.report_en).then_some(&r.report_local),
                "frequency": r.frequency,
                "deadline": r.deadline,
                "channel_format": r.channel_format,
                "source_urls": r.source,
                "last_checked": r.source_checked,
                "verification": r.verification.as_str(),
                "erp_support": r.erp_support,
                "erp_sources": r.erp_sources,
                "notes": r.notes,
            }));
        }
    }
    json!({ "site": site_context(db), "topic": topic, "columns": columns, "rows": rows })
}

/// `/vat-reporting/`: the VAT reporting rows of every country.
#[salsa::tracked(returns(ref))]
pub fn vat_reporting_context(db: &dyn salsa::Database) -> Json {
    reporting_context(db, "vat-reporting")
}

/// `/saf-t/`: the SAF-T rows of every country.
#[salsa::tracked(returns(ref))]
pub fn saft_context(db: &dyn salsa::Database) -> Json {
    reporting_context(db, "saf-t")
}

/// The partners page: the partner rows, sorted by country, ERP and name, with the registers' names. Neutral:
/// nothing is featured and no pricing exists in the data.
#[salsa::tracked(returns(ref))]
pub fn partners_context(db: &dyn salsa::Database) -> Json {
    let names = country_names(db);
    let mut rows: Vec<&PartnerRow> = partner_rows(db).value.iter().map(|r| &r.row).collect();
    rows.sort_by(|a, b| partner_order(a, b));
    let rows: Vec<Json> = rows
        .into_iter()
        .map(|row| {
            let mut value = json!(partner(row));
            value["country_name"] = json!(names.get(row.country.as_str()).copied());
            value["erp_name"] = json!(erp_name(db, &row.erp));
            value
        })
        .collect();
    json!({ "site": site_context(db), "partners": rows })
}

/// The local ERPs page: every country's local and regional ERP and accounting systems.
#[salsa::tracked(returns(ref))]
pub fn local_erps_context(db: &dyn salsa::Database) -> Json {
    let names = country_names(db);
    let mut rows: Vec<&LocalErpRow> = local_erp_rows(db).value.iter().map(|r| &r.row).collect();
    rows.sort_by(|a, b| {
        (&a.country, a.name.to_lowercase()).cmp(&(&b.country, b.name.to_lowercase()))
    });
    let rows: Vec<Json> = rows
        .into_iter()
        .map(|row| {
            let mut value = json!(local_erp(row));
            value["country_name"] = json!(names.get(row.country.as_str()).copied());
            value
        })
        .collect();
    json!({ "site": site_context(db), "local_erps": rows })
}

/// The news page: titles, dates and links only, newest first (as `news.json`).
#[salsa::tracked(returns(ref))]
pub fn news_context(db: &dyn salsa::Database) -> Json {
    let items: Vec<Json> = news_items(db)
        .iter()
        .map(|n| {
            let mut value = json!(n);
            value["erp_names"] = n
                .erps
                .iter()
                .map(|e| json!({ "id": e, "name": erp_name(db, e) }))
                .collect();
            value
        })
        .collect();
    json!({ "site": site_context(db), "news": items })
}

/// The sponsors page: the notice of `rules/site.toml` and the paid placements, if any.
#[salsa::tracked(returns(ref))]
pub fn sponsors_context(db: &dyn salsa::Database) -> Json {
    let sponsors: Vec<Json> = sponsor_items(db).iter().map(|s| json!(s)).collect();
    json!({
        "site": site_context(db),
        "notice": site_rules(db).value.sponsors.notice,
        "sponsors": sponsors,
    })
}

/// The licence page: both licences, their attribution strings and the commercial path.
#[salsa::tracked(returns(ref))]
pub fn licence_context(db: &dyn salsa::Database) -> Json {
    let site = &site_rules(db).value;
    let (api, data) = (&site.api_licence, &site.data_licence);
    json!({
        "site": site_context(db),
        "api": {
            "name": api.name,
            "url": api.url,
            "commercial_licence": api.commercial_licence,
            "commercial_contact": api.commercial_contact,
            "attribution": api.attribution,
        },
        "data": { "name": data.name, "url": data.url, "attribution": data.attribution },
    })
}

fn filter_match_text(matches: FilterMatch) -> &'static str {
    match matches {
        FilterMatch::AnyTrue => "any of these toggles is yes",
        FilterMatch::AllTrue => "all of these toggles are yes",
        FilterMatch::AnyNull => "any of these toggles is unknown",
    }
}

/// A filter's definition for the pages: slug, description, the rule in words and the toggles it reads.
fn filter_json(db: &dyn salsa::Database, filter: &crate::parse::rules::FilterRule) -> Json {
    let labels = toggle_labels(db);
    let all = filter.toggles.iter().any(|t| t == "*");
    let toggles: Vec<&Json> = labels
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| all || filter.toggles.iter().any(|t| l["name"] == t.as_str()))
        .collect();
    json!({
        "slug": filter.slug,
        "description": filter.description,
        "rule": filter_match_text(filter.matches),
        "toggles": toggles,
    })
}

/// The filters index: each filter's definition and how many countries it lists.
#[salsa::tracked(returns(ref))]
pub fn filters_context(db: &dyn salsa::Database) -> Json {
    let filters: Vec<Json> = filter_rules(db)
        .value
        .iter()
        .map(|f| {
            let mut value = filter_json(db, f);
            value["count"] = json!(filter_members(db, FilterKey::new(db, f.slug.clone())).len());
            value
        })
        .collect();
    json!({ "site": site_context(db), "filters": filters })
}

/// One filter page: its definition and its member countries with their toggles.
#[salsa::tracked(returns(ref))]
pub fn filter_context<'db>(db: &'db dyn salsa::Database, key: FilterKey<'db>) -> Json {
    let Some(filter) = filter_rule(db, key) else {
        return Json::Null;
    };
    let members: Vec<Json> = filter_members(db, key)
        .iter()
        .map(|m| json!({ "code": m.code, "name": m.name, "region": m.region, "toggles": toggle_list(&m.toggles) }))
        .collect();
    json!({
        "site": site_context(db),
        "filter": filter_json(db, filter),
        "toggle_labels": toggle_labels(db),
        "members": members,
    })
}
