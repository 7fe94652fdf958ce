//! A page's links (`<a href>`, `<area href>`), in document order, kept compact: every `href`
//! in one string, so a page of hundreds of thousands of links is two allocations, not one per
//! link (the per-link strings, allocated while html5ever's tree was being freed, were
//! spread over all of its pages and kept them resident after the tree was gone).

/// One link of a page, borrowed from its [`Links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link<'a> {
    /// The `href` as written (unresolved, trimmed).
    pub href: &'a str,
    /// `rel` contains `nofollow`.
    pub nofollow: bool,
}

/// A page's links in document order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    /// Every `href`, one after the other.
    hrefs: String,
    /// Per link: where its `href` ends in `hrefs`, and whether it is `nofollow`.
    ends: Vec<(u32, bool)>,
}

impl Links {
    pub fn push(&mut self, href: &str, nofollow: bool) {
        self.hrefs.push_str(href);
        // A page is capped far below 4 GiB (`fetch.max_body_bytes`), and every href is a
        // part of it.
        let end = u32::try_from(self.hrefs.len()).unwrap_or(u32::MAX);
        self.ends.push((end, nofollow));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            links: self,
            at: 0,
            start: 0,
        }
    }
}

/// The links of a [`Links`], in order.
pub struct Iter<'a> {
    links: &'a Links,
    /// The next link's index.
    at: usize,
    /// Where its `href` starts.
    start: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Link<'a>;

    fn next(&mut self) -> Option<Link<'a>> {
        let &(end, nofollow) = self.links.ends.get(self.at)?;
        let end = end as usize;
        let href = self.links.hrefs.get(self.start..end).unwrap_or_default();
        self.at += 1;
        self.start = end;
        Some(Link { href, nofollow })
    }
}

impl<'a> IntoIterator for &'a Links {
    type Item = Link<'a>;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_come_back_in_order_with_their_flags() {
        let mut links = Links::default();
        links.push("a.html", false);
        links.push("", true);
        links.push("/é?q=1", false);
        let got: Vec<(&str, bool)> = links.iter().map(|l| (l.href, l.nofollow)).collect();
        assert_eq!(got, vec![("a.html", false), ("", true), ("/é?q=1", false)]);
        assert_eq!(links.len(), 3);
        assert_eq!((&links).into_iter().count(), 3);
    }

    /// Regression (`links3`): one `String` per link, allocated while html5ever's tree was being
    /// freed, kept most of the tree's pages resident until the links were in the store.
    #[test]
    fn links_of_a_page_are_kept_in_one_string_not_one_per_link() {
        let html: String = (0..1000)
            .map(|i| format!("<a href=' /p{i} '>{i}</a>"))
            .collect();
        let links = crate::dom::parse_html(&html).links;
        assert_eq!(links.len(), 1000);
        let hrefs: Vec<String> = (0..1000).map(|i| format!("/p{i}")).collect();
        assert_eq!(links.iter().map(|l| l.href).collect::<Vec<_>>(), hrefs);
        assert_eq!(links.hrefs, hrefs.concat());
    }
}
