//! The self-contained HTML report of a `softgpu test` run: a table of every case that ran and,
//! for each failure, expected/actual/diff thumbnails inlined as base64 PNG.

use super::runner::{CaseResult, CaseStatus};
use super::{encode_png, GoldenError};
use base64::Engine as _;
use image::RgbaImage;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Longest side of a thumbnail; larger images are scaled down (nearest neighbour, so the report
/// is the same on every machine).
pub const THUMBNAIL_SIZE: u32 = 256;

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

fn thumbnail(image: &RgbaImage) -> RgbaImage {
    let (w, h) = image.dimensions();
    let longest = w.max(h);
    if longest <= THUMBNAIL_SIZE {
        return image.clone();
    }
    let scale = |v: u32| ((u64::from(v) * u64::from(THUMBNAIL_SIZE)) / u64::from(longest)).max(1);
    image::imageops::resize(
        image,
        scale(w) as u32,
        scale(h) as u32,
        image::imageops::FilterType::Nearest,
    )
}

fn data_uri(image: &RgbaImage) -> String {
    let png = encode_png(&thumbnail(image));
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

/// Renders the report as one HTML document.
pub fn render_html(suite: &Path, results: &[CaseResult], summary: &str) -> String {
    let mut html = String::new();
    let title = format!("softgpu test: {}", suite.display());
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
<style>\nbody {{ font-family: sans-serif; margin: 1.5em; }}\n\
table {{ border-collapse: collapse; }}\ntd, th {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }}\n\
.ok {{ color: #070; }} .FAILED {{ color: #b00; font-weight: bold; }} .blessed {{ color: #05a; }}\n\
figure {{ display: inline-block; margin: 0.5em; }}\n\
img {{ width: {THUMBNAIL_SIZE}px; image-rendering: pixelated; border: 1px solid #888; background: repeating-conic-gradient(#ddd 0% 25%, #fff 0% 50%) 50% / 16px 16px; }}\n\
</style>\n</head>\n<body>\n<h1>{}</h1>\n<p id=\"summary\">{}</p>\n",
        escape_html(&title),
        escape_html(&title),
        escape_html(summary)
    );
    html.push_str("<table>\n<tr><th>#</th><th>case</th><th>status</th><th>details</th></tr>\n");
    for r in results {
        let word = match r.status {
            CaseStatus::Passed => "ok",
            CaseStatus::Failed => "FAILED",
            CaseStatus::Blessed => "blessed",
        };
        let details = match (&r.report, &r.message) {
            (Some(report), Some(m)) => format!("{}; {m}", report.summary()),
            (Some(report), None) => report.summary(),
            (None, Some(m)) => m.clone(),
            (None, None) => String::new(),
        };
        let name = if r.status == CaseStatus::Failed {
            format!("<a href=\"#case-{}\">{}</a>", r.index, escape_html(&r.name))
        } else {
            escape_html(&r.name)
        };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{name}</td><td class=\"{word}\">{word}</td><td>{}</td></tr>",
            r.index,
            escape_html(&details)
        );
    }
    html.push_str("</table>\n");

    let failures: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.status == CaseStatus::Failed)
        .collect();
    if !failures.is_empty() {
        html.push_str("<h2>Failures</h2>\n");
    }
    for r in failures {
        let _ = writeln!(
            html,
            "<section class=\"failure\" id=\"case-{}\">\n<h3>{}</h3>",
            r.index,
            escape_html(&r.name)
        );
        if let Some(message) = &r.message {
            let _ = writeln!(html, "<p>{}</p>", escape_html(message));
        }
        if let Some(report) = &r.report {
            let _ = writeln!(html, "<pre>{}</pre>", escape_html(&report.to_string()));
        }
        let paths: [Option<&PathBuf>; 3] = [
            Some(&r.expected_path),
            r.actual_path.as_ref(),
            r.diff_path.as_ref(),
        ];
        for ((label, image), path) in ["expected", "actual", "diff"]
            .iter()
            .zip(&r.images)
            .zip(paths)
        {
            if let Some(image) = image {
                let caption = match path {
                    Some(p) => format!("{label}: {}", p.display()),
                    None => label.to_string(),
                };
                let _ = writeln!(
                    html,
                    "<figure><img class=\"{label}\" alt=\"{label}\" src=\"{}\"><figcaption>{}</figcaption></figure>",
                    data_uri(image),
                    escape_html(&caption)
                );
            }
        }
        html.push_str("</section>\n");
    }
    html.push_str("</body>\n</html>\n");
    html
}

/// Writes `DIR/index.html` and returns its path.
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
