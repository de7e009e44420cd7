//! What a module of `src/` does not know, as `ARCHITECTURE.md` ("What is absent") states it, held by
//! reading the `crate::` paths of its files (comments left out) with the layer test's reader. The layer
//! test holds the order of the layers; these hold the narrower absences that order allows.

use std::path::Path;

use crate::layers::{code_of, paths_after, source_files};

/// Each `crate::` path named by the files of `module` (its `.rs` file and its folder), as `a::b::c`,
/// with the file that names it.
fn paths_named_by(module: &str) -> Vec<(String, String)> {
    let files: Vec<_> = source_files()
        .into_iter()
        .filter(|(_, path)| path.first().is_some_and(|m| m == module))
        .collect();
    assert!(
        !files.is_empty(),
        "no module src/{module}: ARCHITECTURE.md names it"
    );
    let mut named = Vec::new();
    for (file, _) in files {
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for path in paths_after(&code, "crate::") {
            named.push((shown(&file), path.join("::")));
        }
    }
    named
}

fn shown(file: &Path) -> String {
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    file.strip_prefix(project)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// The paths of `named` that start with one of `refused` and with none of `allowed`.
fn refused_paths(named: &[(String, String)], refused: &[&str], allowed: &[&str]) -> Vec<String> {
    let starts =
        |path: &str, prefix: &str| path == prefix || path.starts_with(&format!("{prefix}::"));
    named
        .iter()
        .filter(|(_, path)| refused.iter().any(|p| starts(path, p)))
        .filter(|(_, path)| !allowed.iter().any(|p| starts(path, p)))
        .map(|(file, path)| format!("{file}: crate::{path}"))
        .collect()
}

/// `serve` knows no dataset: it serves the bytes a session published and reads, of the site, only what
/// the `Site` value hands it (the detail routes, the pages' headers), a path's media type and the API's
/// error type; it names no source table, model, derived data, history, route table or page renderer.
#[test]
fn serve_knows_no_dataset() {
    let found = refused_paths(
        &paths_named_by("serve"),
        &[
            "db",
            "workspace",
            "parse",
            "model",
            "derived",
            "history",
            "render",
            "linkcheck",
            "build",
            "cmd",
            "routes",
            "locref_site",
        ],
        &[],
    );
    assert!(
        found.is_empty(),
        "serve names the dataset:\n{}",
        found.join("\n")
    );
}

/// `linkcheck` knows pages, not data: it reads rendered outputs (and the parts of pages made of parts),
/// their paths and the base URL through the `Site` value; it names no module of the site (no source
/// table, parsed row, derived data, history, route or renderer), and neither the build nor the publisher.
#[test]
fn linkcheck_knows_pages_not_data() {
    let found = refused_paths(
        &paths_named_by("linkcheck"),
        &[
            "db",
            "workspace",
            "parse",
            "model",
            "derived",
            "history",
            "build",
            "publish",
            "session",
            "kinds",
            "api_types",
            "ids",
            "routes",
            "render",
            "locref_site",
        ],
        &[],
    );
    assert!(
        found.is_empty(),
        "linkcheck names data:\n{}",
        found.join("\n")
    );
}

/// The output folder's rules and the file transaction know nothing of salsa: they name neither the
/// database nor salsa itself, so they can be read and tested as plain file-system code.
#[test]
fn the_output_folder_and_the_file_transaction_know_no_salsa() {
    let mut found = Vec::new();
    for module in ["outdir", "transaction"] {
        found.extend(refused_paths(
            &paths_named_by(module),
            &["db", "workspace"],
            &[],
        ));
        for (file, path) in source_files() {
            if path.first().is_some_and(|m| m == module)
                && code_of(&std::fs::read_to_string(&file).unwrap()).contains("salsa")
            {
                found.push(format!("{}: names salsa", shown(&file)));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The data layers (`parse`, `model`, `derived`, `history`) know no output: they name no output kind,
/// route, renderer, link check, build or publisher. (The layer test already refuses the modules above
/// them; `kinds` is a leaf it allows.)
#[test]
fn the_data_layers_know_no_output() {
    let mut found = Vec::new();
    for module in ["parse", "model", "derived", "history"] {
        found.extend(refused_paths(
            &paths_named_by(module),
            &["kinds", "routes", "render", "linkcheck", "build", "publish"],
            &[],
        ));
    }
    assert!(
        found.is_empty(),
        "the data layers name outputs:\n{}",
        found.join("\n")
    );
}

/// Only `locref verify` makes requests to other hosts: `src/cmd/verify.rs` is the one file that names
/// an HTTP client (`ureq`). (The dev server only listens.)
#[test]
fn only_verify_names_an_http_client() {
    let found: Vec<String> = source_files()
        .into_iter()
        .filter(|(file, _)| code_of(&std::fs::read_to_string(file).unwrap()).contains("ureq"))
        .map(|(file, _)| shown(&file))
        .collect();
    assert_eq!(found, ["src/cmd/verify.rs"]);
}
