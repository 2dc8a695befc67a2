//! Rendering: human tables, and the self-contained HTML report with SVG plots.
//!
//! Renderers take data and return strings; no statistics are computed here.
#![forbid(unsafe_code)]
