//! Rendering what a tune found — the self-contained `report.html` with hand-written SVG plots
//! — and what the simulator predicted, as the text `nictune sim` prints.
//!
//! Place in the data flows: the last step of both. The tune crate's
//! [`TuneResults`](nictune_tune::results::TuneResults) (measured by the bench engine, predicted
//! by the simulator) comes in; a string of HTML goes out. Renderers are pure
//! `fn(&TuneResults) -> String`: no statistics are computed here beyond means of what the
//! results hold, nothing is read from or written to disk, and the page fetches nothing.
//!
//! - [`html`]: the page, its inline CSS and its sections;
//! - [`summary`]: the verdict, the settings, gain and cost against the settings as found;
//! - [`plot`]: the SVG plots; [`table`]: every point's numbers;
//! - [`sim`]: the text `nictune sim` prints for a run, a sweep, `--list`, `--keys` and
//!   `--explain` (Flow A's last step: the simulator's results in, text out).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod escape;
pub mod format;
pub mod html;
pub mod plot;
pub mod sim;
pub mod summary;
pub mod table;

pub use html::render as report_html;
