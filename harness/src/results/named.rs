//! The results file's JSON with each result's figures under its pattern's own names (`Names`):
//! a slow subscriber's case writes the others' rate as `others_msgs_per_s`, a pairs case every
//! pair's rate together as `total_msgs_per_s`, so that a name in the file means one thing. The
//! reader takes both the names and the slots' (`Figures`' aliases): files written before read
//! as they are.

use serde_json::{Map, Value};

use super::{Document, Names};
use crate::matrix::Pattern;

/// The file's bytes (compact JSON): through `to_value` where a result's pattern names a figure,
/// else straight from the document (the same bytes, without a tree of the whole document).
pub fn to_vec(doc: &Document, names: impl Fn(Pattern) -> Names) -> serde_json::Result<Vec<u8>> {
    if doc.results.iter().all(|r| names(r.pattern).is_empty()) {
        serde_json::to_vec(doc)
    } else {
        serde_json::to_vec(&to_value(doc, names)?)
    }
}

/// The document as the file holds it: every result's figures (its medians, each run's, each
/// other host state's, the figure its spread is about) and the A/B figures of its case under
/// the names `names` gives its pattern.
pub fn to_value(doc: &Document, names: impl Fn(Pattern) -> Names) -> serde_json::Result<Value> {
    let mut value = serde_json::to_value(doc)?;
    let of_case = |case: &str| doc.results.iter().find(|r| r.case == case).map(|r| names(r.pattern));
    if let Some(results) = value.get_mut("results").and_then(Value::as_array_mut) {
        for (json, r) in results.iter_mut().zip(&doc.results) {
            name_result(json, names(r.pattern));
        }
    }
    if let Some(figures) = value.pointer_mut("/ab/figures").and_then(Value::as_array_mut) {
        for f in figures {
            if let Some(names) = f.get("case").and_then(Value::as_str).and_then(of_case) {
                name_figure(f.get_mut("figure"), names);
            }
        }
    }
    Ok(value)
}

/// One result's figures under `names`.
fn name_result(result: &mut Value, names: Names) {
    if names.is_empty() {
        return;
    }
    name_keys(result.get_mut("median"), names);
    name_figure(result.pointer_mut("/spread/figure"), names);
    for mode in result.get_mut("modes").and_then(Value::as_array_mut).into_iter().flatten() {
        name_keys(mode.get_mut("median"), names);
        for run in mode.get_mut("runs").and_then(Value::as_array_mut).into_iter().flatten() {
            name_keys(run.get_mut("figures"), names);
        }
    }
    for other in result.pointer_mut("/host_state/others").and_then(Value::as_array_mut).into_iter().flatten()
    {
        name_keys(other.get_mut("median"), names);
    }
}

/// A set of figures with each slot `names` lists under its name, in its place.
fn name_keys(figures: Option<&mut Value>, names: Names) {
    if let Some(Value::Object(map)) = figures {
        *map = std::mem::take(map).into_iter().map(|(k, v)| (name_of(k, names), v)).collect::<Map<_, _>>();
    }
}

/// A `Figure` (which figure a spread or an A/B figure is about) under its name.
fn name_figure(figure: Option<&mut Value>, names: Names) {
    if let Some(Value::String(slot)) = figure {
        *slot = name_of(std::mem::take(slot), names);
    }
}

fn name_of(slot: String, names: Names) -> String {
    names.iter().find(|(s, _)| *s == slot).map_or(slot, |(_, name)| (*name).to_string())
}
