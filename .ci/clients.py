#!/usr/bin/env python3
"""The published site read by clients the project did not write (pinned in .ci/run), over a build:

    python3 .ci/clients.py PUBLIC_DIR

- openapi-spec-validator: api/openapi.json is a valid OpenAPI 3.1 document;
- jsonschema: every JSON file of the site validates against the schema openapi.json gives for its path
  (a file no path describes is a failure);
- DuckDB: every flat data file (CSV and JSON) loads, with the column types datapackage.json declares
  (boolean, integer, date; text for the rest) and as many rows in the CSV as in the JSON;
- feedparser: every Atom feed parses with bozo 0, no two entries of a feed share one `updated`;
- icalendar: every calendar parses, holds at least one event (RFC 5545 asks for a component), and no
  content line is longer than 75 octets.

Prints one line per check and exits 1 if any failed.
"""

import json
import re
import sys
import time
from pathlib import Path

failures = []


def fail(message):
    failures.append(message)
    print(f"  FAIL {message}")


def step(name):
    def wrap(function):
        def run(*args):
            start = time.monotonic()
            before = len(failures)
            print(f"{name}:")
            detail = function(*args)
            took = time.monotonic() - start
            status = "ok" if len(failures) == before else f"{len(failures) - before} failed"
            print(f"{name}: {status} ({detail}; {took:.1f} s)")

        return run

    return wrap


@step("openapi-spec-validator")
def openapi_spec(public):
    from openapi_spec_validator import validate
    from openapi_spec_validator.readers import read_from_filename

    spec, _ = read_from_filename(str(public / "api" / "openapi.json"))
    try:
        validate(spec)
    except Exception as error:  # the validator's own exception types vary by version
        fail(f"api/openapi.json: {error}")
    return "api/openapi.json"


def path_pattern(template):
    """A regular expression for an OpenAPI path: each `{name}` is one path segment."""
    parts = re.split(r"(\{[^}]+\})", template)
    return re.compile(
        "^" + "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts) + "$"
    )


@step("jsonschema")
def json_files(public):
    import jsonschema

    document = json.loads((public / "api" / "openapi.json").read_text())
    described = []
    for template, item in document["paths"].items():
        content = item["get"]["responses"]["200"]["content"]
        if "application/json" in content:
            schema = dict(content["application/json"]["schema"])
            # The schemas' `$ref`s point into the document's components.
            schema["components"] = document["components"]
            described.append((path_pattern(template), template, schema))
    checked = 0
    for file in sorted(public.rglob("*.json")):
        site_path = "/" + file.relative_to(public).as_posix()
        schemas = [(t, s) for pattern, t, s in described if pattern.match(site_path)]
        if not schemas:
            fail(f"{site_path}: no path of openapi.json describes it")
            continue
        template, schema = schemas[0]
        if schema.keys() <= {"type", "description", "components"}:
            fail(f"{site_path}: {template}'s schema is a bare {schema.get('type')}")
        instance = json.loads(file.read_text())
        validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        errors = list(validator.iter_errors(instance))
        for error in errors[:3]:
            fail(f"{site_path}: {'/'.join(map(str, error.absolute_path))}: {error.message[:200]}")
        checked += 1
    return f"{checked} JSON files"


DUCKDB_TYPES = {
    "string": {"VARCHAR"},
    "boolean": {"BOOLEAN"},
    "integer": {"BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT"},
    "number": {"DOUBLE", "FLOAT", "DECIMAL"},
    "date": {"DATE"},
}


@step("duckdb")
def data_files(public):
    import duckdb

    package = json.loads((public / "data" / "datapackage.json").read_text())
    connection = duckdb.connect()
    loaded = 0
    for resource in package["resources"]:
        if "path" not in resource:
            continue
        file = public / "data" / resource["path"]
        reader = "read_csv" if resource["format"] == "csv" else "read_json"
        try:
            relation = connection.sql(f"SELECT * FROM {reader}('{file}')")
            columns = dict(zip(relation.columns, map(str, relation.types)))
            rows = connection.sql(f"SELECT count(*) FROM {reader}('{file}')").fetchall()[0][0]
        except duckdb.Error as error:
            fail(f"{resource['path']}: {error}")
            continue
        fields = resource["schema"]["fields"]
        names = [f["name"] for f in fields]
        if list(columns) != names and rows > 0:
            fail(f"{resource['path']}: columns {list(columns)} != {names}")
        for field in fields:
            got = columns.get(field["name"])
            if got is None or got in DUCKDB_TYPES[field["type"]]:
                continue
            # A column with no value at all is read as text (or JSON, or NULL), whatever it would hold.
            if got in ("VARCHAR", "JSON", '"NULL"', "NULL"):
                values = connection.sql(
                    f"SELECT count(\"{field['name']}\") FROM {reader}('{file}')"
                ).fetchall()[0][0]
                if values == 0:
                    continue
            fail(f"{resource['path']}: {field['name']} is read as {got}, not {field['type']}")
        loaded += 1
        resource["rows"] = rows
    by_path = {r["path"]: r.get("rows") for r in package["resources"] if "path" in r}
    for path, rows in by_path.items():
        if path.endswith(".csv"):
            twin = path[: -len(".csv")] + ".json"
            if by_path.get(twin) != rows:
                fail(f"{path} has {rows} rows, {twin} {by_path.get(twin)}")
    return f"{loaded} data files"


@step("feedparser")
def feeds(public):
    import feedparser

    count = 0
    for file in sorted(public.rglob("*.xml")):
        if file.name == "sitemap.xml":
            continue
        feed = feedparser.parse(file.read_bytes())
        site_path = "/" + file.relative_to(public).as_posix()
        if feed.bozo:
            fail(f"{site_path}: bozo: {feed.bozo_exception}")
        seen = {}
        for entry in feed.entries:
            updated = entry.get("updated")
            if updated in seen:
                fail(f"{site_path}: '{entry.get('title')}' and '{seen[updated]}' share updated {updated}")
            seen[updated] = entry.get("title")
        count += 1
    return f"{count} feeds"


@step("icalendar")
def calendars(public):
    import icalendar

    count = 0
    for file in sorted(public.rglob("*.ics")):
        site_path = "/" + file.relative_to(public).as_posix()
        data = file.read_bytes()
        for n, line in enumerate(data.split(b"\r\n"), 1):
            if len(line) > 75:
                fail(f"{site_path}:{n}: a line of {len(line)} octets")
        try:
            calendar = icalendar.Calendar.from_ical(data)
        except Exception as error:
            fail(f"{site_path}: {error}")
            continue
        if not calendar.walk("VEVENT"):
            fail(f"{site_path}: no component (RFC 5545 asks for at least one)")
        count += 1
    return f"{count} calendars"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: clients.py PUBLIC_DIR")
    public = Path(sys.argv[1])
    for check in (openapi_spec, json_files, data_files, feeds, calendars):
        check(public)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("every client read the site")


if __name__ == "__main__":
    main()
