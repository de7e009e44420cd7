#!/usr/bin/env python3
"""Write the Hugo site locref is compared with: a data-driven site equivalent to locref's workload.

Python 3 standard library only. Deterministic for a given --scale and --seed: the same bytes as the
`gen.py` every figure of BENCHMARKS.md's Hugo rows was measured with (only this docstring, the default
--out and the refusal to write inside the repository differ).

    python3 bench/hugo_site.py --scale 1 --out /tmp/locref-bench/hugo-x1

Workload (scale N multiplies the items marked *N):
  61 countries (two-letter codes), 11 ERP products
  per country: 12*N facts, 11 ERP matrix rows (61x11 = 671 total), 3 reporting rows,
               7 boolean toggles
  150*N partners, 100*N local ERPs, 300*N partner flags, 200*N news items

Output site layout (the Hugo templates and config are copied from bench/hugo-site/):
  hugo.toml, layouts/...                       (copied)
  data/meta.json                               version + generated_at (fixed, deterministic)
  data/countries/<cc>.json                     one file per country (facts, matrix, reporting)
  data/erps.json, data/partners.json, data/local_erps.json,
  data/partner_flags.json, data/news.json, data/toggles.json
  content/_index.md                            home
  content/<cc>/_index.md                       country page -> /<cc>/index.html + /<cc>/index.md
  content/erp/_index.md, content/erp/<id>.md   ERP pages -> /erp/<id>/index.html
  content/matrix.md                            -> /matrix/index.html
  content/api/_index.md                        (render: never)
  content/api/v1/countries/<cc>.md             -> /api/v1/countries/<cc>.json
  content/api/v1/{countries,facts,partners}.md -> /api/v1/{countries,facts,partners}.json
  content/api/v1/filters/<toggle>.md           -> /api/v1/filters/<toggle>.json (7 files)
"""
import argparse
import tempfile
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TEMPLATE_DIR = os.path.join(HERE, "hugo-site")

COUNTRIES = [
    # EU 27
    ("at", "Austria", "EU"), ("be", "Belgium", "EU"), ("bg", "Bulgaria", "EU"),
    ("hr", "Croatia", "EU"), ("cy", "Cyprus", "EU"), ("cz", "Czechia", "EU"),
    ("dk", "Denmark", "EU"), ("ee", "Estonia", "EU"), ("fi", "Finland", "EU"),
    ("fr", "France", "EU"), ("de", "Germany", "EU"), ("gr", "Greece", "EU"),
    ("hu", "Hungary", "EU"), ("ie", "Ireland", "EU"), ("it", "Italy", "EU"),
    ("lv", "Latvia", "EU"), ("lt", "Lithuania", "EU"), ("lu", "Luxembourg", "EU"),
    ("mt", "Malta", "EU"), ("nl", "Netherlands", "EU"), ("pl", "Poland", "EU"),
    ("pt", "Portugal", "EU"), ("ro", "Romania", "EU"), ("sk", "Slovakia", "EU"),
    ("si", "Slovenia", "EU"), ("es", "Spain", "EU"), ("se", "Sweden", "EU"),
    # rest of Europe
    ("gb", "United Kingdom", "Europe"), ("no", "Norway", "Europe"),
    ("ch", "Switzerland", "Europe"), ("is", "Iceland", "Europe"),
    ("li", "Liechtenstein", "Europe"),
    # Americas
    ("us", "United States", "Americas"), ("ca", "Canada", "Americas"),
    ("mx", "Mexico", "Americas"), ("br", "Brazil", "Americas"),
    ("ar", "Argentina", "Americas"), ("cl", "Chile", "Americas"),
    ("co", "Colombia", "Americas"), ("pe", "Peru", "Americas"),
    # APAC
    ("au", "Australia", "APAC"), ("nz", "New Zealand", "APAC"), ("jp", "Japan", "APAC"),
    ("cn", "China", "APAC"), ("in", "India", "APAC"), ("sg", "Singapore", "APAC"),
    ("my", "Malaysia", "APAC"), ("id", "Indonesia", "APAC"), ("th", "Thailand", "APAC"),
    ("vn", "Vietnam", "APAC"), ("ph", "Philippines", "APAC"), ("kr", "South Korea", "APAC"),
    # MEA
    ("ae", "United Arab Emirates", "MEA"), ("sa", "Saudi Arabia", "MEA"),
    ("eg", "Egypt", "MEA"), ("za", "South Africa", "MEA"), ("ng", "Nigeria", "MEA"),
    ("ke", "Kenya", "MEA"), ("tr", "Turkey", "MEA"), ("il", "Israel", "MEA"),
    ("ma", "Morocco", "MEA"),
]
assert len(COUNTRIES) == 61 and len({c[0] for c in COUNTRIES}) == 61

ERPS = [
    ("acumatica", "Acumatica Cloud ERP", "Acumatica"),
    ("dynamics-365-bc", "Dynamics 365 Business Central", "Microsoft"),
    ("dynamics-365-fo", "Dynamics 365 Finance & Operations", "Microsoft"),
    ("epicor-kinetic", "Epicor Kinetic", "Epicor"),
    ("infor-cloudsuite", "Infor CloudSuite", "Infor"),
    ("netsuite", "Oracle NetSuite", "Oracle"),
    ("odoo", "Odoo", "Odoo S.A."),
    ("oracle-fusion", "Oracle Fusion Cloud ERP", "Oracle"),
    ("sage-intacct", "Sage Intacct", "Sage"),
    ("sap-s4hana", "SAP S/4HANA", "SAP"),
    ("workday", "Workday Financials", "Workday"),
]
assert len(ERPS) == 11

# 7 boolean toggles -> 7 filter JSON files
TOGGLES = [
    ("b2g_einvoicing", "B2G e-invoicing mandatory"),
    ("b2b_einvoicing", "B2B e-invoicing mandatory"),
    ("peppol", "Peppol network in use"),
    ("clearance_model", "Clearance (pre-approval) model"),
    ("saft", "SAF-T reporting required"),
    ("realtime_reporting", "Real-time transaction reporting"),
    ("digital_signature", "Qualified e-signature required"),
]

FACT_TOPICS = [
    ("mandate", "E-invoicing mandate"),
    ("b2g", "B2G scope"),
    ("b2b", "B2B scope"),
    ("format", "Invoice format"),
    ("network", "Exchange network"),
    ("archiving", "Archiving period"),
    ("signature", "Signature requirement"),
    ("vat", "Standard VAT rate"),
    ("reporting", "Periodic reporting"),
    ("clearance", "Clearance platform"),
    ("penalties", "Penalties"),
    ("language", "Invoice language"),
]
assert len(FACT_TOPICS) == 12

VERIFICATION = ["verified", "verified", "verified", "unverified", "needs-review"]
SUPPORT = ["native", "native", "partner", "partner", "planned", "none"]
FORMATS = ["UBL 2.1", "CII D16B", "Peppol BIS 3.0", "FatturaPA", "XRechnung", "Factur-X",
           "CFDI 4.0", "NF-e", "GST e-invoice JSON", "ZATCA UBL"]
WORDS = ("invoice tax authority portal mandate format schema supplier buyer clearance "
         "report deadline signature archive network access point phase rollout threshold "
         "turnover exemption validation receipt credit note correction penalty registration "
         "platform government business consumer electronic structured").split()
FLAGS = ["peppol-access-point", "certified-integrator", "local-office", "clearance-connector",
         "saft-export", "archiving-service", "signature-provider", "support-24x7"]
TIERS = ["gold", "silver", "bronze"]


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def date(rng, year_lo=2023, year_hi=2025):
    return "%04d-%02d-%02d" % (rng.randint(year_lo, year_hi), rng.randint(1, 12), rng.randint(1, 28))


def make_country(rng, cc, name, region, scale):
    toggles = {t: rng.random() < 0.45 for t, _ in TOGGLES}
    facts = []
    n_facts = 12 * scale
    for i in range(n_facts):
        topic, label = FACT_TOPICS[i % len(FACT_TOPICS)]
        rnd = i // len(FACT_TOPICS)
        if rnd:
            label = "%s (%d)" % (label, rnd + 1)
        if topic == "format":
            value = "%s; %s" % (rng.choice(FORMATS), words(rng, 6))
        elif topic == "vat":
            value = "%d%% standard rate; %s" % (rng.choice([5, 7, 10, 15, 19, 20, 21, 23, 25]), words(rng, 4))
        else:
            value = words(rng, rng.randint(8, 20))
        facts.append({
            "id": "%s-%s-%d" % (cc, topic, rnd + 1),
            "topic": topic,
            "label": label,
            "value": value,
            "source_url": "https://gov.example/%s/%s/%d" % (cc, topic, rnd + 1),
            "verification": rng.choice(VERIFICATION),
            "last_checked": date(rng),
        })
    matrix = []
    for erp_id, erp_name, _vendor in ERPS:
        status = rng.choice(SUPPORT)
        matrix.append({
            "erp": erp_id,
            "topic": "einvoicing_support",
            "label": "%s e-invoicing support" % erp_name,
            "status": status,
            "value": "%s: %s" % (status, words(rng, rng.randint(5, 12))),
            "source_url": "https://erp.example/%s/%s" % (erp_id, cc),
            "verification": rng.choice(VERIFICATION),
            "last_checked": date(rng),
        })
    reporting = []
    for name_, freq in (("VAT return", "monthly"), ("EC sales list", "quarterly"),
                        ("Annual summary", "yearly")):
        reporting.append({
            "name": name_,
            "frequency": freq,
            "format": rng.choice(["XML", "CSV", "portal", "JSON", "PDF"]),
            "deadline_days": rng.choice([10, 15, 20, 25, 30, 60]),
            "source_url": "https://gov.example/%s/reporting/%s" % (cc, name_.lower().replace(" ", "-")),
        })
    return {
        "code": cc,
        "name": name,
        "region": region,
        "currency": rng.choice(["EUR", "USD", "GBP", "CHF", "JPY", "BRL", "INR", "AUD", "ZAR", "SEK"]),
        "toggles": toggles,
        "facts": facts,
        "matrix": matrix,
        "reporting": reporting,
    }


def generate(scale, seed=42):
    rng = random.Random(seed)
    codes = [c[0] for c in COUNTRIES]
    erp_ids = [e[0] for e in ERPS]
    countries = {cc: make_country(rng, cc, name, region, scale) for cc, name, region in COUNTRIES}
    erps = [{"id": i, "name": n, "vendor": v, "url": "https://erp.example/%s" % i} for i, n, v in ERPS]
    partners = []
    for i in range(150 * scale):
        partners.append({
            "id": "p%05d" % i,
            "name": "%s %s Partners %d" % (rng.choice(WORDS).title(), rng.choice(WORDS).title(), i),
            "country": rng.choice(codes),
            "erp": rng.choice(erp_ids),
            "tier": rng.choice(TIERS),
            "certified": rng.random() < 0.5,
            "url": "https://partner.example/p%05d" % i,
        })
    local_erps = []
    for i in range(100 * scale):
        local_erps.append({
            "id": "l%05d" % i,
            "name": "%s ERP %d" % (rng.choice(WORDS).title(), i),
            "country": rng.choice(codes),
            "vendor": "%s Software" % rng.choice(WORDS).title(),
            "einvoicing": rng.random() < 0.6,
            "url": "https://local-erp.example/l%05d" % i,
        })
    flags = []
    for i in range(300 * scale):
        p = rng.choice(partners)
        flags.append({
            "id": "f%06d" % i,
            "partner_id": p["id"],
            "partner_name": p["name"],
            "country": p["country"],
            "flag": rng.choice(FLAGS),
            "value": rng.random() < 0.7,
            "note": words(rng, 5),
        })
    news = []
    for i in range(200 * scale):
        cc = rng.choice(codes)
        news.append({
            "id": "n%05d" % i,
            "country": cc,
            "date": date(rng, 2022, 2025),
            "title": words(rng, 7).capitalize(),
            "url": "https://news.example/%s/n%05d" % (cc, i),
            "summary": words(rng, 25),
        })
    return countries, erps, partners, local_erps, flags, news


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.write("\n")


def write_stub(path, front):
    """Content stub with JSON front matter (no body)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(front, indent=1))
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=1, help="multiplier for facts/partners/local ERPs/flags/news")
    ap.add_argument("--out", default=None, help="site directory (default $BENCH_DIR/hugo-x<N>, "
                    "BENCH_DIR defaulting to $TMPDIR/locref-bench)")
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    bench_dir = os.environ.get("BENCH_DIR") or os.path.join(tempfile.gettempdir(), "locref-bench")
    out = os.path.abspath(args.out or os.path.join(bench_dir, "hugo-x%d" % args.scale))
    if (os.path.realpath(out) + os.sep).startswith(os.path.realpath(REPO) + os.sep):
        sys.exit("refusing to generate inside the repository: %s" % out)

    # fresh site dir: template files + generated data/content
    for sub in ("data", "content", "layouts", "public", "resources"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    shutil.copy(os.path.join(TEMPLATE_DIR, "hugo.toml"), os.path.join(out, "hugo.toml"))
    shutil.copytree(os.path.join(TEMPLATE_DIR, "layouts"), os.path.join(out, "layouts"))

    countries, erps, partners, local_erps, flags, news = generate(args.scale, args.seed)
    data = os.path.join(out, "data")
    write_json(os.path.join(data, "meta.json"),
               {"version": "1.0.0-anchor", "generated_at": "2025-01-01T00:00:00Z", "scale": args.scale})
    for cc, c in countries.items():
        write_json(os.path.join(data, "countries", cc + ".json"), c)
    write_json(os.path.join(data, "erps.json"), erps)
    write_json(os.path.join(data, "partners.json"), partners)
    write_json(os.path.join(data, "local_erps.json"), local_erps)
    write_json(os.path.join(data, "partner_flags.json"), flags)
    write_json(os.path.join(data, "news.json"), news)
    write_json(os.path.join(data, "toggles.json"), [{"id": t, "label": l} for t, l in TOGGLES])

    content = os.path.join(out, "content")
    write_stub(os.path.join(content, "_index.md"), {"title": "E-invoicing country guide"})
    for cc, c in countries.items():
        write_stub(os.path.join(content, cc, "_index.md"),
                   {"title": c["name"], "country": cc, "type": "country", "outputs": ["HTML", "MD"]})
        write_stub(os.path.join(content, "api", "v1", "countries", cc + ".md"),
                   {"title": c["name"] + " (API)", "country": cc, "type": "api", "layout": "country",
                    "outputs": ["JSON"]})
    write_stub(os.path.join(content, "api", "_index.md"),
               {"title": "API", "_build": {"render": "never", "list": "never"}})
    for name in ("countries", "facts", "partners"):
        write_stub(os.path.join(content, "api", "v1", name + ".md"),
                   {"title": name, "type": "api", "layout": name, "outputs": ["JSON"]})
    for t, label in TOGGLES:
        write_stub(os.path.join(content, "api", "v1", "filters", t + ".md"),
                   {"title": label, "toggle": t, "type": "api", "layout": "filter", "outputs": ["JSON"]})
    write_stub(os.path.join(content, "erp", "_index.md"), {"title": "ERP products", "type": "erp"})
    for e in erps:
        write_stub(os.path.join(content, "erp", e["id"] + ".md"),
                   {"title": e["name"], "erp": e["id"], "type": "erp"})
    write_stub(os.path.join(content, "matrix.md"), {"title": "ERP e-invoicing matrix", "type": "matrix"})

    n_facts = sum(len(c["facts"]) for c in countries.values())
    n_matrix = sum(len(c["matrix"]) for c in countries.values())
    print("site=%s scale=%d countries=%d erps=%d facts=%d matrix=%d reporting=%d partners=%d "
          "local_erps=%d flags=%d news=%d" % (
              out, args.scale, len(countries), len(erps), n_facts, n_matrix,
              sum(len(c["reporting"]) for c in countries.values()), len(partners),
              len(local_erps), len(flags), len(news)))


if __name__ == "__main__":
    main()
