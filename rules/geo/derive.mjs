// Derives rules/geo/countries.json (the country shapes of the map figure) from Natural Earth's admin-0
// countries as world-atlas ships them. Run once by hand when the country list or the look changes; the
// build reads only the committed JSON. Usage (see README.md beside this file):
//
//   node rules/geo/derive.mjs /path/to/node_modules
//
// The node_modules folder must hold world-atlas, topojson-client, topojson-simplify and d3-geo. It is
// passed in rather than installed here because every file under rules/ is a build input.

import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
if (!modules) {
  console.error("usage: node rules/geo/derive.mjs /path/to/node_modules");
  process.exit(2);
}
const require = createRequire(join(modules, "resolver.js"));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { feature, merge } = require("topojson-client");
const { presimplify, simplify, sphericalTriangleArea } = require("topojson-simplify");
const d3 = await load("d3-geo");
const atlasVersion = require("world-atlas/package.json").version;
const topology = require("world-atlas/countries-50m.json");

// The site's countries: locref code -> [ISO 3166-1 numeric id, Natural Earth name]. The name is checked
// too, since one id can carry several features (Australia's 036 also names Ashmore and Cartier Is.);
// Kosovo has no numeric id and is found by name alone.
const COUNTRIES = {
  ad: ["020", "Andorra"], ae: ["784", "United Arab Emirates"], al: ["008", "Albania"],
  ar: ["032", "Argentina"], at: ["040", "Austria"], au: ["036", "Australia"],
  ba: ["070", "Bosnia and Herz."], be: ["056", "Belgium"], bg: ["100", "Bulgaria"],
  br: ["076", "Brazil"], by: ["112", "Belarus"], ca: ["124", "Canada"], ch: ["756", "Switzerland"],
  cn: ["156", "China"], cy: ["196", "Cyprus"], cz: ["203", "Czechia"], de: ["276", "Germany"],
  dk: ["208", "Denmark"], ee: ["233", "Estonia"], es: ["724", "Spain"], fi: ["246", "Finland"],
  fr: ["250", "France"], gb: ["826", "United Kingdom"], ge: ["268", "Georgia"], gr: ["300", "Greece"],
  hr: ["191", "Croatia"], hu: ["348", "Hungary"], ie: ["372", "Ireland"], il: ["376", "Israel"],
  in: ["356", "India"], is: ["352", "Iceland"], it: ["380", "Italy"], jp: ["392", "Japan"],
  li: ["438", "Liechtenstein"], lt: ["440", "Lithuania"], lu: ["442", "Luxembourg"],
  lv: ["428", "Latvia"], mc: ["492", "Monaco"], md: ["498", "Moldova"], me: ["499", "Montenegro"],
  mk: ["807", "Macedonia"], mt: ["470", "Malta"], mx: ["484", "Mexico"], my: ["458", "Malaysia"],
  nl: ["528", "Netherlands"], no: ["578", "Norway"], nz: ["554", "New Zealand"], pl: ["616", "Poland"],
  pt: ["620", "Portugal"], ro: ["642", "Romania"], rs: ["688", "Serbia"], sa: ["682", "Saudi Arabia"],
  se: ["752", "Sweden"], sg: ["702", "Singapore"], si: ["705", "Slovenia"], sk: ["703", "Slovakia"],
  tr: ["792", "Turkey"], ua: ["804", "Ukraine"], us: ["840", "United States of America"],
  xk: [undefined, "Kosovo"], za: ["710", "South Africa"],
};

// Countries linked in the Europe panel (drawn there large enough to see and to tap); the rest are linked
// in the world panel. The world panel still shows these, unlinked, so it reads as one whole map.
const EUROPE = new Set(
  ("ad al at ba be bg by ch cy cz de dk ee es fi fr gb ge gr hr hu ie is it li lt lu lv mc md me mk " +
    "mt nl no pl pt ro rs se si sk tr ua xk").split(" "),
);

const WIDTH = 1000;
// Visvalingam weights (steradians) below which a point is dropped; smaller in the Europe panel, which
// is drawn about five times larger.
const MIN_WEIGHT = { world: 2e-7, europe: 1.2e-8 };
// Rings smaller than this (square units of the 1000-wide panel) are dropped, except a country's largest.
const MIN_RING_AREA = { world: 2.5, europe: 2 };
// A country whose whole extent in its linked panel is smaller than this (units) gets a marker circle.
const MARKER_BELOW = 12;

const geometries = topology.objects.countries.geometries;
const byCode = {};
for (const [code, [id, name]] of Object.entries(COUNTRIES)) {
  const found = geometries.filter((g) => g.properties.name === name && (id === undefined || g.id === id));
  if (found.length !== 1) throw new Error(`${code}: ${found.length} features named ${name} (id ${id})`);
  byCode[code] = found[0];
}
const selected = new Set(Object.values(byCode));
const ANTARCTICA = "010";
const background = geometries.filter((g) => !selected.has(g) && g.id !== ANTARCTICA);

const weighted = presimplify(topology, sphericalTriangleArea);

// The world panel: Equal Earth (equal-area, so large countries are not inflated), cut at 84°N and 57°S
// (Antarctica is not a country of the site).
function worldProjection() {
  const projection = d3.geoEqualEarth().fitWidth(WIDTH, { type: "Sphere" });
  const top = projection([0, 84])[1];
  const bottom = projection([0, -57])[1];
  const [tx, ty] = projection.translate();
  projection.translate([tx, ty - top]);
  const height = Math.ceil(bottom - top);
  return { projection: projection.clipExtent([[0, 0], [WIDTH, height]]), height };
}

// The Europe panel: Lambert azimuthal equal-area centred on 10°E 52°N (the EU's own map projection,
// EPSG:3035), framed on the mainland and near islands of its countries (not the Azores, the Canaries,
// Svalbard or overseas departments).
function europeProjection() {
  const projection = d3.geoAzimuthalEqualArea().rotate([-10, -52]);
  const parts = [];
  for (const code of EUROPE) {
    const geometry = feature(topology, byCode[code]).geometry;
    const polygons = geometry.type === "Polygon" ? [geometry.coordinates] : geometry.coordinates;
    for (const coordinates of polygons) {
      const polygon = { type: "Polygon", coordinates };
      const [lon, lat] = d3.geoCentroid(polygon);
      const km2 = d3.geoArea(polygon) * 6371 * 6371;
      if (lon > -25 && lon < 50 && lat > 34 && lat < 72 && km2 > 1000) parts.push(polygon);
    }
  }
  const frame = { type: "GeometryCollection", geometries: parts };
  // Room for a marker circle at the edge (Malta is the southernmost point of the frame).
  const margin = 20;
  projection.fitWidth(WIDTH - 2 * margin, frame);
  const [[x0, y0], [, y1]] = d3.geoPath(projection).bounds(frame);
  const [tx, ty] = projection.translate();
  projection.translate([tx + margin - x0, ty + margin - y0]);
  const height = Math.ceil(y1 - y0 + 2 * margin);
  return { projection: projection.clipExtent([[0, 0], [WIDTH, height]]), height };
}

// Collects the rings d3 draws (already clipped to the panel) as point lists.
function projectedRings(projection, object) {
  const rings = [];
  let ring = null;
  const context = {
    moveTo(x, y) { ring = [[x, y]]; rings.push(ring); },
    lineTo(x, y) { ring.push([x, y]); },
    closePath() {},
    arc() {},
  };
  d3.geoPath(projection, context)(object);
  return rings;
}

const signedArea = (ring) => {
  let sum = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    sum += (ring[j][0] - ring[i][0]) * (ring[j][1] + ring[i][1]);
  }
  return sum / 2;
};

// Rounds to whole units, drops repeated points, and drops the rings too small to see (a country keeps
// its largest ring whatever its size, so even a microstate has a shape under its marker).
function roundedRings(rings, minArea) {
  const rounded = rings
    .map((ring) => {
      const out = [];
      for (const [x, y] of ring) {
        const p = [Math.round(x), Math.round(y)];
        const last = out[out.length - 1];
        if (!last || last[0] !== p[0] || last[1] !== p[1]) out.push(p);
      }
      while (out.length > 1 && out[0][0] === out[out.length - 1][0] && out[0][1] === out[out.length - 1][1]) {
        out.pop();
      }
      return withoutStraightRuns(out);
    })
    .filter((ring) => ring.length >= 3);
  const largest = Math.max(0, ...rounded.map((r) => Math.abs(signedArea(r))));
  return rounded.filter((r) => {
    const area = Math.abs(signedArea(r));
    return area > 0 && (area >= minArea || area === largest);
  });
}

// Drops the middle points of straight runs ("0-1 0-1 0-1" is "0-3"): rounding to whole units leaves many,
// and dropping them loses nothing.
function withoutStraightRuns(ring) {
  if (ring.length < 3) return ring;
  const out = [ring[0]];
  for (let i = 1; i < ring.length; i++) {
    const a = out[out.length - 1];
    const b = ring[i];
    const c = ring[(i + 1) % ring.length];
    const cross = (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]);
    const dot = (b[0] - a[0]) * (c[0] - b[0]) + (b[1] - a[1]) * (c[1] - b[1]);
    if (cross !== 0 || dot < 0 || out.length === 1 && i === ring.length - 1) out.push(b);
  }
  return out;
}

// SVG path data with relative line segments: "M12 40l3-2 5 1z".
function pathData(rings) {
  let d = "";
  for (const ring of rings) {
    d += `M${ring[0][0]} ${ring[0][1]}l`;
    let parts = [];
    for (let i = 1; i < ring.length; i++) {
      parts.push(`${ring[i][0] - ring[i - 1][0]} ${ring[i][1] - ring[i - 1][1]}`);
    }
    d += parts.join(" ").replace(/ -/g, "-") + "z";
  }
  return d;
}

const bounds = (rings) => {
  const xs = rings.flat().map((p) => p[0]);
  const ys = rings.flat().map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
};

// A point inside the country for its marker or a label: the centroid of its largest ring, or, when
// that falls outside (a crescent like Croatia), the middle of the widest run across the ring at the
// centroid's height.
function labelPoint(rings) {
  const ring = rings.reduce((a, b) => (Math.abs(signedArea(b)) > Math.abs(signedArea(a)) ? b : a));
  const area = signedArea(ring);
  let cx = 0;
  let cy = 0;
  if (Math.abs(area) < 1e-9) {
    for (const [x, y] of ring) { cx += x / ring.length; cy += y / ring.length; }
    return [cx, cy];
  }
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const f = ring[j][0] * ring[i][1] - ring[i][0] * ring[j][1];
    cx += (ring[j][0] + ring[i][0]) * f;
    cy += (ring[j][1] + ring[i][1]) * f;
  }
  cx /= 6 * area;
  cy /= 6 * area;
  const crossings = [];
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [x1, y1] = ring[j];
    const [x2, y2] = ring[i];
    if ((y1 > cy) !== (y2 > cy)) crossings.push(x1 + ((cy - y1) / (y2 - y1)) * (x2 - x1));
  }
  crossings.sort((a, b) => a - b);
  const inside = crossings.filter((x) => x < cx).length % 2 === 1;
  if (inside || crossings.length < 2) return [cx, cy];
  let best = [crossings[0], crossings[1]];
  for (let k = 0; k + 1 < crossings.length; k += 2) {
    if (crossings[k + 1] - crossings[k] > best[1] - best[0]) best = [crossings[k], crossings[k + 1]];
  }
  return [(best[0] + best[1]) / 2, cy];
}

const round1 = (v) => Math.round(v * 10) / 10;

const panels = { world: worldProjection(), europe: europeProjection() };
const TITLES = { world: "World", europe: "Europe (enlarged)" };
const views = {};
const countries = Object.fromEntries(Object.keys(COUNTRIES).sort().map((code) => [code, { paths: {} }]));
for (const [view, { projection, height }] of Object.entries(panels)) {
  const topo = simplify(weighted, MIN_WEIGHT[view]);
  const land = pathData(roundedRings(projectedRings(projection, merge(topo, background)), MIN_RING_AREA[view]));
  views[view] = { title: TITLES[view], width: WIDTH, height, land };
  for (const [code, entry] of Object.entries(countries)) {
    const linked = EUROPE.has(code) ? "europe" : "world";
    const rings = roundedRings(projectedRings(projection, feature(topo, byCode[code])), MIN_RING_AREA[view]);
    if (rings.length > 0) entry.paths[view] = pathData(rings);
    if (view !== linked) continue;
    // The marker test and the point use the unrounded rings: a microstate may round to nothing.
    const exact = projectedRings(projection, feature(topology, byCode[code])).filter((r) => r.length >= 3);
    if (exact.length === 0) throw new Error(`${code} is outside its ${view} panel`);
    const [x0, y0, x1, y1] = bounds(exact);
    entry.view = view;
    entry.point = labelPoint(exact).map(round1);
    entry.marker = Math.max(x1 - x0, y1 - y0) < MARKER_BELOW;
  }
}

// Where the Europe panel sits on the world map: its frame, traced in world coordinates (`outline_in`).
{
  const europe = panels.europe.projection;
  const world = panels.world.projection;
  const { width, height } = views.europe;
  const edge = [];
  const steps = 24;
  const corners = [[0, 0], [width, 0], [width, height], [0, height]];
  for (let c = 0; c < 4; c++) {
    const [ax, ay] = corners[c];
    const [bx, by] = corners[(c + 1) % 4];
    for (let s = 0; s < steps; s++) {
      const t = s / steps;
      const lonLat = europe.invert([ax + (bx - ax) * t, ay + (by - ay) * t]);
      edge.push(world(lonLat).map(Math.round));
    }
  }
  views.europe.outline_in = { world: pathData(roundedRings([edge], 0)) };
}

const out = {
  source: `Natural Earth 1:50m admin-0 countries (version 4.1.0) via world-atlas ${atlasVersion}; derived by rules/geo/derive.mjs`,
  views,
  countries,
};
const target = new URL("countries.json", import.meta.url);
writeFileSync(target, JSON.stringify(out, null, 0).replace(/,"(\w\w)":\{"paths"/g, ',\n"$1":{"paths"') + "\n");
console.error(`wrote ${target.pathname}`);
