//! The source tree's structure, as docs/design.md ("Layers: who may import whom") states it:
//! each top-level module imports only what its row of the layer table allows, no two files of
//! `src/` import each other (directly or round a longer cycle), and the command layer (`cmd`)
//! only commands: each of its files parses flags, calls the library and prints, in at most
//! `CMD_LINES` lines, and none runs a runtime, a thread or a worker pool of its own. Read from
//! the source text: every `crate::…` and `super::…` path outside a file's `#[cfg(test)]` tail
//! counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// docs/design.md's layer table: a top-level module and the thresher modules it may import.
/// `cmd` (every module below it), `main.rs` and `lib.rs` are in no row: nothing else may import
/// `cmd`, and `cli` is imported by `cmd` alone.
const ALLOWED: &[(&str, &[&str])] = &[
    ("dom", &[]),
    ("output", &[]),
    ("pool", &[]),
    ("warc", &[]),
    ("memory", &[]),
    ("cluster", &[]),
    ("template", &["dom"]),
    ("detect", &["dom", "template"]),
    ("eval", &["detect", "dom", "pool", "template"]),
    ("config", &["detect", "output", "template"]),
    ("store", &["dom", "output"]),
    ("crawl", &["config", "dom", "memory", "store", "warc"]),
    (
        "learn",
        &[
            "config", "crawl", "detect", "dom", "memory", "output", "pool", "store", "template",
        ],
    ),
    (
        "clean",
        &["crawl", "detect", "dom", "output", "pool", "warc"],
    ),
    (
        "inspect",
        &["crawl", "detect", "dom", "learn", "store", "template"],
    ),
    ("progress", &["crawl"]),
    (
        "corpus",
        &["crawl", "dom", "output", "pool", "store", "template"],
    ),
    ("status", &["crawl", "output", "progress", "store"]),
    (
        "run",
        &[
            "cluster", "config", "crawl", "learn", "memory", "output", "status", "store",
        ],
    ),
    ("cli", &["corpus", "detect", "template"]),
];

/// The longest a file of the command layer may be.
const CMD_LINES: usize = 400;

/// What a command must leave to the library: its own runtime, threads, tasks or worker pool.
const CMD_MAY_NOT: &[&str] = &[
    "block_on",
    "Runtime",
    "tokio::spawn",
    "spawn_blocking",
    "thread::spawn",
    "thread::scope",
    "parallel_map",
    "JoinSet",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/`, relative to it.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("src/ is readable").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(src()).expect("under src/").to_path_buf());
        }
    }
}

/// A file's module path: `learn/site.rs` → [learn, site]; `learn/mod.rs` → [learn].
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file's code without its test module (from a `#[cfg(test)]` before a `mod` on) and
/// without comments.
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(src().join(file)).expect("a source file is readable");
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let test_module = line.trim_start().starts_with("#[cfg(test)]")
            && lines.peek().is_some_and(|next| {
                let next = next.trim_start();
                let next = next.strip_prefix("pub(crate) ").unwrap_or(next);
                next.starts_with("mod ")
            });
        if test_module {
            break;
        }
        let line = line.split("//").next().unwrap_or("");
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The module paths `code` names from module `me`: `crate::a::b…`, `super::x…` (relative to
/// `me`'s parent, or `me` itself for a `mod.rs`) and the members of `use crate::{a::b, c}`.
fn paths_named(code: &str, me: &[String], is_mod_rs: bool) -> Vec<Vec<String>> {
    let ident = |s: &str| -> usize {
        s.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    };
    let mut found = Vec::new();
    for (start, root) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        let before = code[..start].chars().next_back().unwrap_or(' ');
        if before.is_alphanumeric() || before == '_' || before == ':' {
            continue;
        }
        let mut base: Vec<String> = if root == "crate::" {
            Vec::new()
        } else {
            let mut b = me.to_vec();
            if !is_mod_rs {
                b.pop();
            }
            b
        };
        // The segments after the root: names joined by `::`, up to a `{` group or anything else.
        let mut rest = &code[start + root.len()..];
        loop {
            let n = ident(rest);
            if n == 0 {
                break;
            }
            match &rest[..n] {
                "super" => {
                    base.pop();
                }
                name => base.push(name.to_string()),
            }
            rest = &rest[n..];
            match rest.strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    let mut p = base.clone();
                    p.extend(
                        item.split("::")
                            .map(|s| s.trim())
                            .map(|s| s[..ident(s)].to_string())
                            .filter(|s| !s.is_empty() && s != "self"),
                    );
                    found.push(p);
                }
            }
            None => found.push(base),
        }
    }
    found
}

/// The graph of `src/`: file → files it names (by the longest module path that is a file).
fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let by_module: BTreeMap<Vec<String>, PathBuf> =
        all.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut graph = BTreeMap::new();
    for file in &all {
        let me = module_of(file);
        let is_mod_rs = file
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs");
        let mut to = BTreeSet::new();
        for path in paths_named(&code(file), &me, is_mod_rs) {
            let target = (1..=path.len())
                .rev()
                .find_map(|n| by_module.get(&path[..n]));
            if let Some(t) = target {
                if t != file {
                    to.insert(t.clone());
                }
            }
        }
        graph.insert(file.clone(), to);
    }
    graph
}

#[test]
fn each_module_imports_only_what_the_layer_table_allows() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut wrong = Vec::new();
    for (file, targets) in graph() {
        let from = module_of(&file);
        let Some(top) = from.first() else { continue };
        let Some(may) = allowed.get(top.as_str()) else {
            // cmd (everything below it), main.rs and lib.rs are in no row.
            assert!(
                matches!(top.as_str(), "cmd" | "main") || from.is_empty(),
                "{} is in no row of the layer table (docs/design.md)",
                file.display()
            );
            continue;
        };
        for t in targets {
            let to = module_of(&t);
            let Some(to_top) = to.first() else { continue };
            if to_top != top && !may.contains(&to_top.as_str()) {
                wrong.push(format!("{} imports {}", file.display(), t.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports the layer table (docs/design.md) does not allow:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn only_cmd_imports_cli() {
    let mut wrong = Vec::new();
    for (file, targets) in graph() {
        let top = module_of(&file).first().cloned().unwrap_or_default();
        let names_cli = targets.iter().any(|t| t == Path::new("cli.rs"));
        if names_cli && !matches!(top.as_str(), "cmd" | "main" | "cli") {
            wrong.push(file.display().to_string());
        }
    }
    assert!(wrong.is_empty(), "import the flags (`cli`): {wrong:?}");
}

/// The command layer only commands: short files that parse flags, call the library and print;
/// a crawl run, a cluster worker, a clean, an inspect report or an evaluation is library work.
#[test]
fn the_command_layer_runs_no_work_of_its_own() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let cmd: Vec<&PathBuf> = all
        .iter()
        .filter(|f| module_of(f).first().is_some_and(|m| m == "cmd"))
        .collect();
    assert!(cmd.len() >= 8, "read {} files of src/cmd/", cmd.len());
    let mut wrong = Vec::new();
    for file in cmd {
        let text = std::fs::read_to_string(src().join(file)).expect("a source file is readable");
        let lines = text.lines().count();
        if lines > CMD_LINES {
            wrong.push(format!(
                "{} has {lines} lines (at most {CMD_LINES})",
                file.display()
            ));
        }
        let code = code(file);
        for word in CMD_MAY_NOT {
            if code.contains(word) {
                wrong.push(format!("{} names `{word}`", file.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the command layer does work the library should (docs/design.md, \"Layers\"):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other() {
    let graph = graph();
    // Tarjan's strongly connected components; any component of two or more files is a cycle.
    struct Walk<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        cycles: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a PathBuf) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in &self.graph[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.display().to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.cycles.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph: &graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        cycles: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    assert!(
        walk.cycles.is_empty(),
        "files that import each other: {:?}",
        walk.cycles
    );
}

/// The reader finds what it should, so the two checks above cannot pass by reading nothing.
#[test]
fn the_import_reader_sees_crate_super_and_grouped_paths() {
    let me = vec!["learn".to_string(), "site".to_string()];
    let code = "use crate::store::{Store, StoreError};\nuse crate::{dom::Dom, pool};\n\
                let x = super::output::write(crate::template::clean(y));\nnotcrate::x::y;";
    let mut got = paths_named(code, &me, false);
    got.sort();
    let want: Vec<Vec<&str>> = vec![
        vec!["dom", "Dom"],
        vec!["learn", "output", "write"],
        vec!["pool"],
        vec!["store", "Store"],
        vec!["store", "StoreError"],
        vec!["template", "clean"],
    ];
    assert_eq!(got, want);
    let g = graph();
    assert!(g.len() > 100, "read {} files", g.len());
    let site = g
        .get(Path::new("learn/site.rs"))
        .expect("learn/site.rs is read");
    assert!(site.contains(Path::new("store/mod.rs")), "{site:?}");
}

#[test]
fn sled_is_reached_only_through_store_and_html5ever_only_through_dom() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let mut wrong = Vec::new();
    for file in &all {
        let top = module_of(file).first().cloned().unwrap_or_default();
        let code = code(file);
        if top != "store" && code.contains("sled::") {
            wrong.push(format!("{} names sled", file.display()));
        }
        let parser = ["html5ever", "markup5ever"]
            .iter()
            .any(|c| code.contains(c));
        if top != "dom" && parser {
            wrong.push(format!("{} names html5ever", file.display()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
