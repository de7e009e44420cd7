//! The layers of `src/`, as `ARCHITECTURE.md` states them, held by reading every `crate::` path of the
//! code: a module imports only modules of lower layers (or its own), and the render layer's leaves (the
//! figures, the escape table) import nothing else of it. The layer order is read from
//! `ARCHITECTURE.md`, so it is written once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The layers of `ARCHITECTURE.md`'s "Layers" block, lowest first: each line names the modules of one
/// layer (comma-separated) before its description.
fn layers() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(project().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text
        .find("<!-- layers -->")
        .expect("a <!-- layers --> block");
    let block = &text[start..];
    let block = &block[block.find("```").expect("its fence") + 3..];
    let block = &block[block.find('\n').unwrap() + 1..];
    let block = &block[..block.find("```").expect("its closing fence")];
    let mut layers: Vec<Vec<String>> = block
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with(' '))
        .map(|line| {
            let names = line.split("  ").next().unwrap();
            names.split(',').map(|m| m.trim().to_string()).collect()
        })
        .collect();
    // Written top to bottom, as a stack.
    layers.reverse();
    layers
}

/// Every `.rs` file under `src/`, with its module path (`render/figures/xml.rs` is
/// `["render", "figures", "xml"]`, `render/mod.rs` is `["render"]`).
pub(crate) fn source_files() -> Vec<(PathBuf, Vec<String>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = project().join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&src).unwrap().with_extension("");
            let mut module: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            (path, module)
        })
        .collect()
}

/// The code of a file without its comments (doc links name other layers without importing them).
pub(crate) fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // A `//` inside a string ("https://…") is not a comment: good enough to keep the line
            // whole when a quote comes before it.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths that follow `prefix` (`crate::`) in `code`, a `use` group expanded into its paths:
/// `crate::{a::b, c}` is `a::b` and `c`. Each path as its segments.
pub(crate) fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    fn path(bytes: &[u8], mut i: usize, base: &[String], out: &mut Vec<Vec<String>>) -> usize {
        let mut segments = base.to_vec();
        let mut word = String::new();
        while i < bytes.len() {
            let c = bytes[i] as char;
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                i += 1;
            } else if c == ':' && bytes.get(i + 1) == Some(&b':') {
                if !word.is_empty() {
                    segments.push(std::mem::take(&mut word));
                }
                i += 2;
            } else if c == '{' {
                if !word.is_empty() {
                    segments.push(std::mem::take(&mut word));
                }
                i += 1;
                loop {
                    while i < bytes.len() && (bytes[i] as char).is_whitespace() {
                        i += 1;
                    }
                    if i >= bytes.len() {
                        return i;
                    }
                    match bytes[i] {
                        b'}' => return i + 1,
                        b',' => i += 1,
                        _ => i = path(bytes, i, &segments, out),
                    }
                }
            } else {
                break;
            }
        }
        if !word.is_empty() {
            segments.push(word);
        }
        if segments.len() > base.len() {
            out.push(segments);
        }
        i
    }
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix) {
        let start = from + at;
        let before = code[..start].chars().next_back();
        from = start + prefix.len();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        path(bytes, from, &[], &mut out);
    }
    out
}

/// Each file's imports of the crate: the module path each `crate::` path names.
fn crate_imports() -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    source_files()
        .into_iter()
        .map(|(path, module)| {
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            let shown = path.strip_prefix(project()).unwrap().display().to_string();
            (shown, module, paths_after(&code, "crate::"))
        })
        .collect()
}

#[test]
fn every_import_runs_down_the_layers() {
    let layers = layers();
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, modules)| modules.iter().map(move |m| (m.as_str(), i)))
        .collect();
    // Every module of the crate has its layer (main.rs is the binary above them all).
    let lib = std::fs::read_to_string(project().join("src/lib.rs")).unwrap();
    let declared: BTreeSet<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    let listed: BTreeSet<&str> = layer_of.keys().copied().collect();
    assert_eq!(
        declared, listed,
        "ARCHITECTURE.md's layers must name every module of src/lib.rs, once"
    );
    let mut upward = Vec::new();
    let mut checked = 0;
    for (file, module, imports) in crate_imports() {
        if module == ["main"] || module == ["lib"] {
            continue;
        }
        let own = &module[0];
        let own_layer = layer_of[own.as_str()];
        for import in imports {
            checked += 1;
            let target = &import[0];
            let Some(&layer) = layer_of.get(target.as_str()) else {
                continue;
            };
            if target != own && layer >= own_layer {
                upward.push(format!(
                    "{file}: crate::{} ({target} is {} {own})",
                    import.join("::"),
                    if layer == own_layer {
                        "beside"
                    } else {
                        "above"
                    }
                ));
            }
        }
    }
    assert!(checked > 0, "no crate:: path was read");
    assert!(
        upward.is_empty(),
        "imports that run up (or across) the layers of ARCHITECTURE.md:\n{}",
        upward.join("\n")
    );
}

/// The render layer's leaves: the SVG figures and the one HTML escape table, which the page renderers,
/// the feeds and the figures share, import nothing else of `render`.
#[test]
fn the_figures_and_the_escape_table_are_leaves_of_render() {
    const LEAVES: [&str; 2] = ["figures", "escape"];
    let mut wrong = Vec::new();
    for (file, module, imports) in crate_imports() {
        if module.first().map(String::as_str) != Some("render")
            || !module.get(1).is_some_and(|m| LEAVES.contains(&m.as_str()))
        {
            continue;
        }
        for import in imports {
            let inside_render_leaves = import[0] == "render"
                && import.get(1).is_some_and(|m| LEAVES.contains(&m.as_str()));
            if import[0] == "render" && !inside_render_leaves {
                wrong.push(format!("{file}: crate::{}", import.join("::")));
            }
        }
        // A `super::` path of the file's own code (not of its tests' module) that climbs out of the
        // leaf: from `render/figures/xml.rs`, `super::super::` is `render` itself.
        let code = code_of(&std::fs::read_to_string(project().join(&file)).unwrap());
        let code = code.split("#[cfg(test)]").next().unwrap();
        for (at, _) in code.match_indices("super::") {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c == ':' || c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let ups = 1 + code[at + "super::".len()..]
                .split("::")
                .take_while(|s| *s == "super")
                .count();
            if module.len().saturating_sub(ups) < 2 {
                let line = code[at..].lines().next().unwrap_or("");
                wrong.push(format!("{file}: {line}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the render layer's leaves import the rest of it:\n{}",
        wrong.join("\n")
    );
}

/// The parser of `crate::` paths, on the forms the code uses.
#[test]
fn crate_paths_are_read_with_their_groups() {
    let code =
        "use crate::a::{b, c::{d, e}};\nlet x = crate::f::g(1); pub(crate) fn h() {} $crate::i";
    let paths: Vec<String> = paths_after(code, "crate::")
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(paths, ["a::b", "a::c::d", "a::c::e", "f::g"]);
}

/// The recipes of CONTRIBUTING.md ("Adding a page", "Adding an API output") show the shipped code: each
/// of their code blocks headed by a file (`// src/kinds.rs`, `# rules/routes.toml`) is in that file as
/// written (line by line, indentation aside), so a recipe followed as written compiles and routes.
#[test]
fn the_contributing_recipes_are_the_shipped_code() {
    let guide = std::fs::read_to_string(project().join("CONTRIBUTING.md")).unwrap();
    let start = guide.find("### Adding a page").expect("the page recipe");
    let end = guide[start..]
        .find("\n## ")
        .map_or(guide.len(), |at| start + at);
    let recipes = &guide[start..end];
    let mut blocks = 0;
    let mut missing = Vec::new();
    let mut rest = recipes;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').unwrap() + 1;
        let close = after[body_start..].find("```").expect("a closed block");
        let body = &after[body_start..body_start + close];
        rest = &after[body_start + close + 3..];
        let mut lines = body.lines().map(str::trim).filter(|l| !l.is_empty());
        let head = lines.next().unwrap_or("");
        let Some(file) = head.strip_prefix("// ").or_else(|| head.strip_prefix("# ")) else {
            continue;
        };
        blocks += 1;
        let wanted: Vec<&str> = lines.collect();
        let text = std::fs::read_to_string(project().join(file))
            .unwrap_or_else(|e| panic!("CONTRIBUTING.md names {file}: {e}"));
        let have: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if !have.windows(wanted.len()).any(|w| w == wanted.as_slice()) {
            missing.push(format!("{file}:\n{}", wanted.join("\n")));
        }
    }
    assert!(blocks >= 2, "the recipes show no code headed by its file");
    assert!(
        missing.is_empty(),
        "CONTRIBUTING.md recipe blocks that are not the shipped code:\n\n{}",
        missing.join("\n\n")
    );
}

/// Page contexts are typed values: the code that makes them (`src/render/pages/`) derives `Serialize` on
/// a type saying what a template may read, and never builds a context with `json!` (its tests aside).
#[test]
fn page_contexts_are_typed_not_built_with_json_macros() {
    let dir = project().join("src/render/pages");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if line.contains("json!") && !line.trim_start().starts_with("//") {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "page contexts built with json!:\n{}",
        found.join("\n")
    );
}
