//! The report's charts: each kind of chart behind one trait (`Drawing`), drawn in turn by
//! `draw_all`, each written as SVG and PNG into the report's `charts/` folder; what they share
//! is in `pieces`, which depends on nothing above it.

mod ab;
mod bars;
mod loans;
pub mod pieces;
mod scaling;
mod scatter;
mod sizes;
mod spectrum;
mod timeline;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::Result;
use plotters::style::RGBColor;

use super::View;
pub use pieces::{Chart, Place};
use pieces::{Style, placed};
pub use spectrum::SPECTRA;

/// A kind of chart: the charts it draws of a view (none where the view has nothing it shows).
pub trait Drawing {
    fn draw(&self, view: &View, out: &mut Out) -> Result<Vec<Chart>>;
}

/// Where the charts go, and what the report wrote besides them (a spectrum's `.hgrm` files).
pub struct Out<'a> {
    pub charts: &'a Path,
    pub hgrm: &'a Path,
    pub written: &'a mut Vec<PathBuf>,
}

/// Every kind, in the order the report lists their charts.
const KINDS: &[&dyn Drawing] = &[
    &bars::Bars,
    &scatter::Cost,
    &scatter::Placing,
    &sizes::Sizes,
    &loans::Loans,
    &scaling::Counts,
    &timeline::Timeline,
    &ab::Ab,
    &spectrum::Spectra,
];

/// Every kind's charts of `view`.
pub fn draw_all(view: &View, out: &mut Out) -> Result<Vec<Chart>> {
    pieces::font();
    let mut charts = Vec::new();
    for kind in KINDS {
        charts.extend(kind.draw(view, out)?);
    }
    Ok(charts)
}

/// The registry's ids, asked once.
fn registry() -> &'static [&'static str] {
    static IDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    IDS.get_or_init(crate::registry::ids)
}

/// A library's style: its place in the registry's order, or after it, by its place in the view.
fn style(view: &View, lib: &str) -> Style {
    let ids = registry();
    let at = ids
        .iter()
        .position(|id| *id == lib)
        .unwrap_or_else(|| ids.len() + view.libraries.iter().position(|l| l == lib).unwrap_or(0));
    placed(at, view.kind(lib))
}

/// A column's style: its library's, lighter for each further machine.
fn column_style(view: &View, (lib, source): &(String, usize)) -> Style {
    let base = style(view, lib);
    let mix = |c: u8| (c as f64 + (255.0 - c as f64) * (*source as f64 * 0.45).min(0.8)) as u8;
    Style { color: RGBColor(mix(base.color.0), mix(base.color.1), mix(base.color.2)), ..base }
}
