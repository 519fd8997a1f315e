//! An HTML page reduced to its main content, as text for `fetch`: the page's `<main>`
//! (or the element with `role="main"`, or its only `<article>`), else its body, without
//! what surrounds the content on most sites — navigation, banners, sidebars, footers,
//! forms, buttons, scripts, styles and hidden elements. The title leads. Deterministic:
//! the same page always gives the same text, and a page whose chosen part holds no text
//! falls back to its whole (pruned) body, so nothing readable is lost to the choice.

use html2text::Element;
use html2text::Handle;
use html2text::RcDom;
use std::rc::Rc;

/// Elements that never carry a page's content.
const NEVER_CONTENT: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
    "form", "button", "input", "select", "textarea", "nav", "aside", "dialog", "menu",
];
/// ARIA roles of the parts around the content.
const SURROUNDING_ROLES: &[&str] = &[
    "navigation",
    "complementary",
    "banner",
    "contentinfo",
    "search",
    "dialog",
    "alertdialog",
    "menu",
    "menubar",
];

/// The page's main content as text `width` columns wide; `None` when it cannot be parsed.
pub fn main_text(html: &[u8], width: usize) -> Option<String> {
    let config = html2text::config::plain();
    let dom = config.parse_html(html).ok()?;
    let body = find(&dom.document, &|node| tag(node) == Some("body"))?;
    let title = find(&dom.document, &|node| tag(node) == Some("title"))
        .and_then(|title| render_only(&config, &dom, &body, &title, width))
        .map(|title| title.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|title| !title.is_empty());
    let whole: Vec<Handle> = body.children.borrow().clone();
    let root = content_root(&body);
    prune(&root, Rc::ptr_eq(&root, &body));
    let mut text = render_only(&config, &dom, &body, &root, width).unwrap_or_default();
    if text.trim().is_empty() && !Rc::ptr_eq(&root, &body) {
        *body.children.borrow_mut() = whole;
        prune(&body, true);
        text = render(&config, &dom, width).unwrap_or_default();
    }
    let text = text.trim();
    Some(match title {
        Some(title) if !text.starts_with(&format!("# {title}")) => {
            format!("# {title}\n\n{text}").trim_end().to_string()
        }
        _ => text.to_string(),
    })
}

/// Where the content is: `<main>`, `role="main"`, the one `<article>`, else the body.
fn content_root(body: &Handle) -> Handle {
    if let Some(main) = find(body, &|node| tag(node) == Some("main")) {
        return main;
    }
    if let Some(main) = find(body, &|node| {
        attribute(node, "role").as_deref() == Some("main")
    }) {
        return main;
    }
    let mut articles = Vec::new();
    collect(body, &|node| tag(node) == Some("article"), &mut articles);
    match articles.as_slice() {
        [only] => only.clone(),
        // Several articles are a list of them (a blog's index): the body is the content.
        _ => body.clone(),
    }
}

/// Drops, at every depth under `node`, what is never content. `<header>` and `<footer>`
/// go too, except inside an `<article>` (where they hold its title, author and date) or
/// when the content root is itself inside one.
fn prune(node: &Handle, drop_header_footer: bool) {
    let inside_article = tag(node) == Some("article");
    let drop_here = drop_header_footer && !inside_article;
    node.children
        .borrow_mut()
        .retain(|child| !surrounds(child, drop_here));
    for child in node.children.borrow().iter() {
        prune(child, drop_here);
    }
}

fn surrounds(node: &Handle, drop_header_footer: bool) -> bool {
    let Some(name) = tag(node) else {
        return false;
    };
    if NEVER_CONTENT.contains(&name) {
        return true;
    }
    if drop_header_footer && matches!(name, "header" | "footer") {
        return true;
    }
    let role = attribute(node, "role").unwrap_or_default();
    if SURROUNDING_ROLES.contains(&role.to_ascii_lowercase().as_str()) {
        return true;
    }
    let style = attribute(node, "style")
        .unwrap_or_default()
        .to_ascii_lowercase()
        .replace(' ', "");
    attribute(node, "hidden").is_some()
        || attribute(node, "aria-hidden").as_deref() == Some("true")
        || style.contains("display:none")
        || style.contains("visibility:hidden")
}

/// The page rendered with `only` as the body's one child (the body's children are put
/// back after).
fn render_only(
    config: &html2text::config::Config<html2text::render::PlainDecorator>,
    dom: &RcDom,
    body: &Handle,
    only: &Handle,
    width: usize,
) -> Option<String> {
    if Rc::ptr_eq(body, only) {
        return render(config, dom, width);
    }
    let saved = std::mem::replace(&mut *body.children.borrow_mut(), vec![only.clone()]);
    let text = render(config, dom, width);
    *body.children.borrow_mut() = saved;
    text
}

fn render(
    config: &html2text::config::Config<html2text::render::PlainDecorator>,
    dom: &RcDom,
    width: usize,
) -> Option<String> {
    let tree = config.dom_to_render_tree(dom).ok()?;
    config.render_to_string(tree, width).ok()
}

/// The first node under `node` (itself included), depth first, that `wanted` accepts.
fn find(node: &Handle, wanted: &dyn Fn(&Handle) -> bool) -> Option<Handle> {
    if wanted(node) {
        return Some(node.clone());
    }
    node.children
        .borrow()
        .iter()
        .find_map(|child| find(child, wanted))
}

/// Every node under `node` that `wanted` accepts, outermost only.
fn collect(node: &Handle, wanted: &dyn Fn(&Handle) -> bool, into: &mut Vec<Handle>) {
    for child in node.children.borrow().iter() {
        if wanted(child) {
            into.push(child.clone());
        } else {
            collect(child, wanted, into);
        }
    }
}

/// The element's tag name (lower case, as the parser gives it); `None` for other nodes.
fn tag(node: &Handle) -> Option<&str> {
    match &node.data {
        Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn attribute(node: &Handle, wanted: &str) -> Option<String> {
    match &node.data {
        Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|attribute| &*attribute.name.local == wanted)
            .map(|attribute| attribute.value.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: &str = r#"<!doctype html><html><head><title>Release notes
      | Example</title><script>track()</script></head><body>
      <header><a href="/">Home</a> <a href="/docs">Docs</a></header>
      <nav><ul><li>Menu one</li><li>Menu two</li></ul></nav>
      <div class="wrap"><aside>Related posts</aside>
      <main><h1>Version 2.0</h1><p>The <code>parse</code> function now returns errors.</p>
      <form><input name="q"><button>Search</button></form>
      <div hidden>secret banner</div><p style="display: none">invisible</p></main></div>
      <footer>© Example, cookie settings</footer></body></html>"#;

    #[test]
    fn the_main_element_is_kept_and_the_rest_dropped() {
        let text = main_text(SITE.as_bytes(), 100).unwrap();
        assert!(text.starts_with("# Release notes | Example"), "{text}");
        assert!(text.contains("Version 2.0"), "{text}");
        assert!(text.contains("now returns errors"), "{text}");
        for gone in [
            "Home",
            "Menu one",
            "Related",
            "Search",
            "secret",
            "invisible",
            "cookie",
            "track()",
        ] {
            assert!(!text.contains(gone), "{gone} left in:\n{text}");
        }
    }

    #[test]
    fn one_article_keeps_its_own_header_and_several_mean_the_body() {
        let one = r#"<html><body><header>Site banner</header><article><header><h1>How to
            parse</h1><p>by Ada</p></header><p>Step one.</p></article>
            <footer>Legal</footer></body></html>"#;
        let text = main_text(one.as_bytes(), 100).unwrap();
        assert!(
            text.contains("How to parse") && text.contains("by Ada") && text.contains("Step one."),
            "{text}"
        );
        assert!(
            !text.contains("Site banner") && !text.contains("Legal"),
            "{text}"
        );

        let index = r#"<html><body><nav>Menu</nav><article><h2>First post</h2></article>
            <article><h2>Second post</h2></article></body></html>"#;
        let text = main_text(index.as_bytes(), 100).unwrap();
        assert!(
            text.contains("First post") && text.contains("Second post"),
            "{text}"
        );
        assert!(!text.contains("Menu"), "{text}");
    }

    #[test]
    fn an_empty_main_falls_back_to_the_body() {
        let page = r#"<html><body><main></main><div role="navigation">Links</div>
            <p>The real text sits outside main.</p></body></html>"#;
        let text = main_text(page.as_bytes(), 100).unwrap();
        assert!(text.contains("The real text sits outside main."), "{text}");
        assert!(!text.contains("Links"), "{text}");
    }

    #[test]
    fn a_page_without_structure_is_rendered_whole() {
        let text = main_text(b"<p>Just <b>text</b>.</p>", 100).unwrap();
        assert_eq!(text, "Just **text**.");
    }
}
