//! The questions the comparison's FAQ answers, answered from the results: which library is
//! fastest (the control apart: it is the reference line, a bare ring no one picks), the subject
//! (`report --subject`, or without it in the view, the library on top most often) against each
//! other library, shared memory against a Unix domain socket (the control ring against the first
//! library that is the kernel's Unix socket, by the registry's kinds), and any pair named with
//! `ipcbench report --versus A,B`. Each answer counts the cases both ran as the claims do
//! (`analysis::standings::both_ran`, oversubscribed ones apart), gives the median ratio case by
//! case and its range over rates and over times apart, names the cases the other wins and those
//! left out, and the smallest round trip's ratio over every pair of the two libraries' runs. No
//! library is named here: the subject is a flag, and the other sides are kinds.

use anyhow::{Result, bail};
use ipcbench_api::Kind;

use super::View;
use super::summary::standings;
use crate::analysis::{self, standings::Pair};
use crate::format::{ratio_span, size_words, three_digits};
use crate::matrix::{Pattern, size_label};

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

/// A library, the rows where it was the fastest or level, and the rows counted.
type Top = (String, usize, usize);

/// Every library's rows on top over every machine, most often on top first: the libraries, and
/// apart the control, which is the reference line, never an answer to "which library".
fn on_top(view: &View) -> (Vec<Top>, Vec<Top>) {
    let mut all: Vec<Top> = Vec::new();
    for ((_, lib), st) in standings(view) {
        match all.iter_mut().find(|t| t.0 == lib) {
            Some(t) => (t.1, t.2) = (t.1 + st.top, t.2 + st.ran),
            None => all.push((lib, st.top, st.ran)),
        }
    }
    let share = |t: &Top| if t.2 == 0 { 0.0 } else { t.1 as f64 / t.2 as f64 };
    all.sort_by(|a, b| share(b).total_cmp(&share(a)).then(a.0.cmp(&b.0)));
    all.into_iter().partition(|t| view.kind(&t.0) != Some(Kind::Control))
}

/// "What is the fastest library here?": the four libraries most often on top, then the control
/// as what it is, the reference line.
fn fastest(view: &View, tops: &[Top], control: &[Top]) -> Option<Answer> {
    let first = tops.first()?;
    let said: Vec<String> =
        tops.iter().take(4).map(|(l, top, ran)| format!("{} in {top} of {ran}", name(view, l))).collect();
    let mut answer = format!(
        "It depends on the pattern and the message. Fastest, or level with the fastest (the control among \
         the rivals), in the cases where each ran (oversubscribed ones left out): {}. {} leads most often.",
        said.join("; "),
        name(view, &first.0)
    );
    for (l, top, ran) in control {
        answer.push_str(&format!(
            " {} is the reference line, not a library to pick: a bare ring, fastest or level in {top} of \
             {ran}.",
            name(view, l)
        ));
    }
    Some(Answer { question: "What is the fastest library here?".into(), answer })
}

/// Whom the questions are asked of, and the sentence that says so; a subject named that the
/// view lacks is refused, a default it lacks gives way to `top` (the library on top most often).
fn subject_of(view: &View, subject: &Subject, top: Option<&str>) -> Result<(Option<String>, String)> {
    if view.libraries.iter().any(|l| l == subject.id) {
        let about = format!(
            "The questions ask {} (`--subject {}`{}) against each other library.",
            name(view, subject.id),
            subject.id,
            if subject.named { "" } else { ", the default" }
        );
        return Ok((Some(subject.id.to_string()), about));
    }
    if subject.named {
        bail!(
            "--subject {:?} is not a library of this report; it has {}",
            subject.id,
            view.libraries.join(", ")
        );
    }
    let id = subject.id;
    let about = match top {
        Some(t) => format!(
            "This report has no {id} (`--subject`'s default): the questions ask {}, on top most often, \
             against each other library.",
            name(view, t)
        ),
        // The control is no subject: it is the reference line.
        None => format!("This report has no {id} (`--subject`'s default) and no library to ask of."),
    };
    Ok((top.map(str::to_string), about))
}

/// Every answer, `pairs` (from `--versus`) last; a subject named that the view lacks is refused.
pub fn answers(view: &View, pairs: &[(String, String)], subject: &Subject) -> Result<Questions> {
    let (tops, reference) = on_top(view);
    let mut out: Vec<Answer> = fastest(view, &tops, &reference).into_iter().collect();
    let (asked_of, about) = subject_of(view, subject, tops.first().map(|t| t.0.as_str()))?;
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

/// Whether `a` is faster than `b`, in words; None when they share no case.
fn pair(view: &View, a: &str, b: &str) -> Option<String> {
    let quoted = quoted_round_trip(view);
    let mut p = analysis::standings::pair(&view.results(), a, b, quoted.map(|q| q.0));
    // Cases named in the view's order, as its tables list them.
    let at = |case: &String| view.cases.iter().position(|c| c == case);
    p.slower_in.sort_by_key(at);
    p.ratios.sort_by_key(|r| at(&r.case));
    answer_text(name(view, a), name(view, b), &p, quoted.map(|q| q.1))
}

/// A pair's answer: its counts, its ratios (`ratio_words`), the quoted round trip of `size`
/// bytes over every pair of runs, the cases `nb` wins, those left out of the ratios and the
/// oversubscribed ones. None when the two share no case.
fn answer_text(na: &str, nb: &str, p: &Pair, size: Option<usize>) -> Option<String> {
    let (wins, level, slower, both) = (p.wins, p.level, p.slower, p.both());
    if both == 0 {
        return None;
    }
    let counts =
        format!("faster in {wins}, level in {level} and slower in {slower} of the {both} cases both ran");
    let mut text = if wins == both {
        format!("Yes, in every one of the {both} cases both ran.")
    } else if slower == both {
        format!("No: {nb} is faster in every one of the {both} cases both ran.")
    } else if wins * 2 > both {
        format!("Mostly: {na} is {counts}.")
    } else if slower * 2 > both {
        format!("Mostly not: {na} is {counts}.")
    } else {
        format!("It depends on the case: {na} is {counts}.")
    };
    text.push_str(&ratio_words(na, nb, p));
    if let (Some((lo, hi)), Some(size)) = (p.round_trip, size) {
        let message = size_words(size, &size_label(size));
        // Said of whichever is quicker, as "N times as quick".
        let (quick, slow, lo, hi) =
            if lo * hi >= 1.0 { (na, nb, lo, hi) } else { (nb, na, 1.0 / hi, 1.0 / lo) };
        text.push_str(&format!(
            " A {message} round trip (p50) is {} times as quick with {quick} as with {slow}, over every \
             pair of their runs.",
            ratio_span(lo, hi)
        ));
    }
    if slower > 0 && slower < both {
        text.push_str(&format!(" {nb} is faster in {}.", p.slower_in.join(", ")));
    }
    let behind = p.behind();
    if !behind.is_empty() {
        text.push_str(&format!(
            " Left out of the ratios, a sender having fallen behind its schedule (its time is then the \
             queue's): {}.",
            behind.join(", ")
        ));
    }
    if p.oversubscribed > 0 {
        text.push_str(&format!(" ({} oversubscribed cases left out.)", p.oversubscribed));
    }
    Some(text)
}

/// The median ratio over the cases both ran, and its range over rates and over times apart (a
/// rate's ratio and a time's say different things), each the way round that reads over 1 where
/// `na` is faster.
fn ratio_words(na: &str, nb: &str, p: &Pair) -> String {
    let Some(mid) = p.median() else { return String::new() };
    let mut text = format!(
        " The median ratio is {}× ({} figure over {}, the way round that reads over 1 where {na} is \
         faster: a rate over a rate, a time's inverse)",
        times(mid),
        possessive(na),
        possessive(nb)
    );
    for (time, one, many) in [(false, "rate", "rates"), (true, "p50 time", "p50 times")] {
        if let Some((n, lo, hi)) = p.range(time) {
            let of = if n == 1 { format!("the one {one}") } else { format!("the {n} {many}") };
            let span =
                if times(lo) == times(hi) { times(lo) } else { format!("{}× to {}", times(lo), times(hi)) };
            text.push_str(&format!("; over {of}, {span}×"));
        }
    }
    text.push('.');
    text
}

/// A ratio with three significant digits at any size: `0.466`, `43.1`, `2,260`; below a tenth,
/// as a fraction, `1/7,300`, which reads where `0.000137` does not.
fn times(x: f64) -> String {
    if x > 0.0 && x < 0.1 {
        return format!("1/{}", times(1.0 / x));
    }
    if !(1000.0..f64::INFINITY).contains(&x) {
        return three_digits(x);
    }
    let scale = 10f64.powi(x.log10().floor() as i32 - 2);
    let digits = (((x / scale).round() * scale) as u64).to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        // Thousands apart.
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::report::Source;

    /// "faster in W, level in L and slower in S of the N": the counts add up, the subject meets
    /// every other library, a named pair is answered once, and the control meets the Unix
    /// socket by their kinds; the control, on top most often in this file, is never the fastest
    /// library nor the subject a missing default gives way to. The libraries are the file's, none
    /// named here.
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
        let control = view.libraries.iter().find(|l| view.kind(l) == Some(Kind::Control)).unwrap();
        let control = name(&view, control);
        let (named_fastest, rest) = answers[0].answer.split_once(" leads most often.").unwrap();
        assert!(!named_fastest.contains(control), "{}", answers[0].answer);
        assert!(rest.contains(&format!("{control} is the reference line")), "{}", answers[0].answer);
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
            assert!(a.answer.contains("The median ratio is "), "{}", a.answer);
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
        assert!(!about.contains(control), "{about}");
    }

    /// Over the reference run, each pair of the page's `every` claims: the claims table, the
    /// question and the standings count the same cases both ran.
    #[test]
    fn a_pair_counts_the_same_cases_in_the_claims_the_questions_and_the_standings() {
        use crate::analysis::claims::{ClaimKind, Measured, outcomes, page_data};
        use crate::report::model::Cell;
        let source = Source::committed(crate::report::readme::REFERENCE);
        let view = View::new(std::slice::from_ref(&source), Path::new(""));
        let data = page_data().unwrap();
        let (table, _) = crate::report::claims::claims_table(&view).unwrap();
        let mut seen = 0;
        for o in outcomes(&data, &source.doc).iter().filter(|o| o.claim.kind == ClaimKind::Every) {
            let (a, b) = (o.claim.a.as_str(), o.claim.b.as_deref().unwrap());
            let Measured::Ratios { ratios, .. } = &o.measured else { panic!("{}", o.claim.said) };
            let n = ratios.len();
            assert_eq!(analysis::standings::pair(&view.results(), a, b, None).both(), n, "{a} {b}");
            let row = table.rows.iter().find(|r| r[0] == Cell::Text(o.claim.said.clone())).unwrap();
            assert!(matches!(&row[2], Cell::Text(t) if t.contains(&format!(" of the {n} cases both ran"))));
            let asked = answers(&view, &[], &Subject { id: a, named: true }).unwrap();
            let q = format!("Is {} faster than {}?", name(&view, a), name(&view, b));
            let answer = &asked.answers.iter().find(|x| x.question == q).unwrap().answer;
            assert!(answer.contains(&format!("the {n} cases both ran")), "{n}: {answer}");
            seen += 1;
        }
        assert!(seen >= 2, "the page's every claims: {seen}");
    }

    /// A pair's answer ranges its rates and its times apart, in readable numbers, names the cases
    /// the other wins and those left out of the ratios because a sender fell behind.
    #[test]
    fn a_pair_ranges_rates_and_times_apart_and_names_what_it_leaves_out() {
        use crate::analysis::standings::CaseRatio;
        let r = |case: &str, time, ratio, behind| CaseRatio { case: case.into(), time, ratio, behind };
        let p = Pair {
            wins: 3,
            slower: 1,
            oversubscribed: 2,
            ratios: vec![
                r("stream/16B", false, 0.5, false),
                r("queue/1x1/16B", false, 3.0, false),
                r("stream-rtt/16B", true, 2500.0, false),
                r("latency/10M/16B", true, 0.000137, true),
            ],
            slower_in: vec!["stream/16B".into()],
            round_trip: Some((2.0, 2.5)),
            ..Pair::default()
        };
        let text = answer_text("A", "B", &p, Some(16)).unwrap();
        for part in [
            "Mostly: A is faster in 3, level in 0 and slower in 1 of the 4 cases both ran.",
            "The median ratio is 3.00× (A's figure over B's",
            "; over the 2 rates, 0.500× to 3.00×; over the one p50 time, 2,500×.",
            "A 16-byte round trip (p50) is 2.0 to 2.5 times as quick with A as with B",
            "B is faster in stream/16B.",
            "its time is then the queue's): latency/10M/16B.",
            "(2 oversubscribed cases left out.)",
        ] {
            assert!(text.contains(part), "{part:?} in {text}");
        }
        assert!(!text.contains("0.000137") && !text.contains("1/7"), "{text}");
        assert_eq!(times(3_333_870.0), "3,330,000");
        assert_eq!(times(0.000137), "1/7,300");
        assert_eq!((times(43.08), times(0.466)), ("43.1".to_string(), "0.466".to_string()));
    }

    fn answers_of(view: &View, subject: Subject) -> Result<Questions> {
        answers(view, &[], &subject)
    }
}
