//! Pictures of counterfactual explanations for induce: a deterministic [`layout`], SVG
//! [`drawing`]s of one explanation (the neighbourhood before and after, edits coloured), size
//! [`histogram`]s, and a self-contained HTML [`report`] of one or more run directories.
//!
//! Everything here is plain string building over data the caller prepares (the `induce` facade
//! loads a run's graph and black box and fills a [`drawing::Scene`]); the same input always
//! gives the same bytes.

pub mod drawing;
pub mod histogram;
pub mod layout;
pub mod report;
pub mod xml;

pub use drawing::{EdgeState, EdgeView, NodeView, Scene, render_svg};
pub use histogram::histogram_svg;
pub use layout::stress_layout;
pub use report::{GalleryItem, ReportRun, gallery_picks, report_html};
