//! Where a chart's words go: a legend as a column beside the data (never over it), labels placed
//! clear of one another and of the points, and a line's runs, broken where a point is missing.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{Marker, Style, mark};
use super::{DrawResult, SANS};

/// A legend row's height, in pixels.
pub const ROW: i32 = 18;

/// The pixels a line of text of `size` takes, about: DejaVu Sans averages 0.6 of its size a
/// character, and a wider guess only leaves room.
pub fn text_width(text: &str, size: u32) -> i32 {
    (text.chars().count() as f64 * size as f64 * 0.62).ceil() as i32
}

/// `text` in lines no wider than `width` pixels at `size`, broken between words: a title that
/// would run off its chart goes on below.
pub fn wrap(text: &str, width: i32, size: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last().map(|line| format!("{line} {word}")) {
            Some(joined) if text_width(&joined, size) <= width => {
                *lines.last_mut().expect("a line to join") = joined;
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// A heading's lines: the title's at 20 px, then each note's at 14 px, wrapped to `width`.
fn heading_lines(title: &str, notes: &[&str], width: u32) -> Vec<(String, u32)> {
    let fit = width as i32 - 40;
    let title = wrap(title, fit, 20).into_iter().map(|l| (l, 20));
    title.chain(notes.iter().flat_map(|n| wrap(n, fit, 14)).map(|l| (l, 14))).collect()
}

/// The height a chart's heading takes at `width`.
pub fn heading_height(title: &str, notes: &[&str], width: u32) -> u32 {
    20 + heading_lines(title, notes, width).iter().map(|(_, size)| size + 8).sum::<u32>()
}

/// A chart's heading: its title, then its notes, each wrapped to the area's width.
pub fn heading<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    notes: &[&str],
) -> DrawResult<DB::ErrorType> {
    let mut y = 12;
    for (line, size) in heading_lines(title, notes, area.dim_in_pixel().0) {
        area.draw(&Text::new(line, (20, y), (SANS, size).into_font()))?;
        y += size as i32 + 8;
    }
    Ok(())
}

/// How a legend row draws its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    Dashed,
    /// No line: a mark alone, or a bar's swatch.
    Mark,
}

/// A legend row: its label, colour, marker (where the series has one) and line.
#[derive(Clone, Debug)]
pub struct Entry {
    pub label: String,
    pub color: RGBColor,
    pub marker: Option<Marker>,
    pub stroke: Stroke,
}

impl Entry {
    pub fn new(label: impl Into<String>, style: Style, stroke: Stroke) -> Entry {
        Entry { label: label.into(), color: style.color, marker: Some(style.marker), stroke }
    }

    /// A reference line (a floor, the control): its colour and line, no marker.
    pub fn line(label: impl Into<String>, color: RGBColor, stroke: Stroke) -> Entry {
        Entry { label: label.into(), color, marker: None, stroke }
    }
}

/// A legend column's width for these rows.
pub fn legend_width(entries: &[Entry]) -> i32 {
    entries.iter().map(|e| 40 + text_width(&e.label, 13)).max().unwrap_or(0)
}

/// Draws a legend as a column from `(x, y)`: a row per entry, its line and mark, then its label.
pub fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    entries: &[Entry],
) -> DrawResult<DB::ErrorType> {
    for (i, e) in entries.iter().enumerate() {
        let y = y + i as i32 * ROW;
        let style = ShapeStyle::from(&e.color).stroke_width(2);
        match e.stroke {
            Stroke::Solid => area.draw(&PathElement::new(vec![(x, y), (x + 28, y)], style))?,
            // Its dashes stand clear of the mark, which a dashed series draws hollow, as its
            // plot does: a filled mark over two dashes read as a solid line.
            Stroke::Dashed if e.marker.is_some() => {
                area.draw(&PathElement::new(vec![(x - 2, y), (x + 4, y)], style))?;
                area.draw(&PathElement::new(vec![(x + 24, y), (x + 30, y)], style))?;
            }
            Stroke::Dashed => {
                area.draw(&PathElement::new(vec![(x, y), (x + 9, y)], style))?;
                area.draw(&PathElement::new(vec![(x + 19, y), (x + 28, y)], style))?;
            }
            Stroke::Mark => {}
        }
        if let Some(marker) = e.marker {
            let filled = e.stroke != Stroke::Dashed;
            area.draw(&mark::<_, DB>((x + 14, y), Style { color: e.color, marker }, filled, 4))?;
        } else if e.stroke == Stroke::Mark {
            area.draw(&Rectangle::new([(x + 7, y - 7), (x + 21, y + 7)], e.color.filled()))?;
        }
        area.draw(&Text::new(e.label.clone(), (x + 36, y - 8), (SANS, 13).into_font()))?;
    }
    Ok(())
}

/// A box in pixels: left, top, right, bottom.
pub type Bounds = (i32, i32, i32, i32);

fn overlaps(a: Bounds, b: Bounds) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// The box a mark takes around its point.
pub fn around((x, y): (i32, i32)) -> Bounds {
    const MARK: i32 = 7;
    (x - MARK, y - MARK, x + MARK, y + MARK)
}

/// A label to place: its point, and its width and height.
pub type Label = ((i32, i32), (i32, i32));

/// Places each label beside its point, clear of every other label and of what is `taken` (the
/// marks, other words): the first free of eight places around it (right, left, above, below,
/// then the corners), then the same rings further out. `labels` are each label's point and its
/// width and height; returns each label's top-left, and whether it stands off its point (to be
/// joined to it by a line). A label with no free place takes the nearest place inside `within`.
pub fn place_labels(taken: &[Bounds], labels: &[Label], within: Bounds) -> Vec<((i32, i32), bool)> {
    let mut taken = taken.to_vec();
    let mut out = Vec::new();
    for &((px, py), (w, h)) in labels {
        let fits = |b: Bounds| b.0 >= within.0 && b.1 >= within.1 && b.2 <= within.2 && b.3 <= within.3;
        let spots = (0..6).flat_map(|ring| {
            let d = 9 + ring * 16;
            let c = d * 7 / 10;
            [
                (px + d, py - h / 2),
                (px - d - w, py - h / 2),
                (px - w / 2, py - d - h),
                (px - w / 2, py + d),
                (px + c, py - c - h),
                (px + c, py + c),
                (px - c - w, py - c - h),
                (px - c - w, py + c),
            ]
            .map(move |at| (at, ring > 0))
        });
        let boxed = |(x, y): (i32, i32)| (x, y, x + w, y + h);
        let free =
            spots.clone().find(|(at, _)| fits(boxed(*at)) && !taken.iter().any(|t| overlaps(*t, boxed(*at))));
        let (at, off) =
            free.or_else(|| spots.clone().find(|(at, _)| fits(boxed(*at)))).unwrap_or(((px, py), false));
        taken.push(boxed(at));
        out.push((at, off));
    }
    out
}

/// A line's runs: the points between two missing ones, so that a line joins only neighbours
/// both measured.
pub fn runs(points: impl IntoIterator<Item = Option<(f64, f64)>>) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for p in points {
        match p {
            Some(p) => out.last_mut().expect("one run at least").push(p),
            None if out.last().is_some_and(|r| !r.is_empty()) => out.push(Vec::new()),
            None => {}
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_breaks_where_a_point_is_missing() {
        let p = |x: f64| Some((x, x * 10.0));
        assert_eq!(
            runs([p(1.0), p(2.0), None, p(4.0), None, None, p(7.0), p(8.0)]),
            [vec![(1.0, 10.0), (2.0, 20.0)], vec![(4.0, 40.0)], vec![(7.0, 70.0), (8.0, 80.0)]]
        );
        assert!(runs([None, None]).is_empty());
    }

    #[test]
    fn a_long_title_wraps_between_words() {
        let title = "Latency to many subscribers: p50 and p99 one way to every subscriber, from each \
                     message's due time";
        let lines = wrap(title, 600, 20);
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, 20) <= 600), "{lines:?}");
        assert_eq!(lines.join(" "), title);
    }

    /// Labels of points in a heap keep clear of one another and of every point.
    #[test]
    fn labels_do_not_overprint() {
        let points: Vec<(i32, i32)> = (0..12).map(|i| (400 + (i % 4) * 6, 300 + (i / 4) * 5)).collect();
        let labels: Vec<((i32, i32), (i32, i32))> = points.iter().map(|&p| (p, (70, 14))).collect();
        let marks: Vec<Bounds> = points.iter().map(|&p| around(p)).collect();
        let placed = place_labels(&marks, &labels, (0, 0, 1000, 700));
        let boxes: Vec<Bounds> = placed.iter().map(|&((x, y), _)| (x, y, x + 70, y + 14)).collect();
        for (i, a) in boxes.iter().enumerate() {
            assert!(boxes[i + 1..].iter().all(|b| !overlaps(*a, *b)), "label {i}: {boxes:?}");
            for &(x, y) in &points {
                assert!(!overlaps(*a, (x - 7, y - 7, x + 7, y + 7)), "label {i} covers a point");
            }
        }
        assert!(placed.iter().any(|(_, off)| *off), "a heap sends labels further out");
    }
}
