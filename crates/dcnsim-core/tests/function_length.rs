//! Function-length ratchet: no Rust function body in the workspace's sources (`crates/*/src`, test
//! modules excluded) may exceed `LIMIT` lines, except the ones in `ALLOWED`, each pinned at its
//! current length. An allow-listed function may shrink (then its entry must follow it down, and go
//! once it fits the limit) but never grow, so the list only gets shorter. A function's length is
//! counted from the line of its opening brace to the line of its closing brace, by matching braces
//! with comments, strings and char literals blanked out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Longest allowed function body, in lines (TigerBeetle's limit).
const LIMIT: usize = 70;

/// Today's longer functions: (file from the workspace root, fn name, body lines). Split one and
/// lower or drop its entry; never raise one.
const ALLOWED: &[(&str, &str, usize)] = &[];

/// One function found in a source file.
#[derive(Debug, PartialEq)]
struct Function {
    name: String,
    /// 1-based line of the `fn` keyword.
    line: usize,
    /// Lines from the opening to the closing brace, both included.
    body_lines: usize,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `src` with every comment, string literal and char literal replaced by spaces (newlines kept, so
/// line numbers do not move): what is left is code, whose braces can be counted.
fn blank_non_code(src: &str) -> Vec<char> {
    let s: Vec<char> = src.chars().collect();
    let mut out = s.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(s.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let prev_ident = i > 0 && is_ident(s[i - 1]);
        if c == '/' && at(i + 1) == '/' {
            let end = (i..s.len()).find(|&j| s[j] == '\n').unwrap_or(s.len());
            blank(&mut out, i, end);
            i = end;
        } else if c == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let (mut depth, mut j) = (1, i + 2);
            while j < s.len() && depth > 0 {
                if s[j] == '/' && at(j + 1) == '*' {
                    depth += 1;
                    j += 2;
                } else if s[j] == '*' && at(j + 1) == '/' {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if c == 'r'
            && (!prev_ident || (i > 0 && s[i - 1] == 'b' && !(i > 1 && is_ident(s[i - 2]))))
            && (at(i + 1) == '"' || at(i + 1) == '#')
        {
            // Raw string r"..", r#".."#, br#".."#: no escapes; ends at a quote and as many hashes.
            let hashes = (i + 1..s.len()).take_while(|&j| s[j] == '#').count();
            let open = i + 1 + hashes;
            if at(open) != '"' {
                i += 1; // a raw identifier such as r#type
                continue;
            }
            let mut j = open + 1;
            while j < s.len() && !(s[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#')) {
                j += 1;
            }
            let end = (j + 1 + hashes).min(s.len());
            blank(&mut out, i, end);
            i = end;
        } else if c == '"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != '"' {
                j += if s[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if c == '\'' && (!prev_ident || (s[i - 1] == 'b' && !(i > 1 && is_ident(s[i - 2])))) {
            // A char literal ('x', b'x', '\n', '\u{7f}', '{') or a lifetime / label ('a, 'static).
            let end = if at(i + 1) == '\\' {
                (i + 2..s.len()).find(|&j| s[j] == '\'').map(|j| j + 1)
            } else if at(i + 2) == '\'' {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The brace that closes the one opened at `open`, in blanked code.
fn matching_brace(code: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &c) in code.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces after offset {open}");
}

fn word_at(code: &[char], i: usize, word: &str) -> bool {
    let n = word.chars().count();
    i + n <= code.len()
        && code[i..i + n].iter().copied().eq(word.chars())
        && (i == 0 || !is_ident(code[i - 1]))
        && !code.get(i + n).copied().is_some_and(is_ident)
}

fn skip_space(code: &[char], mut i: usize) -> usize {
    while i < code.len() && code[i].is_whitespace() {
        i += 1;
    }
    i
}

/// Every function with a body in `src`, outside `#[cfg(test)] mod` blocks.
fn functions(src: &str) -> Vec<Function> {
    let code = blank_non_code(src);
    let line_of = |i: usize| 1 + code[..i].iter().filter(|&&c| c == '\n').count();
    // Test modules: `#[cfg(test)]` then `mod name {`.
    let attr: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut skipped = Vec::new();
    for i in 0..code.len() {
        if code[i..].starts_with(&attr) {
            let j = skip_space(&code, i + attr.len());
            if word_at(&code, j, "mod") {
                if let Some(open) = (j..code.len()).take_while(|&k| code[k] != ';').find(|&k| code[k] == '{') {
                    skipped.push((i, matching_brace(&code, open)));
                }
            }
        }
    }
    let mut found = Vec::new();
    for i in 0..code.len() {
        if !word_at(&code, i, "fn") || skipped.iter().any(|&(a, b)| (a..=b).contains(&i)) {
            continue;
        }
        // `fn name`, not a pointer type `fn(u8)` nor a macro fragment `fn $name`.
        let start = skip_space(&code, i + 2);
        let end = (start..code.len()).find(|&k| !is_ident(code[k])).unwrap_or(code.len());
        if start == i + 2 || end == start || !(code[start].is_alphabetic() || code[start] == '_') {
            continue;
        }
        // The body opens at the first `{` outside the parameter list and array types; a `;` there
        // first means a declaration without a body (trait method, extern fn).
        let mut depth = 0i32;
        let mut open = None;
        for (k, &c) in code.iter().enumerate().skip(end) {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' if depth == 0 => {
                    open = Some(k);
                    break;
                }
                ';' if depth == 0 => break,
                _ => {}
            }
        }
        if let Some(open) = open {
            let close = matching_brace(&code, open);
            found.push(Function {
                name: code[start..end].iter().collect(),
                line: line_of(i),
                body_lines: line_of(close) - line_of(open) + 1,
            });
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") && p.file_name().is_some_and(|n| n != "tests.rs") {
            // A `tests.rs` is a test module in a file of its own (`#[cfg(test)] mod tests;`).
            out.push(p);
        }
    }
}

/// What is wrong with the functions found against `allowed`, one line per problem.
fn check(found: &[(String, Function)], allowed: &[(&str, &str, usize)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut longest: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (file, f) in found {
        let entry = longest.entry((file.as_str(), f.name.as_str())).or_default();
        *entry = (*entry).max(f.body_lines);
        if f.body_lines <= LIMIT {
            continue;
        }
        match allowed.iter().find(|(af, an, _)| *af == file && *an == f.name) {
            None => problems.push(format!(
                "{file}:{} fn {}: {} lines, over the limit of {LIMIT}: split it (the allow-list only shrinks)",
                f.line, f.name, f.body_lines
            )),
            Some(&(_, _, max)) if f.body_lines > max => problems.push(format!(
                "{file}:{} fn {}: {} lines, grew past its allow-listed {max} (limit {LIMIT}): split it",
                f.line, f.name, f.body_lines
            )),
            Some(_) => {}
        }
    }
    for &(file, name, max) in allowed {
        match longest.get(&(file, name)) {
            None => problems.push(format!("{file} fn {name}: allow-listed but not found: drop its entry")),
            Some(&n) if n <= LIMIT => {
                problems.push(format!("{file} fn {name}: now {n} lines, within the limit of {LIMIT}: drop its entry"))
            }
            Some(&n) if n < max => {
                problems.push(format!("{file} fn {name}: shrank to {n} lines: lower its entry from {max} to {n}"))
            }
            Some(_) => {}
        }
    }
    problems
}

#[test]
fn no_function_grows_past_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    assert!(files.len() > 10, "found only {} source files under {}", files.len(), root.display());
    let mut found = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap();
        found.extend(functions(&text).into_iter().map(|f| (rel.clone(), f)));
    }
    let problems = check(&found, ALLOWED);
    assert!(
        problems.is_empty(),
        "function-length ratchet (limit {LIMIT} lines, allow-list in {}):\n  {}",
        file!(),
        problems.join("\n  ")
    );
}

#[test]
fn braces_in_comments_strings_and_chars_do_not_count() {
    let src = r##"
fn a() {
    let s = "}}}";  // }
    let r = r#"{ "}" "#;
    let c = '{';
    let e = '\'';
    let b = b'}';
    /* } /* nested } */ } */
    let x: &'static str = s;
}
fn b<'a>(x: &'a [u8; 4]) -> [u8; 2] where 'a: 'a {
    [x[0], x[1]]
}
trait T { fn decl(&self); fn default(&self) -> u8 { 1 } }
type P = fn(u8) -> u8;
#[cfg(test)]
mod tests {
    fn hidden() {
    }
}
"##;
    let f = functions(src);
    let got: Vec<(&str, usize, usize)> = f.iter().map(|f| (f.name.as_str(), f.line, f.body_lines)).collect();
    assert_eq!(got, vec![("a", 2, 9), ("b", 11, 3), ("default", 14, 1)]);
}

#[test]
fn the_ratchet_reports_new_grown_shrunk_and_stale_entries() {
    let long = |name: &str, body_lines| ("src/x.rs".to_string(), Function { name: name.into(), line: 1, body_lines });
    let found = [long("fresh", 71), long("grown", 90), long("shrunk", 80), long("fits", 70), long("kept", 75)];
    let allowed = [
        ("src/x.rs", "grown", 89),
        ("src/x.rs", "shrunk", 85),
        ("src/x.rs", "fits", 72),
        ("src/x.rs", "kept", 75),
        ("src/x.rs", "gone", 100),
    ];
    let problems = check(&found, &allowed);
    let expect = ["fn fresh: 71 lines", "fn grown: 90 lines", "fn shrunk: shrank to 80", "fn fits: now 70", "fn gone"];
    assert_eq!(problems.len(), expect.len(), "{problems:#?}");
    for (p, e) in problems.iter().zip(expect) {
        assert!(p.contains(e), "{p:?} should mention {e:?}");
    }
}
