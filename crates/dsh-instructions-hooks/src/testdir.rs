//! A temporary directory as a UTF-8 path, for the unit tests of every
//! module here (the adapter's side files all live in plain directories).

use camino::Utf8PathBuf;

/// A fresh temporary directory, kept while the guard lives.
pub(crate) fn tmp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).expect("utf-8");
    (tmp, dir)
}
