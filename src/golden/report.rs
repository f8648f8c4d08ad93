//! The HTML report of a `softgpu test` run: `DIR/index.html`, a table of every case that ran
//! with its time and, for each failure (each case with `--report-all`), a viewer that flips
//! between the expected, actual and diff pictures at full size or slides between expected and
//! actual, and the case's passes with their times. The pictures are files under `DIR/cases/`
//! (written by the runner); the page needs nothing else: its CSS and script are inline and it
//! names no external URL.

use super::runner::{CaseResult, CaseStatus, PICTURE_KINDS};
use super::GoldenError;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "\
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #070; } .FAILED { color: #b00; font-weight: bold; } .blessed { color: #05a; }
section.case { border-top: 1px solid #ccc; margin-top: 1.5em; }
details.case { margin: 0.3em 0; }
.tabs button { font: inherit; padding: 0.3em 0.9em; border: 1px solid #888; background: #eee; cursor: pointer; }
.tabs button.on { background: #fff; border-bottom-color: #fff; font-weight: bold; }
.view { overflow: auto; max-width: 100%; border: 1px solid #888; padding: 0.5em; }
.view img { max-width: none; image-rendering: pixelated; display: block;
  background: repeating-conic-gradient(#ddd 0% 25%, #fff 0% 50%) 50% / 16px 16px; }
.slide { position: relative; display: inline-block; cursor: ew-resize; user-select: none; }
.slide .over { position: absolute; top: 0; left: 0; height: 100%; overflow: hidden;
  border-right: 2px solid #f0f; }
.slider { width: 100%; max-width: 40em; display: block; }
.hint { color: #555; font-size: 0.9em; }
";

// Tabs switch the visible view of their viewer; the range input (or dragging over the picture)
// moves the edge between actual (left) and expected (right).
const SCRIPT: &str = "\
document.addEventListener('click', function (e) {
  var b = e.target.closest('.tabs button');
  if (!b) return;
  var v = b.closest('.viewer');
  v.querySelectorAll('.tabs button').forEach(function (x) { x.classList.toggle('on', x === b); });
  v.querySelectorAll('.view').forEach(function (x) { x.hidden = x.dataset.view !== b.dataset.view; });
});
function slideTo(view, percent) {
  percent = Math.max(0, Math.min(100, percent));
  view.querySelector('.over').style.width = percent + '%';
  view.querySelector('input.slider').value = percent;
}
document.addEventListener('input', function (e) {
  if (e.target.matches('input.slider')) slideTo(e.target.closest('.view'), +e.target.value);
});
function drag(e) {
  var s = e.target.closest('.slide');
  if (!s || (e.type === 'mousemove' && !e.buttons)) return;
  var r = s.getBoundingClientRect();
  slideTo(s.closest('.view'), 100 * (e.clientX - r.left) / r.width);
  e.preventDefault();
}
document.addEventListener('mousedown', drag);
document.addEventListener('mousemove', drag);
";

fn status_word(status: CaseStatus) -> &'static str {
    match status {
        CaseStatus::Passed => "ok",
        CaseStatus::Failed => "FAILED",
        CaseStatus::Blessed => "blessed",
    }
}

fn millis(duration: Duration) -> String {
    format!("{:.1}", duration.as_secs_f64() * 1000.0)
}

/// A picture's path as a URL relative to the report (`/` between components).
fn picture_url(path: &Path) -> String {
    let joined = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    escape_html(&joined)
}

/// The flip/slide viewer of a case's pictures (none when it has no picture).
fn viewer(html: &mut String, result: &CaseResult) {
    let urls: Vec<Option<String>> = result
        .pictures
        .iter()
        .map(|p| p.as_deref().map(picture_url))
        .collect();
    let [expected, actual, _] = [&urls[0], &urls[1], &urls[2]];
    let slider = expected.is_some() && actual.is_some();
    let mut views: Vec<&str> = PICTURE_KINDS
        .iter()
        .zip(&urls)
        .filter(|(_, url)| url.is_some())
        .map(|(kind, _)| *kind)
        .collect();
    if slider {
        views.push("slider");
    }
    if views.is_empty() {
        return;
    }
    // Open on the diff when there is one, as a reviewer looks there first.
    let first = if urls[2].is_some() { "diff" } else { views[0] };
    html.push_str("<div class=\"viewer\">\n<div class=\"tabs\">");
    for view in &views {
        let on = if *view == first { " class=\"on\"" } else { "" };
        let _ = write!(
            html,
            "<button type=\"button\" data-view=\"{view}\"{on}>{view}</button>"
        );
    }
    html.push_str("</div>\n");
    for (kind, url) in PICTURE_KINDS.iter().zip(&urls) {
        if let Some(url) = url {
            let hidden = if *kind == first { "" } else { " hidden" };
            let _ = writeln!(
                html,
                "<div class=\"view\" data-view=\"{kind}\"{hidden}><img class=\"{kind}\" alt=\"{kind}\" src=\"{url}\" loading=\"lazy\"></div>"
            );
        }
    }
    if let (Some(expected), Some(actual)) = (expected, actual) {
        let _ = writeln!(
            html,
            "<div class=\"view\" data-view=\"slider\" hidden>\
<p class=\"hint\">left of the line: actual; right: expected (drag over the picture or move the slider)</p>\
<div class=\"slide\"><img class=\"slide-expected\" alt=\"expected\" src=\"{expected}\" loading=\"lazy\">\
<div class=\"over\" style=\"width: 50%\"><img class=\"slide-actual\" alt=\"actual\" src=\"{actual}\" loading=\"lazy\"></div></div>\
<input class=\"slider\" type=\"range\" min=\"0\" max=\"100\" step=\"0.1\" value=\"50\" aria-label=\"actual | expected\"></div>"
        );
    }
    html.push_str("</div>\n");
}

/// The table of a preset case's passes and their times.
fn pass_table(html: &mut String, result: &CaseResult) {
    let Some(timings) = &result.timings else {
        return;
    };
    let _ = writeln!(
        html,
        "<p>load {} ms, input frames {} ms</p>\n<table class=\"passes\">\n\
<tr><th>pass</th><th>size</th><th class=\"num\">frames</th><th class=\"num\">draw ms</th><th class=\"num\">prepare ms</th></tr>",
        millis(timings.load),
        millis(timings.inputs)
    );
    for pass in &timings.passes {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}x{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape_html(&pass.label),
            pass.size.0,
            pass.size.1,
            pass.frames,
            millis(pass.draw),
            millis(pass.prepare)
        );
    }
    html.push_str("</table>\n");
}

fn details_text(r: &CaseResult) -> String {
    match (&r.report, &r.message) {
        (Some(report), Some(m)) => format!("{}; {m}", report.summary()),
        (Some(report), None) => report.summary(),
        (None, Some(m)) => m.clone(),
        (None, None) => String::new(),
    }
}

/// The body of a case's section: its message, comparison, pictures and passes.
fn case_body(html: &mut String, r: &CaseResult) {
    if let Some(message) = &r.message {
        let _ = writeln!(html, "<p>{}</p>", escape_html(message));
    }
    if let Some(report) = &r.report {
        let _ = writeln!(html, "<pre>{}</pre>", escape_html(&report.to_string()));
    }
    let _ = writeln!(
        html,
        "<p class=\"hint\">expected: {}</p>",
        escape_html(&r.expected_path.display().to_string())
    );
    viewer(html, r);
    pass_table(html, r);
}

/// Renders the report as one HTML document. `suite` names what ran (the suite file or the
/// presets directory).
pub fn render_html(suite: &Path, results: &[CaseResult], summary: &str) -> String {
    let mut html = String::new();
    let title = escape_html(&format!("softgpu test: {}", suite.display()));
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
<style>\n{STYLE}</style>\n<script>\n{SCRIPT}</script>\n</head>\n<body>\n<h1>{title}</h1>\n<p id=\"summary\">{}</p>\n",
        escape_html(summary)
    );
    html.push_str(
        "<table>\n<tr><th>#</th><th>case</th><th>status</th><th class=\"num\">time s</th><th>details</th></tr>\n",
    );
    // Every case with something to show gets a section the table links to.
    let has_section = |r: &CaseResult| {
        r.status == CaseStatus::Failed
            || r.timings.is_some()
            || r.pictures.iter().any(Option::is_some)
    };
    for r in results {
        let word = status_word(r.status);
        let name = if has_section(r) {
            format!("<a href=\"#case-{}\">{}</a>", r.index, escape_html(&r.name))
        } else {
            escape_html(&r.name)
        };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{name}</td><td class=\"{word}\">{word}</td><td class=\"num\">{:.2}</td><td>{}</td></tr>",
            r.index,
            r.elapsed.as_secs_f64(),
            escape_html(&details_text(r))
        );
    }
    html.push_str("</table>\n");

    let (failures, others): (Vec<&CaseResult>, Vec<&CaseResult>) = results
        .iter()
        .filter(|r| has_section(r))
        .partition(|r| r.status == CaseStatus::Failed);
    if !failures.is_empty() {
        html.push_str("<h2>Failures</h2>\n");
    }
    for r in failures {
        let _ = writeln!(
            html,
            "<section class=\"case failure\" id=\"case-{}\">\n<h3>{}</h3>",
            r.index,
            escape_html(&r.name)
        );
        case_body(&mut html, r);
        html.push_str("</section>\n");
    }
    if !others.is_empty() {
        html.push_str("<h2>Other cases</h2>\n");
    }
    for r in others {
        let _ = writeln!(
            html,
            "<details class=\"case\" id=\"case-{}\"><summary>{} <span class=\"{word}\">{word}</span></summary>",
            r.index,
            escape_html(&r.name),
            word = status_word(r.status)
        );
        case_body(&mut html, r);
        html.push_str("</details>\n");
    }
    html.push_str("</body>\n</html>\n");
    html
}

/// Writes `DIR/index.html` and returns its path (the pictures are already under `DIR/cases/`).
pub fn write_report(
    dir: &Path,
    suite: &Path,
    results: &[CaseResult],
    summary: &str,
) -> Result<PathBuf, GoldenError> {
    let error = |path: &Path, e: std::io::Error| GoldenError::Image {
        path: path.to_path_buf(),
        message: format!("cannot write the report: {e}"),
    };
    std::fs::create_dir_all(dir).map_err(|e| error(dir, e))?;
    let path = dir.join("index.html");
    crate::output::write_atomic(
        &path,
        "the report",
        render_html(suite, results, summary).as_bytes(),
    )
    .map_err(|e| GoldenError::Image {
        path: path.clone(),
        message: e.message,
    })?;
    Ok(path)
}
