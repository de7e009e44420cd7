//! The JSON every output of the API and the data files is written as: pretty JSON with a final newline,
//! a list spliced from cached fragments of its items, and the API's envelope (`meta` and `data`) around
//! them.

use crate::api_types::{Envelope, Licence, Meta};
use crate::output::{GENERATED_AT_MARK, Piece, Rendered};
use crate::parse::rules::site_rules;

/// `meta.version` and `meta.licence`, projected from `rules/site.toml`.
#[salsa::tracked(returns(ref))]
pub fn meta_base(db: &dyn salsa::Database) -> (String, Licence) {
    let site = &site_rules(db).value;
    let l = &site.api_licence;
    let licence = Licence {
        name: l.name.clone(),
        url: l.url.clone(),
        commercial_licence: l.commercial_licence.clone(),
        commercial_contact: l.commercial_contact.clone(),
        attribution: l.attribution.clone(),
    };
    (site.version.clone(), licence)
}

pub(crate) fn meta(db: &dyn salsa::Database, count: usize) -> Meta {
    let (version, licence) = meta_base(db).clone();
    Meta {
        version,
        generated_at: GENERATED_AT_MARK.to_string(),
        licence,
        count: count as u64,
        notice: None,
        docs: None,
        openapi: None,
        toggle_coverage: None,
    }
}

/// A list envelope spliced from cached fragments of its items, each with its count: `meta.count` counts
/// them all, and only a fragment whose items changed was serialized again.
pub(crate) fn spliced_list(db: &dyn salsa::Database, parts: &[&(usize, Piece)]) -> Rendered {
    let count = parts.iter().map(|(n, _)| n).sum();
    splice_items(&list_head(db, count), parts.iter().map(|(_, json)| json))
}

/// A list envelope of `count` items whose `data` is an empty array, for the items to be spliced into.
pub(crate) fn list_head(db: &dyn salsa::Database, count: usize) -> Vec<u8> {
    json_bytes(&Envelope {
        meta: meta(db, count),
        data: Vec::<()>::new(),
    })
}

/// Pretty JSON with a final newline: what every JSON output looks like.
pub(crate) fn json_bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("resources serialize");
    bytes.push(b'\n');
    bytes
}

/// Items of a JSON array, pretty-printed and indented by `indent` spaces, joined by `,\n`: a fragment of
/// a big list, cached per country, so that one edit re-serializes one country's items and not 1 MB.
/// [`splice_items`] assembles the fragments into the same bytes as [`json_bytes`] of the whole value.
pub(crate) fn json_items<T: serde::Serialize>(items: &[T], indent: usize) -> Piece {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        let text = serde_json::to_string_pretty(item).expect("resources serialize");
        // Strings in JSON never hold a raw line break, so every line start is a place to indent.
        for (j, line) in text.split('\n').enumerate() {
            if j > 0 {
                out.push('\n');
            }
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    Piece::new(out)
}

/// `head` ([`json_bytes`] of a value whose last array is empty) with that array filled by `fragments`
/// (from [`json_items`], indented one level deeper than the array's line), as pieces: the fragments
/// are shared, not copied, so a list holds no second copy of what its parts' queries keep.
pub(crate) fn splice_items<'a>(
    head: &[u8],
    fragments: impl IntoIterator<Item = &'a Piece>,
) -> Rendered {
    let mut pieces = Vec::new();
    splice_items_into(head, fragments.into_iter().cloned(), &mut |piece| {
        pieces.push(piece)
    });
    Rendered::from_pieces(pieces)
}

/// The pieces of [`splice_items`], handed to `publish` as each fragment comes: what a one-off build writes
/// of a site-wide list without holding it ([`crate::render::stream_list`]). The same pieces, so the same
/// content hash.
pub(crate) fn splice_items_into(
    head: &[u8],
    fragments: impl IntoIterator<Item = Piece>,
    emit: &mut dyn FnMut(Piece),
) {
    let at = memchr::memmem::rfind(head, b"[]").expect("the head ends with an empty array");
    let line_start = head[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let indent = head[line_start..]
        .iter()
        .take_while(|&&b| b == b' ')
        .count();
    let mut started = false;
    for fragment in fragments.into_iter().filter(|f| !f.is_empty()) {
        let separator: &'static [u8] = match started {
            false => {
                emit(Piece::new(head[..=at].to_vec()));
                b"\n"
            }
            true => b",\n",
        };
        started = true;
        emit(Piece::new(separator));
        emit(fragment);
    }
    if !started {
        // An empty list is the head as it is: one piece.
        return emit(Piece::new(head.to_vec()));
    }
    let mut tail = vec![b'\n'];
    tail.extend(std::iter::repeat_n(b' ', indent));
    tail.extend_from_slice(&head[at + 1..]);
    emit(Piece::new(tail));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spliced_fragments_are_the_bytes_of_the_whole_value() {
        let items = [
            json!({"id": "a", "nested": {"list": [1, 2], "empty": [], "none": {}}, "text": "two\nlines"}),
            json!({"id": "b", "urls": ["https://x.example/"]}),
            json!({"id": "c"}),
        ];
        let whole = json!({"meta": {"count": 3}, "data": items});
        let head = json!({"meta": {"count": 3}, "data": []});
        // Fragments of any split (an empty one included) give the bytes of the whole value.
        let fragments = [
            json_items(&items[..1], 4),
            Piece::new(""),
            json_items(&items[1..], 4),
        ];
        let spliced = splice_items(&json_bytes(&head), &fragments);
        assert_eq!(
            String::from_utf8(spliced.bytes().into_owned()).unwrap(),
            String::from_utf8(json_bytes(&whole)).unwrap()
        );
        // The fragments are shared, not copied.
        assert_eq!(
            spliced.pieces()[2].bytes().as_ptr(),
            fragments[0].bytes().as_ptr()
        );
        // A top-level array, and an empty list.
        let top = splice_items(&json_bytes(&json!([])), [&json_items(&items, 2)]);
        assert_eq!(top.bytes(), json_bytes(&json!(items)));
        assert_eq!(
            splice_items(&json_bytes(&head), [&Piece::new("")]).bytes(),
            json_bytes(&head)
        );
    }
}
