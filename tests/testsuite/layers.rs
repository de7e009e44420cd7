//! The layers of `src/`, as `ARCHITECTURE.md` states them, held by reading every `crate::` path of the
//! code: a module imports only modules of lower layers (or its own), and the render layer's leaves (the
//! figures, the escape table) import nothing else of it; inside `render`, a file imports only files of
//! its rank or below (its `crate::render::`, `super::`, `self::` and child-module paths resolved to files).
//! The layer order and the ranks are read from `ARCHITECTURE.md`, so they are written once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The layers of `ARCHITECTURE.md`'s "Layers" block, lowest first: each line names the modules of one
/// layer (comma-separated) before its description.
fn layers() -> Vec<Vec<String>> {
    let mut layers: Vec<Vec<String>> = architecture_block("<!-- layers -->")
        .into_iter()
        .map(|line| line[0].split(',').map(|m| m.trim().to_string()).collect())
        .collect();
    // Written top to bottom, as a stack.
    layers.reverse();
    layers
}

/// The source folders of the crates whose modules the layers order: the site's (`src/`) and the
/// engine's, whose modules the site names under the same names (`crate::db`).
const SOURCE_ROOTS: [&str; 2] = ["crates/locref-engine/src", "src"];

/// Every `.rs` file of [`SOURCE_ROOTS`], with its module path (`render/pages/home.rs` is
/// `["render", "pages", "home"]`, `render/mod.rs` is `["render"]`).
pub(crate) fn source_files() -> Vec<(PathBuf, Vec<String>)> {
    SOURCE_ROOTS
        .iter()
        .flat_map(|root| files_of(&project().join(root)))
        .collect()
}

/// Every `.rs` file under the source folder `src`, with its module path.
fn files_of(src: &Path) -> Vec<(PathBuf, Vec<String>)> {
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
    let mut files = Vec::new();
    walk(src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(src).unwrap().with_extension("");
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
            } else if c == '*' && word.is_empty() {
                // A glob (`super::*`): the module itself.
                segments.push("*".to_string());
                i += 1;
                break;
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
        // `crate::a::super::` is not a path of its own, nor `$crate::`.
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == ':') {
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
    // Every module of the two crates has its layer (main.rs is the binary above them all).
    let libs: Vec<String> = SOURCE_ROOTS
        .iter()
        .map(|root| std::fs::read_to_string(project().join(root).join("lib.rs")).unwrap())
        .collect();
    let declared: BTreeSet<&str> = libs
        .iter()
        .flat_map(|lib| lib.lines())
        .filter_map(|line| {
            line.strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
        })
        .map(|m| m.trim_end_matches(';'))
        .collect();
    let listed: BTreeSet<&str> = layer_of.keys().copied().collect();
    assert_eq!(
        declared, listed,
        "ARCHITECTURE.md's layers must name every module of the engine's and the site's lib.rs, once"
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
                let shown = format!(
                    "{file}: crate::{} ({target} is {} {own})",
                    import.join("::"),
                    if layer == own_layer {
                        "beside"
                    } else {
                        "above"
                    }
                );
                upward.push((file.clone(), target.clone(), shown));
            }
        }
    }
    assert!(checked > 0, "no crate:: path was read");
    // The engine's imports of the site need no test: the engine is a crate of its own, which the site
    // depends on, so Cargo refuses an engine file that names the site.
    let upward: Vec<String> = upward.into_iter().map(|(.., shown)| shown).collect();
    assert!(
        upward.is_empty(),
        "imports that run up (or across) the layers of ARCHITECTURE.md:\n{}",
        upward.join("\n")
    );
}

/// A fenced block of `ARCHITECTURE.md` after `marker`: its lines that are not blank or indented (an
/// indented line goes on with the description of the line above), each cut at its runs of two or more
/// spaces into its columns.
fn architecture_block(marker: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(project().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("a {marker} block in ARCHITECTURE.md"));
    let block = &text[start..];
    let block = &block[block.find("```").expect("its fence") + 3..];
    let block = &block[block.find('\n').unwrap() + 1..];
    let block = &block[..block.find("```").expect("its closing fence")];
    block
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with(' '))
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|column| !column.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// The ranks of the files of `src/render/`, from ARCHITECTURE.md's `<!-- render-ranks -->` block
/// (written top to bottom, like the layers): each line is a rank's name, then its files (paths under
/// `src/render/`, comma-separated; a folder, `pages/`, is each file under it that no line names on its
/// own or by a deeper folder), then what the rank holds. Each file of `src/render/` with its rank,
/// lowest 0, and the rank's name.
fn render_ranks() -> BTreeMap<PathBuf, (usize, String)> {
    let mut lines = architecture_block("<!-- render-ranks -->");
    lines.reverse();
    let render = project().join("src/render");
    let files: Vec<PathBuf> = source_files()
        .into_iter()
        .filter_map(|(path, _)| Some(path.strip_prefix(&render).ok()?.to_path_buf()))
        .collect();
    let mut ranks = BTreeMap::new();
    let mut folders = Vec::new();
    for (rank, line) in lines.iter().enumerate() {
        let name = line[0].clone();
        let listed = line.get(1).expect("a rank names its files");
        for entry in listed.split(',').map(str::trim) {
            if let Some(folder) = entry.strip_suffix('/') {
                folders.push((PathBuf::from(folder), rank, name.clone()));
            } else {
                assert!(
                    files.iter().any(|f| f == Path::new(entry)),
                    "ARCHITECTURE.md's render ranks name src/render/{entry}, which is not a file"
                );
                let before = ranks.insert(PathBuf::from(entry), (rank, name.clone()));
                assert!(before.is_none(), "src/render/{entry} has two ranks");
            }
        }
    }
    for file in &files {
        if ranks.contains_key(file) {
            continue;
        }
        // The deepest folder that holds the file.
        let folder = folders
            .iter()
            .filter(|(folder, ..)| file.starts_with(folder))
            .max_by_key(|(folder, ..)| folder.components().count());
        let (_, rank, name) = folder.unwrap_or_else(|| {
            panic!(
                "src/render/{} has no rank in ARCHITECTURE.md's render-ranks block",
                file.display()
            )
        });
        ranks.insert(file.clone(), (*rank, name.clone()));
    }
    ranks
}

/// The imports of `src/render/` that may run up the ranks, from ARCHITECTURE.md's
/// `<!-- render-upward -->` block: each line a file (under `src/render/`), the path it names, and why.
fn render_upward() -> BTreeSet<(String, String)> {
    architecture_block("<!-- render-upward -->")
        .into_iter()
        .map(|line| (line[0].clone(), line.get(1).expect("the path").clone()))
        .collect()
}

/// Each file of `src/render/` (as its path under it) with the files of `src/render/` it imports: every
/// `crate::render::…`, `super::…` and `self::…` path, and every path through a module the file declares
/// (`mod parts;` then `parts::render_parted`), resolved to the file of the deepest module it names. A
/// module's declaration is not an import. In a file's tests (from its first `#[cfg(test)]`, an inline
/// `mod tests`), `super::` is the file itself. Each import with the path as written.
fn render_imports() -> Vec<(PathBuf, Vec<(PathBuf, String)>)> {
    let render = project().join("src/render");
    let files: Vec<(PathBuf, Vec<String>)> = source_files()
        .into_iter()
        .filter(|(_, module)| module.first().is_some_and(|m| m == "render"))
        .collect();
    let file_of: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|(path, module)| {
            (
                module.clone(),
                path.strip_prefix(&render).unwrap().to_path_buf(),
            )
        })
        .collect();
    // The module a path names from `base`, its segments after the prefix that brought it there.
    let resolve = |mut module: Vec<String>, segments: &[String]| -> Vec<String> {
        for segment in segments {
            match segment.as_str() {
                "super" => {
                    module.pop();
                }
                "self" => {}
                _ => {
                    let mut deeper = module.clone();
                    deeper.push(segment.clone());
                    if !file_of.contains_key(&deeper) {
                        break;
                    }
                    module = deeper;
                }
            }
        }
        module
    };
    let mut out = Vec::new();
    for (path, module) in &files {
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        let (own, tests) = match code.find("#[cfg(test)]") {
            Some(at) => code.split_at(at),
            None => (code.as_str(), ""),
        };
        let declared: Vec<String> = own
            .lines()
            .filter_map(|line| {
                let line = line.trim();
                let line = ["pub(crate) ", "pub(super) ", "pub "]
                    .iter()
                    .find_map(|visibility| line.strip_prefix(visibility))
                    .unwrap_or(line);
                Some(line.strip_prefix("mod ")?.strip_suffix(';')?.to_string())
            })
            .collect();
        let mut imports = Vec::new();
        for (part, base) in [
            (own, module.clone()),
            (tests, {
                let mut inner = module.clone();
                inner.push("tests".to_string());
                inner
            }),
        ] {
            let mut named = Vec::new();
            for segments in paths_after(part, "crate::render::") {
                named.push((
                    resolve(vec!["render".to_string()], &segments),
                    format!("crate::render::{}", segments.join("::")),
                ));
            }
            for prefix in ["super", "self"] {
                for segments in paths_after(part, &format!("{prefix}::")) {
                    let mut all = vec![prefix.to_string()];
                    all.extend(segments.iter().cloned());
                    named.push((
                        resolve(base.clone(), &all),
                        format!("{prefix}::{}", segments.join("::")),
                    ));
                }
            }
            for child in &declared {
                for segments in paths_after(part, &format!("{child}::")) {
                    let mut all = vec![child.clone()];
                    all.extend(segments.iter().cloned());
                    named.push((
                        resolve(module.clone(), &all),
                        format!("{child}::{}", segments.join("::")),
                    ));
                }
            }
            for (target, written) in named {
                // A path that names no file of render (`self::` in the tests: their inline module).
                let Some(target) = file_of.get(&target) else {
                    continue;
                };
                if target != path.strip_prefix(&render).unwrap() {
                    imports.push((target.clone(), written));
                }
            }
        }
        out.push((path.strip_prefix(&render).unwrap().to_path_buf(), imports));
    }
    out
}

/// Inside `render`, every file imports only files of its own rank or below (ARCHITECTURE.md, "The ranks
/// of render"), the upward imports that block names aside: the dispatch imports the page kinds and the
/// products, never the other way round.
#[test]
fn every_import_inside_render_runs_down_its_ranks() {
    let ranks = render_ranks();
    let upward_allowed = render_upward();
    let mut used = BTreeSet::new();
    let mut upward = Vec::new();
    let mut checked = 0;
    for (file, imports) in render_imports() {
        let (own, own_name) = &ranks[&file];
        for (target, written) in imports {
            checked += 1;
            let (rank, name) = &ranks[&target];
            if rank <= own {
                continue;
            }
            let key = (file.display().to_string(), written.clone());
            if upward_allowed.contains(&key) {
                used.insert(key);
                continue;
            }
            upward.push(format!(
                "src/render/{}: {written} (src/render/{} is {name}, above {own_name})",
                file.display(),
                target.display()
            ));
        }
    }
    assert!(checked > 0, "no import inside render was read");
    assert!(
        upward.is_empty(),
        "imports that run up the ranks of render (ARCHITECTURE.md, render-ranks):\n{}",
        upward.join("\n")
    );
    let unused: Vec<String> = upward_allowed
        .difference(&used)
        .map(|(file, path)| format!("src/render/{file}: {path}"))
        .collect();
    assert!(
        unused.is_empty(),
        "ARCHITECTURE.md allows upward imports the code no longer makes (remove them from render-upward):\n{}",
        unused.join("\n")
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
