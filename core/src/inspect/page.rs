//! The page: one HTML document with its stylesheet and script inlined, all compiled into the
//! binary (`include_str!`), so the inspector works offline and the page loads nothing from
//! anywhere. The inline style and script carry a nonce fresh per response, and the
//! Content-Security-Policy allows nothing else: no other script, no frame, no form target,
//! and connections to this origin only.

const HTML: &str = include_str!("assets/index.html");
const CSS: &str = include_str!("assets/style.css");
const JS: &str = include_str!("assets/app.js");

/// The document, and the Content-Security-Policy that goes with it.
pub(crate) fn document() -> (String, String) {
    let nonce = crate::random::id128();
    let body = HTML
        .replace("{{NONCE}}", &nonce)
        .replace("{{STYLE}}", CSS)
        .replace("{{SCRIPT}}", JS)
        .replace("{{VERSION}}", env!("CARGO_PKG_VERSION"));
    (body, policy(&nonce))
}

fn policy(nonce: &str) -> String {
    format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; \
         img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    )
}

/// Headers every response carries: no caching, no sniffing, no framing, no referrer.
pub(crate) const COMMON_HEADERS: [(&str, &str); 5] = [
    ("cache-control", "no-store"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-resource-policy", "same-origin"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_whole_and_loads_nothing_else() {
        let (body, csp) = document();
        assert!(!body.contains("{{"), "a placeholder was left in the page");
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'none'"));
        // Nothing is fetched from another place: no external script, style, font or image.
        for needle in [
            "http://", "https://", "src=\"/", "href=\"/", "@import", "url(",
        ] {
            let outside_script = body.replace(JS, "");
            assert!(
                !outside_script.contains(needle),
                "the page refers out: {needle}"
            );
        }
        let (_, again) = document();
        assert_ne!(csp, again, "the nonce is fresh per response");
    }
}
