//! The command line's paths expanded to the files the offline commands read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{EXTENSIONS, Input, InputError, SkippedFile};

/// Expands the command line's paths: files as given, directories recursively (`*.yaml`, `*.yml`,
/// `*.json`, sorted by name, hidden entries skipped, a Helm chart's `templates` folder one error),
/// `-` as standard input (once).
///
/// A symlink to a directory is followed like a directory (as `kubectl apply -R -f` and `find -L`
/// do), unless the directory it leads to was read already in this run (a link back up the tree,
/// or a second path to the same folder): then it is a [`SkippedFile`] note, "a symlink to a
/// directory already read", so that no file is read twice and a loop ends (break-it pass s22: such
/// links were skipped in silence).
///
/// # Errors
/// Each path that does not exist or cannot be listed, as an [`InputError`]; the others are kept.
pub fn expand(paths: &[PathBuf]) -> (Vec<Input>, Vec<InputError>, Vec<SkippedFile>) {
    let mut walk = Walk::default();
    for path in paths {
        if path.as_os_str() == "-" {
            if !walk.inputs.contains(&Input::Stdin) {
                walk.inputs.push(Input::Stdin);
            }
            continue;
        }
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => walk.dir(path),
            Ok(_) => walk.inputs.push(Input::File(path.clone())),
            Err(e) => walk.errors.push(InputError {
                file: path.display().to_string(),
                line: None,
                column: None,
                message: format!("cannot read: {e}"),
            }),
        }
    }
    (walk.inputs, walk.errors, walk.skipped)
}

/// What a walk found so far, and the directories it read (canonical paths).
#[derive(Default)]
struct Walk {
    inputs: Vec<Input>,
    errors: Vec<InputError>,
    skipped: Vec<SkippedFile>,
    seen: HashSet<PathBuf>,
}

impl Walk {
    fn dir(&mut self, dir: &Path) {
        if let Ok(canonical) = dir.canonicalize()
            && !self.seen.insert(canonical)
        {
            return;
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                self.errors.push(InputError {
                    file: dir.display().to_string(),
                    line: None,
                    column: None,
                    message: format!("cannot list: {e}"),
                });
                return;
            }
        };
        let mut entries: Vec<(String, PathBuf, bool)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                if name.starts_with('.') {
                    return None;
                }
                let path = e.path();
                // A symlink counts as what it leads to (a dangling one as a file, left out below).
                let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
                Some((name, path, is_dir))
            })
            .collect();
        entries.sort();
        // A Helm chart's templates are not manifests: one error for the chart instead of one for
        // each template (and its parse errors).
        let chart = entries.iter().any(|(name, _, is_dir)| !is_dir && name == "Chart.yaml");
        for (name, path, is_dir) in entries {
            if is_dir && chart && name == "templates" {
                self.errors.push(InputError {
                    file: path.display().to_string(),
                    line: None,
                    column: None,
                    message: format!(
                        "a Helm chart's templates, not manifests: render the chart first, e.g. \
                         `helm template RELEASE {} | probegate check -`",
                        dir.display()
                    ),
                });
            } else if is_dir {
                let read_already = path.canonicalize().is_ok_and(|c| self.seen.contains(&c));
                if read_already {
                    self.skip_link(&path);
                } else {
                    self.dir(&path);
                }
            } else if EXTENSIONS.iter().any(|ext| name.rsplit_once('.').is_some_and(|(_, e)| e == *ext))
                && std::fs::metadata(&path).is_ok_and(|m| m.is_file())
            {
                self.inputs.push(Input::File(path));
            }
        }
    }

    /// The note for a directory reached a second time, through a symlink (itself or a parent).
    fn skip_link(&mut self, path: &Path) {
        let target = path.canonicalize().map_or_else(|_| "?".to_string(), |t| t.display().to_string());
        self.skipped.push(SkippedFile {
            file: path.display().to_string(),
            message: format!(
                "a symlink to a directory already read in this run ({target}): skipped, so that no file is \
                 read twice and a symlink loop ends"
            ),
            kustomization: path.to_path_buf(),
            folder: path.to_path_buf(),
        });
    }
}
