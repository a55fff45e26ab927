//! The questions the comparison's FAQ answers, answered from the results: which library is
//! fastest, the subject (`report --subject`, or without it in the view, the library on top most
//! often) against each other library, shared memory against a Unix domain socket (the control
//! ring against the first library that is the kernel's Unix socket, by the registry's kinds),
//! and any pair named with `ipcbench report --versus A,B`. Each answer counts the measurements
//! both ran (oversubscribed ones apart), says the range of the ratios case by case, and the
//! smallest round trip's ratio over every pair of the two libraries' runs. No library is named
//! here: the subject is a flag, and the other sides are kinds.

use anyhow::{Result, bail};
use ipcbench_api::Kind;

use super::View;
use super::summary::standings;
use crate::analysis::{self, standings::Pair};
use crate::format::{ratio_span, size_words, three_digits};
use crate::matrix::{Pattern, size_label};
use crate::noise;

/// One question and its answer.
#[derive(Debug)]
pub struct Answer {
    pub question: String,
    pub answer: String,
}

/// The library the questions are asked of: `report --subject`, and whether it was named or is
/// the flag's default (a default the report lacks gives way to the library on top most often).
pub struct Subject<'a> {
    pub id: &'a str,
    pub named: bool,
}

/// The questions, and the sentence above them that says whom they are asked of.
#[derive(Debug)]
pub struct Questions {
    pub about: String,
    pub answers: Vec<Answer>,
}

/// `--versus A,B` as a pair of the view's libraries, or why not.
pub fn versus(view: &View, text: &str) -> Result<(String, String)> {
    let known = || view.libraries.join(", ");
    let Some((a, b)) = text.split_once(',') else {
        bail!("--versus {text:?}: name two libraries, comma-separated (A,B); this report has {}", known());
    };
    let (a, b) = (a.trim(), b.trim());
    for id in [a, b] {
        if !view.libraries.iter().any(|l| l == id) {
            bail!("--versus {text:?}: {id:?} is not a library of this report; it has {}", known());
        }
    }
    if a == b {
        bail!("--versus {text:?}: name two different libraries");
    }
    Ok((a.to_string(), b.to_string()))
}

pub(super) fn name<'a>(view: &View<'a>, id: &'a str) -> &'a str {
    view.library(id).map_or(id, |(l, _)| l.name.as_str())
}

/// `FastIPC's`, `pipes'`.
fn possessive(name: &str) -> String {
    if name.ends_with('s') { format!("{name}'") } else { format!("{name}'s") }
}

/// Every answer, `pairs` (from `--versus`) last; a subject named that the view lacks is refused.
pub fn answers(view: &View, pairs: &[(String, String)], subject: &Subject) -> Result<Questions> {
    let mut out = Vec::new();
    let mut tops: Vec<(String, usize, usize)> = Vec::new();
    for ((_, lib), st) in standings(view) {
        match tops.iter_mut().find(|t| t.0 == lib) {
            Some(t) => (t.1, t.2) = (t.1 + st.top, t.2 + st.ran),
            None => tops.push((lib, st.top, st.ran)),
        }
    }
    let share = |t: &(String, usize, usize)| if t.2 == 0 { 0.0 } else { t.1 as f64 / t.2 as f64 };
    tops.sort_by(|a, b| share(b).total_cmp(&share(a)).then(a.0.cmp(&b.0)));
    if let Some(first) = tops.first() {
        let said: Vec<String> =
            tops.iter().take(4).map(|(l, top, ran)| format!("{} in {top} of {ran}", name(view, l))).collect();
        out.push(Answer {
            question: "What is the fastest library here?".into(),
            answer: format!(
                "It depends on the pattern and the message. Fastest, or level with the fastest, in the \
                 measurements where each ran (oversubscribed ones left out): {}. {} leads most often.",
                said.join("; "),
                name(view, &first.0)
            ),
        });
    }
    let has = |id: &str| view.libraries.iter().any(|l| l == id);
    let (asked_of, about) = if has(subject.id) {
        let about = format!(
            "The questions ask {} (`--subject {}`{}) against each other library.",
            name(view, subject.id),
            subject.id,
            if subject.named { "" } else { ", the default" }
        );
        (Some(subject.id.to_string()), about)
    } else if subject.named {
        bail!(
            "--subject {:?} is not a library of this report; it has {}",
            subject.id,
            view.libraries.join(", ")
        );
    } else {
        let top = tops.first().map(|t| t.0.clone());
        let about = match &top {
            Some(t) => format!(
                "This report has no {} (`--subject`'s default): the questions ask {}, on top most often, \
                 against each other library.",
                subject.id,
                name(view, t)
            ),
            None => {
                format!("This report has no {} (`--subject`'s default) and no result to rank.", subject.id)
            }
        };
        (top, about)
    };
    let mut asked: Vec<(String, String)> = Vec::new();
    if let Some(a) = asked_of {
        asked.extend(view.libraries.iter().filter(|b| **b != a).map(|b| (a.clone(), b.clone())));
    }
    let first = |kind: Kind| view.libraries.iter().find(|id| view.kind(id) == Some(kind));
    if let (Some(control), Some(socket)) = (first(Kind::Control), first(Kind::UnixSocket)) {
        let answer = pair(view, control, socket);
        out.extend(answer.map(|answer| Answer {
            question: format!(
                "Is shared memory faster than a Unix domain socket? (the control ring against {socket})"
            ),
            answer,
        }));
    }
    for p in pairs {
        if !asked.contains(p) {
            asked.push(p.clone());
        }
    }
    for (a, b) in asked {
        if let Some(answer) = pair(view, &a, &b) {
            out.push(Answer {
                question: format!("Is {} faster than {}?", name(view, &a), name(view, &b)),
                answer,
            });
        }
    }
    Ok(Questions { about, answers: out })
}

/// The round trip the answers quote: the one of the smallest messages.
fn quoted_round_trip<'a>(view: &View<'a>) -> Option<(&'a str, usize)> {
    view.sources
        .iter()
        .flat_map(|s| s.doc.results.iter())
        .filter(|r| {
            r.pattern == Pattern::StreamRtt && r.batch.is_none() && r.transfer == ipcbench_api::Transfer::Copy
        })
        .min_by_key(|r| r.size)
        .map(|r| (r.case.as_str(), r.size))
}

/// Whether `a` is faster than `b`, in words; None when they share no measurement.
fn pair(view: &View, a: &str, b: &str) -> Option<String> {
    let (na, nb) = (name(view, a), name(view, b));
    let quoted = quoted_round_trip(view);
    let Pair { wins, level, slower, oversubscribed: over, ratios, slower_in, round_trip: rtt } =
        analysis::standings::pair(&view.results(), &view.cases, a, b, quoted.map(|q| q.0));
    let both = wins + level + slower;
    if both == 0 {
        return None;
    }
    let counts = format!("faster in {wins}, level in {level} and slower in {slower} of the {both}");
    let mut text = if wins == both {
        format!("Yes, in every one of the {both} measurements where both ran")
    } else if slower == both {
        format!("No: {nb} is faster in every one of the {both} measurements where both ran")
    } else if wins * 2 > both {
        format!("Mostly: {na} is {counts} measurements where both ran")
    } else if slower * 2 > both {
        format!("Mostly not: {na} is {counts} measurements where both ran")
    } else {
        format!("It depends on the case: {na} is {counts} measurements where both ran")
    };
    let lo = ratios.iter().copied().fold(f64::MAX, f64::min);
    let hi = ratios.iter().copied().fold(f64::MIN, f64::max);
    let mid = noise::middle(ratios).unwrap_or(1.0);
    text.push_str(&format!(
        ". Case by case, {} figure is {} to {} times {} (median {}; a rate over a rate, a time's inverse)",
        possessive(na),
        three_digits(lo),
        three_digits(hi),
        possessive(nb),
        three_digits(mid)
    ));
    if let (Some((lo, hi)), Some((_, size))) = (rtt, quoted) {
        let words = size_words(size, &size_label(size));
        // Said of whichever is quicker, as "N times as quick".
        let (quick, slow, lo, hi) =
            if lo * hi >= 1.0 { (na, nb, lo, hi) } else { (nb, na, 1.0 / hi, 1.0 / lo) };
        text.push_str(&format!(
            "; a {words} round trip (p50) is {} times as quick with {quick} as with {slow}, over every pair of \
             their runs",
            ratio_span(lo, hi)
        ));
    }
    text.push('.');
    if (1..=3).contains(&slower_in.len()) && wins > 0 {
        text.push_str(&format!(" Slower in {}.", slower_in.join(", ")));
    }
    if over > 0 {
        text.push_str(&format!(" ({over} oversubscribed measurements left out.)"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::report::Source;

    /// "faster in W, level in L and slower in S of the N": the counts add up, the subject meets
    /// every other library, a named pair is answered once, and the control meets the Unix
    /// socket by their kinds. The libraries are the file's, none named here.
    #[test]
    fn the_answers_count_what_both_ran_and_a_named_pair_is_added() {
        let source = Source::committed("run-2026-12-02T01-50-18Z");
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let libs = &source.doc.libraries;
        let (subject, b, c) = (&libs[0], &libs[1], &libs[2]);
        let pairs = [versus(&view, &format!("{},{}", b.id, c.id)).unwrap()];
        let asked = answers(&view, &pairs, &Subject { id: &subject.id, named: true }).unwrap();
        assert_eq!(
            asked.about,
            format!(
                "The questions ask {} (`--subject {}`) against each other library.",
                subject.name, subject.id
            )
        );
        let answers = asked.answers;
        assert!(answers[0].question.starts_with("What is the fastest"), "{}", answers[0].question);
        let of_subject: Vec<&Answer> = answers
            .iter()
            .filter(|a| a.question.starts_with(&format!("Is {} faster than", subject.name)))
            .collect();
        assert_eq!(of_subject.len(), view.libraries.len() - 1);
        let named = format!("Is {} faster than {}?", b.name, c.name);
        assert_eq!(answers.iter().filter(|a| a.question == named).count(), 1);
        let socket = view.libraries.iter().find(|l| view.kind(l) == Some(Kind::UnixSocket)).unwrap();
        let shm =
            format!("Is shared memory faster than a Unix domain socket? (the control ring against {socket})");
        assert_eq!(answers.iter().filter(|a| a.question == shm).count(), 1);
        for a in &answers[1..] {
            let n = |after: &str| -> Option<usize> {
                a.answer.split(after).nth(1)?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
            };
            if let (Some(w), Some(l), Some(s), Some(all)) =
                (n("faster in "), n("level in "), n("slower in "), n(" of the "))
            {
                assert_eq!(w + l + s, all, "{}", a.answer);
            } else {
                let all = n("every one of the ").unwrap_or_else(|| panic!("{}", a.answer));
                assert!(all > 0);
            }
            assert!(a.answer.contains(" times "), "{}", a.answer);
        }
        let e = versus(&view, &format!("{},nothing", b.id)).unwrap_err().to_string();
        assert!(e.contains("\"nothing\" is not a library of this report") && e.contains(&c.id), "{e}");
        assert!(versus(&view, &b.id).unwrap_err().to_string().contains("comma-separated"));
        assert!(versus(&view, &format!("{0},{0}", b.id)).unwrap_err().to_string().contains("two different"));
        // A subject named that the file lacks is refused; a default it lacks gives way.
        let nothing = |named| answers_of(&view, Subject { id: "nothing", named });
        assert!(nothing(true).unwrap_err().to_string().contains("--subject \"nothing\" is not a library"));
        let about = nothing(false).unwrap().about;
        assert!(
            about.starts_with("This report has no nothing (`--subject`'s default): the questions ask "),
            "{about}"
        );
    }

    fn answers_of(view: &View, subject: Subject) -> Result<Questions> {
        answers(view, &[], &subject)
    }
}
