//! The guest kernel's modules: which file each module is, what it depends on (read from the
//! module's own `.modinfo`, since the kernel package leaves `modules.dep` to `depmod` at
//! install time), and the order to load a set of them in.

use crate::elf;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A module's file (relative to the modules directory) and its dependencies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// The `.ko` file, relative to the modules directory.
    pub path: PathBuf,
    /// The module names from its `.modinfo` `depends=`, `_` spelling; empty when it has none.
    pub depends: Vec<String>,
}

/// Every module under a modules directory, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleTree {
    modules: BTreeMap<String, Module>,
}

/// Why a module set could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ModuleError {
    /// A module file could not be read.
    #[error("reading kernel module {path}: {source}")]
    Read {
        /// The module file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A module file's ELF or `.modinfo` does not parse.
    #[error("kernel module {path}: {source}")]
    Elf {
        /// The module file.
        path: PathBuf,
        /// What does not parse.
        #[source]
        source: elf::ElfError,
    },
    /// A module (or a dependency) is not under the guest's modules directory.
    #[error("kernel module {name:?} is not in the guest's modules (needed by {by})")]
    Missing {
        /// The module, `_` spelling.
        name: String,
        /// The module that depends on it, or `the testbed` for a module asked for directly.
        by: String,
    },
}

impl ModuleTree {
    /// Reads every `*.ko` under `dir`.
    pub fn scan(dir: &Path) -> Result<ModuleTree, ModuleError> {
        let mut tree = ModuleTree::default();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let entries = std::fs::read_dir(&d).map_err(|source| ModuleError::Read {
                path: d.clone(),
                source,
            })?;
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "ko") {
                    tree.add(dir, &path)?;
                }
            }
        }
        Ok(tree)
    }

    fn add(&mut self, root: &Path, path: &Path) -> Result<(), ModuleError> {
        let bytes = std::fs::read(path).map_err(|source| ModuleError::Read {
            path: path.into(),
            source,
        })?;
        let info = elf::modinfo(&bytes).map_err(|source| ModuleError::Elf {
            path: path.into(),
            source,
        })?;
        let rel = path.strip_prefix(root).unwrap_or(path).to_path_buf();
        self.insert(&info.name, rel, info.depends);
        Ok(())
    }

    /// Records module `name` (tests build trees by hand).
    pub fn insert(&mut self, name: &str, path: PathBuf, depends: Vec<String>) {
        // modinfo names use '_' where file names may use '-'.
        self.modules
            .insert(name.replace('-', "_"), Module { path, depends });
    }

    /// The module named `name`; `-` and `_` are the same in names.
    pub fn get(&self, name: &str) -> Option<&Module> {
        self.modules.get(&name.replace('-', "_"))
    }

    /// `wanted` and everything they depend on, dependencies first, each once.
    pub fn load_order(&self, wanted: &[&str]) -> Result<Vec<String>, ModuleError> {
        let mut order = Vec::new();
        for name in wanted {
            self.visit(name, "the testbed", &mut order, 0)?;
        }
        Ok(order)
    }

    fn visit(
        &self,
        name: &str,
        by: &str,
        order: &mut Vec<String>,
        depth: usize,
    ) -> Result<(), ModuleError> {
        let key = name.replace('-', "_");
        // A cycle or an absurd chain cannot come from a real kernel; cut it rather than loop.
        if order.contains(&key) || depth > 8 {
            return Ok(());
        }
        let module = self.modules.get(&key).ok_or_else(|| ModuleError::Missing {
            name: key.clone(),
            by: by.into(),
        })?;
        for dep in &module.depends {
            self.visit(dep, &key, order, depth + 1)?;
        }
        if !order.contains(&key) {
            order.push(key);
        }
        Ok(())
    }

    /// A `modules.dep` for the modules in `names` (paths relative to the modules directory,
    /// as depmod writes them), so `modprobe` in the guest finds them too.
    pub fn modules_dep(&self, names: &[String]) -> String {
        let mut out = String::new();
        for name in names {
            let Some(m) = self.modules.get(name) else {
                continue;
            };
            let deps: Vec<String> = m
                .depends
                .iter()
                .filter_map(|d| self.get(d))
                .map(|d| d.path.display().to_string())
                .collect();
            out.push_str(&format!("{}: {}\n", m.path.display(), deps.join(" ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> ModuleTree {
        let mut t = ModuleTree::default();
        t.insert("virtio", "kernel/virtio.ko".into(), vec![]);
        t.insert("virtio_ring", "kernel/virtio_ring.ko".into(), vec![]);
        t.insert(
            "virtio_console",
            "kernel/virtio_console.ko".into(),
            vec!["virtio".into(), "virtio_ring".into()],
        );
        t.insert("e1000e", "kernel/e1000e.ko".into(), vec![]);
        t
    }

    #[test]
    fn dependencies_load_first_and_once() {
        let order = tree().load_order(&["virtio-console", "virtio"]).unwrap();
        assert_eq!(order, ["virtio", "virtio_ring", "virtio_console"]);
    }

    #[test]
    fn a_missing_module_names_who_needs_it() {
        let mut t = tree();
        t.insert("a", "a.ko".into(), vec!["nope".into()]);
        let err = t.load_order(&["a"]).unwrap_err().to_string();
        assert!(
            err.contains("\"nope\"") && err.contains("needed by a"),
            "{err}"
        );
    }

    #[test]
    fn a_dependency_cycle_terminates() {
        let mut t = ModuleTree::default();
        t.insert("a", "a.ko".into(), vec!["b".into()]);
        t.insert("b", "b.ko".into(), vec!["a".into()]);
        assert_eq!(t.load_order(&["a"]).unwrap().len(), 2);
    }

    #[test]
    fn modules_dep_lists_paths_as_depmod_does() {
        let t = tree();
        let dep = t.modules_dep(&["virtio_console".into(), "e1000e".into()]);
        assert_eq!(
            dep,
            "kernel/virtio_console.ko: kernel/virtio.ko kernel/virtio_ring.ko\nkernel/e1000e.ko: \n"
        );
    }
}
