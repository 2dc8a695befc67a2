//! report.html: self-contained, the sections and plots a reader expects, and the summary's
//! wording, snapshot-tested on a seeded synthetic tune.

use nictune_report::{report_html, summary};
use nictune_tune::objective::Goal;
use nictune_tune::results::TuneResults;
use nictune_tune::synthetic::demo;
use nictune_tune::verdict::Verdict;

fn results() -> TuneResults {
    demo(4, Goal::Latency, 72, false).expect("synthetic tune")
}

/// The page's skeleton: sections, headings, plots with how many rows or points they draw,
/// tables with their row counts. What changes when the structure changes, not the numbers.
fn outline(html: &str) -> String {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let end = rest[start..]
            .find('>')
            .map_or(rest.len(), |e| start + e + 1);
        let tag = &rest[start..end];
        let name: String = tag[1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let attr = |a: &str| {
            tag.find(&format!("{a}=\""))
                .map(|i| {
                    let v = &tag[i + a.len() + 2..];
                    v[..v.find('"').unwrap_or(0)].to_string()
                })
                .unwrap_or_default()
        };
        match name.as_str() {
            "section" | "h1" | "h2" | "table" | "pre" | "dl" => {
                out.push(format!("{name} id={} class={}", attr("id"), attr("class")))
            }
            "svg" => {
                let body = &rest[end..rest[end..].find("</svg>").map_or(rest.len(), |e| end + e)];
                out.push(format!(
                    "  svg id={} rows={} points={} front={}",
                    attr("id"),
                    body.matches(r#"<g class="row"#).count(),
                    body.matches(r#"<g class="point"#).count(),
                    body.matches(r#"<g class="point front"#).count(),
                ));
            }
            "tr" => out.push("    tr".into()),
            "p" if attr("class") == "note" => out.push("  p.note".into()),
            _ => {}
        }
        rest = &rest[end..];
    }
    // Collapse table rows into counts.
    let mut folded: Vec<String> = Vec::new();
    for line in out {
        match (folded.last_mut(), line.as_str()) {
            (Some(last), "    tr") if last.starts_with("    tr") => {
                let n: usize = last.trim_start_matches("    tr×").parse().unwrap_or(1);
                *last = format!("    tr×{}", n + 1);
            }
            (_, "    tr") => folded.push("    tr×1".into()),
            _ => folded.push(line),
        }
    }
    folded.join("\n")
}

/// Text without tags, one block per line, for reading the wording.
fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => {
                in_tag = true;
                if !out.ends_with('\n') {
                    out.push('\n');
                }
            }
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_page_has_every_section_and_plot() {
    let html = report_html(&results());
    insta::assert_snapshot!(outline(&html));
}

#[test]
fn the_summary_reads_at_a_glance() {
    let r = results();
    assert_eq!(r.recommendation.verdict, Verdict::Improvement);
    insta::assert_snapshot!(text(&summary::render(&r)));
}

#[test]
fn the_page_is_self_contained() {
    let html = report_html(&results());
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "no scripts");
    for external in ["src=", "href=", "url(", "@import"] {
        assert!(!html.contains(external), "found {external}");
    }
    // The only URL is the SVG namespace, which browsers never fetch.
    let urls = html.matches("http").count();
    let namespaces = html
        .matches(r#"xmlns="http://www.w3.org/2000/svg""#)
        .count();
    assert_eq!(urls, namespaces);
}

#[test]
fn synthetic_results_are_labelled_as_such() {
    let html = report_html(&results());
    assert!(html.contains("SYNTHETIC DEMONSTRATION"));
}

#[test]
fn a_no_difference_verdict_says_keep_the_settings() {
    let mut r = results();
    r.recommendation.verdict = Verdict::NoSignificantDifference;
    r.recommendation.headline = Verdict::NoSignificantDifference.headline().into();
    r.recommendation.settings.clear();
    r.recommendation.id = r.baseline_id.clone();
    let html = summary::render(&r);
    assert!(html.contains("No significant difference"));
    assert!(html.contains("Keep the settings as found"));
    assert!(!html.contains("pre class=\"settings\""));
}

#[test]
fn names_that_look_like_markup_are_escaped() {
    let mut r = results();
    r.environment.target_name = "<img src=x onerror=alert(1)>".into();
    let html = report_html(&r);
    assert!(!html.contains("<img"));
    assert!(html.contains("&lt;img src=x"));
}

#[test]
fn without_a_prediction_there_is_no_predicted_card() {
    let html = report_html(&results());
    assert!(!html.contains(r#"id="predicted""#), "empty predicted card");
    assert!(!html.contains("Predicted against measured"));
    let predicted = demo(4, Goal::Latency, 72, true).expect("synthetic tune");
    let html = report_html(&predicted);
    assert!(html.contains(r#"<svg id="plot-predicted""#));
}

/// The results of a veth testbed: no device interrupt fired, the bench counted NET_RX
/// softirqs on both hosts (one machine, so the busiest view counts).
fn veth_like() -> TuneResults {
    let mut r = results();
    for (i, p) in r.points.iter_mut().enumerate() {
        if let Some(e) = p.summary.interrupts_per_sec.as_mut() {
            *e = nictune_tune::stats::Estimate {
                mean: 0.0,
                low: 0.0,
                high: 0.0,
                ..*e
            };
        }
        let base = 10_000.0 + 1_000.0 * i as f64;
        for run in &mut p.runs {
            for host in run.hosts.values_mut() {
                host.interrupts_per_sec = Some(0.0);
                host.net_rx_softirqs_per_sec = Some(base);
            }
            // A second view of the same machine that saw fewer: the busiest view counts.
            let mut other = run.hosts.values().next().expect("a host").clone();
            other.net_rx_softirqs_per_sec = Some(base / 2.0);
            run.hosts.insert("zz-other-view".into(), other);
        }
    }
    r
}

#[test]
fn on_veth_the_panel_plots_wake_ups_not_a_row_of_zeros() {
    let r = veth_like();
    assert_eq!(r.cpu_scope, nictune_tune::observe::CpuScope::SharedMachine);
    let html = report_html(&r);
    let section = &html[html.find(r#"<section id="interrupts""#).unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("Receive wake-ups per second"), "{section}");
    assert!(section.contains("NET_RX softirqs"), "{section}");
    // Every row has a bar, and the first point's value is the busier view's.
    let bars = section.matches(r#"<rect class="bar""#).count();
    assert_eq!(bars, r.points.len());
    let first = nictune_report::format::label(&r.points[0]);
    assert!(
        section.contains(&format!("{}: 10k NET_RX wake-ups/s", first)),
        "{section}"
    );
    // The table's column says the same, and the legend explains NET_RX.
    assert!(html.contains("<th>NET_RX wake-ups/s</th>"));
    assert!(html.contains("<dt>NET_RX</dt>"));
}

/// A tune of both ends: every other point's settings moved to the peer, and the bench's
/// `client` (this end) and `server` (the peer) counting interrupts in every run.
fn both_ends_like() -> TuneResults {
    let mut r = results();
    for (i, p) in r.points.iter_mut().enumerate() {
        if i % 2 == 1 {
            let moved = std::mem::take(&mut p.settings);
            p.settings = moved
                .into_iter()
                .map(|(k, v)| (format!("peer:{k}"), v))
                .collect();
        }
        for run in &mut p.runs {
            let template = run.hosts.values().next().expect("a host").clone();
            run.hosts.clear();
            for (name, rate) in [("client", 1_000.0), ("server", 3_000.0)] {
                let mut host = template.clone();
                host.interrupts_per_sec = Some(rate);
                run.hosts.insert(name.into(), host);
            }
        }
    }
    r
}

/// Each end's setting shows on its own NIC, so the panel splits every bar into this end's
/// interrupts and the peer's, and labels the peer's settings as such.
#[test]
fn a_tune_of_both_ends_splits_each_bar_between_the_ends() {
    let r = both_ends_like();
    let html = report_html(&r);
    let section = &html[html.find(r#"<section id="interrupts""#).unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    let rows = r.points.len();
    assert_eq!(
        section.matches(r#"<rect class="bar here""#).count(),
        rows + 1
    );
    assert_eq!(
        section.matches(r#"<rect class="bar peer""#).count(),
        rows + 1
    );
    assert!(section.contains(">this end</text>") && section.contains(">peer</text>"));
    assert_eq!(
        section.matches(">1000 + 3000</text>").count(),
        rows,
        "{section}"
    );
    assert!(html.contains("peer:"), "the peer's settings are named so");
    // The table of all points shows the same split, under a heading that says so.
    let table = &html[html.find(r#"<table class="points">"#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains("interrupts/s (this end + peer)"), "{table}");
    assert_eq!(
        table.matches("<td>1000 + 3000</td>").count(),
        rows,
        "{table}"
    );
    // One end's tune keeps one bar per row and one figure per cell.
    let one = report_html(&results());
    assert!(!one.contains("bar here") && !one.contains("(this end + peer)"));
}

/// An MSI-X NIC counted line by line: the table of all points gives each line's mean rate,
/// which shows what the total hides (e1000e's NAPI deferral masks the RX vector only).
#[test]
fn each_interrupt_line_shows_in_the_table_where_a_nic_has_several() {
    use nictune_core::metrics::IrqRate;
    let mut r = results();
    for p in &mut r.points {
        for (i, run) in p.runs.iter_mut().enumerate() {
            let host = run.hosts.values_mut().next().expect("a host");
            host.vectors = vec![
                IrqRate {
                    irq: 24,
                    action: "eth0-rx-0".into(),
                    per_sec: 900.0 + 200.0 * (i % 2) as f64,
                },
                IrqRate {
                    irq: 25,
                    action: "eth0-tx-0".into(),
                    per_sec: 4_800.0,
                },
            ];
        }
    }
    let html = report_html(&r);
    let table = &html[html.find(r#"<table class="points">"#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains("<th>per interrupt line, /s</th>"), "{table}");
    let rows = table.matches("<tr class=").count();
    let cells = table.matches("<td>eth0-rx-0 ").count();
    assert_eq!(cells, rows, "{table}");
    assert_eq!(
        table.matches(" · eth0-tx-0 4800</td>").count(),
        rows,
        "{table}"
    );
    // A point measured twice averages its runs: 900 and 1100.
    assert!(table.contains("<td>eth0-rx-0 1000 · "), "{table}");
    // Without lines the column is not there.
    assert!(!report_html(&results()).contains("per interrupt line"));
}

#[test]
fn with_nothing_counted_the_panel_says_so() {
    let mut r = veth_like();
    for p in &mut r.points {
        for run in &mut p.runs {
            for host in run.hosts.values_mut() {
                host.net_rx_softirqs_per_sec = None;
            }
        }
    }
    let html = report_html(&r);
    assert!(!html.contains(r#"<svg id="plot-interrupts""#));
    assert!(html.contains("Neither device interrupts nor receive wake-ups"));
}

#[test]
fn every_abbreviation_in_the_labels_is_in_the_legend() {
    let r = results();
    let html = report_html(&r);
    let legend = &html[html.find(r#"<section id="abbreviations""#).expect("legend")..];
    for p in &r.points {
        for part in nictune_report::format::label(p).split(" · ") {
            let word = part.split(' ').next().unwrap();
            if word == "as" {
                continue; // "as found", plain words
            }
            assert!(
                legend.contains(&format!("<dt>{word}</dt>")),
                "{word} unexplained"
            );
        }
    }
    assert!(legend.contains("gro_flush_timeout"));
}

#[test]
fn a_time_budget_spent_on_switching_is_said_beside_the_run_count() {
    let mut r = results();
    assert!(!text(&report_html(&r)).contains("switching between candidates"));
    r.search.spent_between_runs = 84;
    let page = text(&report_html(&r));
    // The page escapes the apostrophe.
    let said = "switching between candidates (driver reloads, settling) took the budget&#39;s \
                time of 84 more";
    assert!(page.contains(said), "{page}");
}

/// A point with a setting not taken is marked wherever the page names it (its label in the
/// plots and the table, its row); the recommended point's adjusted value is said as asked
/// and made, and the passed-over point is named in the summary.
#[test]
fn a_setting_not_taken_is_marked_and_an_adjusted_one_is_said_asked_and_made() {
    use nictune_tune::readback::Taken;
    use nictune_tune::results::{PointReadBack, PointValue};
    let mut r = results();
    assert!(!report_html(&r).contains("NOT TAKEN"));
    let kept = r
        .points
        .iter()
        .position(|p| !p.baseline && p.id != r.recommendation.id);
    let kept = kept.expect("a point besides the baseline and the recommendation");
    let (key, asked) = r.points[kept].settings.iter().next().expect("settings");
    let (key, asked) = (key.clone(), asked.clone());
    r.points[kept].read_back = vec![PointReadBack {
        key: key.clone(),
        asked,
        read: PointValue::Number(0),
        taken: Taken::NotTaken,
        objects: vec!["eth0".into()],
        text: format!("{key}: NOT taken in this test"),
    }];
    let id = r.points[kept].id.clone();
    r.recommendation.passed_over = vec![id];
    r.recommendation.adjusted = vec!["coalesce.rx-usecs: asked 45, the driver made it 48".into()];
    let html = report_html(&r);
    assert_eq!(
        html.matches(r#"<tr class="not-taken">"#).count(),
        1,
        "one row marked"
    );
    let page = text(&html);
    for said in [
        "NOT WHAT IT CLAIMS, never recommended",
        &format!("{key}: NOT taken in this test"),
        "Passed over:",
        "asked 45, the driver made it 48",
        "1 measured point(s) had a setting NOT taken",
    ] {
        assert!(page.contains(said), "{said:?} missing from\n{page}");
    }
    // The label, as the plots and the table write it.
    assert!(page.contains("NOT TAKEN ·"), "{page}");
}
