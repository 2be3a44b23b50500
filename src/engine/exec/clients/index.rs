//! The rows of [`super::FAMILIES`] by the first byte of their names, for [`super::find_client`]:
//! a table the compiler builds from the const tables (no state made at run time).

use super::{Client, FAMILIES};

/// Whether name `n` of `row` is the first of its names to begin with its first byte (an empty
/// name begins with none).
const fn first_with_its_byte(row: &Client, n: usize) -> bool {
    let name = row.names[n].as_bytes();
    if name.is_empty() {
        return false;
    }
    let mut k = 0;
    while k < n {
        let other = row.names[k].as_bytes();
        if !other.is_empty() && other[0] == name[0] {
            return false;
        }
        k += 1;
    }
    true
}

/// Calls `visit(family, row, byte)` for each row of [`FAMILIES`], in order, once for each
/// distinct first byte of its names (a `macro`, as a `const fn` takes no closure).
macro_rules! each_row_byte {
    (|$f:ident, $r:ident, $b:ident| $body:block) => {
        let mut $f = 0;
        while $f < FAMILIES.len() {
            let mut $r = 0;
            while $r < FAMILIES[$f].len() {
                let row = &FAMILIES[$f][$r];
                let mut n = 0;
                while n < row.names.len() {
                    if first_with_its_byte(row, n) {
                        let $b = row.names[n].as_bytes()[0] as usize;
                        $body
                    }
                    n += 1;
                }
                $r += 1;
            }
            $f += 1;
        }
    };
}

/// How many (row, first byte) entries the index holds.
const fn entries() -> usize {
    let mut count = 0;
    each_row_byte!(|_f, _r, _b| {
        count += 1;
    });
    count
}

const ENTRIES: usize = entries();

/// For each first byte `b`, the rows of [`FAMILIES`] one of whose names or prefixes begins with
/// it are `rows[start[b]..start[b + 1]]` (family and row numbers), in [`FAMILIES`]' order, each
/// row once.
struct Index {
    start: [u16; 257],
    rows: [(u8, u16); ENTRIES],
}

/// The index, a counting sort of the entries by first byte (stable: table order within a byte).
const fn build() -> Index {
    assert!(ENTRIES <= u16::MAX as usize && FAMILIES.len() <= u8::MAX as usize);
    let mut start = [0u16; 257];
    each_row_byte!(|_f, _r, b| {
        start[b + 1] += 1;
    });
    let mut b = 0;
    while b < 256 {
        start[b + 1] += start[b];
        b += 1;
    }
    let mut next = start;
    let mut rows = [(0u8, 0u16); ENTRIES];
    each_row_byte!(|f, r, b| {
        assert!(r <= u16::MAX as usize);
        rows[next[b] as usize] = (f as u8, r as u16);
        next[b] += 1;
    });
    Index { start, rows }
}

/// Built by the compiler (`const` evaluation): read-only data, like the tables it indexes.
static INDEX: Index = build();

/// The rows one of whose names or prefixes begins with byte `first`, in [`FAMILIES`]' order
/// (each row once): [`super::find_client`] reads the few rows that can match instead of all of
/// them.
pub(super) fn rows_beginning_with(first: u8) -> impl Iterator<Item = &'static Client> {
    let b = usize::from(first);
    let (from, to) = (usize::from(INDEX.start[b]), usize::from(INDEX.start[b + 1]));
    INDEX.rows[from..to].iter().map(|&(f, r)| &FAMILIES[usize::from(f)][usize::from(r)])
}

#[cfg(test)]
mod tests {
    use super::super::{Client, FAMILIES, find_client};

    /// `find_client` reads only the rows indexed under the name's first byte and finds the row
    /// the scan of every row in order finds, for every name and prefix of every row (a prefix
    /// alone, with a suffix, with one byte less), with no arguments and with each row's
    /// subcommand; and for names no row has.
    #[test]
    fn find_client_finds_the_row_a_scan_of_every_row_finds() {
        let scan = |name: &str, args: &[String]| {
            FAMILIES
                .iter()
                .flat_map(|f| f.iter())
                .find(|c| c.is(name) && c.subcommand.is_none_or(|s| args.first().is_some_and(|a| a == s)))
        };
        let rows = || FAMILIES.iter().flat_map(|f| f.iter());
        let mut names: Vec<String> = vec!["".into(), "true".into(), "zz".into(), "é".into()];
        for c in rows() {
            for n in c.names {
                let n = n.trim_end_matches('*');
                names.extend([n.to_string(), format!("{n}x"), n[..n.len() - 1].to_string()]);
            }
        }
        let mut argss: Vec<Vec<String>> = vec![vec![], vec!["x".into()]];
        argss.extend(rows().filter_map(|c| c.subcommand).map(|s| vec![s.to_string()]));
        let mut found = 0;
        for name in &names {
            for args in &argss {
                let (indexed, scanned) = (find_client(name, args), scan(name, args));
                // (The same row: its names and subcommand, which no two rows share. Not its
                // address: each use of a `const` table may be a copy of its own.)
                let row = |c: Option<&Client>| c.map(|c| (c.names, c.subcommand));
                assert_eq!(row(indexed), row(scanned), "{name} {args:?}");
                found += usize::from(indexed.is_some());
            }
        }
        assert!(found > names.len(), "{found}");
    }
}
