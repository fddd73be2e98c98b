//! Explicit flow lists: a CSV file with a header row naming `src,dst,size_bytes,start_us` (any
//! column order, extra columns ignored), or inline rows `[src, dst, size_bytes, start_us]` in the
//! spec. For reproducing a trace or a hand-built scenario exactly.

use crate::time::{from_us, Time};

pub use crate::limits::MAX_FLOW_BYTES;

/// One row of a flow list. `line` (the file's line, or the inline row's index) is kept because host
/// ids can only be checked against the topology when the workload is built, and that error should
/// still point at the row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListedFlow {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
    pub line: usize,
}

/// Parses a flow list; `origin` names the file in errors, which also give the line. The result is
/// sorted by start time, stably, so flows starting together keep their file order.
pub fn parse(text: &str, origin: &str) -> Result<Vec<ListedFlow>, String> {
    let mut rows = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((_, header)) = rows.next() else {
        return Err(format!("{origin} is empty (expected a header row src,dst,size_bytes,start_us)"));
    };
    let cols: Vec<&str> = header.split(',').map(|c| c.trim()).collect();
    let col = |name: &str| {
        cols.iter().position(|c| *c == name).ok_or_else(|| {
            format!("{origin}: the header must name the columns src,dst,size_bytes,start_us (missing {name})")
        })
    };
    let (ci, di, zi, ti) = (col("src")?, col("dst")?, col("size_bytes")?, col("start_us")?);
    let mut flows = Vec::new();
    for (i, row) in rows {
        let line = i + 1;
        let at = |what: String| format!("{origin} line {line}: {what}");
        let f: Vec<&str> = row.split(',').map(|c| c.trim()).collect();
        if f.len() != cols.len() {
            return Err(at(format!("expected {} fields, got {}", cols.len(), f.len())));
        }
        let src: u32 = f[ci].parse().map_err(|_| at(format!("src `{}` is not a host id", f[ci])))?;
        let dst: u32 = f[di].parse().map_err(|_| at(format!("dst `{}` is not a host id", f[di])))?;
        let size: u64 = f[zi].parse().map_err(|_| at(format!("size_bytes `{}` is not a whole number", f[zi])))?;
        let start: f64 = f[ti].parse().map_err(|_| at(format!("start_us `{}` is not a number", f[ti])))?;
        flows.push(checked(src, dst, size, start, line).map_err(at)?);
    }
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

/// The checks every row passes, from a file or inline.
fn checked(src: u32, dst: u32, size: u64, start: f64, line: usize) -> Result<ListedFlow, String> {
    if src == dst {
        return Err(format!("src and dst are the same host ({src})"));
    }
    if size == 0 || size > MAX_FLOW_BYTES {
        return Err(format!("size_bytes must be in [1, {MAX_FLOW_BYTES}], got {size}"));
    }
    if !(start.is_finite() && start >= 0.0) {
        return Err(format!("start_us must be a finite number >= 0, got {start}"));
    }
    Ok(ListedFlow { src, dst, size, start: from_us(start), line })
}

/// Parses inline rows `[src, dst, size_bytes, start_us]`, sorted like `parse`. An error names the
/// row by its index: `(index, message)`.
pub fn from_rows(rows: &[serde_json::Value]) -> Result<Vec<ListedFlow>, (usize, String)> {
    let mut flows = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        flows.push(inline_row(row, i).map_err(|m| (i, m))?);
    }
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

fn inline_row(row: &serde_json::Value, index: usize) -> Result<ListedFlow, String> {
    let shape = "expected [src, dst, size_bytes, start_us]";
    let Some(f) = row.as_array().filter(|a| a.len() == 4) else {
        return Err(format!("{shape}, got {row}"));
    };
    let host = |v: &serde_json::Value, what: &str| {
        whole(v).and_then(|h| u32::try_from(h).ok()).ok_or_else(|| format!("{what} {v} is not a host id ({shape})"))
    };
    let (src, dst) = (host(&f[0], "src")?, host(&f[1], "dst")?);
    let size = whole(&f[2]).ok_or_else(|| format!("size_bytes {} is not a whole number ({shape})", f[2]))?;
    let start = f[3].as_f64().ok_or_else(|| format!("start_us {} is not a number ({shape})", f[3]))?;
    checked(src, dst, size, start, index)
}

/// A whole number, also when written as a float (`3.0`: rows of a numpy float array or a
/// DataFrame's values); `3.5` or a float beyond 2^53 (not exact) is not one.
fn whole(v: &serde_json::Value) -> Option<u64> {
    const EXACT: f64 = (1u64 << 53) as f64;
    v.as_u64().or_else(|| v.as_f64().filter(|x| x.fract() == 0.0 && (0.0..=EXACT).contains(x)).map(|x| x as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_in_any_order_sorted_stably() {
        let f = parse("start_us,src,dst,size_bytes\n5,0,1,100\n1,2,3,200\n\n# note\n1,3,2,300\n", "f.csv").unwrap();
        let got: Vec<(u64, usize)> = f.iter().map(|a| (a.size, a.line)).collect();
        assert_eq!(got, vec![(200, 3), (300, 6), (100, 2)]);
        assert_eq!(f[2].start, 5_000_000);
    }

    #[test]
    fn malformed_rows_name_file_and_line() {
        let h = "src,dst,size_bytes,start_us\n";
        let cases = [
            (String::new(), "f.csv is empty"),
            ("src,dst,start_us\n0,1,0\n".to_string(), "missing size_bytes"),
            (format!("{h}0,1,10,0\n0,0,10,0\n"), "f.csv line 3: src and dst are the same host"),
            (format!("{h}0,1,x,0\n"), "f.csv line 2: size_bytes `x`"),
            (format!("{h}0,1,0,0\n"), "line 2: size_bytes must be in"),
            (format!("{h}0,1,10,-1\n"), "line 2: start_us must be"),
            (format!("{h}0,1,10,nan\n"), "line 2: start_us must be"),
            (format!("{h}-1,1,10,0\n"), "line 2: src `-1`"),
            (format!("{h}0,1,10\n"), "line 2: expected 4 fields, got 3"),
        ];
        for (text, msg) in cases {
            let e = parse(&text, "f.csv").unwrap_err();
            assert!(e.contains(msg), "{text:?}: {e}");
        }
    }

    #[test]
    fn inline_rows_are_checked_like_file_rows_and_sorted() {
        use serde_json::json;
        let f = from_rows(&[json!([0, 1, 100, 5.0]), json!([2, 3, 200, 1])]).unwrap();
        assert_eq!(f.iter().map(|a| (a.size, a.line)).collect::<Vec<_>>(), vec![(200, 1), (100, 0)]);
        let cases = [
            (json!([0, 1, 100]), 0, "expected [src, dst, size_bytes, start_us]"),
            (json!({"src": 0}), 0, "expected [src, dst, size_bytes, start_us]"),
            (json!([0, 0, 100, 0]), 0, "the same host"),
            (json!([-1, 1, 100, 0]), 0, "src -1 is not a host id"),
            (json!([0.5, 1, 100, 0]), 0, "src 0.5 is not a host id"),
            (json!([-1.0, 1, 100, 0]), 0, "src -1.0 is not a host id"),
            (json!([0, 1, 1e300, 0]), 0, "is not a whole number"),
            (json!([0, 1, 1.5, 0]), 0, "size_bytes 1.5 is not a whole number"),
            (json!([0, 1, 0, 0]), 0, "size_bytes must be in"),
            (json!([0, 1, 10, "x"]), 0, "start_us \"x\" is not a number"),
            (json!([0, 1, 10, -2.0]), 0, "start_us must be"),
        ];
        for (row, at, msg) in cases {
            let (i, e) = from_rows(std::slice::from_ref(&row)).unwrap_err();
            assert!(i == at && e.contains(msg), "{row}: {e}");
        }
        assert_eq!(from_rows(&[json!([0, 1, 1, 0]), json!([1, 1, 1, 0])]).unwrap_err().0, 1);
        // Whole floats (a numpy float array's rows) read as the integers they are.
        let floats = from_rows(&[json!([2.0, 3.0, 200.0, 1.0])]).unwrap();
        assert_eq!(floats, from_rows(&[json!([2, 3, 200, 1])]).unwrap());
    }
}
