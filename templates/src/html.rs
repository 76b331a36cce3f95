//! `--format html`: the Markdown page as one self-contained HTML file, its plots inline.
//!
//! The page is written once, in Markdown; HTML is that page converted by pulldown-cmark (with
//! tables), each image that links a drawn plot replaced by the plot's SVG, and the result put
//! into the `page.html` template (the styles, overridable like every template).

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::plots::Drawn;

/// The HTML body of a Markdown page, with every image of a drawn plot inlined as its SVG.
pub fn body(markdown: &str, plots: &[Drawn]) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    let mut inside_plot = false;
    let events = Parser::new_ext(markdown, options).filter_map(|event| match event {
        Event::Start(Tag::Image { ref dest_url, .. }) => {
            match plots.iter().find(|p| p.file == dest_url.as_ref()) {
                Some(plot) => {
                    inside_plot = true;
                    Some(Event::InlineHtml(
                        format!("<figure class=\"plot\">{}</figure>", inline(&plot.svg)).into(),
                    ))
                }
                None => Some(event),
            }
        }
        // The alt text of an inlined plot: the SVG carries its own title.
        Event::End(TagEnd::Image) if inside_plot => {
            inside_plot = false;
            None
        }
        _ if inside_plot => None,
        other => Some(other),
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    // A plot stands alone in its paragraph; a figure is a block, not inside a `<p>`.
    html.replace("<p><figure class=\"plot\">", "<figure class=\"plot\">")
        .replace("</figure></p>", "</figure>")
}

/// An SVG document as an element of the page: no XML declaration, no trailing newline.
fn inline(svg: &str) -> &str {
    let svg = svg.trim();
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest
            .split_once("?>")
            .map_or(svg, |(_, body)| body.trim_start()),
        None => svg,
    }
}

/// The page's title: its first heading's text, without the `#`.
pub fn title(markdown: &str) -> String {
    markdown
        .lines()
        .find_map(|line| line.strip_prefix("# "))
        .unwrap_or("Capacity")
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plot_image_becomes_its_svg_and_other_images_stay_links() {
        let plots = [Drawn {
            file: "memory.svg".into(),
            svg: "<?xml version=\"1.0\"?>\n<svg><circle/></svg>\n".into(),
        }];
        let html = body(
            "# T\n\n![Memory per room](memory.svg)\n\n![other](other.png)\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n",
            &plots,
        );
        assert!(
            html.contains("\n<figure class=\"plot\"><svg><circle/></svg></figure>\n"),
            "{html}"
        );
        assert!(!html.contains("Memory per room"), "{html}");
        assert!(
            html.contains("<img src=\"other.png\" alt=\"other\" />"),
            "{html}"
        );
        assert!(html.contains("<td>2</td>"), "{html}");
    }

    #[test]
    fn the_title_is_the_first_heading() {
        assert_eq!(title("intro\n# Capacity: relay\n## x"), "Capacity: relay");
    }
}
