//! DOM path hashing (docs/design.md, "Pages as path sets"): a node's path is
//! `Document\<html>\<body>\…` ending with its tag (elements) or its normalised text (text nodes),
//! hashed to 64 bits by chaining xxh3 over the path's steps. The hash is stable across runs and
//! machines because sled stores it.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::tree::{Dom, NodeKind, NO_PARENT};

/// Hash of the path `Document`.
pub const DOCUMENT: u64 = 0x7468_7265_7368_6572; // "thresher"

// Distinct salts keep an element step `<b>` apart from a text step `b`.
const ELEMENT_SALT: u64 = 0x9e37_79b9_7f4a_7c15;
const TEXT_SALT: u64 = 0xc2b2_ae3d_27d4_eb4f;

/// Path hash of an element with local name `tag` under a node whose path hash is `parent`.
pub fn element_path(parent: u64, tag: &str) -> u64 {
    xxh3_64_with_seed(tag.as_bytes(), parent ^ ELEMENT_SALT)
}

/// Path hash of a (normalised) text node under an element whose path hash is `parent`.
pub fn text_path(parent: u64, text: &str) -> u64 {
    xxh3_64_with_seed(text.as_bytes(), parent ^ TEXT_SALT)
}

/// The readable form of node `i`'s path, as the papers write it (for reports and debugging).
pub fn path_string(dom: &Dom, i: usize) -> String {
    let mut steps: Vec<String> = Vec::new();
    let mut cur = i as u32;
    while cur != NO_PARENT {
        let node = &dom.nodes[cur as usize];
        steps.push(match &node.kind {
            NodeKind::Document => "Document".to_string(),
            NodeKind::Element(e) => format!("<{}>", e.tag),
            NodeKind::Text(t) => t.text.clone(),
        });
        cur = node.parent;
    }
    steps.reverse();
    steps.join("\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_and_text_steps_do_not_collide() {
        assert_ne!(element_path(DOCUMENT, "b"), text_path(DOCUMENT, "b"));
    }

    #[test]
    fn same_steps_same_hash_different_order_different_hash() {
        let a = element_path(element_path(DOCUMENT, "html"), "body");
        let b = element_path(element_path(DOCUMENT, "html"), "body");
        let c = element_path(element_path(DOCUMENT, "body"), "html");
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn hashes_are_stable_across_builds() {
        // sled stores these hashes: a change here silently invalidates every stored path set.
        assert_eq!(element_path(DOCUMENT, "html"), 0xcea7_4557_231f_e426);
    }
}
