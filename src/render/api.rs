//! The versioned API under `/api/v1/`: every response is an [`Envelope`] of `meta` and `data`.

use crate::kinds::RendererOf;
use serde::Serialize;

use super::envelope::{json_bytes, json_items, list_head, meta, splice_items_into, spliced_list};
use super::openapi::schema_of;
use super::rendered::{CountFn, RenderFn, param_of};
use crate::api_types::{
    CalendarEntry, Country, Erp, Fact, FilterItem, Regime, ToggleDerivation, Toggles,
};
use crate::api_types::{
    CountryDetail, Endpoint, Envelope, ErpDetail, LocalErp, NewsItem, Partner, PartnerFlag,
    Provider, Sponsor,
};
use crate::derived::facts::{country_facts, erp_other_facts, erp_support_facts};
use crate::derived::filters::{FilterKey, filter_members};
/// The lists the API and the pages share (the search index reads the sponsors here too).
pub(crate) use crate::derived::lists::{news_items, sponsor_items};
use crate::derived::on_date::{country_on, offered_days, same_since};
use crate::derived::toggles::toggle_coverage;
use crate::derived::{country_summary, erp_summary};
use crate::ids::{local_erp_id, partner_id};
use crate::kinds::{ApiKind, Renderer};
use crate::model::{
    CountryKey, ErpKey, base_url, countries, country_local_erps, country_partner_flags,
    country_partners, erp_connectors, erp_partner_flags, erps, partner_order,
};
use crate::output::{Piece, Rendered};
use crate::parse::json_sources::{news_rows, sponsor_rows};
use crate::parse::rules::site_rules;
use crate::parse::tables::{
    LocalErpRow, PartnerFlagRow, PartnerRow, local_erp_rows, partner_flag_rows, partner_rows,
};
use crate::routes::{Output, outputs};
use schemars::SchemaGenerator;

use super::history;
use crate::api_types::{Change, OnDate, OnDateEntry, Release, ReleaseDetail};
use crate::history::ReleaseKey;

fn list<T: Serialize>(db: &dyn salsa::Database, data: &[T]) -> Rendered {
    Rendered::new(json_bytes(&Envelope {
        meta: meta(db, data.len()),
        data,
    }))
}

fn detail<T: Serialize>(db: &dyn salsa::Database, data: T) -> Rendered {
    Rendered::new(json_bytes(&Envelope {
        meta: meta(db, 1),
        data,
    }))
}

pub(crate) fn local_erp(row: &LocalErpRow) -> LocalErp {
    LocalErp {
        id: local_erp_id(&row.country, &row.name),
        country: row.country.clone(),
        name: row.name.clone(),
        segment: row.segment.clone(),
        description: row.description.clone(),
        website: row.website.clone().unwrap_or_default(),
        source_url: row.source.first().cloned(),
        verification: row.verification.as_str().to_string(),
        last_checked: row.last_verified.clone(),
    }
}

pub(crate) fn partner_flag(row: &PartnerFlagRow) -> PartnerFlag {
    PartnerFlag {
        id: format!("{}-{}", row.country, row.erp),
        country: row.country.clone(),
        erp: row.erp.clone(),
        flag: row.flag.clone(),
        note: row.note.clone(),
        source_url: row.source.first().cloned(),
        verification: row.verification.as_str().to_string(),
        last_checked: row.last_verified.clone(),
    }
}

pub fn partner(row: &PartnerRow) -> Partner {
    Partner {
        id: partner_id(&row.country, &row.erp, &row.name),
        name: row.name.clone(),
        erp: row.erp.clone(),
        country: row.country.clone(),
        partner_type: row.partner_type.clone(),
        summary: row.summary.clone(),
        source_urls: row.source_urls.clone(),
        source_kind: row.source_kind.clone(),
        last_checked: row.last_checked.clone(),
    }
}

/// The country keys in code order.
fn country_keys(db: &dyn salsa::Database) -> impl Iterator<Item = CountryKey<'_>> {
    countries(db)
        .iter()
        .map(move |c| CountryKey::new(db, c.code.clone()))
}

pub fn api_countries(db: &dyn salsa::Database) -> Rendered {
    let data: Vec<_> = country_keys(db)
        .filter_map(|key| country_summary(db, key).clone())
        .collect();
    list(db, &data)
}

#[salsa::tracked(returns(ref))]
pub fn country_detail<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Option<CountryDetail> {
    Some(CountryDetail {
        country: country_summary(db, key).clone()?,
        facts: country_facts(db, key).clone(),
        local_erps: country_local_erps(db, key)
            .iter()
            .map(|row| local_erp(row))
            .collect(),
        partner_flags: country_partner_flags(db, key)
            .iter()
            .map(|row| partner_flag(row))
            .collect(),
        partners: country_partners(db, key)
            .iter()
            .map(|row| partner(row))
            .collect(),
    })
}

pub fn api_country<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Rendered {
    detail(db, country_detail(db, key))
}

pub fn api_erps(db: &dyn salsa::Database) -> Rendered {
    let data: Vec<_> = erps(db)
        .iter()
        .filter_map(|e| erp_summary(db, ErpKey::new(db, e.id.clone())).clone())
        .collect();
    list(db, &data)
}

#[salsa::tracked(returns(ref))]
pub fn erp_detail<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Option<ErpDetail> {
    let providers = erp_connectors(db, key)
        .iter()
        .map(|row| Provider {
            provider: row.provider.clone(),
            connector_type: row.connector_type.clone(),
            built_by: row.built_by.clone(),
            direction: row.direction.clone(),
            countries_in_scope: row.countries_in_scope.clone(),
            source_urls: row.source_urls.clone(),
            verification: row.verification.as_str().to_string(),
            last_checked: row.last_verified.clone(),
        })
        .collect();
    Some(ErpDetail {
        erp: erp_summary(db, key).clone()?,
        e_invoicing_support: erp_support_facts(db, key).clone(),
        other_facts: erp_other_facts(db, key).clone(),
        partner_flags: erp_partner_flags(db, key)
            .iter()
            .map(|row| partner_flag(row))
            .collect(),
        providers,
    })
}

pub(crate) fn api_erp<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Rendered {
    detail(db, erp_detail(db, key))
}

/// One country's facts as a fragment of `/api/v1/facts.json` (and their count): an edit of one fact
/// serializes one country again, and the list is spliced from the cached fragments.
#[salsa::tracked(returns(ref), lru = 0)]
pub fn country_facts_json<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> (usize, Piece) {
    country_facts_fragment(db, key)
}

fn country_facts_fragment(db: &dyn salsa::Database, key: CountryKey<'_>) -> (usize, Piece) {
    let facts = country_facts(db, key);
    // The items of `data` sit two levels deep in the envelope.
    (facts.len(), json_items(facts, 4))
}

#[cfg(feature = "streaming")]
/// Limits [`country_facts_json`] to its most recent value (a one-off build, see [`crate::memory`]).
pub(crate) fn keep_last_part_only(db: &mut dyn salsa::Database) {
    country_facts_json::set_lru_capacity(db, 1);
}

pub fn api_facts(db: &dyn salsa::Database) -> Rendered {
    let parts: Vec<&(usize, Piece)> = country_keys(db)
        .map(|key| country_facts_json(db, key))
        .collect();
    spliced_list(db, &parts)
}

/// `facts.json` piece by piece (see [`super::stream_list`]): each country's fragment made, handed on
/// and let go.
pub(crate) fn stream_facts(db: &dyn salsa::Database, _: &Output, emit: &mut dyn FnMut(Piece)) {
    let count = country_keys(db)
        .map(|key| country_facts(db, key).len())
        .sum();
    let fragments = country_keys(db).map(|key| country_facts_fragment(db, key).1);
    splice_items_into(&list_head(db, count), fragments, emit);
}

pub fn api_local_erps(db: &dyn salsa::Database) -> Rendered {
    let mut rows: Vec<&LocalErpRow> = local_erp_rows(db).value.iter().map(|r| &*r.row).collect();
    rows.sort_by(|a, b| {
        (&a.country, a.name.to_lowercase()).cmp(&(&b.country, b.name.to_lowercase()))
    });
    list(db, &rows.into_iter().map(local_erp).collect::<Vec<_>>())
}

pub fn api_partner_flags(db: &dyn salsa::Database) -> Rendered {
    let mut rows: Vec<&PartnerFlagRow> = partner_flag_rows(db)
        .value
        .iter()
        .map(|r| &*r.row)
        .collect();
    rows.sort_by(|a, b| (&a.country, &a.erp).cmp(&(&b.country, &b.erp)));
    list(db, &rows.into_iter().map(partner_flag).collect::<Vec<_>>())
}

pub fn api_partners(db: &dyn salsa::Database) -> Rendered {
    let mut rows: Vec<&PartnerRow> = partner_rows(db).value.iter().map(|r| &*r.row).collect();
    rows.sort_by(|a, b| partner_order(a, b));
    list(db, &rows.into_iter().map(partner).collect::<Vec<_>>())
}

pub fn api_news(db: &dyn salsa::Database) -> Rendered {
    list(db, news_items(db))
}

pub fn api_sponsors(db: &dyn salsa::Database) -> Rendered {
    let items = sponsor_items(db);
    let mut meta = meta(db, items.len());
    meta.notice = Some(site_rules(db).value.sponsors.notice.clone());
    Rendered::new(json_bytes(&Envelope { meta, data: items }))
}

pub(crate) fn api_filter<'db>(db: &'db dyn salsa::Database, key: FilterKey<'db>) -> Rendered {
    list(db, filter_members(db, key))
}

/// How each country's toggles got their values, country by country.
pub fn api_toggles(db: &dyn salsa::Database) -> Rendered {
    let data: Vec<ToggleDerivation> = country_keys(db)
        .flat_map(|key| {
            crate::derived::obligations::country_toggle_derivations(db, key)
                .iter()
                .cloned()
        })
        .collect();
    list(db, &data)
}

/// Every dated phase, in date order.
pub fn api_calendar(db: &dyn salsa::Database) -> Rendered {
    list(db, crate::derived::obligations::calendar(db))
}

/// How each obligation works, country by country (code order), each country's in the order of its
/// obligations.
pub fn api_regimes(db: &dyn salsa::Database) -> Rendered {
    let data: Vec<Regime> = country_keys(db)
        .flat_map(|key| {
            crate::derived::regimes::country_regime_records(db, key)
                .iter()
                .cloned()
        })
        .collect();
    list(db, &data)
}

/// The days `/api/v1/on/{date}.json` answers for.
pub(crate) fn on_date_entries(db: &dyn salsa::Database) -> Vec<OnDateEntry> {
    let base = base_url(db);
    offered_days(db)
        .iter()
        .map(|o| OnDateEntry {
            date: o.day.to_string(),
            api_url: format!("{base}/api/v1/on/{}.json", o.day),
            reference: o.reference,
            quarter_start: o.quarter_start,
            changes: o.changes,
        })
        .collect()
}

pub fn api_on_dates(db: &dyn salsa::Database) -> Rendered {
    list(db, &on_date_entries(db))
}

/// Every country's answers on one day, in code order.
pub(crate) fn on_date(db: &dyn salsa::Database, day: jiff::civil::Date) -> OnDate {
    OnDate {
        date: day.to_string(),
        reference_date: crate::model::reference_date(db).clone(),
        same_since: same_since(db, day).to_string(),
        countries: country_keys(db)
            .map(|key| country_on(db, key, day))
            .collect(),
    }
}

pub fn api_on_date(db: &dyn salsa::Database, date: &str) -> Rendered {
    detail(db, on_date(db, date.parse().unwrap_or_default()))
}

/// How an API envelope is made and described (see [`ApiKind::spec`]).
pub(crate) struct ApiSpec {
    pub render: RenderFn,
    /// The schema of its body, from the resource types (what `openapi.json` describes).
    pub schema: fn(&mut SchemaGenerator) -> serde_json::Value,
    /// How many items it lists, for `index.json`; `None` for detail and index outputs.
    pub count: Option<CountFn>,
}

fn len(n: usize) -> Option<u64> {
    Some(n as u64)
}

impl ApiKind {
    /// How envelopes of this kind are made: one declaration per kind.
    pub(crate) fn spec(self) -> ApiSpec {
        match self {
            ApiKind::Index => ApiSpec {
                render: |db, _| api_index(db),
                schema: schema_of::<Envelope<Vec<Endpoint>>>,
                count: None,
            },
            ApiKind::Countries => ApiSpec {
                render: |db, _| api_countries(db),
                schema: schema_of::<Envelope<Vec<Country>>>,
                count: Some(|db, _| len(countries(db).len())),
            },
            ApiKind::Country => ApiSpec {
                render: |db, output| api_country(db, CountryKey::new(db, param_of(output))),
                schema: schema_of::<Envelope<CountryDetail>>,
                count: None,
            },
            ApiKind::Erps => ApiSpec {
                render: |db, _| api_erps(db),
                schema: schema_of::<Envelope<Vec<Erp>>>,
                count: Some(|db, _| len(erps(db).len())),
            },
            ApiKind::Erp => ApiSpec {
                render: |db, output| api_erp(db, ErpKey::new(db, param_of(output))),
                schema: schema_of::<Envelope<ErpDetail>>,
                count: None,
            },
            ApiKind::Facts => ApiSpec {
                render: |db, _| api_facts(db),
                schema: schema_of::<Envelope<Vec<Fact>>>,
                count: Some(|db, _| {
                    Some(
                        country_keys(db)
                            .filter_map(|k| country_summary(db, k).as_ref())
                            .map(|c| c.counts.facts)
                            .sum(),
                    )
                }),
            },
            ApiKind::LocalErps => ApiSpec {
                render: |db, _| api_local_erps(db),
                schema: schema_of::<Envelope<Vec<LocalErp>>>,
                count: Some(|db, _| len(local_erp_rows(db).value.len())),
            },
            ApiKind::PartnerFlags => ApiSpec {
                render: |db, _| api_partner_flags(db),
                schema: schema_of::<Envelope<Vec<PartnerFlag>>>,
                count: Some(|db, _| len(partner_flag_rows(db).value.len())),
            },
            ApiKind::Partners => ApiSpec {
                render: |db, _| api_partners(db),
                schema: schema_of::<Envelope<Vec<Partner>>>,
                count: Some(|db, _| len(partner_rows(db).value.len())),
            },
            ApiKind::News => ApiSpec {
                render: |db, _| api_news(db),
                schema: schema_of::<Envelope<Vec<NewsItem>>>,
                count: Some(|db, _| len(news_rows(db).value.len())),
            },
            ApiKind::Sponsors => ApiSpec {
                render: |db, _| api_sponsors(db),
                schema: schema_of::<Envelope<Vec<Sponsor>>>,
                count: Some(|db, _| len(sponsor_rows(db).value.len())),
            },
            ApiKind::Toggles => ApiSpec {
                render: |db, _| api_toggles(db),
                schema: schema_of::<Envelope<Vec<ToggleDerivation>>>,
                count: Some(|db, _| len(countries(db).len() * Toggles::NAMES.len())),
            },
            ApiKind::Calendar => ApiSpec {
                render: |db, _| api_calendar(db),
                schema: schema_of::<Envelope<Vec<CalendarEntry>>>,
                count: Some(|db, _| len(crate::derived::obligations::calendar(db).len())),
            },
            ApiKind::Regimes => ApiSpec {
                render: |db, _| api_regimes(db),
                schema: schema_of::<Envelope<Vec<Regime>>>,
                count: Some(|db, _| {
                    len(country_keys(db)
                        .map(|key| crate::model::country_regimes(db, key).len())
                        .sum())
                }),
            },
            ApiKind::Filter => ApiSpec {
                render: |db, output| api_filter(db, FilterKey::new(db, param_of(output))),
                schema: schema_of::<Envelope<Vec<FilterItem>>>,
                count: Some(|db, output| {
                    len(filter_members(db, FilterKey::new(db, param_of(output))).len())
                }),
            },
            // Releases and changes (src/render/history.rs).
            ApiKind::Changes => ApiSpec {
                render: |db, _| history::api_changes(db),
                schema: schema_of::<Envelope<Vec<Change>>>,
                count: Some(|db, _| len(history::change_count(db))),
            },
            ApiKind::Releases => ApiSpec {
                render: |db, _| history::api_releases(db),
                schema: schema_of::<Envelope<Vec<Release>>>,
                count: Some(|db, _| len(crate::history::release_versions(db).len())),
            },
            ApiKind::Release => ApiSpec {
                render: |db, output| {
                    history::api_release(db, ReleaseKey::new(db, param_of(output)))
                },
                schema: schema_of::<Envelope<ReleaseDetail>>,
                count: None,
            },
            // What applies on a day (src/derived/on_date.rs).
            ApiKind::OnDates => ApiSpec {
                render: |db, _| api_on_dates(db),
                schema: schema_of::<Envelope<Vec<OnDateEntry>>>,
                count: Some(|db, _| len(offered_days(db).len())),
            },
            ApiKind::OnDate => ApiSpec {
                render: |db, output| api_on_date(db, &param_of(output)),
                schema: schema_of::<Envelope<OnDate>>,
                count: None,
            },
        }
    }
}

/// Number of items an output lists, for `index.json`; `None` for detail and non-list outputs.
pub(crate) fn item_count(db: &dyn salsa::Database, output: &Output) -> Option<u64> {
    match output.renderer() {
        Renderer::Api(kind) => kind.spec().count.and_then(|count| count(db, output)),
        Renderer::File(kind) => kind.spec().count.and_then(|count| count(db, output)),
        Renderer::Page(..) => None,
    }
}

/// The index entries: one per indexed route, with a placeholder route listed once as its template unless
/// it is described per expanded path.
#[salsa::tracked(returns(ref))]
pub fn endpoints(db: &dyn salsa::Database) -> Vec<Endpoint> {
    let rules = &crate::parse::rules::route_rules(db).value;
    let filters = &crate::parse::rules::filter_rules(db).value;
    let mut entries = Vec::new();
    let mut templates_listed = std::collections::BTreeSet::new();
    for output in outputs(db) {
        let rule = &rules[output.route];
        if !rule.index {
            continue;
        }
        let expand = rule.openapi == Some(crate::parse::rules::OpenapiMode::Expand)
            || output.param.is_none();
        if !expand {
            if templates_listed.insert(output.route) {
                entries.push(Endpoint {
                    path: rule.path.clone(),
                    description: rule.description.clone().unwrap_or_default(),
                    count: None,
                });
            }
            continue;
        }
        let description = if output.renderer() == Renderer::Api(ApiKind::Filter) {
            filters
                .iter()
                .find(|f| Some(&f.slug) == output.param.as_ref())
                .map(|f| f.description.clone())
        } else {
            rule.description.clone()
        };
        entries.push(Endpoint {
            path: output.path.clone(),
            description: description.unwrap_or_default(),
            count: item_count(db, output),
        });
    }
    entries
}

pub fn api_index(db: &dyn salsa::Database) -> Rendered {
    let data = endpoints(db).clone();
    let base = base_url(db);
    let mut meta = meta(db, data.len());
    meta.docs = Some(format!("{base}/api/"));
    meta.openapi = Some(format!("{base}/api/openapi.json"));
    meta.toggle_coverage = Some(*toggle_coverage(db));
    Rendered::new(json_bytes(&Envelope { meta, data }))
}
