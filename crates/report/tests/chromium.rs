//! report.html in a real browser: headless Chromium (Debian package `chromium`, installed by
//! scripts/install-deps) parses it with no console errors and no network requests, the plots
//! are in the DOM it builds, and a screenshot is kept under target/ for a person to look at.
//!
//! Without Chromium the test skips through [`nictune_core::live::skip`], so it fails instead
//! under `NICTUNE_REQUIRE_LIVE` (a root `scripts/test`, which installs Chromium first).

use nictune_report::report_html;
use nictune_tune::objective::Goal;
use nictune_tune::synthetic::demo;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where the report and the screenshot are kept after the test.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-artifacts");
    std::fs::create_dir_all(&dir).expect("artifact directory");
    dir
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Chromium, or `None` after saying why the test is skipped ([`nictune_core::live::skip`]:
/// a root `scripts/test` installs it first, and fails the test instead of skipping it).
fn chromium_or_skip() -> Option<PathBuf> {
    let bin = chromium();
    if bin.is_none() {
        nictune_core::live::skip(
            "chromium is not installed (scripts/install-deps installs the Debian package, as root)",
        );
    }
    bin
}

/// Runs Chromium headless on `page` with `extra` flags; kills it after 90 s.
fn run_chromium(bin: &Path, profile: &Path, extra: &[&str], page: &Path) -> Output {
    let profile_flag = format!("--user-data-dir={}", profile.display());
    let url = format!("file://{}", page.display());
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            &profile_flag,
        ])
        .args(extra)
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().expect("wait for chromium").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().expect("chromium output")
}

/// Console messages and failed requests Chromium logged: none are allowed.
fn problems(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("net::ERR_"))
        .collect()
}

#[test]
fn report_renders_in_headless_chromium_with_its_plots() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = artifacts();
    let page = dir.join("report.html");
    let results = demo(4, Goal::Latency, 72, true).expect("synthetic tune");
    std::fs::write(&page, report_html(&results)).expect("write report");
    let profile = dir.join(format!("chromium-profile-{}", std::process::id()));

    let dom = run_chromium(&bin, &profile, &["--dump-dom"], &page);
    let html = String::from_utf8_lossy(&dom.stdout);
    let stderr = String::from_utf8_lossy(&dom.stderr);
    assert!(dom.status.success(), "chromium failed: {stderr}");
    assert!(problems(&stderr).is_empty(), "{:?}", problems(&stderr));
    for id in [
        "plot-latency",
        "plot-tradeoff",
        "plot-interrupts",
        "plot-predicted",
    ] {
        assert!(
            html.contains(&format!(r#"<svg id="{id}""#)),
            "{id} missing from the DOM"
        );
    }
    let rows = html.matches(r#"<g class="row"#).count();
    assert_eq!(rows, 2 * results.points.len(), "latency and interrupt rows");
    assert!(html.contains("<circle"), "plots draw points");

    let shot = dir.join("report.png");
    let _ = std::fs::remove_file(&shot);
    let screenshot_flag = format!("--screenshot={}", shot.display());
    let out = run_chromium(
        &bin,
        &profile,
        &[
            &screenshot_flag,
            "--window-size=1000,3000",
            "--hide-scrollbars",
        ],
        &page,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "screenshot failed: {stderr}");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png.len() > 20_000,
        "a blank page would be tiny: {} bytes",
        png.len()
    );
    let _ = std::fs::remove_dir_all(&profile);
    eprintln!("report screenshot: {}", shot.display());
}

/// Run in the page (a copy of the report with this appended; the report itself has no
/// scripts): every element that scrolls sideways or sticks out of its card, and the page if
/// it is wider than the window, one per line in `<pre id="overflow">`.
const MEASURE: &str = r#"<script>
(() => {
  const vw = document.documentElement.clientWidth;
  const bad = [];
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.getAttribute('class') ? '.' + el.getAttribute('class').split(' ').join('.') : '');
  if (document.documentElement.scrollWidth > vw) {
    bad.push('page ' + document.documentElement.scrollWidth + ' px > window ' + vw + ' px');
  }
  for (const el of document.querySelectorAll('main *')) {
    if (el instanceof HTMLElement && el.scrollWidth > el.clientWidth + 1) {
      bad.push(name(el) + ' overflows: ' + el.scrollWidth + ' px in ' + el.clientWidth + ' px');
    }
    const card = el.closest('section');
    if (card && card !== el) {
      const r = el.getBoundingClientRect(), c = card.getBoundingClientRect();
      if (r.width > 0 && (r.right > c.right + 1 || r.left < c.left - 1)) {
        bad.push(name(el) + ' sticks out of section#' + card.id + ' by ' +
          Math.round(Math.max(r.right - c.right, c.left - r.left)) + ' px');
      }
    }
  }
  const out = document.createElement('pre');
  out.id = 'overflow';
  out.textContent = bad.length ? bad.join('\n') : 'none';
  document.body.appendChild(out);
})();
</script>"#;

/// What [`MEASURE`] found on `html` in a window `width` px wide.
fn overflow_at(bin: &Path, html: &str, width: u32, tag: &str) -> String {
    let dir = artifacts();
    let page = dir.join(format!("report-measure-{tag}.html"));
    let measured = html.replace("</body>", &format!("{MEASURE}</body>"));
    std::fs::write(&page, measured).expect("write page");
    let profile = dir.join(format!("chromium-profile-m-{tag}-{}", std::process::id()));
    let size = format!("--window-size={width},3000");
    let out = run_chromium(bin, &profile, &["--dump-dom", &size], &page);
    let _ = std::fs::remove_dir_all(&profile);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = dom
        .find(r#"<pre id="overflow">"#)
        .expect("the measuring script ran");
    let rest = &dom[start + r#"<pre id="overflow">"#.len()..];
    rest[..rest.find("</pre>").unwrap_or(rest.len())].to_string()
}

#[test]
fn report_fits_a_1280_px_window_with_nothing_sticking_out_of_its_card() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    // With and without a prediction (the predicted table is the widest).
    for (predict, tag) in [(true, "predicted"), (false, "plain")] {
        let results = demo(4, Goal::Latency, 72, predict).expect("synthetic tune");
        let found = overflow_at(&bin, &report_html(&results), 1280, tag);
        assert_eq!(found, "none", "{tag} report at 1280 px:\n{found}");
    }
}
