//! The crate's modules form no cycle: each module holds one capability and depends only on
//! lower-level ones, so it can be read, tested and changed without the modules that use it.
//!
//! The test parses every file under `src/` (with `syn`) and collects each module's dependencies:
//! `use crate::…`, `use super::…` and `use child::…` items, and `crate::…`, `super::…` and
//! `self::…` paths in code and in macro arguments. A path depends on the deepest module that
//! exists (`crate::x::y::Z` is `x::y` if `src/x/y.rs` exists, else `x`), following re-exports
//! (`crate::Buffer` is `buffer`, the module that defines it). Test code may reach anywhere:
//! `#[cfg(test)]` items, `#[test]` functions and `mod tests` are skipped.
//!
//! Edges count between siblings: a dependency of `a::x` on `b::y` is one of `a` on `b` where `a`
//! and `b` are siblings (children of the same module, the crate root for top-level ones). A
//! parent declaring, re-exporting or using its children (and a child using its parent) is the
//! inside of one capability, not a cycle. Every level's graph must be acyclic (Tarjan's strongly
//! connected components).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, Meta, Token, UseTree};

/// A module's path below the crate root (`[]` is the root, `["rendezvous", "join"]` is
/// `crate::rendezvous::join`).
type ModPath = Vec<String>;

/// A file module: its source file and what its top-level `use` items bring into scope.
struct Module {
    file: PathBuf,
    ast: syn::File,
    /// Name → absolute path of what it names, for following re-exports.
    imports: BTreeMap<String, ModPath>,
}

/// The crate's file modules, found from `lib.rs` through its `mod` declarations.
struct Tree {
    src: PathBuf,
    modules: BTreeMap<ModPath, Module>,
}

/// One dependency as written: from the module of `file` to `to`, at `line`.
struct Edge {
    from: ModPath,
    to: ModPath,
    file: PathBuf,
    line: usize,
    text: String,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "crate".to_owned()
    } else {
        format!("crate::{}", m.join("::"))
    }
}

/// Whether `attrs` make an item exist only in test builds (`#[test]`, or a `cfg` that needs
/// `test`, such as `#[cfg(all(test, not(loom)))]`).
fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<Meta>().is_ok_and(|m| needs_test(&m)))
    })
}

/// Whether the `cfg` predicate `m` can only hold with `test` set.
fn needs_test(m: &Meta) -> bool {
    match m {
        Meta::Path(p) => p.is_ident("test"),
        Meta::List(l) => {
            let Ok(args) = l.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            else {
                return false;
            };
            if l.path.is_ident("all") {
                args.iter().any(needs_test)
            } else if l.path.is_ident("any") {
                !args.is_empty() && args.iter().all(needs_test)
            } else {
                false
            }
        }
        Meta::NameValue(_) => false,
    }
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()))
}

/// Every `.rs` file under `dir`.
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

impl Tree {
    /// Follows the `mod` declarations from `lib.rs`; asserts that every file under `src/` is
    /// either one of the modules or test code, so that no module is silently left out.
    fn load(src: &Path) -> Tree {
        let mut modules = BTreeMap::new();
        let mut test_files = BTreeSet::new();
        let mut queue = VecDeque::from([(ModPath::new(), src.join("lib.rs"))]);
        while let Some((path, file)) = queue.pop_front() {
            let ast = parse(&file);
            let stem = file.file_stem().unwrap();
            let children_dir = if stem == "lib" || stem == "mod" {
                file.parent().unwrap().to_owned()
            } else {
                file.with_extension("")
            };
            for item in &ast.items {
                let syn::Item::Mod(m) = item else { continue };
                if m.content.is_some() {
                    continue;
                }
                let name = m.ident.to_string();
                let candidates = [
                    children_dir.join(format!("{name}.rs")),
                    children_dir.join(&name).join("mod.rs"),
                ];
                if test_only(&m.attrs) || name == "tests" {
                    test_files.extend(candidates.iter().cloned());
                    test_files.insert(children_dir.join(&name));
                    continue;
                }
                let child = candidates
                    .into_iter()
                    .find(|c| c.exists())
                    .unwrap_or_else(|| panic!("{}: no file for `mod {name};`", file.display()));
                let mut child_path = path.clone();
                child_path.push(name);
                queue.push_back((child_path, child));
            }
            modules.insert(
                path,
                Module {
                    file,
                    ast,
                    imports: BTreeMap::new(),
                },
            );
        }
        let mut all = Vec::new();
        rs_files(src, &mut all);
        for file in &all {
            let reached = modules.values().any(|m| &m.file == file);
            let test = test_files.iter().any(|t| file.starts_with(t));
            assert!(
                reached || test,
                "{}: not reached from lib.rs by a `mod` declaration (neither a module nor test \
                 code); the test's module loader has missed it",
                file.display()
            );
            // Test files must parse too: a syntax the test cannot read should fail loudly.
            if !reached {
                parse(file);
            }
        }
        let mut tree = Tree {
            src: src.to_owned(),
            modules,
        };
        let paths: Vec<ModPath> = tree.modules.keys().cloned().collect();
        for path in paths {
            let mut imports = BTreeMap::new();
            for item in &tree.modules[&path].ast.items {
                if let syn::Item::Use(u) = item {
                    if test_only(&u.attrs) {
                        continue;
                    }
                    for (segs, name) in use_leaves(&u.tree) {
                        if let (Some(name), Some(abs)) = (name, tree.absolute(&path, &segs, true)) {
                            imports.insert(name, abs);
                        }
                    }
                }
            }
            tree.modules.get_mut(&path).unwrap().imports = imports;
        }
        tree
    }

    fn is_module(&self, m: &[String]) -> bool {
        self.modules.contains_key(m)
    }

    /// `segs` as written in module `at` (a file module or an inline one inside it), made
    /// absolute; `None` for paths of other crates and of local items. A path relative to a
    /// child module counts (in `use` items, or in code with two segments at least).
    fn absolute(&self, at: &[String], segs: &[String], in_use: bool) -> Option<ModPath> {
        let first = segs.first()?;
        match first.as_str() {
            "crate" => Some(segs[1..].to_vec()),
            "self" => Some(at.iter().chain(&segs[1..]).cloned().collect()),
            "super" => {
                let mut base = at.to_vec();
                let mut rest = segs;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                Some(base)
            }
            _ if in_use || segs.len() >= 2 => {
                let mut child = at.to_vec();
                child.push(first.clone());
                self.is_module(&child)
                    .then(|| at.iter().chain(segs).cloned().collect())
            }
            _ => None,
        }
    }

    /// The file module an absolute path depends on: the deepest module that exists, followed
    /// through re-exports (`crate::Buffer` → `buffer`).
    fn resolve(&self, abs: &[String]) -> ModPath {
        let mut abs = abs.to_vec();
        for _ in 0..16 {
            let k = (0..=abs.len())
                .rev()
                .find(|&k| self.is_module(&abs[..k]))
                .unwrap();
            let Some(target) = abs
                .get(k)
                .and_then(|n| self.modules[&abs[..k]].imports.get(n))
            else {
                return abs[..k].to_vec();
            };
            let next: ModPath = target.iter().chain(&abs[k + 1..]).cloned().collect();
            if next == abs {
                break;
            }
            abs = next;
        }
        let k = (0..=abs.len())
            .rev()
            .find(|&k| self.is_module(&abs[..k]))
            .unwrap();
        abs[..k].to_vec()
    }

    fn edges(&self) -> Vec<Edge> {
        let mut found = Vec::new();
        for (path, module) in &self.modules {
            let mut c = Collector {
                tree: self,
                logical: path.clone(),
                found: Vec::new(),
            };
            c.visit_file(&module.ast);
            for (abs, line, text) in c.found {
                let to = self.resolve(&abs);
                if &to != path {
                    found.push(Edge {
                        from: path.clone(),
                        to,
                        file: module.file.strip_prefix(&self.src).unwrap().to_owned(),
                        line,
                        text,
                    });
                }
            }
        }
        found
    }
}

/// The leaves of a `use` tree: each path and the name it binds (`None` for a glob).
fn use_leaves(tree: &UseTree) -> Vec<(Vec<String>, Option<String>)> {
    fn walk(t: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
        match t {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            UseTree::Name(n) if n.ident == "self" => {
                out.push((prefix.clone(), prefix.last().cloned()));
            }
            UseTree::Name(n) => {
                let mut p = prefix.clone();
                p.push(n.ident.to_string());
                out.push((p, Some(n.ident.to_string())));
            }
            UseTree::Rename(r) => {
                let mut p = prefix.clone();
                if r.ident != "self" {
                    p.push(r.ident.to_string());
                }
                out.push((p, Some(r.rename.to_string())));
            }
            UseTree::Glob(_) => out.push((prefix.clone(), None)),
            UseTree::Group(g) => g.items.iter().for_each(|i| walk(i, prefix, out)),
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

/// The first line of `tree`'s first identifier.
fn use_line(tree: &UseTree) -> usize {
    match tree {
        UseTree::Path(p) => p.ident.span().start().line,
        UseTree::Name(n) => n.ident.span().start().line,
        UseTree::Rename(r) => r.ident.span().start().line,
        UseTree::Glob(g) => g.star_token.span.start().line,
        UseTree::Group(g) => g.brace_token.span.open().start().line,
    }
}

/// Collects the module paths one file's non-test code names.
struct Collector<'a> {
    tree: &'a Tree,
    /// The module the code being visited is in (an inline module's path inside its file's).
    logical: ModPath,
    /// Absolute path, line, and the path as written.
    found: Vec<(ModPath, usize, String)>,
}

impl Collector<'_> {
    fn note(&mut self, segs: Vec<String>, line: usize, in_use: bool) {
        if let Some(abs) = self.tree.absolute(&self.logical, &segs, in_use) {
            self.found.push((abs, line, segs.join("::")));
        }
    }

    /// `crate::a::b`, `super::a` and `self::a` paths in a macro's tokens, which `syn` leaves
    /// unparsed (`matches!`, `format!` arguments and the like).
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tts.len() {
            match &tts[i] {
                TokenTree::Group(g) => self.scan_tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "super" || id == "self" => {
                    let line = id.span().start().line;
                    let mut segs = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
                        (tts.get(j), tts.get(j + 1))
                    {
                        let Some(TokenTree::Ident(next)) = tts.get(j + 2) else {
                            break;
                        };
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segs.push(next.to_string());
                        j += 3;
                    }
                    if segs.len() > 1 {
                        self.note(segs, line, false);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// The attributes of the expressions that carry them in statement position.
fn expr_attrs(e: &Expr) -> &[Attribute] {
    match e {
        Expr::Assign(x) => &x.attrs,
        Expr::Block(x) => &x.attrs,
        Expr::Call(x) => &x.attrs,
        Expr::If(x) => &x.attrs,
        Expr::Macro(x) => &x.attrs,
        Expr::Match(x) => &x.attrs,
        Expr::MethodCall(x) => &x.attrs,
        Expr::Path(x) => &x.attrs,
        Expr::Unsafe(x) => &x.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        let attrs = match i {
            syn::Item::Const(x) => &x.attrs,
            syn::Item::Enum(x) => &x.attrs,
            syn::Item::Fn(x) => &x.attrs,
            syn::Item::Impl(x) => &x.attrs,
            syn::Item::Macro(x) => &x.attrs,
            syn::Item::Mod(x) => &x.attrs,
            syn::Item::Static(x) => &x.attrs,
            syn::Item::Struct(x) => &x.attrs,
            syn::Item::Trait(x) => &x.attrs,
            syn::Item::Type(x) => &x.attrs,
            syn::Item::Use(x) => &x.attrs,
            _ => &[][..],
        };
        if !test_only(attrs) {
            visit::visit_item(self, i);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // A declaration (`mod x;`) is no dependency; an inline module's code is its file's.
        if m.ident == "tests" || m.content.is_none() {
            return;
        }
        self.logical.push(m.ident.to_string());
        visit::visit_item_mod(self, m);
        self.logical.pop();
    }

    fn visit_impl_item(&mut self, i: &'ast syn::ImplItem) {
        let attrs = match i {
            syn::ImplItem::Const(x) => &x.attrs,
            syn::ImplItem::Fn(x) => &x.attrs,
            syn::ImplItem::Type(x) => &x.attrs,
            syn::ImplItem::Macro(x) => &x.attrs,
            _ => &[][..],
        };
        if !test_only(attrs) {
            visit::visit_impl_item(self, i);
        }
    }

    fn visit_trait_item(&mut self, i: &'ast syn::TraitItem) {
        let attrs = match i {
            syn::TraitItem::Const(x) => &x.attrs,
            syn::TraitItem::Fn(x) => &x.attrs,
            syn::TraitItem::Type(x) => &x.attrs,
            syn::TraitItem::Macro(x) => &x.attrs,
            _ => &[][..],
        };
        if !test_only(attrs) {
            visit::visit_trait_item(self, i);
        }
    }

    fn visit_stmt(&mut self, s: &'ast syn::Stmt) {
        let attrs = match s {
            syn::Stmt::Local(x) => &x.attrs,
            syn::Stmt::Macro(x) => &x.attrs,
            syn::Stmt::Expr(e, _) => expr_attrs(e),
            syn::Stmt::Item(_) => &[][..],
        };
        if !test_only(attrs) {
            visit::visit_stmt(self, s);
        }
    }

    fn visit_field(&mut self, f: &'ast syn::Field) {
        if !test_only(&f.attrs) {
            visit::visit_field(self, f);
        }
    }

    fn visit_field_value(&mut self, f: &'ast syn::FieldValue) {
        if !test_only(&f.attrs) {
            visit::visit_field_value(self, f);
        }
    }

    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        if !test_only(&a.attrs) {
            visit::visit_arm(self, a);
        }
    }

    fn visit_variant(&mut self, v: &'ast syn::Variant) {
        if !test_only(&v.attrs) {
            visit::visit_variant(self, v);
        }
    }

    // Doc links and derives are no dependencies of the code.
    fn visit_attribute(&mut self, _: &'ast Attribute) {}

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let line = use_line(&u.tree);
        for (segs, _) in use_leaves(&u.tree) {
            self.note(segs, line, true);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            let line = p.segments[0].ident.span().start().line;
            self.note(segs, line, false);
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.scan_tokens(m.tokens.clone());
    }
}

/// Tarjan's strongly connected components of the graph `adj` (nodes `0..adj.len()`); only the
/// components of two nodes or more, i.e. the cycles (the graphs here have no self-loops).
fn cycles(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn connect(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.adj[v] {
            match s.index[w] {
                None => {
                    connect(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                s.out.push(component);
            }
        }
    }
    let n = adj.len();
    let mut s = State {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            connect(&mut s, v);
        }
    }
    s.out
}

/// One shortest cycle through `start` inside `component` (breadth-first), start included once.
fn one_cycle(adj: &[Vec<usize>], component: &[usize], start: usize) -> Vec<usize> {
    let mut parent = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &adj[v] {
            if !component.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![v];
                while let Some(&p) = parent.get(path.last().unwrap()) {
                    path.push(p);
                }
                path.reverse();
                return path;
            }
            if w != start && !parent.contains_key(&w) {
                parent.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("a strongly connected component has a cycle through each node")
}

/// A dependency between sibling modules: `a::x → b::y` is `a → b` under their common parent.
/// `None` when one module holds the other (a parent and its own children).
fn sibling_edge(from: &[String], to: &[String]) -> Option<(ModPath, String, String)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common == from.len() || common == to.len() {
        return None;
    }
    Some((
        from[..common].to_vec(),
        from[common].clone(),
        to[common].clone(),
    ))
}

/// The report of every cycle among sibling modules; empty when there is none.
fn report(edges: &[Edge]) -> String {
    // Parent → (child → child → the edges that make it).
    let mut levels: BTreeMap<ModPath, BTreeMap<(String, String), Vec<&Edge>>> = BTreeMap::new();
    for e in edges {
        if let Some((parent, a, b)) = sibling_edge(&e.from, &e.to) {
            levels
                .entry(parent)
                .or_default()
                .entry((a, b))
                .or_default()
                .push(e);
        }
    }
    let mut out = String::new();
    for (parent, level) in &levels {
        let names: Vec<&String> = level
            .keys()
            .flat_map(|(a, b)| [a, b])
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let id = |n: &String| names.iter().position(|m| *m == n).unwrap();
        let mut adj = vec![Vec::new(); names.len()];
        for (a, b) in level.keys() {
            adj[id(a)].push(id(b));
        }
        let child = |n: usize| {
            let mut p = parent.clone();
            p.push(names[n].clone());
            show(&p)
        };
        for component in cycles(&adj) {
            let ring = one_cycle(&adj, &component, component[0]);
            let mut ring_text: Vec<String> = ring.iter().map(|&n| child(n)).collect();
            ring_text.push(child(ring[0]));
            let _ = writeln!(
                out,
                "\ncycle among the children of {}: {}\n  e.g. {}",
                show(parent),
                component
                    .iter()
                    .map(|&n| child(n))
                    .collect::<Vec<_>>()
                    .join(", "),
                ring_text.join(" → ")
            );
            for ((a, b), found) in level {
                if !(component.contains(&id(a)) && component.contains(&id(b))) {
                    continue;
                }
                let _ = writeln!(out, "  {} → {}:", child(id(a)), child(id(b)));
                for e in found.iter().take(6) {
                    let _ = writeln!(
                        out,
                        "    src/{}:{}  `{}` (→ {})",
                        e.file.display(),
                        e.line,
                        e.text,
                        show(&e.to)
                    );
                }
                if found.len() > 6 {
                    let _ = writeln!(out, "    … and {} more", found.len() - 6);
                }
            }
        }
    }
    out
}

#[test]
fn the_crate_has_no_module_cycles() {
    let tree = Tree::load(&src_dir());
    let edges = tree.edges();
    let counted: BTreeSet<(&ModPath, &ModPath)> = edges
        .iter()
        .filter(|e| sibling_edge(&e.from, &e.to).is_some())
        .map(|e| (&e.from, &e.to))
        .collect();
    println!(
        "{} modules, {} module dependencies between siblings ({} paths)",
        tree.modules.len(),
        counted.len(),
        edges.len()
    );
    // A crate this size has many; few means the paths were not read, not that the crate is tidy.
    assert!(
        counted.len() > 30,
        "only {} module dependencies found: the test no longer reads the crate's paths",
        counted.len()
    );
    let cycles = report(&edges);
    assert!(
        cycles.is_empty(),
        "\nModules of tf_shm depend on each other in a circle.\n\
         Each module holds one capability and uses only lower-level modules; in a cycle none of \
         them can be understood or changed alone. For each cycle below, find the edge that points \
         up (a low-level module using an item of a higher-level one) and move that item down to \
         the module it belongs to, or to a new small module both use; a `pub use` at the crate \
         root keeps a public path working. Counted: `use` items and `crate::`/`super::` paths \
         outside test code, between sibling modules (a parent and its own children do not \
         count).\n{cycles}"
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    // 0 → 1 → 2 → 0 and 3 → 4 → 3, with 2 → 3 and 5 alone.
    let adj = vec![vec![1], vec![2], vec![0, 3], vec![4], vec![3], vec![]];
    let mut found = cycles(&adj);
    found.sort();
    assert_eq!(found, vec![vec![0, 1, 2], vec![3, 4]]);
    assert_eq!(one_cycle(&adj, &[0, 1, 2], 1), vec![1, 2, 0]);
    assert!(cycles(&[vec![1], vec![2], vec![]]).is_empty());
}

#[test]
fn the_report_names_a_cycle_between_siblings() {
    let m = |s: &str| -> ModPath { s.split("::").map(str::to_owned).collect() };
    let edge = |from: &str, to: &str, line| Edge {
        from: m(from),
        to: m(to),
        file: PathBuf::from(format!("{}.rs", from.replace("::", "/"))),
        line,
        text: format!("crate::{to}::Item"),
    };
    // a::x → b and b → a::y: a cycle of a and b; a::x → a (child to parent) is none.
    let edges = [
        edge("a::x", "b", 3),
        edge("b", "a::y", 7),
        edge("a::x", "a", 9),
    ];
    let text = report(&edges);
    assert!(text.contains("cycle among the children of crate: crate::a, crate::b"));
    assert!(text.contains("src/a/x.rs:3"), "{text}");
    assert!(text.contains("src/b.rs:7"), "{text}");
    assert!(!text.contains(":9"), "{text}");
    assert!(report(&edges[..1]).is_empty());
}
