//! Each library's look, the same in every chart of every report: a colour and a marker, both
//! from its place in the registry, so that two libraries on one chart differ in colour and,
//! where their colours are nearest, in shape too. The control is black with a cross.

use ipcbench_api::Kind;
use plotters::element::ComposedElement;
use plotters::prelude::*;

/// A point's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Down,
    Pentagon,
    Star,
    Cross,
}

/// How a library is drawn: its colour and its marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub color: RGBColor,
    pub marker: Marker,
}

/// Fourteen colours picked apart (CIEDE2000 at least 23 between any two, and from the white
/// ground and the control's black): a library's is its place in the registry's.
const PALETTE: [RGBColor; 14] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(102, 85, 0),
    RGBColor(17, 0, 136),
    RGBColor(0, 85, 68),
    RGBColor(102, 51, 68),
    RGBColor(0, 170, 170),
    RGBColor(187, 170, 0),
    RGBColor(255, 102, 153),
    RGBColor(51, 255, 0),
    RGBColor(136, 119, 119),
];

/// Seven shapes, so that the two libraries sharing one are seven colours apart.
const SHAPES: [Marker; 7] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::Down,
    Marker::Pentagon,
    Marker::Star,
];

/// The control's: black, and a shape no library has.
pub const CONTROL: Style = Style { color: RGBColor(0, 0, 0), marker: Marker::Cross };

/// The style of the library at `at` in the registry (a library it lacks comes after it).
pub fn nth(at: usize) -> Style {
    // Past the palette, the shapes shift, so that no two places share both.
    Style { color: PALETTE[at % PALETTE.len()], marker: SHAPES[(at + at / PALETTE.len()) % SHAPES.len()] }
}

/// A library's style from its place and kind.
pub fn placed(at: usize, kind: Option<Kind>) -> Style {
    if kind == Some(Kind::Control) { CONTROL } else { nth(at) }
}

/// The corners of a regular shape of `n` sides, `scale` radii out, the first at `start` degrees
/// (pixels: y grows down, so -90 is up).
fn regular(n: usize, start: f64, scale: f64) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let a = (start + 360.0 * i as f64 / n as f64).to_radians();
            (scale * a.cos(), scale * a.sin())
        })
        .collect()
}

/// A marker's outline around its point, in pixels, for a radius of `r`.
pub fn outline(marker: Marker, r: i32) -> Vec<(i32, i32)> {
    let unit: Vec<(f64, f64)> = match marker {
        Marker::Circle => regular(16, 0.0, 1.0),
        Marker::Square => regular(4, 45.0, 1.2),
        Marker::Triangle => regular(3, -90.0, 1.3),
        Marker::Down => regular(3, 90.0, 1.3),
        Marker::Diamond => regular(4, -90.0, 1.3),
        Marker::Pentagon => regular(5, -90.0, 1.15),
        Marker::Star => {
            let (outer, inner) = (regular(5, -90.0, 1.4), regular(5, -54.0, 0.6));
            outer.into_iter().zip(inner).flat_map(|(o, i)| [o, i]).collect()
        }
        Marker::Cross => {
            // A plus of arms 0.3 wide, turned a quarter of a right angle: an X.
            let t = 0.3;
            let plus = [
                (-t, -1.0),
                (t, -1.0),
                (t, -t),
                (1.0, -t),
                (1.0, t),
                (t, t),
                (t, 1.0),
                (-t, 1.0),
                (-t, t),
                (-1.0, t),
                (-1.0, -t),
                (-t, -t),
            ];
            let turn = std::f64::consts::FRAC_1_SQRT_2 * 1.3;
            plus.iter().map(|&(x, y)| ((x - y) * turn, (x + y) * turn)).collect()
        }
    };
    let r = r as f64;
    unit.into_iter().map(|(x, y)| ((x * r).round() as i32, (y * r).round() as i32)).collect()
}

/// A mark drawn at a point.
pub type Mark<C, DB> = ComposedElement<C, DB, Polygon<(i32, i32)>, PathElement<(i32, i32)>>;

/// A point's mark: its library's marker, filled in its colour or hollow (white inside, the colour
/// round), `r` pixels across from the centre.
pub fn mark<C, DB: DrawingBackend>(at: C, style: Style, filled: bool, r: i32) -> Mark<C, DB> {
    let corners = outline(style.marker, r);
    let mut ring = corners.clone();
    ring.push(corners[0]);
    let inside = if filled { style.color } else { WHITE };
    EmptyElement::<C, DB>::at(at)
        + Polygon::new(corners, inside.filled())
        + PathElement::new(ring, style.color.stroke_width(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CIE L*a*b* of an sRGB colour.
    fn lab(c: RGBColor) -> (f64, f64, f64) {
        let lin = |u: u8| {
            let u = u as f64 / 255.0;
            if u <= 0.04045 { u / 12.92 } else { ((u + 0.055) / 1.055).powf(2.4) }
        };
        let (r, g, b) = (lin(c.0), lin(c.1), lin(c.2));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| if t > 0.008856 { t.cbrt() } else { 7.787 * t + 16.0 / 116.0 };
        (116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z)))
    }

    /// The CIE76 difference of two colours: about 2.3 is the least a reader sees.
    fn delta(a: RGBColor, b: RGBColor) -> f64 {
        let (a, b) = (lab(a), lab(b));
        ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2) + (a.2 - b.2).powi(2)).sqrt()
    }

    /// Every pair of the registry's libraries differs in colour plainly, and a pair sharing a
    /// shape differs in colour more; every colour stands off the white ground.
    #[test]
    fn every_pair_of_libraries_is_told_apart() {
        let styles: Vec<(&str, Style)> = crate::registry::LIBRARIES
            .iter()
            .enumerate()
            .map(|(at, e)| {
                let info = (e.info)();
                (info.id, placed(at, Some(info.kind)))
            })
            .collect();
        for (i, (a, sa)) in styles.iter().enumerate() {
            assert!(delta(sa.color, WHITE) > 40.0, "{a} is faint on white");
            for (b, sb) in &styles[i + 1..] {
                let d = delta(sa.color, sb.color);
                assert!(d >= 25.0, "{a} and {b}: colours {d:.1} apart");
                assert!(sa.marker != sb.marker || d >= 50.0, "{a} and {b}: one shape, colours {d:.1} apart");
            }
        }
        assert_eq!(styles.iter().filter(|(_, s)| *s == CONTROL).count(), 1, "the control alone is black");
    }

    /// Places past the registry (a library it no longer has) do not repeat a style for a while.
    #[test]
    fn places_past_the_palette_keep_apart() {
        let styles: Vec<Style> = (0..28).map(nth).collect();
        for (i, a) in styles.iter().enumerate() {
            assert!(styles[i + 1..].iter().all(|b| b != a), "place {i}");
        }
    }

    #[test]
    fn a_marker_stays_within_its_radius() {
        for m in SHAPES.into_iter().chain([Marker::Cross]) {
            let o = outline(m, 5);
            assert!(o.len() >= 3, "{m:?}");
            assert!(o.iter().all(|(x, y)| x.abs() <= 7 && y.abs() <= 7), "{m:?}: {o:?}");
        }
    }
}
