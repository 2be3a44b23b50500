//! The rows of [`super::FAMILIES`] by the first byte of their names, for [`super::find_client`].

use super::{Client, FAMILIES};

/// For each first byte, the rows of [`FAMILIES`] one of whose names or prefixes begins with it,
/// in [`FAMILIES`]' order (each row once): [`find_client`] reads the few rows that can match
/// instead of all of them. Made from the const tables once per process (it depends on nothing
/// else).
pub(super) fn rows_by_first_byte() -> &'static [Vec<&'static Client>; 256] {
    static ROWS: std::sync::OnceLock<[Vec<&'static Client>; 256]> = std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        let mut rows: [Vec<&'static Client>; 256] = std::array::from_fn(|_| Vec::new());
        for c in FAMILIES.iter().flat_map(|f| f.iter()) {
            for n in c.names {
                if let Some(&b) = n.as_bytes().first() {
                    let list = &mut rows[usize::from(b)];
                    if !list.last().is_some_and(|l| std::ptr::eq(*l, c)) {
                        list.push(c);
                    }
                }
            }
        }
        rows
    })
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
