//! The words a family's method is written with: the rates, counts and shapes its cases have.

use ipcbench_api::Shape;

use crate::matrix::{Case, Pace};

/// A latency case's rate.
pub fn rate_of(c: &Case) -> Option<u64> {
    match c.pace {
        Pace::Rate(r) => Some(r),
        Pace::Free | Pace::Connect => None,
    }
}

/// A broadcast's subscribers.
pub fn subscribers_of(c: &Case) -> Option<u64> {
    match c.shape {
        Shape::Broadcast { subscribers, .. } => Some(subscribers as u64),
        _ => None,
    }
}

/// A work queue's producers and consumers, a service's clients and servers, as `4 × 1`, each
/// once, fewest first.
pub fn shapes(cases: &[&Case]) -> Vec<String> {
    let sides = |c: &Case| match c.shape {
        Shape::Queue { producers, consumers } => Some((producers, consumers)),
        Shape::Service { clients, servers } => Some((clients, servers)),
        _ => None,
    };
    distinct(cases, sides).into_iter().map(|(a, b)| format!("{a} × {b}")).collect()
}

/// The distinct values `of` gives over `cases`, least first.
pub fn distinct<T: Ord>(cases: &[&Case], of: impl Fn(&Case) -> Option<T>) -> Vec<T> {
    let mut values: Vec<T> = cases.iter().filter_map(|&c| of(c)).collect();
    values.sort();
    values.dedup();
    values
}

/// `a`, `a or b`, `a, b or c` (`last` is the word before the last).
pub fn listed(words: &[String], last: &str) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., end] => format!("{} {last} {end}", rest.join(", ")),
    }
}

/// Counts as a text: `4`, `1, 2 or 4`, and a longer run by its ends, `1 to 32`.
pub fn counts(values: &[u64]) -> String {
    match values {
        [first, .., end] if values.len() > 3 => format!("{first} to {end}"),
        _ => listed(&values.iter().map(u64::to_string).collect::<Vec<_>>(), "or"),
    }
}

/// Counts of a thing: `1 subscriber`, `1 to 32 subscribers`.
pub fn many(values: &[u64], noun: &str) -> String {
    let plural = if matches!(values, [1]) { "" } else { "s" };
    format!("{} {noun}{plural}", counts(values))
}

/// `1 k`, `100 k or 1 M messages a second`: the rates of these cases as the texts say them.
pub fn per_second(cases: &[&Case]) -> String {
    let rates: Vec<String> = distinct(cases, rate_of).into_iter().map(rate_words).collect();
    format!("{} messages a second", listed(&rates, "or"))
}

/// A rate as the texts say it: `1 k`, `300 k`, `10 M`, `2500`.
fn rate_words(rate: u64) -> String {
    let label = crate::matrix::rate_label(rate);
    for unit in ["k", "M"] {
        if let Some(n) = label.strip_suffix(unit) {
            return format!("{n} {unit}");
        }
    }
    label
}
